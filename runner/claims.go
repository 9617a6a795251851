package runner

import (
	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/algo"
)

// Claims is what algorithm s promises of its runs (its properties and
// validity rule), from which analyze.Applicable decides the checks a run
// of it gets; nil for no algorithm (a trace dmx did not record). It lives
// here, not on algo.Spec, so that the algorithm contract imports nothing
// of analyze.
func Claims(s *algo.Spec) *analyze.Claims {
	if s == nil {
		return nil
	}
	return &analyze.Claims{Algorithm: s.Name, Properties: s.Properties, Validity: s.Validity}
}

package conform

import (
	"sort"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// Vocabulary returns the message types spec's machines send and, for
// each, the fields (stamp, id, term, vals) that carry something, as a
// small simulated run with its default parameters shows them (3
// processes, 2 entries each, seed 1; an election runs its default
// duration): the vocabulary a program must speak to be compared with
// it. A field never set in that run is left out (a program may send 0
// or leave it out alike).
func Vocabulary(spec *algo.Spec) (map[string][]string, error) {
	p := runner.NewPlan(runner.DriverSim)
	p.Spec, p.N, p.Seed, p.Workload.Entries = spec, 3, 1, 2
	var c runner.Collector
	if _, err := runner.Simulate(p, &c, nil); err != nil {
		return nil, err
	}
	seen := map[string]map[string]bool{}
	for _, t := range spec.MsgTypes {
		seen[t] = map[string]bool{}
	}
	for i := range c.Events {
		ev := &c.Events[i]
		if ev.Kind != trace.KindSend {
			continue
		}
		m, err := ev.Message()
		if err != nil {
			return nil, err
		}
		f := seen[m.Type]
		if f == nil {
			f = map[string]bool{}
			seen[m.Type] = f
		}
		f["stamp"] = f["stamp"] || m.Stamp != 0
		f["id"] = f["id"] || m.ID != 0
		f["term"] = f["term"] || m.Term != 0
		f["vals"] = f["vals"] || len(m.Vals) > 0
	}
	out := map[string][]string{}
	for t, f := range seen {
		fields := []string{}
		for _, k := range []string{"stamp", "id", "term", "vals"} {
			if f[k] {
				fields = append(fields, k)
			}
		}
		out[t] = fields
	}
	return out, nil
}

// Types returns the keys of a vocabulary, sorted.
func Types(v map[string][]string) []string {
	out := make([]string, 0, len(v))
	for t := range v {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

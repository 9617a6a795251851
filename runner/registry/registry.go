package registry

import (
	"encoding/json"
	"sort"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/trace"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/bully"
	"github.com/dmxlab/dmx/runner/algo/central"
	"github.com/dmxlab/dmx/runner/algo/changroberts"
	"github.com/dmxlab/dmx/runner/algo/lamport"
	"github.com/dmxlab/dmx/runner/algo/lease"
	"github.com/dmxlab/dmx/runner/algo/maekawa"
	"github.com/dmxlab/dmx/runner/algo/majority"
	"github.com/dmxlab/dmx/runner/algo/ratoken"
	"github.com/dmxlab/dmx/runner/algo/ricart"
	"github.com/dmxlab/dmx/runner/algo/ring"
	"github.com/dmxlab/dmx/runner/algo/tokenring"
	"github.com/dmxlab/dmx/runner/algo/tomcast"
)

// All lists every algorithm dmx can run, sorted by name.
func All() []*algo.Spec {
	all := []*algo.Spec{&central.Spec, &ricart.Spec, &tokenring.Spec, &ratoken.Spec, &lamport.Spec, &maekawa.Spec, &majority.Spec, &tomcast.Spec,
		&bully.Spec, &ring.Spec, &changroberts.Spec, &lease.Spec}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// Lookup returns the algorithm called name, or nil.
func Lookup(name string) *algo.Spec {
	for _, s := range All() {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Names returns the algorithms' names.
func Names() []string {
	var out []string
	for _, s := range All() {
		out = append(out, s.Name)
	}
	return out
}

// ForRun returns the algorithm a recorded run ran: nil for a run imported
// from another program's log (whatever its algorithm column says), or of
// an algorithm this dmx does not know. Whatever depends on the algorithm
// of a trace's run (its checks: analyze.Applicable(runner.Claims(ForRun(run))),
// its costs, its roles) goes through it.
func ForRun(run trace.Run) *algo.Spec {
	if run.Mode == "import" {
		return nil
	}
	return Lookup(run.Algorithm)
}

// HeldTo returns the algorithm whose promises run is held to (its checks
// and validity rule: analyze.Applicable(runner.Claims(HeldTo(run)))): the one it
// ran, or for a run imported from a log, the one the log names (dmx import
// --algorithm, or a log that dmx export wrote: runs.params
// {"algorithm": NAME}); nil for another program's log.
func HeldTo(run trace.Run) *algo.Spec {
	if run.Mode != "import" {
		return ForRun(run)
	}
	var p struct {
		Algorithm string `json:"algorithm"`
	}
	if json.Unmarshal(run.Params, &p) != nil {
		return nil
	}
	return Lookup(p.Algorithm)
}

// Roles are the processes' roles at the start of run, as its algorithm
// names them (the coordinator, the token's first holder): none for a
// trace of another program, or an algorithm without roles.
func Roles(run trace.Run) map[int]string {
	spec := ForRun(run)
	if spec == nil || spec.Roles == nil {
		return nil
	}
	p, err := runner.PlanFromRun(run, Lookup)
	if err != nil {
		return nil
	}
	return spec.Roles(p.N, p.Params)
}

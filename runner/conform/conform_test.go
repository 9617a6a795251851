package conform_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/conform"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

func record(t *testing.T, name string, n int, seed uint64) (trace.Run, []trace.Event) {
	t.Helper()
	p := runner.NewPlan(runner.DriverSim)
	p.Spec, p.N, p.Seed, p.Workload.Entries = registry.Lookup(name), n, seed, 3
	var c runner.Collector
	res, err := runner.Simulate(p, &c, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := p.RunRow()
	run.ID, run.Complete = 1, res.Complete
	return run, c.Events
}

// TestOwnTraces: a trace of dmx's own machine conforms to it (the
// comparison reads what the runtime records as the program's outputs);
// the traces of other algorithms do not.
func TestOwnTraces(t *testing.T) {
	for _, name := range []string{"ricart-agrawala", "central", "lamport", "ra-token", "maekawa", "token-ring"} {
		run, evs := record(t, name, 4, 3)
		res, err := conform.Check(run, evs, registry.Lookup(name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.Conforms() || res.Inputs < 20 {
			t.Errorf("%s against itself: %d inputs, differences %+v", name, res.Inputs, res.Diffs)
		}
	}
	run, evs := record(t, "central", 4, 3)
	res, err := conform.Check(run, evs, registry.Lookup("ricart-agrawala"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Conforms() {
		t.Error("central conforms to ricart-agrawala")
	}
}

// TestFirstDifference: a program that breaks a rule once is caught at
// that input, with the rule named, and its process is compared no further.
func TestFirstDifference(t *testing.T) {
	run, evs := record(t, "ricart-agrawala", 3, 5)
	// Drop the first reply that P1 sends: as if it deferred a request it
	// must answer at once ([RH1]).
	i := slices.IndexFunc(evs, func(e trace.Event) bool { return e.Proc == 1 && e.Kind == trace.KindSend && e.MsgType == "reply" })
	dropped := evs[i]
	evs = slices.Delete(slices.Clone(evs), i, i+1)
	res, err := conform.Check(run, evs, registry.Lookup("ricart-agrawala"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diffs) != 1 {
		t.Fatalf("differences %+v, want P1's alone", res.Diffs)
	}
	d := res.Diffs[0]
	if d.Proc != 1 || d.Input.Kind != trace.KindReceive || d.Input.Seq != dropped.Seq-1 {
		t.Errorf("difference at %v, want the receive before P1#%d", &d.Input, dropped.Seq)
	}
	if len(d.Got) != 0 || len(d.Want) != 1 || !strings.HasPrefix(d.Want[0], "send reply{") || !strings.HasPrefix(d.Rule, "[RH1]") {
		t.Errorf("want %q, got %q, rule %q", d.Want, d.Got, d.Rule)
	}
}

// TestVocabulary: what dmx list ALGO shows a program must send.
func TestVocabulary(t *testing.T) {
	v, err := conform.Vocabulary(registry.Lookup("ricart-agrawala"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(conform.Types(v), []string{"reply", "request"}) || !slices.Equal(v["request"], []string{"stamp", "id"}) {
		t.Errorf("vocabulary %v", v)
	}
	v, err = conform.Vocabulary(registry.Lookup("ra-token"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v["token"], []string{"vals"}) {
		t.Errorf("ra-token's token: %v", v["token"])
	}
}

package runner_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/trace"
)

func simulate(t testing.TB, name string, n int, seed uint64, wl runner.Workload) ([]trace.Event, runner.SimResult) {
	t.Helper()
	spec := runner.Lookup(name)
	if spec == nil {
		t.Fatalf("no algorithm %q", name)
	}
	var c runner.Collector
	res, err := runner.Simulate(runner.SimConfig{
		Spec: spec, N: n, Seed: seed, Workload: wl,
		Delay: runner.Dist{Min: 100 * time.Microsecond, Max: 3 * time.Millisecond},
	}, &c)
	if err != nil {
		t.Fatalf("seed %d: %s N=%d: %v", seed, name, n, err)
	}
	return c.Events, res
}

var busy = runner.Workload{Entries: 5, Think: runner.Dist{Max: 2 * time.Millisecond}, Hold: runner.Dist{Min: 100 * time.Microsecond, Max: time.Millisecond}}

// TestSimDeterministic: a seed reproduces a run event for event; another
// seed gives another run.
func TestSimDeterministic(t *testing.T) {
	for _, name := range []string{"central", "ricart-agrawala"} {
		a, _ := simulate(t, name, 5, 42, busy)
		b, _ := simulate(t, name, 5, 42, busy)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: seed 42 gave two different traces", name)
		}
		c, _ := simulate(t, name, 5, 43, busy)
		if reflect.DeepEqual(a, c) {
			t.Fatalf("%s: seeds 42 and 43 gave the same trace", name)
		}
	}
}

// TestSimClocks: the runtime stamps Lamport and vector clocks as Lamport's
// and Fidge/Mattern's rules say, and every receive names a send.
func TestSimClocks(t *testing.T) {
	evs, res := simulate(t, "ricart-agrawala", 3, 7, busy)
	if !res.Complete {
		t.Fatalf("run incomplete: %s", res.Status)
	}
	sends := map[int64]trace.Event{}
	last := map[int]trace.Event{}
	for _, e := range evs {
		if p, ok := last[e.Proc]; ok {
			if e.Seq != p.Seq+1 || e.Lamport <= p.Lamport || !p.VC.Before(e.VC) {
				t.Fatalf("%s does not follow %s in program order", &e, &p)
			}
		}
		if e.VC[e.Proc] != uint64(e.Seq) {
			t.Fatalf("%s: own vector entry %d, want its seq", &e, e.VC[e.Proc])
		}
		switch e.Kind {
		case trace.KindSend:
			sends[e.Msg] = e
		case trace.KindReceive:
			s, ok := sends[e.Msg]
			if !ok {
				t.Fatalf("%s: no send of message %d before it", &e, e.Msg)
			}
			if e.Lamport <= s.Lamport || !s.VC.Before(e.VC) || s.Peer != e.Proc || e.Peer != s.Proc {
				t.Fatalf("%s does not follow its send %s", &e, &s)
			}
		}
		last[e.Proc] = e
	}
}

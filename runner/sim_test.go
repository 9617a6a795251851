package runner_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

func simulate(t testing.TB, name string, n int, seed uint64, wl runner.Workload) ([]trace.Event, runner.SimResult) {
	t.Helper()
	spec := registry.Lookup(name)
	if spec == nil {
		t.Fatalf("no algorithm %q", name)
	}
	var c runner.Collector
	res, err := runner.Simulate(runner.Plan{Spec: spec, N: n, Seed: seed, Workload: wl, Sim: runner.SimOptions{Delay: runner.Dist{Min: 100 * time.Microsecond, Max: 3 * time.Millisecond}}}, &c, nil)
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

// TestSimCrashRecover: a crash loses the node's state and timers and the
// messages sent to it; a recovery gives it fresh machines and the rest of its
// workload; clocks and sequence numbers go on.
func TestSimCrashRecover(t *testing.T) {
	// Slots of 20ms: P2 asks at 40ms, 120ms, ... and is idle at 60-100ms
	// (central deadlocks if a client crashes holding or awaiting the grant).
	wl := runner.Workload{Entries: 5, Hold: runner.Fixed(time.Millisecond), Contention: runner.ContentionNone, Slot: 20 * time.Millisecond}
	var c runner.Collector
	res, err := runner.Simulate(runner.Plan{Spec: registry.Lookup("central"), N: 4, Seed: 3, Workload: wl, Faults: []runner.Fault{{Kind: runner.FaultCrash, Proc: 2, At: 60 * time.Millisecond}, {Kind: runner.FaultRecover, Proc: 2, At: 100 * time.Millisecond}}, Sim: runner.SimOptions{Delay: runner.Dist{Min: 100 * time.Microsecond, Max: 3 * time.Millisecond}}}, &c, nil)
	if err != nil || !res.Complete {
		t.Fatalf("%v %+v", err, res)
	}
	var kinds []trace.Kind
	exits := 0
	for _, e := range c.Events {
		if e.Proc == 2 {
			switch e.Kind {
			case trace.KindCrash, trace.KindRecover:
				kinds = append(kinds, e.Kind)
			case trace.KindCSExit:
				exits++
			}
		}
	}
	if len(kinds) != 2 || kinds[0] != trace.KindCrash || kinds[1] != trace.KindRecover {
		t.Fatalf("P2 recorded %v", kinds)
	}
	if exits != wl.Entries {
		t.Errorf("P2 left the critical section %d times, want its %d entries", exits, wl.Entries)
	}
	results, err := analyze.Evaluate(trace.Run{Nodes: 4, Complete: true}, &trace.SliceReader{Events: c.Events}, analyze.General())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Verdict != analyze.OK && r.Verdict != analyze.NotApplicable {
			t.Errorf("%s: %s %v", r.Check, r.Verdict, r.Findings)
		}
	}
}

// TestSimNested: nested locks in one order for everyone never deadlock; with
// odd processes taking them in the reverse order, seed 2 deadlocks (a
// resource deadlock: each holds what the other asks for), and what the
// processes hold and ask for at the end shows the cycle.
func TestSimNested(t *testing.T) {
	wl := runner.Workload{Entries: 5, Resources: []string{"printer", "scanner"}, Nested: true, Order: runner.OrderSame,
		Think: runner.Dist{Max: 2 * time.Millisecond}, Hold: runner.Dist{Max: time.Millisecond}}
	for seed := uint64(1); seed <= 50; seed++ {
		evs, res := simulate(t, "central", 4, seed, wl)
		if !strings.HasPrefix(res.Status, "every workload finished") {
			t.Fatalf("seed %d: lock order same: %s", seed, res.Status)
		}
		if got := count(evs, trace.KindCSExit, -1); got != 4*5*2 {
			t.Fatalf("seed %d: %d exits, want 40", seed, got)
		}
	}
	wl.Order = runner.OrderReverseOdd
	evs, res := simulate(t, "central", 4, 2, wl)
	if !strings.Contains(res.Status, "nothing more can happen") {
		t.Fatalf("seed 2, reverse-odd: %s; want a deadlock", res.Status)
	}
	holds := map[string]int{}
	asks := map[int]string{}
	for _, e := range evs {
		switch e.Kind {
		case trace.KindCSEnter:
			holds[e.Resource] = e.Proc
			delete(asks, e.Proc)
		case trace.KindCSExit:
			delete(holds, e.Resource)
		case trace.KindCSRequest:
			asks[e.Proc] = e.Resource
		}
	}
	// Follow "asks for what its holder holds" from a blocked process: it
	// must come back to where it started.
	for p, r := range asks {
		seen := map[int]bool{}
		for q := p; !seen[q]; {
			seen[q] = true
			h, ok := holds[asks[q]]
			if !ok {
				t.Fatalf("P%d asks for %s, which nobody holds: not a deadlock", q, asks[q])
			}
			q = h
		}
		_ = r
		break
	}
}

// TestSimStop: closing Stop (Ctrl-C under dmx sim) cuts a long simulated run
// short, marked incomplete, instead of running on to the time limit.
func TestSimStop(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	var c runner.Collector
	res, err := runner.Simulate(runner.Plan{Spec: registry.Lookup("central"), N: 3, Seed: 1, Workload: runner.Workload{Entries: 1_000_000, Hold: runner.Fixed(time.Millisecond)}, Sim: runner.SimOptions{Delay: runner.Fixed(time.Millisecond)}}, &c, stop)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || res.Status != "interrupted" || len(c.Events) > 10_000 {
		t.Fatalf("stopped run: complete %v, status %q, %d events: want an incomplete, interrupted run cut short at once", res.Complete, res.Status, len(c.Events))
	}
}

// TestSimGroupStall is what a loaded machine does to real processes, in the
// simulator: every process is off the CPU at once for 300ms (a pause of
// each), far longer than the detector's T+D = 40ms, and nobody crashed.
// When they resume, the first to run finds its timers due and everyone
// silent. With fd-stall=count (seed 004 as written) it suspects them all,
// and the algorithms whose safety rests on the detector break: bully, ring
// and chang-roberts elect a second leader, a regenerated token puts two
// processes in the critical section (the failures of the tests of real
// processes on a busy machine). With fd-stall=discount (dmx run's default)
// the detector does not count its own time away as the others' silence:
// nobody is suspected, and every check holds.
func TestSimGroupStall(t *testing.T) {
	for _, c := range []struct {
		algo   string
		params map[string]string
		breaks []string // the checks that fail with fd-stall=count
	}{
		{"bully", nil, []string{"validity", "split-brain"}},
		{"ring", nil, []string{"split-brain"}},
		{"chang-roberts", nil, []string{"split-brain"}},
		{"central", map[string]string{"failover": "bully"}, nil},
		{"token-ring", map[string]string{"regenerate": "true"}, []string{"mutex-causal"}},
	} {
		for _, stall := range []string{"count", "discount"} {
			t.Run(c.algo+"/"+stall, func(t *testing.T) {
				p := runner.NewPlan(runner.DriverSim)
				p.Spec, p.N, p.Seed, p.Duration = registry.Lookup(c.algo), 5, 1, time.Second
				p.Params = map[string]string{"fd-stall": stall}
				for k, v := range c.params {
					p.Params[k] = v
				}
				p.Workload.Entries = 30
				for i := range p.N {
					p.Faults = append(p.Faults, runner.Fault{Kind: runner.FaultPause, Proc: i, At: 300 * time.Millisecond, End: 600 * time.Millisecond})
				}
				var col runner.Collector
				res, err := runner.Simulate(p, &col, nil)
				if err != nil || !res.Complete {
					t.Fatalf("%v %+v (reproduce: %s)", err, res, repro(p))
				}
				results, err := evaluateSpec(t, p.Spec, p.N, col.Events)
				if err != nil {
					t.Fatal(err)
				}
				suspicions := count(col.Events, trace.KindSuspect, -1)
				if stall == "count" {
					if suspicions == 0 {
						t.Errorf("nobody suspected after the stall (reproduce: %s)", repro(p))
					}
					for _, r := range results {
						if slices.Contains(c.breaks, r.Check) && r.Verdict != analyze.Violated {
							t.Errorf("%s: %s, want violated (reproduce: %s)", r.Check, r.Verdict, repro(p))
						}
					}
					return
				}
				if suspicions != 0 {
					t.Errorf("%d suspicions, and nobody crashed (reproduce: %s)", suspicions, repro(p))
				}
				for _, r := range results {
					if r.Verdict != analyze.OK && r.Verdict != analyze.NotApplicable {
						t.Errorf("%s: %s %v (reproduce: %s)", r.Check, r.Verdict, r.Findings, repro(p))
					}
				}
			})
		}
	}
}

// TestMessageIDsOfP0: a message type that carries a process id records it
// at every sender, P0 included (its id, 0, was left out of the detail as
// if the message carried none), and one that carries none records none.
func TestMessageIDsOfP0(t *testing.T) {
	for _, name := range registry.Names() {
		spec := registry.Lookup(name)
		p := runner.NewPlan(runner.DriverSim)
		p.Spec, p.N, p.Seed = spec, 3, 1
		p.Workload.Entries = 2
		var c runner.Collector
		if _, err := runner.Simulate(p, &c, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, e := range c.Events {
			if e.Kind != trace.KindSend && e.Kind != trace.KindReceive {
				continue
			}
			has := strings.Contains(string(e.Detail), `"id":`)
			if spec.CarriesID(e.MsgType) != has {
				t.Errorf("%s: %v %s: detail %s; its type carries an id: %v", name, &e, e.MsgType, e.Detail, spec.CarriesID(e.MsgType))
				break
			}
		}
	}
}

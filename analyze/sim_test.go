package analyze_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// simRun is a simulated run with the CLI's defaults (dmx sim): 10 entries,
// think 0-20ms (0 with high contention), hold 1-5ms, delay 100us-2ms.
type simRun struct {
	algo     string
	n        int
	seed     uint64
	params   map[string]string
	wl       runner.Workload
	high     bool // --contention high
	faults   []runner.Fault
	duration time.Duration
}

func (s simRun) repro() string {
	r := fmt.Sprintf("dmx sim %s -n %d --seed %d", s.algo, s.n, s.seed)
	if s.high {
		r += " --contention high"
	}
	if s.wl.Nested {
		r += fmt.Sprintf(" --resources %s --nested --order %s", strings.Join(s.wl.Resources, ","), s.wl.Order)
	}
	for k, v := range s.params {
		r += fmt.Sprintf(" --param %s=%s", k, v)
	}
	for _, f := range s.faults {
		r += " --faults " + f.String()
	}
	return r
}

// record runs s in the simulator and returns its run row and events.
func (s simRun) record(t testing.TB) (trace.Run, []trace.Event) {
	t.Helper()
	spec := registry.Lookup(s.algo)
	if spec == nil {
		t.Skipf("algorithm %s is not registered", s.algo)
	}
	wl := s.wl
	if wl.Entries == 0 {
		wl.Entries = 10
	}
	if wl.Hold == (runner.Dist{}) {
		wl.Hold = runner.Dist{Min: time.Millisecond, Max: 5 * time.Millisecond}
	}
	if s.high {
		wl.Think = runner.Fixed(0)
	} else if wl.Think == (runner.Dist{}) && wl.Contention == runner.ContentionRandom {
		wl.Think = runner.Dist{Max: 20 * time.Millisecond}
	}
	var c runner.Collector
	res, err := runner.Simulate(runner.Plan{Spec: spec, N: s.n, Seed: s.seed, Params: s.params, Workload: wl, Faults: s.faults, Duration: s.duration, Sim: runner.SimOptions{Delay: runner.Dist{Min: 100 * time.Microsecond, Max: 2 * time.Millisecond}}}, &c, nil)
	if err != nil {
		t.Fatalf("%s: %v", s.repro(), err)
	}
	return trace.Run{Algorithm: s.algo, Nodes: s.n, Seed: s.seed, Mode: "sim", Complete: res.Complete, Status: res.Status}, c.Events
}

// check runs checks over s and returns the results by name.
func (s simRun) check(t testing.TB, checks ...*analyze.Check) map[string]analyze.Result {
	t.Helper()
	run, events := s.record(t)
	// The validity rule the algorithm promises, as dmx check gives it.
	results, err := analyze.Evaluate(run, &trace.SliceReader{Events: events}, checks, analyze.WithValidity(registry.Lookup(s.algo).Validity))
	if err != nil {
		t.Fatalf("%s: %v", s.repro(), err)
	}
	out := make(map[string]analyze.Result)
	for _, r := range results {
		out[r.Check] = r
	}
	return out
}

// TestDeadlockSim: the two deadlocks of seed 001 in real simulated runs.
func TestDeadlockSim(t *testing.T) {
	tests := []struct {
		run  simRun
		want []string
	}{
		{
			// Resource deadlock: odd processes lock scanner then printer,
			// even ones printer then scanner.
			run: simRun{algo: "central", n: 4, seed: 2,
				wl: runner.Workload{Resources: []string{"printer", "scanner"}, Nested: true, Order: runner.OrderReverseOdd}},
			want: []string{"deadlock on printer, scanner among ", "holds scanner since", "holds printer since"},
		},
		{
			// Maekawa's voting deadlock ("P1 is waiting for P3, ..."),
			// through the wait sets: no process holds anything.
			run:  simRun{algo: "maekawa", n: 4, seed: 1, high: true},
			want: []string{"deadlock on cs among P0, P1, P2, P3", "wait(cs)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.run.repro(), func(t *testing.T) {
			r := tt.run.check(t, analyze.Deadlock)["deadlock"]
			if r.Verdict != analyze.Violated || len(r.Findings) == 0 {
				t.Fatalf("verdict %s, want violated: %+v", r.Verdict, r)
			}
			for _, s := range tt.want {
				if !strings.Contains(r.Findings[0].Message, s) {
					t.Errorf("%q\ndoes not contain %q", r.Findings[0].Message, s)
				}
			}
		})
	}
}

// TestNoDeadlockSim sweeps seeds of the algorithms that cannot deadlock,
// under high contention (everyone asks again at once: wait-for cycles form
// while replies and tokens are in flight) and with nested locks taken in
// one order: none may report a deadlock.
func TestNoDeadlockSim(t *testing.T) {
	seeds := uint64(20)
	if testing.Short() {
		seeds = 5
	}
	runs := []simRun{
		{algo: "ricart-agrawala", high: true},
		{algo: "lamport", high: true},
		{algo: "central", high: true},
		{algo: "token-ring", high: true},
		{algo: "ra-token", high: true},
		{algo: "maekawa", high: true, params: map[string]string{"variant": "inquire"}},
		{algo: "central", wl: runner.Workload{Resources: []string{"printer", "scanner"}, Nested: true, Order: runner.OrderSame}},
		{algo: "ricart-agrawala", high: true, wl: runner.Workload{Resources: []string{"printer", "scanner"}, Nested: true, Order: runner.OrderSame}},
	}
	for _, base := range runs {
		for _, n := range []int{2, 3, 5} {
			t.Run(fmt.Sprintf("%s/N=%d", base.repro(), n), func(t *testing.T) {
				t.Parallel()
				for seed := uint64(1); seed <= seeds; seed++ {
					s := base
					s.n, s.seed = n, seed
					res := s.check(t, analyze.Deadlock, analyze.Liveness)
					if r := res["deadlock"]; r.Verdict != analyze.OK {
						t.Fatalf("%s: deadlock %s: %v %s", s.repro(), r.Verdict, r.Findings, r.Note)
					}
					if r := res["liveness"]; r.Verdict != analyze.OK {
						t.Fatalf("%s: liveness %s: %v", s.repro(), r.Verdict, r.Findings)
					}
				}
			})
		}
	}
}

// TestElectionSim runs the election algorithms in the simulator: without
// failures and with a fail-over every check holds (the mutual-exclusion
// checks vacuously); with a time-out shorter than a round trip (seed 004:
// "Safety is broken if too tight deadline") the election checks find the
// split brain. Algorithms not registered yet are skipped.
func TestElectionSim(t *testing.T) {
	crashLeader := func(int) []runner.Fault {
		return []runner.Fault{{Kind: runner.FaultCrash, Proc: runner.Leader, At: 500 * time.Millisecond}}
	}
	// The highest process crashes and comes back: it holds an election
	// and bullies its way in (seed 000), and until its coordinator message
	// arrives it and the old leader both lead.
	comeBack := func(n int) []runner.Fault {
		return []runner.Fault{{Kind: runner.FaultCrash, Proc: n - 1, At: 500 * time.Millisecond}, {Kind: runner.FaultRecover, Proc: n - 1, At: time.Second}}
	}
	anyVerdict := analyze.Verdict("")
	tests := []struct {
		run    simRun
		faults func(n int) []runner.Fault
		want   map[string]analyze.Verdict // checks not named must be ok; "": any verdict
	}{
		{run: simRun{algo: "bully"}},
		{run: simRun{algo: "bully", params: map[string]string{"initiators": "all"}}},
		{run: simRun{algo: "bully"}, faults: crashLeader},
		{run: simRun{algo: "ring"}},
		{run: simRun{algo: "ring"}, faults: crashLeader},
		{run: simRun{algo: "chang-roberts"}},
		{run: simRun{algo: "chang-roberts", params: map[string]string{"initiators": "all"}}, faults: crashLeader},
		{run: simRun{algo: "lease"}, faults: crashLeader},
		{
			// Whether two self-declarations share a term depends on the
			// schedule: agreement may or may not see it.
			run:  simRun{algo: "bully", params: map[string]string{"timeout": "1ms"}},
			want: map[string]analyze.Verdict{"split-brain": analyze.Violated, "validity": analyze.Violated, "agreement": anyVerdict},
		},
		{run: simRun{algo: "bully"}, faults: comeBack, want: map[string]analyze.Verdict{"split-brain": analyze.Violated, "validity": anyVerdict, "agreement": anyVerdict}},
		{run: simRun{algo: "ring"}, faults: comeBack, want: map[string]analyze.Verdict{"split-brain": analyze.Violated, "validity": anyVerdict}},
	}
	for _, tt := range tests {
		for _, n := range []int{3, 5} {
			for seed := uint64(1); seed <= 3; seed++ {
				s := tt.run
				s.n, s.seed = n, seed
				if tt.faults != nil {
					s.faults = tt.faults(n)
				}
				t.Run(s.repro(), func(t *testing.T) {
					for _, r := range s.check(t, analyze.All...) {
						want, ok := tt.want[r.Check]
						if !ok {
							want = analyze.OK
							if r.Verdict == analyze.NotApplicable {
								continue // a check of what an election run has none of
							}
						}
						if want != anyVerdict && r.Verdict != want {
							t.Errorf("%s: %s, want %s: %v %s", r.Check, r.Verdict, want, r.Findings, r.Note)
						}
					}
				})
			}
		}
	}
}

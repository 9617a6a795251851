package runner_test

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// sweepCase is one configuration of an algorithm a sweep runs.
type sweepCase struct {
	spec   *algo.Spec
	params map[string]string
	first  bool // the first configuration of its algorithm the sweep runs
}

// seeds is how many seeds a sweep runs c over: all of them for the first
// configuration of an algorithm (its defaults, or basic Maekawa's fix), a
// third for each further variant: the code they share is swept already.
// The whole sweep (300 seeds) runs with DMX_LONG=1; go test ./... sweeps
// 30, so that the suite passes in bounded time on a busy machine.
func (c sweepCase) seeds() uint64 {
	n := sweepSeeds()
	if !c.first {
		n /= 3
	}
	return uint64(n)
}

// sweepSeeds is how many seeds a sweep runs: 300 with DMX_LONG=1 (the
// sweep CI's long step runs), 30 by default, 10 with -short.
func sweepSeeds() int {
	switch {
	case os.Getenv("DMX_LONG") != "":
		return 300
	case testing.Short():
		return 10
	}
	return 30
}

func (c sweepCase) String() string {
	keys := make([]string, 0, len(c.params))
	for k := range c.params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := c.spec.Name
	for _, k := range keys {
		s += "/" + k + "=" + c.params[k]
	}
	return s
}

// sweepCases are the configurations of every algorithm of kind in the
// registry (algo.Spec.Configurations) that claim to keep every property
// with no fault injected: the flawed ones (basic Maekawa's deadlock) fail
// on some schedule by design, and the examples show them.
func sweepCases(kind algo.Kind) []sweepCase {
	var out []sweepCase
	for _, spec := range registry.All() {
		if spec.Kind != kind {
			continue
		}
		first := true
		for _, v := range spec.Configurations() {
			if v.Flawed == "" {
				out = append(out, sweepCase{spec, v.Params, first})
				first = false
			}
		}
	}
	return out
}

// everyCheck returns every check that holds of any trace and those the
// algorithm promises besides (fairness, starvation): a sweep holds each
// run to all of them.
func everyCheck(t *testing.T, spec *algo.Spec) []*analyze.Check {
	t.Helper()
	checks := analyze.General()
	for _, c := range mustChecks(t, spec.Properties) {
		if !slices.Contains(checks, c) {
			checks = append(checks, c)
		}
	}
	return checks
}

// mustChecks returns the checks an algorithm claims.
func mustChecks(t *testing.T, properties []string) []*analyze.Check {
	t.Helper()
	checks, err := analyze.For(properties)
	if err != nil {
		t.Fatal(err)
	}
	return checks
}

// evaluateSpec evaluates a complete run of n processes with the checks
// spec claims (and extra ones), validity by the rule spec promises, as dmx
// check does.
func evaluateSpec(t *testing.T, spec *algo.Spec, n int, evs []trace.Event, extra ...string) ([]analyze.Result, error) {
	t.Helper()
	claims := runner.Claims(spec)
	claims.Properties = append(extra, spec.Properties...)
	checks, opts, err := analyze.Applicable(claims)
	if err != nil {
		t.Fatal(err)
	}
	return analyze.Evaluate(trace.Run{Nodes: n, Complete: true}, &trace.SliceReader{Events: evs}, checks, opts...)
}

// checkOK fails the test unless every check that applies to spec passes
// on evs, the run of n processes with seed that repro reproduces.
func checkOK(t *testing.T, spec *algo.Spec, n int, evs []trace.Event, seed uint64, repro string) {
	t.Helper()
	results, err := evaluateSpec(t, spec, n, evs)
	if err != nil {
		t.Fatalf("seed %d: %v (reproduce: %s)", seed, err, repro)
	}
	for _, r := range results {
		if r.Verdict != analyze.OK && r.Verdict != analyze.NotApplicable {
			t.Fatalf("seed %d: %s %s: %v (reproduce: %s)", seed, r.Check, r.Verdict, r.Findings, repro)
		}
	}
}

// repro is the command line that reproduces p.
func repro(p runner.Plan) string {
	args, err := p.Args()
	if err != nil {
		return fmt.Sprintf("dmx %s (and %v)", strings.Join(args, " "), err)
	}
	return "dmx " + strings.Join(args, " ")
}

// completeRun simulates p and fails the test unless the run completes; it
// returns the run's events and the command that reproduces it.
func completeRun(t *testing.T, p runner.Plan) ([]trace.Event, string) {
	t.Helper()
	var c runner.Collector
	res, err := runner.Simulate(p, &c, nil)
	repro := repro(p)
	if err != nil || !res.Complete {
		t.Fatalf("seed %d: %v %s (reproduce: %s)", p.Seed, err, res.Status, repro)
	}
	return c.Events, repro
}

// TestSweep runs every mutual-exclusion algorithm in every configuration
// that claims its properties (not basic Maekawa, which deadlocks) over 30
// seeds (300 with DMX_LONG=1; a third for a further variant) for each N in {1,2,3,5,8,9}, with
// random delays and high contention (everyone asks again at once), and
// checks every trace: clocks, mutual exclusion (causal and real time) and
// liveness must all hold, and every other check that holds of any trace,
// and fairness and bounded overtaking where the algorithm promises them. A
// failure prints the command that reproduces it.
func TestSweep(t *testing.T) {
	for _, a := range sweepCases(algo.MutualExclusion) {
		for _, n := range []int{1, 2, 3, 5, 8, 9} {
			t.Run(fmt.Sprintf("%s/N=%d", a, n), func(t *testing.T) {
				t.Parallel()
				for seed := uint64(1); seed <= a.seeds(); seed++ {
					p := runner.NewPlan(runner.DriverSim)
					p.Spec, p.N, p.Seed, p.Params = a.spec, n, seed, a.params
					p.Workload.Entries, p.Workload.Contention, p.Workload.Hold = 3, runner.ContentionHigh, runner.Dist{Max: 2 * time.Millisecond}
					p.Sim.Delay = runner.Dist{Min: 100 * time.Microsecond, Max: 3 * time.Millisecond}
					var c runner.Collector
					res, err := runner.Simulate(p, &c, nil)
					if err != nil {
						t.Fatalf("seed %d: %v (reproduce: %s)", seed, err, repro(p))
					}
					if !res.Complete {
						t.Fatalf("seed %d: run cut short: %s (reproduce: %s)", seed, res.Status, repro(p))
					}
					run := trace.Run{Algorithm: a.spec.Name, Nodes: n, Seed: seed, Mode: "sim", Complete: true}
					results, err := analyze.Evaluate(run, &trace.SliceReader{Events: c.Events}, everyCheck(t, a.spec))
					if err != nil {
						t.Fatalf("seed %d: %v (reproduce: %s)", seed, err, repro(p))
					}
					for _, r := range results {
						if r.Verdict != analyze.OK && r.Verdict != analyze.NotApplicable {
							t.Fatalf("seed %d: %s %s: %v (reproduce: %s)", seed, r.Check, r.Verdict, r.Findings, repro(p))
						}
					}
					if enters := count(c.Events, trace.KindCSEnter, -1); enters != 3*n {
						t.Fatalf("seed %d: %d critical sections, want %d (reproduce: %s)", seed, enters, 3*n, repro(p))
					}
				}
			})
		}
	}
}

// TestMessageCounts: without contention, Ricart-Agrawala sends exactly
// 2(N-1) messages per critical section (seed 002: (n-1) requests and (n-1)
// replies; seed 004: bandwidth 2(n-1)) and central exactly 3 per critical
// section of a client (seed 003 slide 6: request, OK, release).
func TestMessageCounts(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8} {
		wl := runner.Workload{Entries: 4, Hold: runner.Fixed(time.Millisecond), Contention: runner.ContentionNone}
		evs, _ := simulate(t, "ricart-agrawala", n, 1, wl)
		if got, want := count(evs, trace.KindSend, -1), 4*n*2*(n-1); got != want {
			t.Errorf("ricart-agrawala N=%d: %d messages for %d critical sections, want 2(N-1) each = %d", n, got, 4*n, want)
		}
		evs, _ = simulate(t, "central", n, 1, wl)
		for p := 1; p < n; p++ {
			if got := count(evs, trace.KindSend, p) + countTo(evs, p); got != 4*3 {
				t.Errorf("central N=%d: client P%d exchanged %d messages for 4 critical sections, want 3 each", n, p, got)
			}
		}
	}
}

func count(evs []trace.Event, k trace.Kind, proc int) int {
	c := 0
	for _, e := range evs {
		if e.Kind == k && (proc < 0 || e.Proc == proc) {
			c++
		}
	}
	return c
}

func countTo(evs []trace.Event, proc int) int {
	c := 0
	for _, e := range evs {
		if e.Kind == trace.KindSend && e.Peer == proc {
			c++
		}
	}
	return c
}

// TestSweepMulticast: Lamport's totally-ordered multicast (seed 002) over
// 30 seeds (300 with DMX_LONG=1) for each N, with random delays on FIFO channels and everyone
// multicasting back to back: every process delivers every multicast, in the
// same order, and each multicast costs exactly N + N^2 sends, N+1 of them to
// the sender itself: N^2-1 cross the network.
func TestSweepMulticast(t *testing.T) {
	seeds := sweepSeeds()
	spec := registry.Lookup("tomcast")
	for _, n := range []int{1, 2, 3, 5, 8, 9} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			t.Parallel()
			for seed := uint64(1); seed <= uint64(seeds); seed++ {
				p := runner.NewPlan(runner.DriverSim)
				p.Spec, p.N, p.Seed = spec, n, seed
				p.Workload.Entries, p.Workload.Think, p.Workload.Hold = 3, runner.Dist{Max: time.Millisecond}, runner.Dist{}
				p.Sim.Delay = runner.Dist{Min: 100 * time.Microsecond, Max: 3 * time.Millisecond}
				evs, repro := completeRun(t, p)
				checkOK(t, spec, n, evs, seed, repro)
				multicasts := 3 * n
				if got := count(evs, trace.KindDeliver, -1); got != multicasts*n {
					t.Fatalf("seed %d: %d deliveries, want %d (reproduce: %s)", seed, got, multicasts*n, repro)
				}
				sends, self := 0, 0
				for _, e := range evs {
					if e.Kind == trace.KindSend {
						sends++
						if e.Peer == e.Proc {
							self++
						}
					}
				}
				if sends != multicasts*(n+n*n) || sends-self != multicasts*(n*n-1) {
					t.Fatalf("seed %d: %d sends (%d to self) for %d multicasts, want N+N^2 and N^2-1 over the network each (reproduce: %s)", seed, sends, self, multicasts, repro)
				}
			}
		})
	}
}

// TestSweepElections runs every election algorithm, in every configuration
// it declares, through the runtime and the simulator over 30 seeds (300
// with DMX_LONG=1; a third for a further variant) for each N in {2,3,5,8}, with random delays
// and the leader crashed once (and, for N >= 5, twice, leaving a majority;
// lease with N=2 not at all, since one crash leaves no majority),
// and checks every trace with the checks the algorithm claims: agreement,
// validity (the rule each promises: highest id, or for lease, whose Chubby
// elects whoever wins the votes, a live participant), no split brain
// and termination. Crashed processes stay down: a recovered id reappearing
// breaks bully's safety (seed 004), which the examples show.
func TestSweepElections(t *testing.T) {
	for _, a := range sweepCases(algo.Election) {
		spec := a.spec
		for _, n := range []int{2, 3, 5, 8} {
			t.Run(fmt.Sprintf("%s/N=%d", a, n), func(t *testing.T) {
				t.Parallel()
				faults := []runner.Fault{{Kind: runner.FaultCrash, Proc: runner.Leader, At: 300 * time.Millisecond}}
				if n >= 5 {
					faults = append(faults, runner.Fault{Kind: runner.FaultCrash, Proc: runner.Leader, At: 800 * time.Millisecond})
				}
				if spec.Name == "lease" && n == 2 {
					faults = nil // one crash would leave no majority: Chubby cannot elect then
				}
				for seed := uint64(1); seed <= a.seeds(); seed++ {
					p := runner.NewPlan(runner.DriverSim)
					p.Spec, p.N, p.Seed, p.Params, p.Faults, p.Duration = spec, n, seed, a.params, faults, 1500*time.Millisecond
					p.Sim.Delay = runner.Dist{Min: 100 * time.Microsecond, Max: 2 * time.Millisecond}
					evs, repro := completeRun(t, p)
					if got := count(evs, trace.KindCrash, -1); got != len(faults) {
						t.Fatalf("seed %d: %d crashes, want %d: no leader to crash? (reproduce: %s)", seed, got, len(faults), repro)
					}
					checkOK(t, spec, n, evs, seed, repro)
				}
			})
		}
	}
}

// TestSweepBadNetwork is the catalogue's last item: every mutual-exclusion
// and multicast algorithm, in every configuration that claims its
// properties, on a bad network (20% of datagrams lost, an exponential
// extra delay of 1ms on average, 10% duplicated) with the transport's
// retransmission on (reliable channels, what the seeds assume): over many
// seeds safety holds (clocks, mutual exclusion causal and in real time,
// total order), and so does liveness, since every message gets through in
// the end. The configurations whose safety trusts a failure detector's
// time-outs are left out (listed in timed): loss turns into delays far
// beyond their allowance, and seed 004 says what follows ("D too small =>
// inaccurate"); the examples show it.
func TestSweepBadNetwork(t *testing.T) {
	faults, err := runner.ParseFaults("loss:20%,delay:exp=1ms,duplicate:10%")
	if err != nil {
		t.Fatal(err)
	}
	var cases []sweepCase
	for _, kind := range []algo.Kind{algo.MutualExclusion, algo.Multicast} {
		cases = append(cases, sweepCases(kind)...)
	}
	for _, a := range cases {
		if why := timed(a); why != "" {
			continue
		}
		for _, n := range []int{3, 5} {
			t.Run(fmt.Sprintf("%s/N=%d", a, n), func(t *testing.T) {
				t.Parallel()
				seeds, drops := a.seeds()/3, 0
				for seed := uint64(1); seed <= seeds; seed++ {
					p := runner.NewPlan(runner.DriverSim)
					p.Spec, p.N, p.Seed, p.Params, p.Faults = a.spec, n, seed, a.params, faults
					p.Workload.Entries, p.Workload.Contention, p.Workload.Hold = 3, runner.ContentionHigh, runner.Dist{Max: 2 * time.Millisecond}
					evs, repro := completeRun(t, p)
					for _, e := range evs {
						if e.Kind == trace.KindDrop {
							drops++
						}
					}
					checkOK(t, a.spec, n, evs, seed, repro)
				}
				if drops == 0 {
					t.Fatalf("no message dropped in %d seeds: the faults did nothing", seeds)
				}
			})
		}
	}
}

// timed says why configuration a's safety rests on a failure detector's
// time-outs, or "" if it does not.
func timed(a sweepCase) string {
	switch {
	case a.params["failover"] != "" || a.params["regenerate"] == "true":
		return "a heartbeat failure detector decides who coordinates or holds the token"
	}
	return ""
}

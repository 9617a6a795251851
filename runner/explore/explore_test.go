package explore_test

import (
	"reflect"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/explore"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/replay"
	"github.com/dmxlab/dmx/trace"
)

func plan(name string, n, entries int, params map[string]string, reorder bool) runner.Plan {
	p := runner.NewPlan(runner.DriverSim)
	p.Spec, p.N, p.Seed, p.Params = registry.Lookup(name), n, 1, params
	p.Workload.Entries = entries
	p.Sim.Reorder = reorder
	return p
}

// TestFinds: from nothing but the algorithm, the search finds the
// weaknesses the seeds describe: basic Maekawa's deadlock (001), the
// double entry of majority voting whose coordinators forget their vote on
// restart (002 point 4), and the violations of Lamport's mutual exclusion
// and of totally-ordered multicast without FIFO channels (002). Each is
// shrunk, its schedule records a trace the checks find violated again,
// and dmx replay reproduces that trace.
func TestFinds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opt   explore.Options
		check string
	}{
		{"maekawa deadlock", explore.Options{Plan: plan("maekawa", 3, 1, nil, false)}, "deadlock"},
		{"maekawa deadlock N=4", explore.Options{Plan: plan("maekawa", 4, 2, nil, false)}, "deadlock"},
		{"majority forgets its vote", explore.Options{Plan: plan("majority", 3, 1, map[string]string{"forget": "true"}, false),
			Crash: true, Restart: true, MaxFaults: 1, Checks: []*analyze.Check{analyze.MutexCausal}}, "mutex-causal"},
		{"majority's one coordinator forgets", explore.Options{Plan: plan("majority", 2, 1, map[string]string{"forget": "true", "coordinators": "1"}, false),
			Crash: true, Restart: true, MaxFaults: 1, Checks: []*analyze.Check{analyze.MutexCausal}}, "mutex-causal"},
		{"lamport without FIFO", explore.Options{Plan: plan("lamport", 3, 2, nil, true)}, "mutex-causal"},
		{"tomcast without FIFO", explore.Options{Plan: plan("tomcast", 2, 1, nil, true)}, "total-order"},
		{"tomcast without FIFO, walks", explore.Options{Plan: plan("tomcast", 3, 1, nil, true), Walks: 2000, Seed: 1}, "total-order"},
		// Not a seed's weakness but the seeds' assumption: without
		// reliable channels a lost request leaves its sender waiting.
		{"ricart-agrawala loses a message", explore.Options{Plan: plan("ricart-agrawala", 2, 1, nil, false), Lose: true, MaxFaults: 1}, "liveness"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := explore.Search(tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			v := res.Violation
			if v == nil {
				t.Fatalf("no violation found: %+v", res.Stats)
			}
			if v.Check != tc.check || res.FirstAt == 0 {
				t.Fatalf("violation of %s (first at %d), want %s: %s", v.Check, res.FirstAt, tc.check, v.Watched)
			}
			small, err := explore.Shrink(v, tc.opt, 0)
			if err != nil {
				t.Fatal(err)
			}
			if small.Check != tc.check || !explore.Smaller(small.Size(), v.Size()) && small.Size() != v.Size() {
				t.Fatalf("shrunk to %+v violating %s, from %+v", small.Size(), small.Check, v.Size())
			}
			// Enough to prove the short ones shortest; tomcast's proofs
			// take 70,000 states and more (the README's figures).
			budget := int64(20000)
			if testing.Short() {
				budget = 5000
			}
			short, proof, err := explore.Shortest(small, tc.opt, budget)
			if err != nil {
				t.Fatal(err)
			}
			if short.Size().Steps > small.Size().Steps {
				t.Fatalf("shortest %d steps, longer than %d", short.Size().Steps, small.Size().Steps)
			}
			for _, x := range []*explore.Violation{v, small, short} {
				reproduce(t, x, tc.check)
			}
			t.Logf("%+v; shrunk %+v -> %+v, shortest %d steps (proven %v): %v", res.Stats, v.Size(), small.Size(), short.Size().Steps, proof.Shortest, short.Plan.Schedule)
		})
	}
}

// reproduce checks that v's plan, given to the simulator, records v's
// trace, in which the checks find check violated, and that replay
// reproduces it.
func reproduce(t *testing.T, v *explore.Violation, check string) {
	t.Helper()
	var c runner.Collector
	res, err := runner.Simulate(v.Plan, &c, nil)
	if err != nil {
		t.Fatalf("simulate the schedule: %v", err)
	}
	if !reflect.DeepEqual(c.Events, v.Events) {
		t.Fatalf("the schedule records another trace than the violation's")
	}
	run := v.Plan.RunRow()
	run.ID, run.Complete = 1, res.Complete
	results, err := analyze.Evaluate(run, &trace.SliceReader{Events: c.Events}, analyze.All)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range results {
		found = found || r.Check == check && r.Verdict == analyze.Violated
	}
	if !found {
		t.Fatalf("dmx check does not find %s violated in the schedule's trace: %+v", check, results)
	}
	rr, err := replay.Run(run, replay.Events(c.Events), replay.Options{Lookup: registry.Lookup})
	if err != nil || !rr.Matches() {
		t.Fatalf("replay of the violation: %v %+v", err, rr)
	}
}

// TestClean: the correct algorithms keep their properties in every
// schedule: the search exhausts their state space and finds nothing. The
// runs of N=3 and 2 entries take minutes (the README has their figures;
// go test -run TestClean -explore.full runs them; lamport's is too large
// to exhaust here, past 148 million states, and is searched up to 40
// million); go test runs
// smaller ones, -short smaller still.
func TestClean(t *testing.T) {
	type run struct{ n, entries int }
	sizes := map[string]run{"central": {3, 2}, "ricart-agrawala": {3, 1}, "ra-token": {3, 1}, "lamport": {2, 2}, "maekawa/inquire": {3, 1}, "token-ring": {3, 1}}
	if testing.Short() {
		sizes = map[string]run{"central": {3, 1}, "ricart-agrawala": {2, 2}, "ra-token": {2, 2}, "lamport": {2, 1}, "maekawa/inquire": {2, 1}, "token-ring": {2, 1}}
	}
	if *full {
		sizes = map[string]run{"central": {3, 2}, "ricart-agrawala": {3, 2}, "ra-token": {3, 2}, "lamport": {3, 2}}
	}
	for name, size := range sizes {
		t.Run(name, func(t *testing.T) {
			algo, params := name, map[string]string(nil)
			if name == "maekawa/inquire" {
				algo, params = "maekawa", map[string]string{"variant": "inquire"}
			}
			opt := explore.Options{Plan: plan(algo, size.n, size.entries, params, false)}
			if algo == "token-ring" {
				// The token goes round for ever: bound the schedules.
				opt.MaxDepth = 30
			}
			partial := algo == "token-ring"
			if *full && algo == "lamport" {
				opt.MaxStates, partial = 40_000_000, true
			}
			res, err := explore.Search(opt)
			if err != nil {
				t.Fatal(err)
			}
			if res.Violation != nil {
				t.Fatalf("violation: %s (%s): %v", res.Violation.Watched, res.Violation.Check, res.Violation.Plan.Schedule)
			}
			if !res.Exhausted && !partial {
				t.Fatalf("not exhausted: %+v", res.Stats)
			}
			t.Logf("N=%d entries=%d: %+v", size.n, size.entries, res.Stats)
		})
	}
}

// TestReductionSound: sleep sets cut steps, never states: with and without
// them the search visits the same number of distinct states, and finds
// the same violations; without state hashing the tree of schedules is
// larger still.
func TestReductionSound(t *testing.T) {
	lamportEntries := 1
	if *full {
		lamportEntries = 2
	}
	for _, tc := range []struct {
		p           runner.Plan
		crash, lose bool
	}{
		{p: plan("ricart-agrawala", 2, 2, nil, false)},
		{p: plan("lamport", 2, lamportEntries, nil, true)},
		{p: plan("maekawa", 3, 1, nil, false)},
		{p: plan("tomcast", 2, 1, nil, true)},
		{p: plan("central", 2, 1, nil, false), crash: true},
		{p: plan("ricart-agrawala", 2, 1, nil, false), lose: true},
		{p: plan("lamport", 2, 1, nil, true), lose: true},
	} {
		p := tc.p
		name := p.Spec.Name
		if tc.lose {
			name += "/loss"
		}
		t.Run(name, func(t *testing.T) {
			// Finals are every final state, violations or not: search on
			// with a check no schedule violates, to compare whole spaces.
			opts := explore.Options{Plan: p, Checks: []*analyze.Check{analyze.Clocks}, Crash: tc.crash, Restart: true, Lose: tc.lose, MaxFaults: 1}
			reduced, err := explore.Search(opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.NoSleep = true
			plain, err := explore.Search(opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reduced.Exhausted || !plain.Exhausted {
				t.Fatalf("not exhausted: %+v %+v", reduced.Stats, plain.Stats)
			}
			if reduced.States != plain.States || reduced.Finals != plain.Finals {
				t.Fatalf("with sleep sets %d states, %d final; without %d, %d", reduced.States, reduced.Finals, plain.States, plain.Finals)
			}
			if reduced.Transitions > plain.Transitions {
				t.Fatalf("sleep sets took more steps (%d) than none (%d)", reduced.Transitions, plain.Transitions)
			}
			t.Logf("%d states: %d steps with sleep sets, %d without", reduced.States, reduced.Transitions, plain.Transitions)
			if p.Spec.Name == "ricart-agrawala" && !tc.lose {
				opts.NoSleep, opts.NoHash = true, true
				tree, err := explore.Search(opts)
				if err != nil {
					t.Fatal(err)
				}
				if !tree.Exhausted || tree.States < plain.States || tree.Finals < plain.Finals {
					t.Fatalf("the tree of schedules has %d nodes and %d leaves, the state space %d states and %d final", tree.States, tree.Finals, plain.States, plain.Finals)
				}
				t.Logf("the tree of all schedules: %d nodes, %d leaves", tree.States, tree.Finals)
			}
		})
	}
}

// TestRefuses: what explore does not search is refused with a reason.
func TestRefuses(t *testing.T) {
	for _, p := range []runner.Plan{
		plan("bully", 3, 0, nil, false),
		func() runner.Plan {
			p := plan("central", 3, 1, nil, false)
			p.Workload.Nested = true
			p.Workload.Resources = []string{"a", "b"}
			return p
		}(),
		plan("central", 0, 1, nil, false),
	} {
		if _, err := explore.Search(explore.Options{Plan: p}); err == nil {
			t.Errorf("%s N=%d nested=%v: searched", p.Spec.Name, p.N, p.Workload.Nested)
		}
	}
}

// TestStop: a closed Stop ends the search, not exhausted, and Shrink and
// Shortest return what they have.
func TestStop(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	res, err := explore.Search(explore.Options{Plan: plan("ricart-agrawala", 3, 2, nil, false), Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	if res.Exhausted || res.Visited > 1024 {
		t.Fatalf("searched on after Stop: %+v", res.Stats)
	}
	opt := explore.Options{Plan: plan("maekawa", 3, 1, nil, false)}
	found, err := explore.Search(opt)
	if err != nil || found.Violation == nil {
		t.Fatalf("%v %+v", err, found)
	}
	opt.Stop = stop
	small, err := explore.Shrink(found.Violation, opt, 0)
	if err != nil || small.Size() != found.Violation.Size() {
		t.Fatalf("shrunk after Stop: %v %+v", err, small.Size())
	}
}

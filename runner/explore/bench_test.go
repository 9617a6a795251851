package explore_test

import (
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/internal/cputime"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/explore"
)

// plainTree is the reference point of the README's figures, written apart
// from the search it measures: the tree of every schedule of p, walked
// depth first without state hashing, reduction or monitors, each node one
// state. It stops after limit nodes (exhausted false then).
func plainTree(t testing.TB, p runner.Plan, limit int64) (nodes, leaves int64, exhausted bool) {
	w, err := runner.NewWorld(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(w *runner.World) bool
	walk = func(w *runner.World) bool {
		nodes++
		if nodes >= limit {
			return false
		}
		steps := w.Enabled(nil)
		if len(steps) == 0 {
			leaves++
			return true
		}
		for _, st := range steps {
			c, err := w.Clone()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Apply(st); err != nil {
				t.Fatal(err)
			}
			if !walk(c) {
				return false
			}
		}
		return true
	}
	exhausted = walk(w)
	return nodes, leaves, exhausted
}

// TestPlainTree: the reference walk and the search without hashing or
// reduction count the same tree.
func TestPlainTree(t *testing.T) {
	p := plan("ricart-agrawala", 2, 2, nil, false)
	nodes, leaves, done := plainTree(t, p, 1<<40)
	res, err := explore.Search(explore.Options{Plan: p, NoHash: true, NoSleep: true, Checks: []*analyze.Check{analyze.Clocks}})
	if err != nil {
		t.Fatal(err)
	}
	// The search's last pass is the whole tree.
	if !done || res.States != nodes || res.Finals != leaves {
		t.Fatalf("reference: %d nodes, %d leaves; search: %d states, %d final", nodes, leaves, res.States, res.Finals)
	}
}

// BenchmarkExhaust is the README's figure of the clean algorithms: the
// exhaustive search of 3 processes and 2 entries each (-benchtime 1x;
// ricart-agrawala and lamport take minutes: run them one at a time with
// -run x -bench 'Exhaust/ricart'). Each says whether its budget
// exhausted the space.
func BenchmarkExhaust(b *testing.B) {
	for _, tc := range []struct {
		name   string
		budget int64
	}{{"central", 200_000_000}, {"ra-token", 200_000_000}, {"ricart-agrawala", 200_000_000}, {"lamport", 200_000_000}} {
		name := tc.name
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				res, err := explore.Search(explore.Options{Plan: plan(name, 3, 2, nil, false), MaxStates: tc.budget})
				if err != nil {
					b.Fatal(err)
				}
				report(b, res)
			}
		})
	}
}

// BenchmarkFind is the README's figure of the weaknesses found: states
// visited to the first counterexample and the time it took.
func BenchmarkFind(b *testing.B) {
	for _, tc := range []struct {
		name string
		opt  explore.Options
	}{
		{"maekawa-3x1", explore.Options{Plan: plan("maekawa", 3, 1, nil, false)}},
		{"maekawa-4x2", explore.Options{Plan: plan("maekawa", 4, 2, nil, false)}},
		{"majority-forget-3x1", explore.Options{Plan: plan("majority", 3, 1, map[string]string{"forget": "true"}, false),
			Crash: true, Restart: true, MaxFaults: 1, Checks: []*analyze.Check{analyze.MutexCausal}}},
		{"lamport-reorder-3x2", explore.Options{Plan: plan("lamport", 3, 2, nil, true)}},
		{"tomcast-reorder-2x1", explore.Options{Plan: plan("tomcast", 2, 1, nil, true)}},
		{"tomcast-reorder-3x1-walks", explore.Options{Plan: plan("tomcast", 3, 1, nil, true), Walks: 100000, Seed: 1}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				res, err := explore.Search(tc.opt)
				if err != nil {
					b.Fatal(err)
				}
				if res.Violation == nil {
					b.Fatalf("no violation: %+v", res.Stats)
				}
				report(b, res)
				b.ReportMetric(float64(res.FirstAt), "states-to-first")
			}
		})
	}
}

// BenchmarkReference compares, on runs small enough for the plain tree,
// the tree of schedules (no hashing, no reduction), hashing alone, and
// hashing with sleep sets: nodes or states, steps, and time.
func BenchmarkReference(b *testing.B) {
	for _, tc := range []struct {
		name    string
		p       runner.Plan
		entries int
	}{
		{"ricart-agrawala-2x2", plan("ricart-agrawala", 2, 2, nil, false), 2},
		{"ricart-agrawala-3x1", plan("ricart-agrawala", 3, 1, nil, false), 1},
		{"lamport-2x2", plan("lamport", 2, 2, nil, false), 2},
		{"central-3x1", plan("central", 3, 1, nil, false), 1},
	} {
		b.Run(tc.name+"/tree", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cpu0 := cputime.Self()
				nodes, _, done := plainTree(b, tc.p, 50_000_000)
				secs := (cputime.Self() - cpu0).Seconds()
				b.ReportMetric(float64(nodes), "states")
				b.ReportMetric(secs, "cpu-s")
				b.ReportMetric(float64(nodes)/secs, "states/cpu-s")
				exhausted := 0.0
				if done {
					exhausted = 1
				}
				b.ReportMetric(exhausted, "exhausted")
			}
		})
		for _, mode := range []struct {
			name    string
			noSleep bool
		}{{"hash", true}, {"hash+sleep", false}} {
			b.Run(tc.name+"/"+mode.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					res, err := explore.Search(explore.Options{Plan: tc.p, NoSleep: mode.noSleep, Checks: []*analyze.Check{analyze.Clocks}})
					if err != nil {
						b.Fatal(err)
					}
					report(b, res)
				}
			})
		}
	}
}

func report(b *testing.B, res *explore.Result) {
	b.ReportMetric(float64(res.States), "states")
	b.ReportMetric(float64(res.Transitions), "steps")
	b.ReportMetric(res.CPU.Seconds(), "cpu-s")
	if res.CPU > 0 {
		b.ReportMetric(float64(res.Visited)/res.CPU.Seconds(), "states/cpu-s")
	}
	exhausted := 0.0
	if res.Exhausted {
		exhausted = 1
	}
	b.ReportMetric(exhausted, "exhausted")
}

package algotest

import (
	"errors"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/algo"
)

// CheckParams checks an algorithm's parameter validation, the same way for
// every algorithm package's TestNewValidates: spec.New must build node 0
// of n with each parameter set of ok, and refuse each of bad with an error.
func CheckParams(t testing.TB, spec algo.Spec, n int, ok, bad []map[string]string) {
	t.Helper()
	node0 := func(ps []map[string]string) []algo.Config {
		var cs []algo.Config
		for _, p := range ps {
			cs = append(cs, algo.Config{ID: 0, N: n, Params: p})
		}
		return cs
	}
	CheckConfigs(t, spec, node0(ok), node0(bad))
}

// CheckConfigs is CheckParams for whole configurations, for what depends on
// the id and the group size too (an id outside the group, an empty group).
func CheckConfigs(t testing.TB, spec algo.Spec, ok, bad []algo.Config) {
	t.Helper()
	for _, c := range ok {
		if _, err := spec.New(c); err != nil {
			t.Errorf("%s: New(%+v): %v, want it accepted", spec.Name, c, err)
		}
	}
	for _, c := range bad {
		if _, err := spec.New(c); err == nil {
			t.Errorf("%s: New(%+v) accepted, want an error", spec.Name, c)
		}
	}
}

// FirstViolation runs spec with opt for the seeds 1..seeds in turn and
// returns the first whose run violates c, after logging its failure; 0 if
// none does. It shows that an assumption is real (FIFO channels, say):
// without it some seed breaks the property. A run that fails in another
// way fails t.
func FirstViolation(t testing.TB, spec algo.Spec, opt Options, seeds int, c *analyze.Check) uint64 {
	t.Helper()
	first := uint64(0)
	violations(t, spec, opt, seeds, c, func(seed uint64, f *Failure) bool {
		t.Logf("seed %d: %v", seed, f)
		first = seed
		return false
	})
	return first
}

// CountViolations is FirstViolation that runs every seed and returns how
// many of them violate c: how common the breach is.
func CountViolations(t testing.TB, spec algo.Spec, opt Options, seeds int, c *analyze.Check) int {
	t.Helper()
	n := 0
	violations(t, spec, opt, seeds, c, func(uint64, *Failure) bool {
		n++
		return true
	})
	return n
}

// violations runs the seeds 1..seeds of opt and calls found for each seed
// whose run violates c, until found returns false.
func violations(t testing.TB, spec algo.Spec, opt Options, seeds int, c *analyze.Check, found func(seed uint64, f *Failure) bool) {
	t.Helper()
	for s := uint64(1); s <= uint64(seeds); s++ {
		opt.Seed = s
		_, err := Run(spec, opt)
		var f *Failure
		if errors.As(err, &f) && f.Violates(c) {
			if !found(s, f) {
				return
			}
		} else if err != nil {
			t.Fatalf("seed: %d: %v", s, err)
		}
	}
}

// Build builds the machine of c with spec.New for a test that steps it by
// hand, as the algorithm's own type M; a refused configuration or a
// machine of another type fails t.
func Build[M algo.Machine](t testing.TB, spec algo.Spec, c algo.Config) M {
	t.Helper()
	m, err := spec.New(c)
	if err != nil {
		t.Fatal(err)
	}
	mm, ok := m.(M)
	if !ok {
		t.Fatalf("%s: New built a %T", spec.Name, m)
	}
	return mm
}

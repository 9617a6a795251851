package algotest

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner/algo"
)

var (
	flagSeed  = flag.Uint64("algotest.seed", 0, "run only this seed in algotest sweeps (0: all)")
	flagSeeds = flag.Int("algotest.seeds", 0, "number of seeds per group size in algotest sweeps (0: the test's own)")
)

// Sweep runs spec on the in-memory network for every group size in ns and
// every seed 1..seeds (flags: -algotest.seeds=K overrides the count,
// -algotest.seed=S runs only S). base gives the other options; N, Seed and
// Log are set by Sweep. After each successful run, check (if not nil) may
// verify the Result further (message counts, entries...). On the first
// failure Sweep reruns the seed with a log of its last steps and fails t,
// printing the seed and how to rerun it.
func Sweep(t testing.TB, spec algo.Spec, ns []int, seeds int, base Options, check func(*Result) error) {
	t.Helper()
	sweep(t, spec.Name, ns, seeds, 60, func(n int, seed uint64, logSteps int) (*Result, []string, error) {
		opt := base
		opt.N, opt.Seed, opt.Log = n, seed, logSteps
		res, err := Run(spec, opt)
		if res == nil {
			return nil, nil, err
		}
		return res, res.Log, err
	}, check, nil)
}

// sweep is the loop of Sweep, SweepMulticast, SweepFailover and
// SweepElection over group sizes and seeds. run runs one seed keeping a log
// of its last logSteps steps (0: none) and returns the result, that log and
// the run's error; about (if not nil) adds lines on a failed run to the
// report. The rerun of a failing seed is deterministic: it fails the same
// way, and only its log is new.
func sweep[R any](t testing.TB, name string, ns []int, seeds, logSteps int,
	run func(n int, seed uint64, logSteps int) (R, []string, error), check func(R) error, about func(R) string) {
	t.Helper()
	if *flagSeeds > 0 {
		seeds = *flagSeeds
	}
	for _, n := range ns {
		for s := 1; s <= seeds; s++ {
			seed := uint64(s)
			if *flagSeed != 0 {
				if s > 1 {
					break
				}
				seed = *flagSeed
			}
			res, _, err := run(n, seed, 0)
			if err == nil && check != nil {
				err = check(res)
			}
			if err == nil {
				continue
			}
			// Rerun the same seed, deterministically, keeping a log.
			_, log, err2 := run(n, seed, logSteps)
			var f *Failure
			if errors.As(err2, &f) {
				log = f.Log
			}
			extra := ""
			if about != nil {
				extra = about(res)
			}
			t.Fatalf("%s n=%d seed: %d\n%v\n%slast steps:\n  %s\nrerun: go test -run '%s' -algotest.seed=%d",
				name, n, seed, err, extra, strings.Join(log, "\n  "), t.Name(), seed)
		}
	}
}

// CountCheck returns a Sweep check that the messages sent in the run number
// exactly the sum, over nodes, of perEntry(node, N) times that node's
// entries: the seeds' message complexity, measured (e.g. 2(N-1) per entry for
// Ricart-Agrawala; 3 per entry of a client of the central coordinator).
func CountCheck(perEntry func(id, n int) int) func(*Result) error {
	return func(r *Result) error {
		total, want := 0, 0
		for id, e := range r.Entered {
			want += e * perEntry(id, len(r.Entered))
			total += r.SentBy[id]
		}
		if total != want {
			return fmt.Errorf("sent %d messages (%v) for entries %v, want %d", total, r.Sent, r.Entered, want)
		}
		return nil
	}
}

package algotest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/algo"
)

var (
	flagSeed  = flag.Uint64("algotest.seed", 0, "run only this seed in algotest sweeps (0: all)")
	flagSeeds = flag.Int("algotest.seeds", 0, "number of seeds per group size in algotest sweeps (0: the test's own)")
)

// Seeds is the number of seeds per group size of a long sweep: n with
// DMX_LONG=1 (CI's long step), a fifth of n by default, so that go test
// ./... stays within minutes on a busy 2-core machine, and a tenth with
// go test -short.
func Seeds(n int) int {
	switch {
	case Long():
		return n
	case testing.Short():
		return max(1, n/10)
	}
	return max(1, n/5)
}

// Long reports whether the long tests were asked for (DMX_LONG=1): whole
// sweeps and state spaces that take minutes, which go test ./... leaves
// out (docs/ci.md).
func Long() bool { return os.Getenv("DMX_LONG") != "" }

// Sweep runs Run for every group size in ns and every seed 1..seeds (flags:
// -algotest.seeds=K overrides the count, -algotest.seed=S runs only S).
// opt gives the other options; N and Seed are set by Sweep. After each
// successful run, check (if not nil) may verify the Result further (message
// counts, entries...); it must not keep the Result, whose memory the next
// run reuses. On the first failure Sweep fails t with the seed, the
// failure, the events up to it, and how to rerun it.
func Sweep(t testing.TB, spec algo.Spec, ns []int, seeds int, opt Options, check func(*Result) error) {
	t.Helper()
	if *flagSeeds > 0 {
		seeds = *flagSeeds
	}
	buf := &buffers{}
	for _, n := range ns {
		for s := 1; s <= seeds; s++ {
			seed := uint64(s)
			if *flagSeed != 0 {
				if s > 1 {
					break
				}
				seed = *flagSeed
			}
			o := opt
			o.N, o.Seed = n, seed
			res, err := run1(spec, o, buf)
			if err == nil && check != nil {
				err = check(res)
			}
			if err == nil {
				buf.reuse(res)
				continue
			}
			var log []string
			var f *Failure
			if errors.As(err, &f) {
				log = f.Log
			}
			faults := ""
			if res != nil && len(res.Faults) > 0 {
				faults = fmt.Sprintf("faults: %v\n", res.Faults)
			}
			t.Fatalf("%s n=%d seed: %d\n%v\n%sevents:\n  %s\nrerun: go test -run '%s' -algotest.seed=%d",
				spec.Name, n, seed, err, faults, strings.Join(log, "\n  "), t.Name(), seed)
		}
	}
}

// Case is one named configuration of a sweep: its options (N and Seed are
// set by Sweep) and, if not nil, its own group sizes.
type Case struct {
	Name  string
	Opt   Options
	Sizes []int
}

// SweepCases runs Sweep for each case, as a subtest of its name, over the
// group sizes ns (or the case's own) and seeds 1..seeds, with check.
func SweepCases(t *testing.T, spec algo.Spec, ns []int, seeds int, cases []Case, check func(*Result) error) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			sizes := ns
			if c.Sizes != nil {
				sizes = c.Sizes
			}
			Sweep(t, spec, sizes, seeds, c.Opt, check)
		})
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

// SweepInitiators runs Sweep with no failure for each N in ns and each way
// of starting the election: the lowest id alone (the parameter
// initiators=0), every process at once (all), and the would-be leader alone
// (top: N-1), each in its own subtest. Seed 001: "Multiple processes are
// allowed to call an election simultaneously. All of them together must
// yield only a single leader", and "The result of an election should not
// depend on which process calls for it".
func SweepInitiators(t *testing.T, spec algo.Spec, ns []int, seeds int, settle time.Duration) {
	for _, init := range []string{"0", "all", "top"} {
		t.Run("initiators="+init, func(t *testing.T) {
			for _, n := range ns {
				p := map[string]string{"initiators": init}
				if init == "top" {
					p["initiators"] = fmt.Sprint(n - 1)
				}
				Sweep(t, spec, []int{n}, seeds, Options{Params: p, Settle: settle}, nil)
			}
		})
	}
}

// LeaderCrashes returns the options of an election run in which whoever
// leads crashes k times, at random times in the first 400ms, and which
// goes on for settle after the last crash or recovery. A coordinator
// message may still be on its way when its sender crashes: its receiver
// then decides for a dead process, which check validity reports (seed 001
// asks a non-faulty leader) and which no algorithm can prevent, so
// validity is allowed; the run must still settle on the highest live
// process (Settled). With recover, each crashed process comes back 10ms to
// 200ms later and holds an election (seed 000): until its coordinator
// message arrives, it leads beside the old leader, and the old leader's
// decisions name a process that is no longer the highest live one (seed
// 004 "Safety is broken if ... process ID's reappear"), so split-brain is
// allowed too.
func LeaderCrashes(k int, recover bool, settle time.Duration) Options {
	o := Options{Random: k, Target: TargetLeader, CrashFrom: 0, CrashTo: 400 * time.Millisecond, Settle: settle,
		Allow: []string{analyze.Validity.Name}}
	if recover {
		o.RecoverMin, o.RecoverMax = 10*time.Millisecond, 200*time.Millisecond
		o.Allow = append(o.Allow, analyze.SplitBrain.Name)
	}
	return o
}

// SweepLeaderCrashes runs Sweep for the group sizes ns under LeaderCrashes:
// whoever leads crashes for good once (subtest crashes=1) or twice
// (crashes=2), or twice and comes back each time (recover), and logs the
// split-brain episodes the recoveries caused.
func SweepLeaderCrashes(t *testing.T, spec algo.Spec, ns []int, seeds int, settle time.Duration) {
	for _, k := range []int{1, 2} {
		t.Run(fmt.Sprintf("crashes=%d", k), func(t *testing.T) {
			Sweep(t, spec, ns, seeds, LeaderCrashes(k, false, settle), nil)
		})
	}
	t.Run("recover", func(t *testing.T) {
		seen := 0
		Sweep(t, spec, ns, seeds, LeaderCrashes(2, true, settle), func(r *Result) error {
			seen += len(r.SplitBrains)
			return nil
		})
		t.Logf("split-brain episodes after recoveries: %d", seen)
	})
}

// Expect runs opt, whose seed is the one a test's narrative tells about,
// and returns its Result and Failure if check c failed in it. If c did not
// fail, it fails t, naming a seed of 1..200 whose run fails c, if one does:
// a change in the simulator's draws moves such runs, and the test's
// constant (and its narrative) must follow.
func Expect(t testing.TB, spec algo.Spec, opt Options, c *analyze.Check) (*Result, *Failure) {
	t.Helper()
	res, err := Run(spec, opt)
	var f *Failure
	if errors.As(err, &f) && f.Violates(c) {
		t.Logf("seed %d: %v", opt.Seed, f)
		return res, f
	}
	for s := uint64(1); s <= 200; s++ {
		o := opt
		o.Seed = s
		if _, err2 := Run(spec, o); errors.As(err2, &f) && f.Violates(c) {
			t.Fatalf("seed %d: %v, want %s violated; seed %d violates it: name that seed and tell its run", opt.Seed, err, c.Name, s)
		}
	}
	t.Fatalf("seed %d: %v, want %s violated (and no seed of 1..200 violates it)", opt.Seed, err, c.Name)
	return nil, nil
}

package maekawa

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/algotest"
)

// TestScripts runs the interaction scripts in testdata; each block cites the
// note it exercises. Rewrite with go test -update.
func TestScripts(t *testing.T) {
	algotest.RunScripts(t, Spec, "testdata")
}

// TestVotingSet checks the grid construction.
// Reference: seed 001 "Maekawa's Voting Sets": every process belongs to its
// own set; any two sets intersect; with N a perfect square, V_i = row + column
// and |V_i| = 2√N-1.
func TestVotingSet(t *testing.T) {
	if got, want := VotingSet(4, 9), []int{1, 3, 4, 5, 7}; !slices.Equal(got, want) {
		t.Errorf("VotingSet(4, 9) = %v, want %v", got, want)
	}
	if got, want := VotingSet(4, 5), []int{1, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("VotingSet(4, 5) = %v, want %v", got, want)
	}
	for n := 1; n <= 100; n++ {
		sets := make([][]int, n)
		for i := range sets {
			sets[i] = VotingSet(i, n)
			if !slices.Contains(sets[i], i) {
				t.Fatalf("N=%d: V_%d = %v does not contain %d", n, i, sets[i], i)
			}
		}
		for i := range sets {
			for j := range sets {
				if !slices.ContainsFunc(sets[i], func(x int) bool { return slices.Contains(sets[j], x) }) {
					t.Fatalf("N=%d: V_%d = %v and V_%d = %v do not intersect", n, i, sets[i], j, sets[j])
				}
			}
		}
		for r := 1; r*r == n; r++ {
			for i, s := range sets {
				if len(s) != 2*r-1 {
					t.Fatalf("N=%d: |V_%d| = %d, want 2√N-1 = %d", n, i, len(s), 2*r-1)
				}
			}
		}
	}
}

// countCheck: every entry sends one request and one release to each other
// member of its voting set (seed 001 "Multicast Request/Release to all
// processes in V_i"); the basic version also sends exactly one reply per
// request, so an entry costs exactly 3(K-1) (seed 004 "Bandwidth: 3√n").
// variant=inquire may send more replies (a vote given back is given again),
// and inquire, relinquish and failed messages besides.
func countCheck(exact bool) func(*algotest.Result) error {
	return func(r *algotest.Result) error {
		want := 0
		for id, e := range r.Entered {
			want += e * (len(VotingSet(id, len(r.Entered))) - 1)
		}
		if r.Sent[MsgRequest] != want || r.Sent[MsgRelease] != want {
			return fmt.Errorf("sent %v: want %d requests and %d releases", r.Sent, want, want)
		}
		if exact && r.Messages != 3*want {
			return fmt.Errorf("sent %v: want 3(K-1) per entry, %d in all", r.Sent, 3*want)
		}
		if r.Sent[MsgReply] < want {
			return fmt.Errorf("sent %v: want at least %d replies", r.Sent, want)
		}
		return nil
	}
}

// TestBasicSafeButDeadlocks runs the basic version for many seeds: it must
// never break mutual exclusion (seed 001 "Safety"), and every run that does
// not finish must be stuck with a cycle in the wait-for graph (seed 001
// "Liveness": "can have a deadlock"). With 4 processes all asking, as in
// seed 001's example, the sweep must find such a deadlock.
func TestBasicSafeButDeadlocks(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5, 8} {
		deadlocks := 0
		for seed := uint64(1); seed <= 300; seed++ {
			_, err := algotest.Run(Spec, algotest.Options{N: n, Seed: seed})
			if err == nil {
				continue
			}
			var f *algotest.Failure
			if !errors.As(err, &f) || !f.Violates(analyze.Liveness) || !f.Stuck || !f.Violates(analyze.Deadlock) || len(f.Cycle) < 2 {
				t.Fatalf("n=%d seed: %d: %v; want success or a deadlock with a wait-for cycle", n, seed, err)
			}
			if deadlocks == 0 && n == 4 {
				t.Logf("n=4 seed %d deadlocks: %v", seed, err)
			}
			deadlocks++
		}
		if n == 4 && deadlocks == 0 {
			t.Fatal("no deadlock found with 4 processes in 300 seeds")
		}
		if n == 1 && deadlocks != 0 {
			t.Fatal("a single process deadlocked")
		}
	}
}

// TestBasicOneRequester: with one process asking at a time there is nobody
// to deadlock with, and every entry costs exactly 3(K-1) messages.
func TestBasicOneRequester(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5, 8, 9} {
		for r := 0; r < n; r++ {
			algotest.Sweep(t, Spec, []int{n}, 20, algotest.Options{Requesters: []int{r}}, countCheck(true))
		}
	}
}

// TestInquireSweep runs the deadlock-free version on FIFO channels for many
// seeds and group sizes: mutual exclusion, every request entered.
func TestInquireSweep(t *testing.T) {
	p := map[string]string{"variant": "inquire"}
	algotest.Sweep(t, Spec, []int{1, 2, 3, 4, 5, 8}, 300, algotest.Options{FIFO: true, Params: p}, countCheck(false))
	algotest.Sweep(t, Spec, []int{4, 9, 16}, 100, algotest.Options{FIFO: true, Params: p, Think: 1, Entries: 5}, countCheck(false))
}

// TestInquireNeedsFIFO shows the variant's FIFO assumption is real: without
// it an inquire can overtake the vote it asks about, and some seed deadlocks.
func TestInquireNeedsFIFO(t *testing.T) {
	opt := algotest.Options{N: 8, Params: map[string]string{"variant": "inquire"}}
	if algotest.FirstViolation(t, Spec, opt, 300, analyze.Liveness) == 0 {
		t.Fatal("no seed deadlocked without FIFO channels")
	}
}

func TestNewValidates(t *testing.T) {
	algotest.CheckParams(t, Spec, 4,
		[]map[string]string{nil, {"variant": "basic"}, {"variant": "inquire"}},
		[]map[string]string{{"variant": "fixed"}, {"sets": "grid"}})
}

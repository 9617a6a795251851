package lamport

import (
	"errors"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/algotest"
)

// TestScripts runs the interaction scripts in testdata; each block cites the
// note it exercises. Rewrite with go test -rewrite.
func TestScripts(t *testing.T) {
	algotest.RunScripts(t, Spec, "testdata")
}

// TestSweepFIFO runs the algorithm on FIFO channels, the assumption it
// needs, for many seeds and group sizes: mutual exclusion, every request
// entered, and exactly 3(N-1) messages per entry.
func TestSweepFIFO(t *testing.T) {
	count := algotest.CountCheck(func(_, n int) int { return 3 * (n - 1) })
	algotest.Sweep(t, Spec, []int{1, 2, 3, 5, 8}, 300, algotest.Options{FIFO: true}, count)
	algotest.Sweep(t, Spec, []int{3, 5}, 100, algotest.Options{FIFO: true, Think: 1, Entries: 6}, count)
}

// TestNeedsFIFO shows the assumption is real: without FIFO channels some
// seed breaks mutual exclusion (see testdata/not_fifo.txt for the
// interleaving).
func TestNeedsFIFO(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		_, err := algotest.Run(Spec, algotest.Options{N: 3, Seed: seed, Think: 1})
		var f *algotest.Failure
		if errors.As(err, &f) && f.Violates(analyze.MutexCausal) {
			t.Logf("seed %d: %v", seed, err)
			return
		}
		if err != nil {
			t.Fatalf("seed: %d: %v", seed, err)
		}
	}
	t.Fatal("no seed out of 300 broke mutual exclusion without FIFO channels")
}

func TestNewValidates(t *testing.T) {
	if _, err := New(algo.Config{ID: 0, N: 2, Params: map[string]string{"fifo": "1"}}); err == nil {
		t.Error("an unknown parameter was accepted")
	}
}

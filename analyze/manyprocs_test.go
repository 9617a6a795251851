package analyze

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// manyProcs is the crafted trace of the issue: n processes, each with one
// send that is never received, and no recorded clocks (its file is some
// 55 bytes an event).
func manyProcs(n int) []trace.Event {
	evs := make([]trace.Event, n)
	for p := range evs {
		evs[p] = trace.Event{Proc: p, Seq: 1, Kind: trace.KindSend, Msg: trace.MsgID(p, 1), MsgType: "m",
			Peer: (p + 1) % n, Lamport: 1, Wall: int64(p)}
	}
	return evs
}

// heapReader wraps a Reader and measures the live heap (after a GC) every
// `every` events and at the end.
type heapReader struct {
	r     trace.Reader
	n     int
	every int
	peak  uint64
}

func (h *heapReader) Next() (*trace.Event, error) {
	if h.n%h.every == 0 {
		h.sample()
	}
	h.n++
	return h.r.Next()
}

func (h *heapReader) sample() {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	h.peak = max(h.peak, m.HeapAlloc)
}

// checkHeap runs every check over evs of a run of n processes and returns
// how much the live heap grew at most.
func checkHeap(t testing.TB, n int, evs []trace.Event) uint64 {
	var base runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	r := &heapReader{r: &trace.SliceReader{Events: evs}, every: max(1, len(evs)/16)}
	results, err := Evaluate(trace.Run{Nodes: n, Complete: true}, r, All)
	r.sample()
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(results)
	if r.peak < base.HeapAlloc {
		return 0
	}
	return r.peak - base.HeapAlloc
}

// TestManyProcessesMemory: memory grows with the events, not with the
// processes squared. The trace of 16,384 processes, each with one
// unreceived send, made dmx check use 1.9 GB: a vector clock of N entries
// per process and per message in flight. Here 4,096 processes (dense
// clocks would need 256 MB) must fit in 4 KiB an event.
func TestManyProcessesMemory(t *testing.T) {
	const n = 4096
	grew := checkHeap(t, n, manyProcs(n))
	t.Logf("%d processes, %d events: the heap grew by %.1f MiB", n, n, float64(grew)/(1<<20))
	if budget := uint64(n * 4096); grew > budget {
		t.Errorf("the heap grew by %d MiB for %d events; want under %d MiB", grew>>20, n, budget>>20)
	}
}

// BenchmarkManyProcesses measures the trace itself: every check
// over 16,384 processes with one unreceived send each. peak-MB is the
// growth of the live heap.
func BenchmarkManyProcesses(b *testing.B) {
	for _, n := range []int{1024, 16384} {
		b.Run(fmt.Sprintf("procs=%d", n), func(b *testing.B) {
			evs := manyProcs(n)
			var grew uint64
			for b.Loop() {
				grew = checkHeap(b, n, evs)
			}
			b.ReportMetric(float64(grew)/(1<<20), "peak-MB")
		})
	}
}

// withSparseClocks runs test with sparse clocks whatever the number of
// processes.
func withSparseClocks(t *testing.T, test func(*testing.T)) {
	defer func(n int) { sparseAbove = n }(sparseAbove)
	sparseAbove = 0
	test(t)
}

// TestSparseClocks: with sparse clocks, happens-before, the rebuilt clocks
// and every check agree with the brute-force references, as with dense
// ones (the property tests, run again), and Clock gives the same dense
// clocks event for event.
func TestSparseClocks(t *testing.T) {
	t.Run("closure", func(t *testing.T) { withSparseClocks(t, TestHBAgainstClosure) })
	t.Run("checks", func(t *testing.T) { withSparseClocks(t, TestChecksAgainstBruteForce) })
	t.Run("clocks", func(t *testing.T) {
		for _, seed := range seeds(t) {
			rng := rand.New(rand.NewPCG(seed, 0x5ba))
			b := randomTrace(rng)
			evs := shuffle(rng, b)
			walk := func(sparse int) []string {
				defer func(n int) { sparseAbove = n }(sparseAbove)
				sparseAbove = sparse
				var out []string
				if _, err := Walk(b.Run(true), &trace.SliceReader{Events: evs}, func(ev *trace.Event, hb *HB) {
					out = append(out, ev.Ref().String()+" "+hb.Clock().String())
				}); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				return out
			}
			if dense, sparse := walk(1<<20), walk(0); !slices.Equal(dense, sparse) {
				t.Fatalf("seed %d: clocks differ:\ndense  %v\nsparse %v", seed, dense, sparse)
			}
		}
	})
}

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

// tokenChain is a lock passed along a chain of n processes: each asks for
// it at once, and P(k) enters after receiving the token from P(k-1) and
// passes it on to P(k+1). P(skew)'s clock is behind: it receives the
// token stamped before it was sent and its section overlaps its
// predecessor's in wall time although one exited before the other entered.
// The rows are shuffled. With cut, the send of P(skew-1) is left out, as a
// dead recorder leaves it; cut then counts the events that cannot be
// placed (those of P(skew) from its receive on and of every later process
// from its receive on).
func tokenChain(n, skew int, withCut bool) (evs []trace.Event, recv trace.Ref, cut int64) {
	const ms = int64(1_000_000)
	t, lam := startWall, uint64(1)
	next := func() (int64, uint64) { t += ms; lam++; return t, lam }
	for p := range n {
		evs = append(evs, trace.Event{Proc: p, Seq: 1, Kind: trace.KindCSRequest, Resource: "cs", Lamport: 1, Wall: startWall, Peer: trace.NoPeer})
	}
	seq := 1
	for p := range n {
		seq = 1
		add := func(kind trace.Kind, set func(*trace.Event)) {
			seq++
			w, l := next()
			ev := trace.Event{Proc: p, Seq: int64(seq), Kind: kind, Resource: "cs", Lamport: l, Wall: w, Peer: trace.NoPeer}
			if set != nil {
				set(&ev)
			}
			if p == skew {
				// 2.5ms behind: the receive is stamped before the send,
				// the section within the predecessor's.
				ev.Wall -= 5 * ms / 2
			}
			if withCut && p >= skew && ev.Kind != trace.KindCSRequest {
				cut++
			}
			evs = append(evs, ev)
		}
		if p > 0 {
			add(trace.KindReceive, func(ev *trace.Event) {
				ev.Resource, ev.Msg, ev.Peer, ev.MsgType = "", trace.MsgID(p-1, 1), p-1, "token"
			})
			if p == skew {
				recv = evs[len(evs)-1].Ref()
			}
		}
		add(trace.KindCSEnter, nil)
		add(trace.KindCSExit, nil)
		if p < n-1 && !(withCut && p == skew-1) {
			add(trace.KindSend, func(ev *trace.Event) {
				ev.Resource, ev.Msg, ev.Peer, ev.MsgType = "", trace.MsgID(p, 1), p+1, "token"
			})
		}
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(skew)))
	rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	return evs, recv, cut
}

// TestManyProcessesChecks: beyond sparseAbove processes the checks that
// carry wall times and Lamport clocks along happens-before (clock-skew,
// mutex-realtime, clocks), take rows out of seq order, keep clocks of
// waiting requests (fairness, starvation) and count an abandoned run's cut
// say what they say with dense clocks, and find what is planted.
func TestManyProcessesChecks(t *testing.T) {
	for _, n := range []int{5, sparseAbove + 476} {
		skew := n / 2
		// Sparse clocks as they come beyond sparseAbove, forced below it.
		sparseAt := sparseAbove
		if n <= sparseAt {
			sparseAt = 0
		}
		evaluate := func(t *testing.T, sparse int, evs []trace.Event, run trace.Run) ([]Result, End) {
			defer func(n int) { sparseAbove = n }(sparseAbove)
			sparseAbove = sparse
			end, err := Walk(run, &trace.SliceReader{Events: slices.Clone(evs)}, func(ev *trace.Event, hb *HB) {
				if want := n > sparse; hb.sparse != want {
					t.Fatalf("%d processes, sparse above %d: sparse clocks %v", n, sparse, hb.sparse)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			results, err := Evaluate(run, &trace.SliceReader{Events: slices.Clone(evs)}, All)
			if err != nil {
				t.Fatal(err)
			}
			return results, end
		}
		t.Run(fmt.Sprintf("procs=%d", n), func(t *testing.T) {
			evs, recv, _ := tokenChain(n, skew, false)
			run := trace.Run{ID: 1, Algorithm: "test", Nodes: n, Complete: true, Started: startWall}
			dense, _ := evaluate(t, 1<<20, evs, run)
			sparse, _ := evaluate(t, sparseAt, evs, run)
			for i := range dense {
				if d, s := expectation(dense[i]), expectation(sparse[i]); d != s {
					t.Errorf("%s: dense and sparse clocks disagree:\ndense:\n%ssparse:\n%s", dense[i].Check, d, s)
				}
			}
			got := map[string]Result{}
			for _, r := range dense {
				got[r.Check] = r
			}
			if r := got["clock-skew"]; r.Verdict != Violated || !slices.ContainsFunc(r.Findings, func(f Finding) bool { return slices.Contains(f.Events, recv) }) {
				t.Errorf("clock-skew %s, want a finding naming %v: %v", r.Verdict, recv, r.Findings)
			}
			for _, c := range []string{"clocks", "mutex-causal", "mutex-realtime", "liveness", "fairness"} {
				if r := got[c]; r.Verdict != OK {
					t.Errorf("%s %s, want ok: %s %v", c, r.Verdict, r.Note, r.Findings)
				}
			}
		})
		t.Run(fmt.Sprintf("abandoned procs=%d", n), func(t *testing.T) {
			evs, _, cut := tokenChain(n, skew, true)
			run := trace.Run{ID: 1, Algorithm: "test", Nodes: n, Status: trace.StatusAbandoned, Started: startWall}
			for _, sparse := range []int{1 << 20, sparseAt} {
				results, end := evaluate(t, sparse, evs, run)
				if end.Cut != cut {
					t.Errorf("sparse above %d: End.Cut %d, want %d (P%d's receive and all behind it)", sparse, end.Cut, cut, skew)
				}
				for _, r := range results {
					if r.Verdict == OK {
						t.Errorf("sparse above %d: %s ok on a run cut short by its recorder's death", sparse, r.Check)
					}
				}
			}
		})
	}
}

package analyze

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/dmxlab/dmx/trace"
)

// The benchmarks measure the cost of checking a big trace against the cost
// of just reading it from SQLite (the target: check under 3x read), and
// show that memory does not grow with events x processes:
//
//	go test ./analyze -run XXX -bench . -benchtime 3x
//
// The trace (16 processes, 1,000,000 events; 100,000 with -short) is
// generated once into the temporary directory and reused.

const (
	benchProcs   = 16
	benchVersion = 2 // bump when the generator changes
)

func benchSizes() []int {
	if testing.Short() {
		return []int{100_000}
	}
	return []int{100_000, 1_000_000}
}

// benchTrace returns the path and run of a generated trace of n events,
// making it if it is not cached yet.
func benchTrace(b *testing.B, n int) (string, trace.Run) {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("dmx-analyze-bench-v%d-%dp-%d.db", benchVersion, benchProcs, n))
	if run, err := onlyRun(path); err == nil && run.Complete {
		return path, run
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	start := time.Now()
	if err := genBenchTrace(path, n, 1); err != nil {
		b.Fatalf("generate %s: %v", path, err)
	}
	b.Logf("generated %s (%d events) in %v", path, n, time.Since(start).Round(time.Millisecond))
	run, err := onlyRun(path)
	if err != nil {
		b.Fatal(err)
	}
	// The generator must make a correct run, or the benchmark measures
	// the reporting of findings: a pass with every check fails on any
	// other verdict than ok.
	benchPass(b, path, run, All, false, false)
	return path, run
}

// onlyRun returns the run of the trace at path, which must hold one.
func onlyRun(path string) (trace.Run, error) {
	s, err := trace.Open(path)
	if err != nil {
		return trace.Run{}, err
	}
	defer s.Close()
	runs, err := s.Runs()
	if err != nil {
		return trace.Run{}, err
	}
	if len(runs) != 1 {
		return trace.Run{}, fmt.Errorf("%s holds %d runs, want 1", path, len(runs))
	}
	return runs[0], nil
}

// genBenchTrace records a run of n events over 16 processes: two resources,
// each guarded by a token passed around the ring (request, enter, exit, pass
// the token on), and application messages between random processes in
// between, received in any order. Every event is stamped with correct
// Lamport and vector clocks. Each process's events reach the writer in
// batches of random size, as a node's events reach the runner through a
// pipe, so the insertion order often puts a receive before its send.
func genBenchTrace(path string, n int, seed uint64) error {
	s, err := trace.Create(path)
	if err != nil {
		return err
	}
	defer s.Close()
	const wall0 = int64(1_700_000_000_000_000_000)
	run, err := s.BeginRun(trace.Run{Algorithm: "bench-token-ring", Nodes: benchProcs, Seed: seed, Mode: "sim", Started: wall0})
	if err != nil {
		return err
	}
	w := s.NewWriter(run)

	rng := rand.New(rand.NewPCG(seed, 0xbe7c4))
	type msg struct {
		id  int64
		typ string
		res string
		vc  trace.VC
		lam uint64
	}
	var (
		seq     [benchProcs]int64
		lam     [benchProcs]uint64
		vc      [benchProcs]trace.VC
		nsent   [benchProcs]int64
		inbox   [benchProcs][]msg // sent to the process, not received yet
		batch   [benchProcs][]trace.Event
		wall    = wall0
		written int
		flush   = func(p int) error {
			for i := range batch[p] {
				if err := w.Add(&batch[p][i]); err != nil {
					return err
				}
			}
			batch[p] = batch[p][:0]
			return nil
		}
	)
	for p := range vc {
		vc[p] = make(trace.VC, benchProcs)
	}
	emit := func(p int, ev trace.Event) error {
		seq[p]++
		lam[p]++
		vc[p][p]++
		wall += 500 + rng.Int64N(1000)
		ev.Proc, ev.Seq, ev.Lamport, ev.VC, ev.Wall = p, seq[p], lam[p], vc[p].Clone(), wall
		batch[p] = append(batch[p], ev)
		written++
		if rng.IntN(8) == 0 {
			return flush(p)
		}
		return nil
	}
	send := func(p, to int, typ, res string) error {
		nsent[p]++
		id := trace.MsgID(p, nsent[p])
		err := emit(p, trace.Event{Kind: trace.KindSend, Msg: id, MsgType: typ, Peer: to, Resource: res,
			Detail: fmt.Appendf(nil, `{"ts":%d}`, lam[p]+1)})
		inbox[to] = append(inbox[to], msg{id, typ, res, vc[p].Clone(), lam[p]})
		return err
	}
	recv := func(p, i int) error {
		m := inbox[p][i]
		inbox[p][i] = inbox[p][len(inbox[p])-1]
		inbox[p] = inbox[p][:len(inbox[p])-1]
		vc[p].Merge(m.vc)
		lam[p] = max(lam[p], m.lam)
		return emit(p, trace.Event{Kind: trace.KindReceive, Msg: m.id, MsgType: m.typ, Peer: int(m.id >> 32), Resource: m.res})
	}

	resources := []string{"alpha", "beta"}
	holder := []int{0, benchProcs / 2} // who holds each token (-1: in flight)
	inside := []bool{false, false}
	for written < n {
		p := rng.IntN(benchProcs)
		var err error
		// A token waiting in p's inbox is received first.
		tok := -1
		for i, m := range inbox[p] {
			if m.typ == "token" {
				tok = i
				break
			}
		}
		switch x := rng.IntN(10); {
		case tok >= 0:
			r := 0
			if inbox[p][tok].res == resources[1] {
				r = 1
			}
			holder[r] = p
			err = recv(p, tok)
		case x < 3 && (holder[0] == p || holder[1] == p):
			r := 0
			if holder[r] != p {
				r = 1
			}
			switch {
			case inside[r]:
				if err = emit(p, trace.Event{Kind: trace.KindCSExit, Resource: resources[r], Peer: trace.NoPeer}); err == nil {
					inside[r] = false
					holder[r] = -1
					err = send(p, (p+1)%benchProcs, "token", resources[r])
				}
			default:
				if err = emit(p, trace.Event{Kind: trace.KindCSRequest, Resource: resources[r], Peer: trace.NoPeer}); err == nil {
					err = emit(p, trace.Event{Kind: trace.KindCSEnter, Resource: resources[r], Peer: trace.NoPeer})
					inside[r] = true
				}
			}
		case x < 3:
			err = emit(p, trace.Event{Kind: trace.KindInternal, Peer: trace.NoPeer})
		case x < 6: // fewer sends than receives: the messages in flight stay few
			to := (p + 1 + rng.IntN(benchProcs-1)) % benchProcs
			err = send(p, to, "app", "")
		default:
			if len(inbox[p]) == 0 {
				continue
			}
			err = recv(p, rng.IntN(len(inbox[p])))
		}
		if err != nil {
			return err
		}
	}
	for p := range batch {
		if err := flush(p); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return s.EndRun(run, wall, true, "ok")
}

// peakReader wraps a Reader and, with sample, measures the live heap
// (after a GC) every 50,000 events.
type peakReader struct {
	r      trace.Reader
	n      int
	peak   uint64
	sample bool
}

func (p *peakReader) Next() (*trace.Event, error) {
	p.n++
	if p.sample && p.n%50_000 == 0 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		p.peak = max(p.peak, m.HeapAlloc)
	}
	return p.r.Next()
}

// benchPass opens the trace, reads run through it, and with checks != nil
// (or hbOnly) runs them too. With sample it returns the largest growth of
// the live heap seen during the pass.
func benchPass(tb testing.TB, path string, run trace.Run, checks []*Check, hbOnly, sample bool) (events int, peak uint64) {
	s, err := trace.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	er, err := s.Events(run.ID)
	if err != nil {
		tb.Fatal(err)
	}
	defer er.Close()
	var base runtime.MemStats
	if sample {
		runtime.GC()
		runtime.ReadMemStats(&base)
	}
	r := &peakReader{r: er, sample: sample}
	switch {
	case hbOnly:
		_, err = Walk(run, r, func(*trace.Event, *HB) {})
	case checks != nil:
		var results []Result
		results, err = Evaluate(run, r, checks)
		if err == nil && Summarize(results) != OK {
			tb.Fatalf("verdict %s: %v", Summarize(results), results)
		}
	default:
		for {
			if _, err = r.Next(); err != nil {
				break
			}
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil {
		tb.Fatal(err)
	}
	if r.peak > base.HeapAlloc {
		peak = r.peak - base.HeapAlloc
	}
	return r.n - 1, peak
}

// BenchmarkRead reads all events through Store.Events: the baseline.
func BenchmarkRead(b *testing.B) { benchmark(b, "read") }

// BenchmarkHB reads and rebuilds happens-before, with no check.
func BenchmarkHB(b *testing.B) { benchmark(b, "hb") }

// BenchmarkCheck reads, rebuilds happens-before and runs all checks. It
// also reports its time per event as a multiple of BenchmarkRead's
// (x-read, measured in the same process: the target is < 3).
func BenchmarkCheck(b *testing.B) { benchmark(b, "check") }

func benchmark(b *testing.B, what string) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			path, run := benchTrace(b, n)
			var readNs float64
			if what == "check" {
				// the baseline, best of two, in this process and right now
				for range 2 {
					t := time.Now()
					benchPass(b, path, run, nil, false, false)
					if d := float64(time.Since(t).Nanoseconds()); readNs == 0 || d < readNs {
						readNs = d
					}
				}
			}
			_, peak := benchPass(b, path, run, checksFor(what), what == "hb", true)
			b.ReportAllocs()
			var events int
			for b.Loop() {
				events, _ = benchPass(b, path, run, checksFor(what), what == "hb", false)
			}
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(perOp/float64(events), "ns/event")
			b.ReportMetric(float64(peak)/(1<<20), "peak-live-heap-MB")
			if readNs > 0 {
				b.ReportMetric(perOp/readNs, "x-read")
			}
		})
	}
}

func checksFor(what string) []*Check {
	if what == "check" {
		return All
	}
	return nil
}

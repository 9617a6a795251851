package stats

import (
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// genReader makes a run of n events on the fly, without keeping them: 16
// processes pass a token around a ring (request, enter, exit, pass it on)
// and send each other application messages in between, received a few
// events later. Its own memory is the messages in flight.
type genReader struct {
	n, made int
	rng     *rand.Rand
	seq     [16]int64
	sent    [16]int64
	inbox   [16][]msg
	holder  int // -1: the token is in flight
	phase   int // of the holder: 0 request, 1 enter, 2 exit, 3 pass
	ev      trace.Event
	wall    int64
	sample  func() // called every 10,000 events
}

type msg struct {
	id  int64
	typ string
}

func newGen(n int, seed uint64) *genReader {
	return &genReader{n: n, rng: rand.New(rand.NewPCG(seed, 7)), holder: 0}
}

func (g *genReader) emit(p int, k trace.Kind) *trace.Event {
	g.seq[p]++
	g.wall += 1000
	g.made++
	if g.sample != nil && g.made%10_000 == 0 {
		g.sample()
	}
	g.ev = trace.Event{Proc: p, Seq: g.seq[p], Kind: k, Wall: g.wall, Peer: trace.NoPeer, Resource: "cs"}
	return &g.ev
}

func (g *genReader) send(p, to int, typ string) *trace.Event {
	g.sent[p]++
	id := trace.MsgID(p, g.sent[p])
	g.inbox[to] = append(g.inbox[to], msg{id, typ})
	ev := g.emit(p, trace.KindSend)
	ev.Msg, ev.Peer, ev.MsgType = id, to, typ
	return ev
}

func (g *genReader) Next() (*trace.Event, error) {
	if g.made >= g.n {
		return nil, io.EOF
	}
	p := g.rng.IntN(16)
	if len(g.inbox[p]) > 0 && (g.rng.IntN(4) != 0 || g.inbox[p][0].typ == "token") {
		m := g.inbox[p][0]
		g.inbox[p] = g.inbox[p][1:]
		if m.typ == "token" {
			g.holder, g.phase = p, 0
		}
		ev := g.emit(p, trace.KindReceive)
		ev.Msg, ev.Peer, ev.MsgType = m.id, int(m.id>>32), m.typ
		return ev, nil
	}
	if p == g.holder && g.rng.IntN(2) == 0 {
		g.phase++
		switch g.phase {
		case 1:
			return g.emit(p, trace.KindCSRequest), nil
		case 2:
			return g.emit(p, trace.KindCSEnter), nil
		case 3:
			return g.emit(p, trace.KindCSExit), nil
		default:
			g.holder = -1
			return g.send(p, (p+1)%16, "token"), nil
		}
	}
	return g.send(p, g.rng.IntN(16), "app"), nil
}

// TestStreaming: the live heap while Compute walks a run does not grow
// with the run's length (nothing is kept per event).
func TestStreaming(t *testing.T) {
	sizes := []int{100_000, 1_000_000}
	if testing.Short() {
		sizes = []int{50_000, 400_000}
	}
	var peaks []uint64
	for _, n := range sizes {
		g := newGen(n, 1)
		var peak uint64
		g.sample = func() {
			if g.made%100_000 != 0 {
				return
			}
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		s, err := Compute(trace.Run{Algorithm: "gen", Nodes: 16, Complete: true}, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Events != int64(n) || s.Mutex == nil || s.Mutex.CriticalSections == 0 {
			t.Fatalf("stats of the generated run: %+v", s)
		}
		peaks = append(peaks, peak-min(peak, base.HeapAlloc))
	}
	// Ten times the events may not take more than twice the memory (plus
	// slack for the messages in flight, which the generator bounds).
	if peaks[1] > 2*peaks[0]+1<<20 {
		t.Errorf("live heap grows with the run: %d bytes for %d events, %d for %d", peaks[0], sizes[0], peaks[1], sizes[1])
	}
	t.Logf("live heap: %d bytes for %d events, %d for %d", peaks[0], sizes[0], peaks[1], sizes[1])
}

// BenchmarkCompute measures stats over a generated run of 100,000 events
// (allocations are recycled carries: allocs/op does not grow with events).
func BenchmarkCompute(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compute(trace.Run{Algorithm: "gen", Nodes: 16, Complete: true}, newGen(100_000, 1), nil); err != nil {
			b.Fatal(err)
		}
	}
}

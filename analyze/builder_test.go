package analyze

import (
	"slices"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// builder writes traces for tests as scripts: each call records one event
// at one process and stamps it with correct Lamport and vector clocks, the
// way dmx's runtime does. Wall times advance by step (1ms) per event unless
// At sets them.
type builder struct {
	n      int
	events []trace.Event
	vc     []trace.VC
	lam    []uint64
	seq    []int64
	nsent  []int64
	msgs   map[int64]stamp
	wall   int64
	step   int64
}

type stamp struct {
	from int
	typ  string
	vc   trace.VC
	lam  uint64
}

const startWall = int64(1_000_000_000_000)

func newBuilder(n int) *builder {
	b := &builder{n: n, lam: make([]uint64, n), seq: make([]int64, n), nsent: make([]int64, n),
		msgs: make(map[int64]stamp), wall: startWall, step: 1_000_000}
	for range n {
		b.vc = append(b.vc, make(trace.VC, n))
	}
	return b
}

// At makes the next event happen at startWall + ms milliseconds.
func (b *builder) At(ms int64) *builder {
	b.wall = startWall + ms*1_000_000 - b.step
	return b
}

func (b *builder) emit(p int, kind trace.Kind, set func(*trace.Event)) trace.Ref {
	b.seq[p]++
	b.vc[p][p]++
	b.lam[p]++
	b.wall += b.step
	ev := trace.Event{Proc: p, Seq: b.seq[p], Kind: kind, Lamport: b.lam[p], VC: b.vc[p].Clone(), Wall: b.wall, Peer: trace.NoPeer}
	if set != nil {
		set(&ev)
	}
	b.events = append(b.events, ev)
	return ev.Ref()
}

// Send records a send from -> to and returns the message id.
func (b *builder) Send(from, to int, typ string) int64 {
	b.nsent[from]++
	id := trace.MsgID(from, b.nsent[from])
	b.emit(from, trace.KindSend, func(ev *trace.Event) { ev.Msg, ev.Peer, ev.MsgType = id, to, typ })
	b.msgs[id] = stamp{from, typ, b.vc[from].Clone(), b.lam[from]}
	return id
}

// Multicast sends one message of type typ from from to each of to.
func (b *builder) Multicast(from int, typ string, to ...int) []int64 {
	var ids []int64
	for _, t := range to {
		ids = append(ids, b.Send(from, t, typ))
	}
	return ids
}

// Recv records the delivery of message id at process to.
func (b *builder) Recv(to int, id int64) trace.Ref {
	m, ok := b.msgs[id]
	if !ok {
		panic("builder: receive of a message never sent")
	}
	b.vc[to].Merge(m.vc)
	b.lam[to] = max(b.lam[to], m.lam)
	return b.emit(to, trace.KindReceive, func(ev *trace.Event) { ev.Msg, ev.Peer, ev.MsgType = id, m.from, m.typ })
}

func (b *builder) Request(p int, res string) trace.Ref {
	return b.emit(p, trace.KindCSRequest, func(ev *trace.Event) { ev.Resource = res })
}

func (b *builder) Enter(p int, res string) trace.Ref {
	return b.emit(p, trace.KindCSEnter, func(ev *trace.Event) { ev.Resource = res })
}

func (b *builder) Exit(p int, res string) trace.Ref {
	return b.emit(p, trace.KindCSExit, func(ev *trace.Event) { ev.Resource = res })
}

func (b *builder) Crash(p int) trace.Ref    { return b.emit(p, trace.KindCrash, nil) }
func (b *builder) Internal(p int) trace.Ref { return b.emit(p, trace.KindInternal, nil) }

// Event returns the recorded event ref, to tamper with.
func (b *builder) Event(ref trace.Ref) *trace.Event {
	for i := range b.events {
		if b.events[i].Ref() == ref {
			return &b.events[i]
		}
	}
	panic("builder: no event " + ref.String())
}

// Run describes the run; complete says whether it ended normally.
func (b *builder) Run(complete bool) trace.Run {
	return trace.Run{ID: 1, Algorithm: "test", Nodes: b.n, Complete: complete, Started: startWall}
}

// Reader reads a copy of the events in recording order.
func (b *builder) Reader() *trace.SliceReader {
	return &trace.SliceReader{Events: slices.Clone(b.events)}
}

// checkOne evaluates check c alone on run, read from r; a broken trace
// fails the test.
func checkOne(t *testing.T, run trace.Run, r trace.Reader, c *Check, opts ...Option) Result {
	t.Helper()
	res, err := Evaluate(run, r, []*Check{c}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return res[0]
}

// runOne runs one check over the builder's trace.
func runOne(t *testing.T, b *builder, complete bool, c *Check, opts ...Option) Result {
	t.Helper()
	return checkOne(t, b.Run(complete), b.Reader(), c, opts...)
}

// runChecks runs checks over the builder's trace of a complete run; a
// broken trace fails the test.
func runChecks(t *testing.T, b *builder, checks []*Check, opts ...Option) []Result {
	t.Helper()
	res, err := Evaluate(b.Run(true), b.Reader(), checks, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// said is what r says: its first finding, or its note if it found nothing.
func said(r Result) string {
	if len(r.Findings) > 0 {
		return r.Findings[0].Message
	}
	return r.Note
}

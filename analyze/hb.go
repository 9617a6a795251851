package analyze

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/analyze/internal/freelist"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// MaxProcs bounds the number of processes of a run and the process ids of
// its events: beyond it a trace is taken for broken rather than a reason to
// allocate.
const MaxProcs = 1 << 16

// BrokenError reports a trace that breaks the event model's rules, so that
// happens-before cannot be rebuilt: a gap or a repeat in a process's
// sequence numbers, a receive whose message was never sent, a message sent
// twice, a process id out of range. It names the event.
type BrokenError struct {
	Event trace.Ref
	Msg   string // starts with the event, as in "P2#17 cs_enter(r) follows P2#15"
}

func (e *BrokenError) Error() string { return "broken trace: " + e.Msg }

func broken(ev *trace.Event, format string, args ...any) *BrokenError {
	return &BrokenError{Event: ev.Ref(), Msg: ev.String() + " " + fmt.Sprintf(format, args...)}
}

// End describes the run once all its events were seen.
type End struct {
	Complete  bool  // the run ended normally and the trace holds all of it (Run.Complete)
	Start     int64 // wall ns: the earliest event's wall time (Run.Started in a trace without)
	Wall      int64 // wall ns: the latest event's wall time (Run.Ended in a trace without)
	Events    int64 // events delivered
	Procs     int   // processes seen (Run.Nodes when it is set)
	HasWall   bool  // some event carried a wall time
	HasClocks bool  // some event carried a recorded Lamport or vector clock
	// Cut counts the events of an abandoned run (its recorder died, see
	// trace.StatusAbandoned) that could not be placed: receives whose send
	// was never written, and what followed them in their process (and the
	// receives parked behind those). The trace ends in a cut there, not in
	// a break.
	Cut int64
	// InFlight are the messages sent and never received, in the order of
	// their sends in the walk: on their way when the run ended, or lost
	// (dropped, or to a process that crashed). Checks name them as the
	// cause of what did not happen, or as what was still in progress.
	InFlight []Message
}

// Message is what HB.Send tells about the message of the current receive.
type Message struct {
	ID   int64
	Send trace.Ref // the send event
	To   int       // the receiver the send named (its Peer)
	Type string
	Wall int64 // wall time of the send
	Pos  int64 // the send's position in the walk (1 for the first event visited)
}

// HB rebuilds happens-before over a run while Walk streams it, and answers
// questions about the current event.
//
// Happens-before is the transitive closure of program order (P#k -> P#k+1)
// and of send -> receive of one message id (the Msg column, and the
// trace.Links of imported events, which may send or receive several). HB
// computes its own vector
// clock for every event (VC[p] = how many events of p happened before or
// at it); the recorded clocks are not trusted, only verified (see Clocks).
//
// Memory: one current vector clock per process, one per message sent and
// not yet received, a few bits per received message id (who received it, to
// recognize duplicated deliveries), the events of a process that must wait
// for a send the reader has not produced yet, and those a reader gave
// before an earlier one of their process (see Walk). Nothing is kept per
// event. Beyond sparseAbove processes the clocks are sparse (only their
// non-zero entries), so that memory grows with what the processes know of
// each other, not with their number squared.
type HB struct {
	run    trace.Run
	fixed  bool // run.Nodes > 0: every clock has exactly Nodes entries
	sparse bool // clocks are sparse (proc.svc, sent.svc), not dense
	procs  []*proc

	pending map[int64]*sent     // sent and not yet received
	spare   freelist.List[sent] // recycled entries of pending
	recvd   msgSet              // ids received at least once, and by whom
	held    int                 // events held back by all processes (see proc.held)
	waiting map[int64][]int     // message id -> processes parked on its receive
	ready   []int               // processes to resume

	cur       *trace.Event
	curVC     trace.VC // dense clocks: the current event's
	curSVC    sparseVC // sparse clocks: the current event's
	dense     trace.VC // sparse clocks: Clock's answer, made on demand
	denseOK   bool     // dense holds curSVC
	merged    sparseVC // sparse clocks: a buffer for merges
	curSend   *sent
	curDup    bool
	lamBound  bound[uint64] // of the current event
	wallBound bound[int64]

	minWall, maxWall int64
	delivered        int64
	// The current wait event's detail, read once for all the checks that
	// read it (see Wait): waitAt is the position it was read at.
	wait               trace.Wait
	waitErr            error
	waitAt             int64
	cut                int64
	hasWall, hasClocks bool

	visit func(*trace.Event, *HB)
}

// proc is the state of one process: O(1) besides its clock and the events
// parked behind a receive whose send has not been read yet.
type proc struct {
	id    int
	read  int64         // Seq of the last event taken in program order
	held  seqHeap       // events read before an earlier one of the process, by Seq
	vc    trace.VC      // computed clock of the last event delivered (dense clocks)
	svc   sparseVC      // the same, sparse clocks
	lam   bound[uint64] // largest recorded Lamport clock in the causal past
	wall  bound[int64]  // latest recorded wall time in the causal past
	queue []trace.Event // parked events (copies), queue[head:] still to deliver
	head  int
}

func (p *proc) parked() bool { return p.head < len(p.queue) }

// sent is a message in flight: its send event and that event's clock.
type sent struct {
	ref  trace.Ref
	to   int
	typ  string
	wall int64
	pos  int64
	vc   trace.VC
	svc  sparseVC
	lam  bound[uint64] // in the send's causal past, the send included
	wmax bound[int64]
}

// bound is the largest value of what events record (a Lamport clock, a wall
// time) in a causal past, and one event that carries it. Bounds travel
// along happens-before: program order and messages.
type bound[T uint64 | int64] struct {
	v   T
	ref trace.Ref
}

// max returns the larger of b and o.
func (b bound[T]) max(o bound[T]) bound[T] {
	if o.v > b.v {
		return o
	}
	return b
}

// with returns the bound after an event whose own value is v: b, or v at
// ref if it is larger.
func (b bound[T]) with(v T, ref trace.Ref) bound[T] {
	if v > b.v {
		return bound[T]{v, ref}
	}
	return b
}

// Walk reads one run's events from r and calls visit for each of them in a
// causal order: every event after its program-order predecessor and every
// receive after its send. The reader's order does not matter: the events of
// a process are taken in the order of their sequence numbers (the schema's
// id is only insertion order; an event read before an earlier one of its
// process is held back until that one comes), and a receive may come before
// its send (the receiving process waits until the send is read).
//
// The Event given to visit and the HB's answers are valid only during the
// call. Walk stops at the first error of r (wrapped) and returns a
// *BrokenError (several joined at the end of the trace) when the trace
// breaks the model's rules.
func Walk(run trace.Run, r trace.Reader, visit func(ev *trace.Event, hb *HB)) (End, error) {
	h := &HB{
		run:     run,
		fixed:   run.Nodes > 0,
		pending: make(map[int64]*sent),
		waiting: make(map[int64][]int),
		recvd:   newMsgSet(run.Nodes),
		visit:   visit,
	}
	if run.Nodes > MaxProcs {
		return h.end(), fmt.Errorf("broken trace: run %d has %d processes, more than %d", run.ID, run.Nodes, MaxProcs)
	}
	h.sparse = run.Nodes > sparseAbove
	if h.fixed {
		h.procs = make([]*proc, run.Nodes)
	}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return h.end(), fmt.Errorf("read trace: %w", err)
		}
		if err := h.add(ev); err != nil {
			return h.end(), err
		}
	}
	err := h.close() // first: it counts the cut
	return h.end(), err
}

// Current returns the event being visited.
func (h *HB) Current() *trace.Event { return h.cur }

// Clock returns the computed vector clock of the current event. It is HB's
// own storage: read it during the visit, Clone it to keep it. In a run
// without Nodes it may be shorter than the number of processes (missing
// entries are 0). With many processes (sparse clocks) it costs O(processes)
// the first time it is asked for an event: use Knows or Stamp where they
// serve.
func (h *HB) Clock() trace.VC {
	if !h.sparse || h.cur == nil {
		return h.curVC
	}
	if !h.denseOK {
		h.dense = h.curSVC.dense(h.dense, len(h.procs))
		h.denseOK = true
	}
	return h.dense
}

// Known calls fn for each process some event of which happened before or
// at the current event, with how many (the non-zero entries of Clock, in
// process order), without making the dense clock: an exporter keeps them
// so, in memory that grows with what causality links, not with the
// processes squared.
func (h *HB) Known(fn func(p int, n uint64)) {
	if h.sparse {
		for _, e := range h.curSVC {
			if e.n != 0 {
				fn(e.p, e.n)
			}
		}
		return
	}
	for p, n := range h.curVC {
		if n != 0 {
			fn(p, n)
		}
	}
}

// Knows returns how many events of process p happened before or at the
// current event (its computed VC[p]).
func (h *HB) Knows(p int) int64 {
	if h.sparse {
		return int64(h.curSVC.get(p))
	}
	if p < 0 || p >= len(h.curVC) {
		return 0
	}
	return int64(h.curVC[p])
}

// snapshot is a copy of a computed clock kept beyond the visit: dense or
// sparse as HB's clocks are, so that a check keeping one per waiting request
// does not undo what sparse clocks save.
type snapshot struct {
	dense  trace.VC
	sparse sparseVC
}

// snapshot returns a copy of the current event's clock.
func (h *HB) snapshot() snapshot {
	if h.sparse {
		return snapshot{sparse: slices.Clone(h.curSVC)}
	}
	return snapshot{dense: slices.Clone(h.curVC)}
}

// get returns how many events of process p the clock knows of.
func (c snapshot) get(p int) int64 {
	if c.sparse != nil {
		return int64(c.sparse.get(p))
	}
	if p < 0 || p >= len(c.dense) {
		return 0
	}
	return int64(c.dense[p])
}

// knows reports whether the clock knows event ref.
func (c snapshot) knows(ref trace.Ref) bool { return c.get(ref.Proc) >= ref.Seq }

// HappenedBefore reports whether event a happened before the current event
// (strictly: an event did not happen before itself). O(1): a -> b iff
// VC(b)[a.Proc] >= a.Seq, the count of a's own process up to a.
func (h *HB) HappenedBefore(a trace.Ref) bool {
	if h.cur == nil || a.Seq < 1 {
		return false
	}
	if a.Proc == h.cur.Proc {
		return a.Seq < h.cur.Seq
	}
	return h.Knows(a.Proc) >= a.Seq
}

// Send tells about the message of the current event if it is a receive
// whose send was seen. A duplicated delivery (a second receive of one
// message id) reports ok false and Duplicate true.
func (h *HB) Send() (m Message, ok bool) {
	if h.curSend == nil {
		return Message{}, false
	}
	s := h.curSend
	return Message{ID: h.cur.Msg, Send: s.ref, To: s.to, Type: s.typ, Wall: s.wall, Pos: s.pos}, true
}

// Wait returns the detail of the current event, a wait event, reading it
// only once however many checks ask.
func (h *HB) Wait() (trace.Wait, error) {
	if h.cur == nil {
		return trace.Wait{}, errors.New("no current event")
	}
	if h.waitAt != h.delivered {
		h.wait, h.waitErr = h.cur.Wait()
		h.waitAt = h.delivered
	}
	return h.wait, h.waitErr
}

// Duplicate reports whether the current event receives a message id that
// was received before: a duplicated delivery. Its send was already merged
// into the causal past of the first receive.
func (h *HB) Duplicate() bool { return h.curDup }

// LamportBound returns the largest recorded Lamport clock among the events
// that happened before the current one, and one event that carries it (0
// if none recorded one). A recorded Lamport clock must exceed it.
func (h *HB) LamportBound() (uint64, trace.Ref) { return h.lamBound.v, h.lamBound.ref }

// WallBound returns the latest recorded wall time among the events that
// happened before the current one, and one event that carries it (0 if
// none recorded one). Wall clocks that agree with causality stamp the
// current event no earlier.
func (h *HB) WallBound() (int64, trace.Ref) { return h.wallBound.v, h.wallBound.ref }

// Wall returns the wall time of the current event.
func (h *HB) Wall() int64 {
	if h.cur == nil {
		return 0
	}
	return h.cur.Wall
}

// MaxWall returns the latest wall time among the events delivered so far.
func (h *HB) MaxWall() int64 { return h.maxWall }

// KnownByAll returns how many events of process q every process knows of
// so far: the least VC[q] over the processes' computed clocks. The events
// of q within it happened before every event still to come. In a run
// without Nodes a process not seen yet may know nothing: it is 0.
func (h *HB) KnownByAll(q int) int64 {
	if !h.fixed || len(h.procs) == 0 {
		return 0
	}
	least := int64(-1)
	for _, p := range h.procs {
		k := int64(0)
		switch {
		case p == nil:
		case h.sparse:
			k = int64(p.svc.get(q))
		case q < len(p.vc):
			k = int64(p.vc[q])
		}
		if least < 0 || k < least {
			least = k
		}
	}
	return least
}

// Procs returns the number of processes: Run.Nodes, or those seen so far.
func (h *HB) Procs() int { return len(h.procs) }

func (h *HB) end() End {
	e := End{
		Complete:  h.run.Complete,
		Start:     h.run.Started,
		Wall:      h.run.Ended,
		Events:    h.delivered,
		Procs:     len(h.procs),
		HasWall:   h.hasWall,
		HasClocks: h.hasClocks,
		Cut:       h.cut,
	}
	if h.hasWall {
		// The events' own clock, not the runner's: a simulated run
		// counts wall time from 0.
		e.Start, e.Wall = h.minWall, h.maxWall
	}
	for id, s := range h.pending {
		e.InFlight = append(e.InFlight, Message{ID: id, Send: s.ref, To: s.to, Type: s.typ, Wall: s.wall, Pos: s.pos})
	}
	slices.SortFunc(e.InFlight, func(a, b Message) int { return cmp.Compare(a.Pos, b.Pos) })
	return e
}

// add takes the next event from the reader.
func (h *HB) add(ev *trace.Event) error {
	p, err := h.proc(ev)
	if err != nil {
		return err
	}
	if ev.Seq != p.read+1 {
		if ev.Seq > p.read+1 {
			return h.hold(p, ev)
		}
		if p.read == 0 {
			return broken(ev, "is the first event of P%d: sequence numbers start at 1", ev.Proc)
		}
		return broken(ev, "follows P%d#%d: a process's events are numbered 1, 2, 3... without gaps", ev.Proc, p.read)
	}
	if err := h.take(p, ev); err != nil {
		return err
	}
	// The events held back that now follow in program order.
	for len(p.held) > 0 && p.held[0].Seq <= p.read+1 {
		next := heap.Pop(&p.held).(trace.Event)
		h.held--
		if next.Seq != p.read+1 {
			return broken(&next, "follows P%d#%d: a process's events are numbered 1, 2, 3... without gaps", next.Proc, p.read)
		}
		if err := h.take(p, &next); err != nil {
			return err
		}
	}
	return nil
}

// maxHeld bounds the events held back for an earlier event of their
// process that the reader has not given yet: beyond it, the missing event
// is taken for a gap rather than a reason to keep the trace in memory.
const maxHeld = 1 << 16

// hold keeps a copy of ev, which the reader gave before an earlier event of
// its process.
func (h *HB) hold(p *proc, ev *trace.Event) error {
	if h.held >= maxHeld {
		return broken(ev, "follows P%d#%d, and more than %d later events wait for the ones between: a process's events are numbered 1, 2, 3... without gaps",
			ev.Proc, p.read, maxHeld)
	}
	c := *ev
	c.VC, c.Detail = slices.Clone(ev.VC), slices.Clone(ev.Detail)
	heap.Push(&p.held, c)
	h.held++
	return nil
}

// proc returns the state of ev's process, made on its first event.
func (h *HB) proc(ev *trace.Event) (*proc, error) {
	if ev.Proc < 0 || (h.fixed && ev.Proc >= len(h.procs)) || ev.Proc >= MaxProcs {
		n := "no process count"
		if h.fixed {
			n = plural.Count(len(h.procs), "process")
		}
		return nil, broken(ev, "names process %d, out of range (run has %s)", ev.Proc, n)
	}
	for ev.Proc >= len(h.procs) {
		h.procs = append(h.procs, nil)
	}
	if !h.sparse && len(h.procs) > sparseAbove {
		h.toSparse()
	}
	p := h.procs[ev.Proc]
	if p == nil {
		p = &proc{id: ev.Proc}
		switch {
		case h.sparse:
		case h.fixed:
			p.vc = make(trace.VC, len(h.procs))
		default:
			p.vc = make(trace.VC, ev.Proc+1)
		}
		h.procs[ev.Proc] = p
	}
	return p, nil
}

// take takes ev, the next event of p in program order.
func (h *HB) take(p *proc, ev *trace.Event) error {
	p.read = ev.Seq
	if ev.Kind == trace.KindReceive && ev.Msg == 0 {
		return broken(ev, "has no message id")
	}
	links, err := h.links(ev)
	if err != nil {
		return err
	}
	if p.parked() {
		p.enqueue(ev)
		return nil
	}
	if msg, ok := h.missing(ev, &links); ok {
		p.enqueue(ev)
		h.park(p, msg)
		return nil
	}
	if err := h.deliver(p, ev, &links); err != nil {
		return err
	}
	return h.resume()
}

// readable checks that the detail of an event of a kind the checks read
// the detail of can be read: a wait event's waiting-for set, a leader
// event's leader and term, an election_start's term, a deliver event's
// multicast. A check that skipped an unreadable one would judge a
// different run from the one recorded (deadlock without a wait edge, say)
// and could say ok: the trace is bad input, and the error names the event.
// Only these kinds are read (they are few beside sends and receives).
func readable(ev *trace.Event, hb *HB) error {
	var err error
	switch ev.Kind {
	case trace.KindWait:
		_, err = hb.Wait()
	case trace.KindLeader:
		_, err = ev.Leader()
	case trace.KindElectionStart:
		_, err = ev.ElectionStart()
	case trace.KindDeliver:
		_, err = ev.Delivery()
	default:
		return nil
	}
	if err != nil {
		return &BrokenError{Event: ev.Ref(), Msg: err.Error() + ": the checks cannot read it"}
	}
	return nil
}

// links returns the messages ev sends and receives beyond its Msg (an
// imported event's; see trace.Links), into HB's own buffers.
func (h *HB) links(ev *trace.Event) (trace.Links, error) {
	if !ev.HasLinks() {
		return trace.Links{}, nil
	}
	l, err := ev.Links()
	if err != nil {
		return l, &BrokenError{Event: ev.Ref(), Msg: err.Error()}
	}
	return l, nil
}

// missing returns a message that ev receives and whose send was not
// delivered yet (ok false if there is none: ev can be delivered now).
func (h *HB) missing(ev *trace.Event, l *trace.Links) (msg int64, ok bool) {
	known := func(id int64) bool { return h.pending[id] != nil || h.recvd.has(id) }
	if ev.Kind == trace.KindReceive && !known(ev.Msg) {
		return ev.Msg, true
	}
	for _, k := range l.Recv {
		if !known(k.Msg) {
			return k.Msg, true
		}
	}
	return 0, false
}

func (h *HB) park(p *proc, msg int64) { h.waiting[msg] = append(h.waiting[msg], p.id) }

// resume delivers the parked events that became deliverable. A worklist
// rather than recursion: one send can wake a chain of processes.
func (h *HB) resume() error {
	for len(h.ready) > 0 {
		p := h.procs[h.ready[len(h.ready)-1]]
		h.ready = h.ready[:len(h.ready)-1]
		for p.parked() {
			ev := &p.queue[p.head]
			links, err := h.links(ev)
			if err != nil {
				return err
			}
			if msg, ok := h.missing(ev, &links); ok {
				h.park(p, msg)
				break
			}
			if err := h.deliver(p, ev, &links); err != nil {
				return err
			}
			p.head++
		}
		if !p.parked() {
			p.queue, p.head = p.queue[:0], 0
		}
	}
	return nil
}

// deliver advances p's clock over ev and visits it. links are the
// messages ev sends and receives beyond its Msg.
func (h *HB) deliver(p *proc, ev *trace.Event, links *trace.Links) error {
	var s *sent
	dup := false
	if ev.Kind == trace.KindReceive {
		if s = h.pending[ev.Msg]; s != nil {
			if ev.MsgType == "" {
				ev.MsgType = s.typ // a lean reader leaves it to the send (trace.ReadOptions)
			}
			delete(h.pending, ev.Msg)
			h.recvd.add(ev.Msg, ev.Proc)
			h.merge(p, s)
		} else {
			// missing said it was received before. A second receive is
			// a duplicated delivery only where the first one was: a
			// message sent to one process is not delivered to another,
			// and the send is in the causal past of the first receiver
			// only.
			if err := h.again(ev, ev.Msg); err != nil {
				return err
			}
			dup = true
		}
	}
	// The receives of an imported event beyond its Msg: each merges its
	// send's clock as Msg's does (a second delivery, as a duplicate).
	var also []*sent
	for _, k := range links.Recv {
		if t := h.pending[k.Msg]; t != nil {
			delete(h.pending, k.Msg)
			h.recvd.add(k.Msg, ev.Proc)
			h.merge(p, t)
			also = append(also, t)
		} else if err := h.again(ev, k.Msg); err != nil {
			return err
		}
	}
	if h.sparse {
		p.svc = p.svc.set(p.id, uint64(ev.Seq))
	} else {
		if len(p.vc) <= p.id { // only without Nodes: clocks grow as processes appear
			p.vc = append(p.vc, make(trace.VC, p.id+1-len(p.vc))...)
		}
		p.vc[p.id] = uint64(ev.Seq)
	}

	// The recorded Lamport clocks travel along the same edges: the bound of
	// an event is the largest recorded value in its causal past. And so do
	// the wall times, for the clocks' disagreement.
	lam, wall := p.lam, p.wall
	if s != nil {
		lam, wall = lam.max(s.lam), wall.max(s.wmax)
	}
	for _, t := range also {
		lam, wall = lam.max(t.lam), wall.max(t.wmax)
	}
	h.lamBound, p.lam = lam, lam.with(ev.Lamport, ev.Ref())
	h.wallBound, p.wall = wall, wall.with(ev.Wall, ev.Ref())

	if ev.Kind == trace.KindSend && ev.Msg != 0 {
		if err := h.send(p, ev, ev.Msg, ev.Peer); err != nil {
			return err
		}
	}
	for _, k := range links.Sent {
		if err := h.send(p, ev, k.Msg, k.Peer); err != nil {
			return err
		}
	}

	if h.delivered == 0 || ev.Wall < h.minWall {
		h.minWall = ev.Wall
	}
	h.maxWall = max(h.maxWall, ev.Wall)
	if ev.Wall != 0 {
		h.hasWall = true
	}
	if ev.VC != nil || ev.Lamport != 0 {
		h.hasClocks = true
	}
	h.delivered++
	h.cur, h.curVC, h.curSVC, h.denseOK, h.curSend, h.curDup = ev, p.vc, p.svc, false, s, dup
	h.visit(ev, h)
	h.cur, h.curVC, h.curSVC, h.curSend, h.curDup = nil, nil, nil, nil, false
	if s != nil {
		h.spare.Put(s)
	}
	h.spare.Put(also...)
	return nil
}

// merge merges the clock of message s, received by p, into p's clock.
func (h *HB) merge(p *proc, s *sent) {
	if h.sparse {
		h.merged = p.svc.merge(s.svc, h.merged[:0])
		p.svc, h.merged = h.merged, p.svc
		return
	}
	p.vc.Merge(s.vc)
}

// again checks a second receive of msg by ev: a duplicated delivery only
// at the process that received it first.
func (h *HB) again(ev *trace.Event, msg int64) error {
	if first := h.recvd.receiver(msg); first != ev.Proc {
		return broken(ev, "receives %s, which P%d received before: a message reaches one process (a second receive there is a duplicated delivery)", trace.MsgName(msg, ev.Peer), first)
	}
	return nil
}

// send records that ev, delivered at p, sends message msg to peer.
func (h *HB) send(p *proc, ev *trace.Event, msg int64, to int) error {
	if first := h.pending[msg]; first != nil {
		return broken(ev, "sends %s, already sent by %v", trace.MsgName(msg, ev.Proc), first.ref)
	}
	if h.recvd.has(msg) {
		return broken(ev, "sends %s, already sent and received", trace.MsgName(msg, ev.Proc))
	}
	n := h.spare.Get()
	n.ref, n.to, n.typ, n.wall, n.pos = ev.Ref(), to, ev.MsgType, ev.Wall, h.delivered+1
	if h.sparse {
		n.svc = append(n.svc[:0], p.svc...)
	} else {
		n.vc = append(n.vc[:0], p.vc...)
	}
	n.lam, n.wmax = p.lam, p.wall
	h.pending[msg] = n
	if ws, ok := h.waiting[msg]; ok {
		delete(h.waiting, msg)
		h.ready = append(h.ready, ws...)
	}
	return nil
}

// enqueue parks a copy of ev: the reader may reuse its Event.
func (p *proc) enqueue(ev *trace.Event) {
	if len(p.queue) < cap(p.queue) {
		p.queue = p.queue[:len(p.queue)+1]
	} else {
		p.queue = append(p.queue, trace.Event{})
	}
	dst := &p.queue[len(p.queue)-1]
	vc, detail := dst.VC[:0], dst.Detail[:0]
	*dst = *ev
	dst.VC, dst.Detail = nil, nil
	if ev.VC != nil {
		dst.VC = append(vc, ev.VC...)
	}
	if ev.Detail != nil {
		dst.Detail = append(detail, ev.Detail...)
	}
}

// close reports the events of the trace that could not be taken: those
// held back for an earlier event of their process that never came (a gap in
// the sequence numbers), and the processes still parked on a receive. A
// parked receive waits for a message that was never sent (a cause), or for
// a send that is itself parked behind another receive of its process. Those
// chains end at a receive of a message never sent or at a causal cycle (a
// send that can only come after the receive it must precede), and only the
// causes are reported, each with the receives that wait behind it.
//
// In an abandoned run a receive of a message never sent is the cut its dead
// recorder left (it wrote the receive, and died before writing the send):
// the events parked on it, and behind it in other processes, are counted in
// End.Cut rather than reported. A causal cycle is broken in any run.
func (h *HB) close() error {
	var errs []error
	for _, p := range h.procs {
		if p == nil || len(p.held) == 0 {
			continue
		}
		ev := &p.held[0]
		if p.read == 0 {
			errs = append(errs, broken(ev, "is the first event of P%d: sequence numbers start at 1", ev.Proc))
		} else {
			errs = append(errs, broken(ev, "follows P%d#%d: a process's events are numbered 1, 2, 3... without gaps", ev.Proc, p.read))
		}
	}
	// The sends parked behind a receive, and for each parked process the
	// process whose parked send its receive waits for (-1: none, never sent).
	later := make(map[int64]trace.Ref)
	for _, p := range h.procs {
		if p == nil {
			continue
		}
		for i := p.head; i < len(p.queue); i++ {
			ev := &p.queue[i]
			if ev.Kind == trace.KindSend && ev.Msg != 0 {
				later[ev.Msg] = ev.Ref()
			}
			l, _ := h.links(ev) // a broken one stopped Walk before it was parked
			for _, k := range l.Sent {
				later[k.Msg] = ev.Ref()
			}
		}
	}
	next := make(map[int]int)
	waitsFor := make(map[int]int64) // parked process -> the message its receive lacks
	var parked []int
	for _, p := range h.procs {
		if p == nil || !p.parked() {
			continue
		}
		parked = append(parked, p.id)
		ev := &p.queue[p.head]
		l, _ := h.links(ev)
		waitsFor[p.id], _ = h.missing(ev, &l)
		next[p.id] = -1
		if ref, ok := later[waitsFor[p.id]]; ok {
			next[p.id] = ref.Proc
		}
	}
	// Each chain of parked processes ends at a cause: a process whose
	// receive was never sent, or the first process of a cycle it reaches.
	cause := make(map[int]int) // parked process -> its cause
	onCycle := make(map[int]bool)
	for _, id := range parked {
		var path []int
		seen := make(map[int]int) // process -> index in path
		q := id
		for {
			if c, ok := cause[q]; ok {
				for _, r := range path {
					cause[r] = c
				}
				break
			}
			if i, ok := seen[q]; ok { // a cycle: path[i:]
				for _, r := range path[i:] {
					onCycle[r] = true
					cause[r] = r
				}
				for _, r := range path[:i] {
					cause[r] = q
				}
				break
			}
			seen[q] = len(path)
			path = append(path, q)
			if next[q] < 0 {
				for _, r := range path {
					cause[r] = q
				}
				break
			}
			q = next[q]
		}
	}
	abandoned := h.run.Status == trace.StatusAbandoned
	behind := make(map[int][]string)
	for _, id := range parked {
		c := cause[id]
		if abandoned && !onCycle[c] {
			p := h.procs[id]
			h.cut += int64(len(p.queue) - p.head)
			continue
		}
		if c != id {
			behind[c] = append(behind[c], h.procs[id].queue[h.procs[id].head].Ref().String())
		}
	}
	for _, id := range parked {
		if cause[id] != id || (abandoned && !onCycle[id]) {
			continue
		}
		ev := &h.procs[id].queue[h.procs[id].head]
		msg := waitsFor[id]
		var be *BrokenError
		if onCycle[id] {
			be = broken(ev, "waits for %s, sent at %v, which cannot happen before it (causal cycle)", trace.MsgName(msg, later[msg].Proc), later[msg])
		} else {
			be = broken(ev, "receives %s, which was never sent", trace.MsgName(msg, ev.Peer))
		}
		if b := behind[id]; len(b) > 0 {
			what := "1 receive waits"
			if len(b) > 1 {
				what = fmt.Sprintf("%d receives wait", len(b))
			}
			if len(b) > 10 {
				b = append(b[:10:10], "...")
			}
			be.Msg += fmt.Sprintf(" (%s behind it: %s)", what, strings.Join(b, ", "))
		}
		errs = append(errs, be)
	}
	return errors.Join(errs...)
}

// seqHeap holds the events of one process read before an earlier one, the
// lowest Seq first (container/heap).
type seqHeap []trace.Event

func (s seqHeap) Len() int           { return len(s) }
func (s seqHeap) Less(i, j int) bool { return s[i].Seq < s[j].Seq }
func (s seqHeap) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s *seqHeap) Push(x any)        { *s = append(*s, x.(trace.Event)) }
func (s *seqHeap) Pop() any {
	old := *s
	ev := old[len(old)-1]
	*s = old[:len(old)-1]
	return ev
}

// msgSet records which process received each message id. Ids of dmx's own
// form, trace.MsgID(from, k), take a few bits each (the receiver plus one,
// 0 for none) in a per-sender packed array; others (imports) go to a map.
type msgSet struct {
	width int // bits per id in bits: enough for the largest process id plus one
	bits  [][]uint64
	other map[int64]int
}

// maxBits bounds the per-sender packed array (8 MiB per sender at most).
const maxBits = 1 << 26

// newMsgSet returns a set for a run of n processes (0: not known, up to
// MaxProcs).
func newMsgSet(n int) msgSet {
	if n <= 0 {
		n = MaxProcs
	}
	return msgSet{width: bits.Len(uint(n))}
}

func (s *msgSet) split(id int64) (from int, k int64, ok bool) {
	from, k = int(id>>32), id&(1<<32-1)
	return from, k, id > 0 && from < MaxProcs && k < int64(maxBits/s.width)
}

// add records that process to received message id.
func (s *msgSet) add(id int64, to int) {
	from, k, ok := s.split(id)
	if !ok || to+1 >= 1<<s.width {
		if s.other == nil {
			s.other = make(map[int64]int)
		}
		s.other[id] = to
		return
	}
	for from >= len(s.bits) {
		s.bits = append(s.bits, nil)
	}
	bit := k * int64(s.width)
	last := int((bit + int64(s.width) - 1) / 64)
	if last >= len(s.bits[from]) {
		b := slices.Grow(s.bits[from], last+1-len(s.bits[from]))
		s.bits[from] = b[:cap(b)] // always len == cap, so the tail is zero
	}
	w, off := bit/64, uint(bit%64)
	v := uint64(to + 1)
	s.bits[from][w] |= v << off
	if off+uint(s.width) > 64 {
		s.bits[from][w+1] |= v >> (64 - off)
	}
}

// receiver returns the process that received message id, or -1.
func (s *msgSet) receiver(id int64) int {
	if to, ok := s.other[id]; ok {
		return to
	}
	from, k, ok := s.split(id)
	if !ok || from >= len(s.bits) {
		return -1
	}
	bit := k * int64(s.width)
	w, off := int(bit/64), uint(bit%64)
	if w >= len(s.bits[from]) {
		return -1
	}
	v := s.bits[from][w] >> off
	if off+uint(s.width) > 64 && w+1 < len(s.bits[from]) {
		v |= s.bits[from][w+1] << (64 - off)
	}
	return int(v&(1<<s.width-1)) - 1
}

func (s *msgSet) has(id int64) bool { return s.receiver(id) >= 0 }

// sparseAbove is the number of processes beyond which HB keeps sparse
// clocks. Dense clocks are faster while they are small, but cost N entries
// per process and per message in flight: 16,384 processes with one message
// each took 4 GiB. Below it they cost at most 16 MiB more than sparse
// ones. A variable for tests.
var sparseAbove = 1024

// toSparse turns every clock sparse: a run without Nodes has just grown
// past sparseAbove processes.
func (h *HB) toSparse() {
	h.sparse = true
	for _, p := range h.procs {
		if p != nil {
			p.svc, p.vc = sparseOf(p.vc), nil
		}
	}
	for _, s := range h.pending {
		s.svc, s.vc = sparseOf(s.vc), nil
	}
	h.spare = nil
}

// sparseVC is a vector clock by its non-zero entries, in process order.
type sparseVC []vcEntry

type vcEntry struct {
	p int
	n uint64
}

func sparseOf(v trace.VC) sparseVC {
	var s sparseVC
	for p, n := range v {
		if n != 0 {
			s = append(s, vcEntry{p, n})
		}
	}
	return s
}

// find returns where process p's entry is or would go.
func (v sparseVC) find(p int) int {
	lo, hi := 0, len(v)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if v[m].p < p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// get returns entry p.
func (v sparseVC) get(p int) uint64 {
	if i := v.find(p); i < len(v) && v[i].p == p {
		return v[i].n
	}
	return 0
}

// set sets entry p to n > 0 and returns the clock.
func (v sparseVC) set(p int, n uint64) sparseVC {
	i := v.find(p)
	if i < len(v) && v[i].p == p {
		v[i].n = n
		return v
	}
	return slices.Insert(v, i, vcEntry{p, n})
}

// merge appends the entrywise maximum of v and o to out and returns it.
func (v sparseVC) merge(o sparseVC, out sparseVC) sparseVC {
	i, j := 0, 0
	for i < len(v) && j < len(o) {
		switch a, b := v[i], o[j]; {
		case a.p < b.p:
			out = append(out, a)
			i++
		case a.p > b.p:
			out = append(out, b)
			j++
		default:
			out = append(out, vcEntry{a.p, max(a.n, b.n)})
			i++
			j++
		}
	}
	out = append(out, v[i:]...)
	return append(out, o[j:]...)
}

// dense writes v as a dense clock of n entries into buf.
func (v sparseVC) dense(buf trace.VC, n int) trace.VC {
	buf = slices.Grow(buf[:0], n)[:n]
	clear(buf)
	for _, e := range v {
		if e.p < n {
			buf[e.p] = e.n
		}
	}
	return buf
}

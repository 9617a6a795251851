package stats

import (
	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/analyze/internal/freelist"
	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/trace"
)

// hop is a hop counter tied to the event it counts from (id 0: none): an
// exit (numbered per resource), a request (its Seq) or an election round.
type hop struct {
	id int64
	n  int32
}

// carry is what a message in flight carries: its sender's counters.
type carry struct {
	sync   []hop   // per resource: from the latest exit known
	client [][]hop // per resource, per requester: from its pending request
	el     hop     // from a start of the current election round
	round  bool    // counted among its election round's messages
}

const (
	idle = iota
	requested
	holding
)

// pstate is one process: counters per resource, its pending requests, and
// for elections what it believes.
type pstate struct {
	sync    []hop
	client  [][]hop
	pending [][]pend
	status  []uint8
	el      hop
	// echo says the latest input was the receipt of a message of the
	// current election round: what it sends now is the round's, even
	// after the round closed (a ring's elected message goes on round the
	// ring after the last decision), where a send on a timer is not (a
	// lease master's renewals).
	echo bool

	down      bool
	belief    int // leader believed; valid if hasBelief
	beliefPos int64
	hasBelief bool

	cs         int64
	deliveries int64
}

type pend struct {
	seq, wall, pos int64
	floor          int64 // exits numbered up to floor happened before the request
}

type exitMark struct {
	id   int64 // 1, 2, ... per resource
	proc int
	wall int64
	pos  int64
	ref  trace.Ref
}

type walker struct {
	run   trace.Run
	costs []theory.Cost // the algorithm's, for the seeds' figures
	st    Stats
	procs []*pstate
	n     int // processes: Run.Nodes or as seen

	res      map[string]int
	lastExit []exitMark
	busy     []int // per resource: processes requesting or holding it

	inflight map[int64]*carry
	spare    freelist.List[carry]
	received int64 // first receives of messages whose send was seen
	sent     int64 // all sends, heartbeats included

	requests, contended, cs int64
	// lastExitWall is the wall time of the last cs_exit: throughput counts
	// up to it, so that a run that stalled at the end (dmx run ends one
	// after --stall of silence, 5s) is not counted as slow.
	lastExitWall           int64
	clientHops, clientWall hist
	syncHops, syncWall     hist
	window                 int64 // messages since the last request
	windowOpen             bool
	each                   map[int64]int64

	pos                         int64
	starts, decisions           int64
	roundOpen                   bool
	roundID                     int64
	roundPos, roundWall         int64
	roundMsgs, inRounds, rounds int64 // messages of the latest round, of the earlier ones; rounds closed
	complHops, complWall        hist
}

func newWalker(run trace.Run) *walker {
	return &walker{run: run, n: run.Nodes, res: make(map[string]int), inflight: make(map[int64]*carry),
		each: make(map[int64]int64), st: Stats{Messages: Messages{ByType: make(map[string]int64)}}}
}

func (w *walker) proc(p int) *pstate {
	for p >= len(w.procs) {
		w.procs = append(w.procs, nil)
	}
	w.n = max(w.n, p+1)
	if w.procs[p] == nil {
		w.procs[p] = new(pstate)
	}
	ps := w.procs[p]
	for len(ps.sync) < len(w.lastExit) {
		ps.sync = append(ps.sync, hop{})
		ps.client = append(ps.client, nil)
		ps.pending = append(ps.pending, nil)
		ps.status = append(ps.status, idle)
	}
	return ps
}

// resource returns the index of resource r, adding it if new.
func (w *walker) resource(r string) int {
	i, ok := w.res[r]
	if !ok {
		i = len(w.lastExit)
		w.res[r] = i
		w.lastExit = append(w.lastExit, exitMark{})
		w.busy = append(w.busy, 0)
	}
	return i
}

// clientHop returns p's counter for requester q on resource r.
func (ps *pstate) clientHop(r, q int) *hop {
	for q >= len(ps.client[r]) {
		ps.client[r] = append(ps.client[r], hop{})
	}
	return &ps.client[r][q]
}

func (w *walker) event(ev *trace.Event, hb *analyze.HB) {
	w.pos++
	if ev.HasLinks() {
		// The messages an imported event sends and receives beyond its
		// msg column are counted as the others are; their hops are not
		// followed.
		if l, err := ev.Links(); err == nil {
			typ := ev.MsgType
			if typ == "" {
				typ = "msg" // an event of another kind that also sends, as imports name it
			}
			for range l.Sent {
				w.count(ev, typ)
			}
			w.proc(ev.Proc).echo = false
			w.received += int64(len(l.Recv))
		}
	}
	switch ev.Kind {
	case trace.KindTimeout, trace.KindCSRequest, trace.KindCSExit, trace.KindStart, trace.KindRecover, trace.KindCrash:
		w.proc(ev.Proc).echo = false // an input other than a receipt
	}
	switch ev.Kind {
	case trace.KindSend:
		w.send(ev)
	case trace.KindReceive:
		w.receive(ev, hb)
	case trace.KindCSRequest:
		w.request(ev, hb)
	case trace.KindCSEnter:
		w.enter(ev)
	case trace.KindCSExit:
		w.exit(ev)
	case trace.KindCrash:
		ps := w.proc(ev.Proc)
		for r := range ps.status {
			if ps.status[r] != idle {
				w.busy[r]--
			}
			ps.status[r], ps.pending[r] = idle, nil
		}
		ps.down, ps.hasBelief = true, false
		w.closeRound(ev, nil)
	case trace.KindRecover:
		w.proc(ev.Proc).down = false
	case trace.KindDeliver:
		w.proc(ev.Proc).deliveries++
	case trace.KindElectionStart:
		w.starts++
		ps := w.proc(ev.Proc)
		if !w.roundOpen {
			w.inRounds += w.roundMsgs // the previous round's, complete now
			w.roundOpen, w.roundID, w.roundPos, w.roundWall, w.roundMsgs = true, w.roundID+1, w.pos, ev.Wall, 0
		}
		if ps.el.id != w.roundID {
			ps.el = hop{w.roundID, 0}
		}
	case trace.KindLeader:
		w.decisions++
		ps := w.proc(ev.Proc)
		d, _ := ev.Leader() // an unreadable detail leaves Peer as the leader
		leader := d.Leader
		ps.belief, ps.beliefPos, ps.hasBelief = leader, w.pos, leader >= 0
		w.closeRound(ev, ps)
	}
}

func (w *walker) send(ev *trace.Event) {
	ok, round := w.count(ev, ev.MsgType)
	if !ok || ev.Msg == 0 {
		return
	}
	ps := w.proc(ev.Proc)
	c := w.spare.Get()
	c.sync = append(c.sync[:0], ps.sync...)
	for len(c.client) < len(ps.client) {
		c.client = append(c.client, nil)
	}
	c.client = c.client[:len(ps.client)]
	for r := range ps.client {
		c.client[r] = append(c.client[r][:0], ps.client[r]...)
	}
	c.el, c.round = ps.el, round
	w.inflight[ev.Msg] = c
}

// count counts a message of type typ that ev sends, and reports whether it
// is one of the algorithm's.
func (w *walker) count(ev *trace.Event, typ string) (ok, round bool) {
	w.sent++
	ps := w.proc(ev.Proc)
	if typ == HeartbeatType {
		// Heartbeats are the failure detector's, not the algorithm's: they
		// are counted apart and carry no hop counter.
		w.st.Messages.Heartbeat++
		return false, false
	}
	w.st.Messages.Total++
	w.st.Messages.ByType[typ]++
	w.window++
	if ps.el.id != 0 && ps.el.id == w.roundID && (w.roundOpen || ps.echo) {
		// Sent by a process that a start of the latest round happened
		// before, while the round is open or, after it closed, on
		// receiving one of its messages (see pstate.echo).
		w.roundMsgs++
		return true, true
	}
	return true, false
}

// receive merges the message's counters into the receiver's: one hop more
// than at the send; the newest exit wins, and for one exit the shortest
// chain; for one request or round, the longest.
func (w *walker) receive(ev *trace.Event, hb *analyze.HB) {
	if _, ok := hb.Send(); ok {
		w.received++
	}
	ps := w.proc(ev.Proc)
	ps.echo = false
	c, ok := w.inflight[ev.Msg]
	if !ok {
		return // a heartbeat, a duplicate, or a send that was not seen
	}
	delete(w.inflight, ev.Msg)
	ps.echo = c.round && c.el.id == w.roundID
	for r, m := range c.sync {
		if m.id == 0 || r >= len(ps.sync) {
			continue
		}
		switch l := &ps.sync[r]; {
		case m.id > l.id:
			*l = hop{m.id, m.n + 1}
		case m.id == l.id:
			l.n = min(l.n, m.n+1)
		}
	}
	for r, qs := range c.client {
		for q, m := range qs {
			if m.id == 0 {
				continue
			}
			switch l := ps.clientHop(r, q); {
			case m.id > l.id:
				*l = hop{m.id, m.n + 1}
			case m.id == l.id:
				l.n = max(l.n, m.n+1)
			}
		}
	}
	if m := c.el; m.id != 0 {
		switch l := &ps.el; {
		case m.id > l.id:
			*l = hop{m.id, m.n + 1}
		case m.id == l.id:
			l.n = max(l.n, m.n+1)
		}
	}
	w.spare.Put(c)
}

func (w *walker) request(ev *trace.Event, hb *analyze.HB) {
	r := w.resource(ev.Resource)
	ps := w.proc(ev.Proc)
	w.requests++
	if w.busy[r] > 0 {
		w.contended++
	}
	if ps.status[r] == idle {
		ps.status[r] = requested
		w.busy[r]++
	}
	// The exits of r are ordered by happens-before (if mutual exclusion
	// holds), so if the last one did not happen before this request, the
	// later ones cannot either; the earlier ones did if it did.
	x := w.lastExit[r]
	floor := x.id
	if x.id > 0 && !hb.HappenedBefore(x.ref) {
		floor = x.id - 1
	}
	ps.pending[r] = append(ps.pending[r], pend{ev.Seq, ev.Wall, w.pos, floor})
	*ps.clientHop(r, ev.Proc) = hop{ev.Seq, 0}
	if w.windowOpen {
		w.each[w.window]++
	}
	w.window, w.windowOpen = 0, true
}

func (w *walker) enter(ev *trace.Event) {
	r := w.resource(ev.Resource)
	ps := w.proc(ev.Proc)
	w.cs++
	ps.cs++
	if ps.status[r] == idle {
		w.busy[r]++
	}
	ps.status[r] = holding
	if len(ps.pending[r]) == 0 {
		return // an entry without a recorded request
	}
	req := ps.pending[r][0]
	ps.pending[r] = ps.pending[r][1:]
	if h := ps.clientHop(r, ev.Proc); h.id == req.seq {
		w.clientHops.add(int64(h.n))
	}
	w.clientWall.add(ev.Wall - req.wall)
	// Synchronization delay: the exit before this entry, by another
	// process, that this one was waiting for: its request did not happen
	// after the exit, and was made before it (by wall time; without wall
	// times, by the walk's order).
	x := w.lastExit[r]
	waiting := req.pos < x.pos
	if req.wall != 0 && x.wall != 0 {
		waiting = req.wall <= x.wall
	}
	if x.id > req.floor && x.proc != ev.Proc && waiting {
		// An entry that does not know of the exit (mutex-causal reports
		// it) has no chain from it: no hop sample.
		if s := ps.sync[r]; s.id == x.id {
			w.syncHops.add(int64(s.n))
		}
		w.syncWall.add(ev.Wall - x.wall)
	}
}

func (w *walker) exit(ev *trace.Event) {
	w.lastExitWall = max(w.lastExitWall, ev.Wall)
	r := w.resource(ev.Resource)
	ps := w.proc(ev.Proc)
	if ps.status[r] != idle {
		w.busy[r]--
		ps.status[r] = idle
	}
	x := exitMark{id: w.lastExit[r].id + 1, proc: ev.Proc, wall: ev.Wall, pos: w.pos, ref: ev.Ref()}
	w.lastExit[r] = x
	ps.sync[r] = hop{x.id, 0}
}

// closeRound closes the open election round if every live process now
// believes in one leader that it decided after the round opened. ps is the
// deciding process (nil for a crash).
func (w *walker) closeRound(ev *trace.Event, ps *pstate) {
	if !w.roundOpen {
		return
	}
	leader, live := -1, 0
	for p := range w.n {
		var q *pstate
		if p < len(w.procs) {
			q = w.procs[p]
		}
		if q != nil && q.down {
			continue
		}
		live++
		if q == nil || !q.hasBelief || q.beliefPos <= w.roundPos || (leader >= 0 && q.belief != leader) {
			return
		}
		leader = q.belief
	}
	if live == 0 {
		return
	}
	w.roundOpen = false
	w.rounds++
	w.complWall.add(ev.Wall - w.roundWall)
	if ps != nil && ps.el.id == w.roundID {
		w.complHops.add(int64(ps.el.n))
	}
}

func (w *walker) finish(end analyze.End) *Stats {
	st := &w.st
	st.Run, st.Algorithm, st.Mode, st.Complete, st.Events = w.run.ID, w.run.Algorithm, w.run.Mode, end.Complete, end.Events
	st.Status = w.run.Status
	st.Nodes = max(w.n, end.Procs)
	if end.HasWall {
		st.DurationNS = end.Wall - end.Start
	}
	st.Messages.Lost = w.sent - w.received
	csBy := make([]int64, st.Nodes)
	var deliveries, multicasts int64
	for p, ps := range w.procs {
		if ps != nil {
			csBy[p] = ps.cs
			deliveries += ps.deliveries
			multicasts = max(multicasts, ps.deliveries)
		}
	}
	th := seedFigures(w.run, w.costs, st.Nodes, csBy)
	total := float64(st.Messages.Total)

	if w.requests > 0 || w.cs > 0 {
		m := &Mutex{Resources: len(w.res), Requests: w.requests, Contended: w.contended, CriticalSections: w.cs,
			MessagesPerCS: PerCS{ByType: make(map[string]float64), Seeds: th.perCS},
			ClientDelay:   Delay{Hops: w.clientHops.dist(), WallNS: w.clientWall.dist(), Seeds: th.client},
			SyncDelay:     Delay{Hops: w.syncHops.dist(), WallNS: w.syncWall.dist(), Seeds: th.sync},
		}
		if w.cs > 0 {
			m.MessagesPerCS.Measured = total / float64(w.cs)
			for t, k := range st.Messages.ByType {
				m.MessagesPerCS.ByType[t] = float64(k) / float64(w.cs)
			}
		}
		if span := w.lastExitWall - end.Start; end.HasWall && span > 0 {
			m.Throughput = float64(w.cs) / (float64(span) / 1e9)
		}
		if w.contended == 0 && w.windowOpen {
			w.each[w.window]++
			m.MessagesPerCS.Each = w.each
		}
		st.Mutex = m
	}
	if deliveries > 0 {
		mc := &Multicast{Multicasts: multicasts, Deliveries: deliveries}
		mc.MessagesPerMulticast = total / float64(multicasts)
		st.Multicast = mc
	}
	if w.starts > 0 || w.decisions > 0 {
		e := &Election{Starts: w.starts, Decisions: w.decisions, Elections: w.rounds,
			MessagesPerElection: Measured{Seeds: th.perElection},
			Completion:          Delay{Hops: w.complHops.dist(), WallNS: w.complWall.dist(), Seeds: th.completion},
		}
		open := int64(0)
		if w.roundOpen {
			e.Unfinished, open = 1, w.roundMsgs
		} else {
			w.inRounds += w.roundMsgs
		}
		e.MessagesOutside = st.Messages.Total - w.inRounds - open
		if w.rounds > 0 {
			e.MessagesPerElection.Measured = float64(w.inRounds) / float64(w.rounds)
		}
		st.Election = e
	}
	return st
}

package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/dmxlab/dmx/render/plural"
	"github.com/dmxlab/dmx/trace"
)

// Deadlock finds cycles in the wait-for graph that nothing resolves.
var Deadlock = &Check{
	Name: "deadlock",
	Doc: `no cycle of blocked processes in the wait-for graph at the end of the run

The wait-for graph of seed 001 ("Modeling Deadlocks"): a process is blocked
on resource r from its cs_request(r) until the matching cs_enter(r) (or its
crash, which cancels its requests). A blocked process waits for
  (a) the processes of its latest wait event for r ({"waiting_for": [..]},
      the algorithm's own account: whose reply, vote or token it lacks), and
  (b) the processes that hold r: between their cs_enter(r) and cs_exit(r)
      (a crash ends holding).
A deadlock is a cycle of blocked processes, that is a strongly connected
component of two or more of them (found with gonum's topo.TarjanSCC), in
the graph of the end of the run. The finding names the processes, the
resources they are blocked on and, for each edge, the event that put it
there: the wait event, or the holder's cs_enter.

Why the end of the run: a process "moves" when it makes a cs_request,
cs_enter or cs_exit, or crashes; sends, receives, timeouts and wait events
are not moves. Whether a process is blocked, and who holds what, change
only when some process moves, so a cycle formed at a point after which none
of its processes moves again is still there at the end, unless one of them
withdrew a wait edge by a later wait event (it then says it no longer waits
for that process; if it is stuck all the same, liveness reports it). And a
cycle that one of its processes leaves by moving was transient: while a
reply or a token is in flight, a wait-for cycle can exist for a moment (two
Ricart-Agrawala requesters each lack the other's reply), and it resolves
when the message arrives. So the cycles that count are those of the final
graph.

A complete run ended when nothing more could happen (or stalled): a cycle
at its end is a deadlock, violated. An incomplete run (cut short) may have
had a message in flight or a holder about to leave: a cycle at its end is
unknown, not violated.`,
	Requires: []string{NeedHB},
	New:      func(trace.Run) Checker { return &deadlock{holders: make(map[string][]dlHold)} },
}

type deadlock struct {
	procs   []*dlProc
	holders map[string][]dlHold // resource -> processes inside, in order of entry
	pos     int64               // delivery position of the current event
	badWait int                 // wait events whose detail could not be read
	badRef  trace.Ref
}

// dlProc is what the wait-for graph needs of one process.
type dlProc struct {
	pending map[string][]dlMark // resource -> requests not yet entered, oldest first
	waits   map[string]dlWait   // resource -> latest wait set
}

// dlMark is an event with its position in the walk (to tell which of a
// cycle's events came last).
type dlMark struct {
	ref trace.Ref
	pos int64
}

type dlHold struct {
	proc  int
	enter dlMark
}

type dlWait struct {
	dlMark
	set []int
}

func (c *deadlock) proc(p int) *dlProc {
	for p >= len(c.procs) {
		c.procs = append(c.procs, nil)
	}
	if c.procs[p] == nil {
		c.procs[p] = &dlProc{pending: make(map[string][]dlMark), waits: make(map[string]dlWait)}
	}
	return c.procs[p]
}

func (c *deadlock) Event(ev *trace.Event, _ *HB) {
	c.pos++
	mark := dlMark{ev.Ref(), c.pos}
	switch ev.Kind {
	case trace.KindCSRequest:
		p := c.proc(ev.Proc)
		p.pending[ev.Resource] = append(p.pending[ev.Resource], mark)
	case trace.KindCSEnter:
		p := c.proc(ev.Proc)
		if q := p.pending[ev.Resource]; len(q) > 1 {
			p.pending[ev.Resource] = q[1:]
		} else {
			delete(p.pending, ev.Resource)
		}
		c.holders[ev.Resource] = append(c.holders[ev.Resource], dlHold{ev.Proc, mark})
	case trace.KindCSExit:
		hs := c.holders[ev.Resource]
		if i := slices.IndexFunc(hs, func(h dlHold) bool { return h.proc == ev.Proc }); i >= 0 {
			c.holders[ev.Resource] = slices.Delete(hs, i, i+1)
		}
	case trace.KindCrash:
		// A crash cancels the process's requests, ends its holdings, and
		// its next incarnation starts with no wait set.
		if ev.Proc < len(c.procs) && c.procs[ev.Proc] != nil {
			c.procs[ev.Proc] = nil
		}
		for r, hs := range c.holders {
			c.holders[r] = slices.DeleteFunc(hs, func(h dlHold) bool { return h.proc == ev.Proc })
		}
	case trace.KindWait:
		w, err := ev.Wait() // "waiting_for", or Peer in a trace that names one target there
		if err != nil {
			if c.badWait == 0 {
				c.badRef = ev.Ref()
			}
			c.badWait++
			return
		}
		c.proc(ev.Proc).waits[ev.Resource] = dlWait{mark, w.WaitingFor}
	}
}

// dlEdge is one edge of the final wait-for graph with its reasons.
type dlEdge struct {
	from, to int
	reasons  []string
	marks    []dlMark // the events that made it, one per reason
	parts    []Part   // one RoleWaitsFor per reason
}

func (c *deadlock) Finish(end End) Result {
	// The final graph: an edge from each blocked process to each process
	// it waits for that is blocked too (no other can be on a cycle).
	blocked := func(p int) bool {
		return p >= 0 && p < len(c.procs) && c.procs[p] != nil && len(c.procs[p].pending) > 0
	}
	edges := make(map[[2]int]*dlEdge)
	edge := func(from, to int, reason string, m dlMark, part Part) {
		e := edges[[2]int{from, to}]
		if e == nil {
			e = &dlEdge{from: from, to: to}
			edges[[2]int{from, to}] = e
		}
		e.reasons = append(e.reasons, reason)
		e.marks = append(e.marks, m)
		part.Role, part.From, part.To = RoleWaitsFor, from, to
		e.parts = append(e.parts, part)
	}
	// request is the oldest pending request of the blocked process p.
	request := func(p int) trace.Ref {
		return c.procs[p].pending[sortedKeys(c.procs[p].pending)[0]][0].ref
	}
	g := simple.NewDirectedGraph()
	nblocked := 0
	for id, p := range c.procs {
		if !blocked(id) {
			continue
		}
		nblocked++
		g.AddNode(simple.Node(id))
		for _, r := range sortedKeys(p.pending) {
			w, ok := p.waits[r]
			if !ok {
				w, ok = p.waits[""] // a trace that does not name the resource of its waits
			}
			if ok {
				for _, q := range w.set {
					if q != id && blocked(q) {
						edge(id, q, fmt.Sprintf("%v wait(%s) %v", w.ref, r, w.set), w.dlMark,
							Part{Events: []trace.Ref{w.ref, request(q)}, Label: fmt.Sprintf("wait %v", w.set)})
					}
				}
			}
			for _, h := range c.holders[r] {
				if h.proc != id && blocked(h.proc) {
					edge(id, h.proc, fmt.Sprintf("holds %s since %v cs_enter(%s)", r, h.enter.ref, r), h.enter,
						Part{Events: []trace.Ref{p.pending[r][0].ref, h.enter.ref}, Label: "holds " + r})
				}
			}
		}
	}
	for _, e := range edges {
		g.SetEdge(g.NewEdge(simple.Node(e.from), simple.Node(e.to)))
	}

	var cycles [][]int
	for _, scc := range topo.TarjanSCC(g) {
		if len(scc) < 2 {
			continue
		}
		ids := make([]int, len(scc))
		for i, n := range scc {
			ids[i] = int(n.ID())
		}
		slices.Sort(ids)
		cycles = append(cycles, ids)
	}
	slices.SortFunc(cycles, func(a, b []int) int { return cmp.Compare(a[0], b[0]) })

	var f findings
	var msgs []string
	for _, ids := range cycles {
		msg, refs := c.describe(ids, edges)
		msgs = append(msgs, msg)
		f.addParts(msg, cycleParts(ids, edges), refs...)
	}
	note := "no process was blocked at the end of the run"
	if nblocked > 0 {
		note = plural.Count(nblocked, "process") + " blocked at the end of the run"
		if len(cycles) == 0 {
			note += ", with no cycle among them"
		}
	}
	if c.badWait > 0 {
		note += fmt.Sprintf("; %s with an unreadable detail ignored (first %v)", plural.Count(c.badWait, "wait event"), c.badRef)
	}
	if len(cycles) > 0 && !end.Complete {
		return Result{Verdict: Unknown, Note: fmt.Sprintf("the run is incomplete: a message in flight or a holder about to leave may have broken the cycle: %s; %s",
			strings.Join(msgs, "; "), note)}
	}
	return f.result(note)
}

// describe formats the deadlock of the strongly connected processes ids:
// the resources they are blocked on, the event since which the cycle has
// stood (the latest of those that made it), and for each process its
// requests and its edges to the others with the events that made them.
func (c *deadlock) describe(ids []int, edges map[[2]int]*dlEdge) (string, []trace.Ref) {
	var refs []trace.Ref
	var res []string
	var since dlMark
	use := func(m dlMark) {
		refs = append(refs, m.ref)
		if m.pos > since.pos {
			since = m
		}
	}
	var parts []string
	for _, id := range ids {
		p := c.procs[id]
		var reqs []string
		for _, r := range sortedKeys(p.pending) {
			m := p.pending[r][0]
			reqs = append(reqs, fmt.Sprintf("%v cs_request(%s)", m.ref, r))
			use(m)
			if !slices.Contains(res, r) {
				res = append(res, r)
			}
		}
		// Targets with the same reasons are named together: "P1, P2
		// (P0#5 wait(cs) [1 2])".
		var why []string
		var whom [][]string
		for _, to := range ids {
			e := edges[[2]int{id, to}]
			if e == nil {
				continue
			}
			for _, m := range e.marks {
				use(m)
			}
			r := strings.Join(e.reasons, "; ")
			if i := slices.Index(why, r); i >= 0 {
				whom[i] = append(whom[i], fmt.Sprintf("P%d", to))
			} else {
				why, whom = append(why, r), append(whom, []string{fmt.Sprintf("P%d", to)})
			}
		}
		outs := make([]string, len(why))
		for i := range why {
			outs[i] = fmt.Sprintf("%s (%s)", strings.Join(whom[i], ", "), why[i])
		}
		parts = append(parts, fmt.Sprintf("P%d (%s) waits for %s", id, strings.Join(reqs, ", "), strings.Join(outs, " and ")))
	}
	slices.Sort(res)
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = fmt.Sprintf("P%d", id)
	}
	return fmt.Sprintf("deadlock on %s among %s since %v: %s", strings.Join(res, ", "), strings.Join(names, ", "), since.ref, strings.Join(parts, "; ")), refs
}

// cycleParts returns the edges among the strongly connected processes ids
// as RoleWaitsFor parts, edge by edge: each process's edges in the order of
// ids, so that a two- or three-process cycle reads around the cycle.
func cycleParts(ids []int, edges map[[2]int]*dlEdge) []Part {
	var parts []Part
	for _, from := range ids {
		for _, to := range ids {
			if e := edges[[2]int{from, to}]; e != nil {
				parts = append(parts, e.parts...)
			}
		}
	}
	return parts
}

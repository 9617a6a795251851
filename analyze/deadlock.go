package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// Deadlock finds cycles in the wait-for graph that nothing resolves.
var Deadlock = &Check{
	Name: "deadlock",
	Doc: `no cycle of blocked processes in the wait-for graph at the end of the run

The wait-for graph of seed 001 ("Modeling Deadlocks"), under the AND model:
a process that waits goes on only when every process it waits for has
acted. A process is blocked on resource r from its cs_request(r) until the
matching cs_enter(r) (or its crash, which cancels its requests), and while
its latest wait event for r names a non-empty set: a process that records
that it waits is blocked, whether or not the trace records its request. A
blocked process waits for
  (a) the processes of its latest wait event for r ({"waiting_for": [..]},
      the algorithm's own account: whose reply, vote or token it lacks;
      a trace whose wait events name no resource has them count for every
      resource), and
  (b) the processes that hold r, if it requested r: between their
      cs_enter(r) and cs_exit(r) (a crash ends holding).
A deadlock is a cycle of blocked processes, that is a strongly connected
component of two or more of them (found with gonum's topo.TarjanSCC), in
the graph of the end of the run. The finding names the processes, the
resources they are blocked on and, for each edge, the event that put it
there: the wait event, or the holder's cs_enter. Waits under the OR model
({"model":"or"}: any one of the set will do) make no edge here: see
deadlock-or, which finds their knots.

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
	New:      func(Config) Checker { return newDeadlock(trace.WaitAll) },
}

// DeadlockOR finds knots in the wait-for graph of processes that wait for
// any one of a set.
var DeadlockOR = &Check{
	Name: "deadlock-or",
	Doc: `no knot in the wait-for graph of processes that wait for any one of a set (OR model)

Seed 001: "A system is deadlocked if and only if there exists a directed
cycle or knot in the WFG." A process whose wait event says {"model":"or"}
goes on as soon as any one process of its set acts (the first reply of
several will do), so a cycle through it is no deadlock while some process
of its set can still act. The graph is deadlock's (the final wait-for
graph, the same blocked processes and edges), each process waiting for all
of its AND edges (holders, AND waits) and for one of each OR set. The
processes that can still go on are found by reduction: a process that is
not blocked can; a blocked one can if every process of its AND edges can
and, for each of its OR sets, one process of the set can. The others are
deadlocked; a knot is a strongly connected group of two or more of them
that involves an OR wait (every process its OR waits name is deadlocked
too, so none will ever answer). Cycles of AND waits alone are deadlock's
findings. An incomplete run gives unknown instead of violated, as for
deadlock.`,
	Requires: []string{NeedHB},
	New:      func(Config) Checker { return newDeadlock(trace.WaitAny) },
}

func newDeadlock(model string) *deadlock {
	return &deadlock{model: model, holders: make(map[string][]dlHold)}
}

// deadlock is both checks: model says which (trace.WaitAll: cycles of AND
// edges; trace.WaitAny: knots that involve an OR wait).
type deadlock struct {
	model   string
	procs   []*dlProc
	holders map[string][]dlHold // resource -> processes inside, in order of entry
	pos     int64               // delivery position of the current event
	moves   int64               // cs_request, cs_enter and wait events: what the graph is made of
	orWaits int                 // wait events under the OR model
	down    map[int]trace.Ref   // processes down at the end: their last crash
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
	any bool // the OR model: one of set will do
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

func (c *deadlock) Event(ev *trace.Event, hb *HB) {
	c.pos++
	mark := dlMark{ev.Ref(), c.pos}
	switch ev.Kind {
	case trace.KindCSRequest, trace.KindCSEnter, trace.KindWait:
		c.moves++
	case trace.KindRecover:
		delete(c.down, ev.Proc)
	}
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
		if c.down == nil {
			c.down = make(map[int]trace.Ref)
		}
		c.down[ev.Proc] = ev.Ref()
		for r, hs := range c.holders {
			c.holders[r] = slices.DeleteFunc(hs, func(h dlHold) bool { return h.proc == ev.Proc })
		}
	case trace.KindWait:
		// "waiting_for", or Peer in a trace that names one target there.
		// Walk refused a trace whose wait details cannot be read.
		w, _ := hb.Wait()
		p := c.proc(ev.Proc)
		if len(w.WaitingFor) == 0 {
			delete(p.waits, ev.Resource) // it no longer waits
			return
		}
		if w.Model == trace.WaitAny {
			c.orWaits++
		}
		p.waits[ev.Resource] = dlWait{mark, w.WaitingFor, w.Model == trace.WaitAny}
	}
}

// blocked reports whether process p waits at the end of the run: it has a
// request not yet granted, or its latest wait event on some resource names
// a process.
func (c *deadlock) blocked(p int) bool {
	if p < 0 || p >= len(c.procs) || c.procs[p] == nil {
		return false
	}
	return len(c.procs[p].pending) > 0 || len(c.procs[p].waits) > 0
}

// dlEdge is one edge of the final wait-for graph with its reasons.
type dlEdge struct {
	from, to int
	any      bool // an OR edge: part of a set of which one will do
	reasons  []string
	marks    []dlMark // the events that made it, one per reason
	parts    []Part   // one RoleWaitsFor per reason
}

// dlNeeds is what a blocked process needs to go on: every process of all,
// and one process of each set of anyOf.
type dlNeeds struct {
	all   []int
	anyOf [][]int
}

// graph is the final wait-for graph: the blocked processes, what each
// needs, and the edges with their reasons.
func (c *deadlock) graph() (blocked []int, needs map[int]*dlNeeds, edges map[[2]int]*dlEdge) {
	needs = make(map[int]*dlNeeds)
	edges = make(map[[2]int]*dlEdge)
	edge := func(from, to int, any bool, reason string, m dlMark, part Part) {
		e := edges[[2]int{from, to}]
		if e == nil {
			e = &dlEdge{from: from, to: to, any: any}
			edges[[2]int{from, to}] = e
		}
		e.any = e.any && any // an AND reason makes it an AND edge
		e.reasons = append(e.reasons, reason)
		e.marks = append(e.marks, m)
		part.Role, part.From, part.To = RoleWaitsFor, from, to
		e.parts = append(e.parts, part)
	}
	// anchor is the event a process that others wait for waits on: its
	// oldest pending request, else its latest wait (nothing if it is not
	// blocked).
	anchor := func(q int) []trace.Ref {
		if !c.blocked(q) {
			return nil
		}
		p := c.procs[q]
		if len(p.pending) > 0 {
			return []trace.Ref{p.pending[sortedKeys(p.pending)[0]][0].ref}
		}
		var last dlMark
		for _, w := range p.waits {
			if w.pos > last.pos {
				last = w.dlMark
			}
		}
		return []trace.Ref{last.ref}
	}
	for id, p := range c.procs {
		if !c.blocked(id) {
			continue
		}
		blocked = append(blocked, id)
		n := new(dlNeeds)
		needs[id] = n
		// The resources it is blocked on: those it requested, and those
		// its waits name.
		var res []string
		for r := range p.pending {
			res = append(res, r)
		}
		for r := range p.waits {
			if _, ok := p.pending[r]; !ok && (r != "" || len(p.pending) == 0) {
				res = append(res, r)
			}
		}
		slices.Sort(res)
		for _, r := range res {
			w, ok := p.waits[r]
			if !ok {
				w, ok = p.waits[""] // a trace that does not name the resource of its waits
			}
			if ok {
				var set []int
				for _, q := range w.set {
					if q != id && !slices.Contains(set, q) {
						set = append(set, q)
						edge(id, q, w.any, fmt.Sprintf("%v %s %s%v", w.ref, waitName(r), anyOf(w.any), w.set), w.dlMark,
							Part{Events: append([]trace.Ref{w.ref}, anchor(q)...), Label: fmt.Sprintf("wait %s%v", anyOf(w.any), w.set)})
					}
				}
				if w.any {
					n.anyOf = append(n.anyOf, set)
				} else {
					n.all = append(n.all, set...)
				}
			}
			if _, req := p.pending[r]; req {
				for _, h := range c.holders[r] {
					if h.proc != id {
						n.all = append(n.all, h.proc)
						edge(id, h.proc, false, fmt.Sprintf("holds %s since %v cs_enter(%s)", r, h.enter.ref, r), h.enter,
							Part{Events: []trace.Ref{p.pending[r][0].ref, h.enter.ref}, Label: "holds " + r})
					}
				}
			}
		}
	}
	return blocked, needs, edges
}

func waitName(r string) string {
	if r == "" {
		return "wait"
	}
	return "wait(" + r + ")"
}

func anyOf(any bool) string {
	if any {
		return "any of "
	}
	return ""
}

// stuck returns the blocked processes that can never go on, by reduction:
// a process that is not blocked can go on; a blocked one can if all it
// needs can and one of each of its OR sets can.
func stuck(blocked []int, needs map[int]*dlNeeds) map[int]bool {
	free := make(map[int]bool)
	isFree := func(q int) bool {
		_, b := needs[q]
		return !b || free[q]
	}
	for changed := true; changed; {
		changed = false
		for _, p := range blocked {
			if free[p] {
				continue
			}
			n := needs[p]
			ok := !slices.ContainsFunc(n.all, func(q int) bool { return !isFree(q) })
			for _, set := range n.anyOf {
				ok = ok && slices.ContainsFunc(set, isFree)
			}
			if ok {
				free[p], changed = true, true
			}
		}
	}
	out := make(map[int]bool)
	for _, p := range blocked {
		if !free[p] {
			out[p] = true
		}
	}
	return out
}

func (c *deadlock) Finish(end End) Result {
	blocked, needs, edges := c.graph()
	// The graph whose strongly connected groups are the findings: for
	// deadlock, the AND edges among blocked processes (no other can be on
	// a cycle); for deadlock-or, every edge among the stuck ones.
	in := func(p int) bool { _, b := needs[p]; return b }
	use := func(e *dlEdge) bool { return !e.any }
	if c.model == trace.WaitAny {
		dead := stuck(blocked, needs)
		in = func(p int) bool { return dead[p] }
		use = func(*dlEdge) bool { return true }
	}
	g := simple.NewDirectedGraph()
	for _, p := range blocked {
		if in(p) {
			g.AddNode(simple.Node(p))
		}
	}
	for _, e := range edges {
		if use(e) && in(e.from) && in(e.to) {
			g.SetEdge(g.NewEdge(simple.Node(e.from), simple.Node(e.to)))
		}
	}
	var groups [][]int
	for _, scc := range topo.TarjanSCC(g) {
		if len(scc) < 2 {
			continue
		}
		ids := make([]int, len(scc))
		for i, n := range scc {
			ids[i] = int(n.ID())
		}
		slices.Sort(ids)
		if c.model == trace.WaitAny && !involvesOR(ids, edges) {
			continue // a cycle of AND edges: deadlock's
		}
		groups = append(groups, ids)
	}
	slices.SortFunc(groups, func(a, b []int) int { return cmp.Compare(a[0], b[0]) })

	var f findings
	var msgs []string
	for _, ids := range groups {
		msg, refs := c.describe(ids, edges)
		msgs = append(msgs, msg)
		f.addParts(msg, cycleParts(ids, edges), refs...)
	}
	if c.model == trace.WaitAny && c.orWaits == 0 {
		return notApplicable("no process waited for any one of a set")
	}
	if c.moves == 0 {
		return notApplicable("no cs_request, cs_enter or wait events")
	}
	note := "no process was blocked at the end of the run"
	if len(blocked) > 0 {
		note = plural.Count(len(blocked), "process") + " blocked at the end of the run"
		if len(groups) == 0 {
			what := c.what()
			if c.model == trace.WaitAll && c.orWaits > 0 {
				what = "cycle of waits for every process named (deadlock-or judges the waits for any one of a set)"
			}
			note += ", in no " + what + ": " + c.whom(blocked, edges) + " (not a deadlock; liveness judges whether requests were granted)"
		}
	}
	if len(groups) > 0 && !end.Complete {
		return Result{Verdict: Unknown, Note: fmt.Sprintf("the run is incomplete: a message in flight or a holder about to leave may have broken the %s: %s; %s",
			c.what(), strings.Join(msgs, "; "), note)}
	}
	return f.result(note)
}

// whom says whom the blocked processes wait for, and in what state each
// of those was at the end of the run: "P1 and P2 wait for P0 (crashed at
// P0#9); P3 waits for P4 (not blocked)". At most maxWhom processes are
// named.
func (c *deadlock) whom(blocked []int, edges map[[2]int]*dlEdge) string {
	const maxWhom = 8
	targets := make(map[int][]int) // waiter -> whom, in order
	for _, e := range edges {
		targets[e.from] = append(targets[e.from], e.to)
	}
	state := func(q int) string {
		_, isBlocked := targets[q]
		switch r, down := c.down[q]; {
		case down:
			return fmt.Sprintf("crashed at %v", r)
		case c.blocked(q) && isBlocked:
			return "blocked"
		case c.blocked(q):
			return "blocked, on nobody it names"
		}
		return "not blocked"
	}
	var parts []string
	for i, p := range blocked {
		if i == maxWhom {
			parts = append(parts, fmt.Sprintf("and %d more", len(blocked)-maxWhom))
			break
		}
		ts := targets[p]
		slices.Sort(ts)
		if len(ts) == 0 {
			parts = append(parts, fmt.Sprintf("P%d waits, and the trace names nobody it waits for", p))
			continue
		}
		var ws []string
		for j, q := range ts {
			if j == maxWhom {
				ws = append(ws, fmt.Sprintf("%d more", len(ts)-maxWhom))
				break
			}
			ws = append(ws, fmt.Sprintf("P%d (%s)", q, state(q)))
		}
		parts = append(parts, fmt.Sprintf("P%d waits for %s", p, strings.Join(ws, ", ")))
	}
	return strings.Join(parts, "; ")
}

// involvesOR reports whether an OR edge joins two of ids.
func involvesOR(ids []int, edges map[[2]int]*dlEdge) bool {
	for _, a := range ids {
		for _, b := range ids {
			if e := edges[[2]int{a, b}]; e != nil && e.any {
				return true
			}
		}
	}
	return false
}

func (c *deadlock) what() string {
	if c.model == trace.WaitAny {
		return "knot"
	}
	return "cycle"
}

// describe formats the deadlock of the strongly connected processes ids:
// the resources they are blocked on, the event since which it has stood
// (the latest of those that made it), and for each process its requests
// and its edges to the others with the events that made them.
func (c *deadlock) describe(ids []int, edges map[[2]int]*dlEdge) (string, []trace.Ref) {
	var refs []trace.Ref
	var res []string
	var since dlMark
	use := func(m dlMark) {
		if !slices.Contains(refs, m.ref) {
			refs = append(refs, m.ref)
		}
		if m.pos > since.pos {
			since = m
		}
	}
	addRes := func(r string) {
		if !slices.Contains(res, r) {
			res = append(res, r)
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
			addRes(r)
		}
		if len(p.pending) == 0 {
			for _, r := range sortedKeys(p.waits) {
				addRes(r)
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
		who := fmt.Sprintf("P%d", id)
		if len(reqs) > 0 {
			who += " (" + strings.Join(reqs, ", ") + ")"
		}
		parts = append(parts, fmt.Sprintf("%s waits for %s", who, strings.Join(outs, " and ")))
	}
	slices.Sort(res)
	for i, r := range res {
		res[i] = resourceName(r)
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = fmt.Sprintf("P%d", id)
	}
	kind := "deadlock"
	if c.model == trace.WaitAny {
		kind = "deadlock (a knot: each waits for any one of a set, all of it blocked)"
	}
	return fmt.Sprintf("%s on %s among %s since %v: %s", kind, strings.Join(res, ", "), strings.Join(names, ", "), since.ref, strings.Join(parts, "; ")), refs
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

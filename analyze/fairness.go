package analyze

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// Fairness checks that requests are granted in happens-before order.
var Fairness = &Check{
	Name: "fairness",
	Doc: `a request that happened before another on the same resource is granted first

Seed 004's third requirement of mutual exclusion, "Ordering/Fairness: a
request A happened-before request B => grant A before B" (Ricart-Agrawala
and Lamport promise it; central and token ring do not: seed 004's
"Ordering: No"). A process's k-th cs_request on a resource is granted by
its k-th cs_enter there. For every two requests A and B of different
processes on one resource with A -> B, B's grant must not come first: a
finding is B's cs_enter happening before A's, or B granted and A never
(the run ended with A waiting). Two grants that are concurrent (a mutual
exclusion violation, which mutex-causal reports) order nothing. A crash
cancels its process's requests. The finding names the overtaking pair:
both requests and both grants.

Memory: the requests waiting, each with its vector clock.`,
	Requires: []string{NeedHB},
	Promise:  true,
	New:      func(cfg Config) Checker { return newGrants(cfg, false) },
}

// Starvation checks that no waiting request is overtaken too often.
var Starvation = &Check{
	Name: "starvation",
	Doc: `no request is overtaken more often than a bound while it waits

A request A (a process's cs_request on a resource, granted by its
matching cs_enter) is overtaken by another process's entry E on that
resource when E is granted while A waits and E's own request did not
happen before A's. While A waits: E happened before A's grant (or A was
never granted), and A's request happened before E, or the two are
concurrent and E's wall time is not earlier than the request's (in a
trace without wall times only the first counts: a process that was down a
long time learns late of what happened meanwhile). Entries without a
recorded request count as overtaking. The bound is --max-overtakes, by default one
overtake per other process (N-1), which every algorithm that serves
requests in order keeps: each other process gets in at most once ahead of
a waiting request. A request overtaken more often is a finding that says
how often and by whom; the note gives the largest count. A crash cancels
its process's requests; and the bounds algorithms promise hold in runs
without failures (a lost token or coordinator is made anew, and the order
restarts, and a recovered process may be passed over while it is
suspected), so a request granted after a process crashed (its own earlier
incarnation included; by wall time, or without wall times unless its grant
happened before the crash) is not held to the bound, which the note
counts.

Memory: the requests waiting, each with its vector clock and the entries
that overtook it, and per resource and process its entries that some
process may not know of yet (those a request to come may be concurrent
with).`,
	Requires: []string{NeedHB},
	Promise:  true,
	New:      func(cfg Config) Checker { return newGrants(cfg, true) },
}

// grants follows the requests of a run and their grants: fairness, or
// with starve, starvation.
type grants struct {
	starve  bool
	bound   int // the largest number of overtakes allowed; 0: N-1, known at the end
	res     map[string]*grantRes
	queue   map[csKey][]*csReq // per process and resource, oldest first
	granted int64
	entries int64
	f       findings
	// starvation: the requests granted (or left waiting) overtaken more
	// than the bound (more than once when the bound is N-1 and N is not
	// known before the end), judged at the end, when the crashes that
	// excuse them are known
	over    []overtaken
	crashes []crashAt
	most    int       // the largest count of overtakes
	mostRef trace.Ref // the request that suffered it
}

type grantRes struct {
	pending []*csReq
	hist    [][]histEnter // per process: its entries, in program order (starvation)
}

// histEnter is one entry of a process: its sequence number, its request's
// (0: none recorded) and its wall time.
type histEnter struct{ enter, req, wall int64 }

// during reports whether an entry with wall time wall, concurrent with
// request a, counts as made while a waited: by wall time, when both have
// one.
func (a *csReq) during(wall int64) bool { return a.wall != 0 && wall != 0 && wall >= a.wall }

// csReq is a request that waits.
type csReq struct {
	proc int
	res  string
	req  trace.Ref
	wall int64    // of the request; 0: not recorded
	vc   snapshot // the computed clock of the request
	// fairness: the younger requests granted while this one waited,
	// provisionally (confirmed if their grant happened before this one's)
	beaten []beat
	// starvation: the entries that overtook it, provisionally (confirmed
	// if they happened before its grant)
	overtakers []trace.Ref
}

type beat struct{ req, enter trace.Ref }

// overtaken is a request overtaken more than once.
type overtaken struct {
	req, enter   trace.Ref // enter Seq 0: never granted
	wall0, wall1 int64     // of the request and of the grant
	vc           snapshot  // the request's
	res          string
	by           []trace.Ref
}

// crashAt is a crash with its computed clock, to tell the grants that
// happened before it.
type crashAt struct {
	mark
	vc snapshot
}

// excused reports whether a process (o's own included: its earlier
// incarnation) crashed before o was granted: the
// bounds algorithms promise hold in runs without failures, and after a
// crash (a lost token or coordinator made anew, a recovered process
// suspected for a while) the order of service restarts. By wall time when
// there are wall times; without, a crash counts unless o's grant happened
// before it.
func (o *overtaken) excused(crashes []crashAt) bool {
	for _, c := range crashes {
		switch {
		case o.enter.Seq == 0:
			return true
		case o.wall1 != 0 && c.wall != 0:
			if c.wall <= o.wall1 {
				return true
			}
		case !c.vc.knows(o.enter):
			return true
		}
	}
	return false
}

func newGrants(cfg Config, starve bool) *grants {
	g := &grants{starve: starve, bound: cfg.MaxOvertakes, res: make(map[string]*grantRes), queue: make(map[csKey][]*csReq)}
	if g.bound <= 0 && cfg.Run.Nodes > 0 {
		g.bound = cfg.Run.Nodes - 1
	}
	return g
}

func (g *grants) resource(name string) *grantRes {
	r, _ := entry(g.res, name)
	return r
}

func (g *grants) Event(ev *trace.Event, hb *HB) {
	switch ev.Kind {
	case trace.KindCSRequest:
		r := g.resource(ev.Resource)
		a := &csReq{proc: ev.Proc, res: ev.Resource, req: ev.Ref(), wall: ev.Wall, vc: hb.snapshot()}
		if g.starve {
			// Entries already delivered that this request does not know
			// of are concurrent with it: those whose own request it does
			// not know of either overtake it if they happened before its
			// grant. They are the tail of each process's entries.
			for q, h := range r.hist {
				if q == ev.Proc {
					continue
				}
				known := a.vc.get(q)
				for _, e := range h[sort.Search(len(h), func(i int) bool { return h[i].enter > known }):] {
					if (e.req == 0 || e.req > known) && a.during(e.wall) {
						a.overtakers = append(a.overtakers, trace.Ref{Proc: q, Seq: e.enter})
					}
				}
			}
		}
		r.pending = append(r.pending, a)
		k := csKey{ev.Proc, ev.Resource}
		g.queue[k] = append(g.queue[k], a)
	case trace.KindCSEnter:
		g.entries++
		r := g.resource(ev.Resource)
		k := csKey{ev.Proc, ev.Resource}
		var b *csReq
		if q := g.queue[k]; len(q) > 0 {
			b = q[0]
			g.queue[k] = q[1:]
			r.pending = slices.DeleteFunc(r.pending, func(x *csReq) bool { return x == b })
			g.granted++
		}
		for _, a := range r.pending {
			if a.proc == ev.Proc {
				continue
			}
			switch {
			case g.starve && (b == nil || !a.vc.knows(b.req)) && (hb.HappenedBefore(a.req) || a.during(ev.Wall)):
				a.overtakers = append(a.overtakers, ev.Ref())
			case !g.starve && b != nil && b.vc.knows(a.req):
				a.beaten = append(a.beaten, beat{b.req, ev.Ref()})
			}
		}
		if g.starve {
			r.hist = grow(r.hist, ev.Proc)
			e := histEnter{enter: ev.Seq, wall: ev.Wall}
			if b != nil {
				e.req = b.req.Seq
			}
			h := append(r.hist[ev.Proc], e)
			// The entries every process knows of happened before every
			// request to come: none of those can be concurrent with them.
			if len(h)%64 == 0 {
				known := hb.KnownByAll(ev.Proc)
				if i := sort.Search(len(h), func(i int) bool { return h[i].enter > known }); i > 0 {
					h = append(h[:0:0], h[i:]...)
				}
			}
			r.hist[ev.Proc] = h
		}
		if b != nil {
			g.judge(b, ev.Ref(), ev.Wall, hb.HappenedBefore)
		}
	case trace.KindCrash:
		g.crashes = append(g.crashes, crashAt{mark{ref: ev.Ref(), wall: ev.Wall}, hb.snapshot()})
		// A crash cancels the process's requests.
		for k, q := range g.queue {
			if k.proc != ev.Proc {
				continue
			}
			r := g.res[k.res]
			for _, a := range q {
				r.pending = slices.DeleteFunc(r.pending, func(x *csReq) bool { return x == a })
			}
			delete(g.queue, k)
		}
	}
}

// judge confirms the provisional findings of request a, granted by enter
// (Seq 0: never): those whose entry happened before the grant (before
// reports it), or all of them if a was never granted.
func (g *grants) judge(a *csReq, enter trace.Ref, wall int64, before func(trace.Ref) bool) {
	first := func(ref trace.Ref) bool { return enter.Seq == 0 || before(ref) }
	if !g.starve {
		for _, bt := range a.beaten {
			if !first(bt.enter) {
				continue // concurrent grants order nothing
			}
			msg := fmt.Sprintf("%v cs_request(%s) happened before %v cs_request(%s), but P%d was granted first: %v cs_enter(%s) ",
				a.req, a.res, bt.req, a.res, bt.req.Proc, bt.enter, a.res)
			refs := []trace.Ref{a.req, bt.req, bt.enter}
			var parts []Part
			if enter.Seq == 0 {
				msg += fmt.Sprintf("and P%d was never granted", a.proc)
			} else {
				msg += fmt.Sprintf("happened before %v cs_enter(%s)", enter, a.res)
				refs = append(refs, enter)
				parts = []Part{{Role: RoleNotBefore, Events: []trace.Ref{enter, bt.enter}, Label: "older request granted later"}}
			}
			g.f.addParts(msg, parts, refs...)
		}
		return
	}
	var by []trace.Ref
	for _, ref := range a.overtakers {
		if first(ref) {
			by = append(by, ref)
		}
	}
	if len(by) > g.most {
		g.most, g.mostRef = len(by), a.req
	}
	// Without a bound yet (N-1, N known at the end), more than once: the
	// bound is at least 1 when anybody can overtake.
	if len(by) > max(g.bound, 1) && len(g.over) < maxPending {
		g.over = append(g.over, overtaken{req: a.req, enter: enter, wall0: a.wall, wall1: wall, vc: a.vc, res: a.res, by: by})
	}
}

// report adds the finding of request o, overtaken more than bound times.
func (g *grants) report(o overtaken, bound int) {
	names := make([]string, 0, len(o.by))
	for i, ref := range o.by {
		if i == 10 {
			names = append(names, fmt.Sprintf("and %d more", len(o.by)-10))
			break
		}
		names = append(names, ref.String())
	}
	how := fmt.Sprintf("until %v cs_enter(%s)", o.enter, o.res)
	if o.enter.Seq == 0 {
		how = "and was never granted"
	}
	refs := append([]trace.Ref{o.req}, o.by...)
	if o.enter.Seq != 0 {
		refs = append(refs, o.enter)
	}
	g.f.add(fmt.Sprintf("%v cs_request(%s) was overtaken %s, more than %d, by %s cs_enter(%s), %s",
		o.req, o.res, times(len(o.by)), bound, strings.Join(names, ", "), o.res, how), refs...)
}

func (g *grants) Finish(end End) Result {
	// The requests still waiting were never granted: every provisional
	// finding stands.
	for _, name := range sortedKeys(g.res) {
		for _, a := range g.res[name].pending {
			g.judge(a, trace.Ref{}, 0, nil)
		}
	}
	if g.granted == 0 && g.entries == 0 {
		return notApplicable("no critical sections")
	}
	if !g.starve {
		return g.f.result(plural.Count(g.granted, "request") + " granted")
	}
	bound := g.bound
	if bound <= 0 {
		bound = max(end.Procs-1, 0)
	}
	excused := 0
	for i := range g.over {
		switch o := &g.over[i]; {
		case len(o.by) <= bound:
		case o.excused(g.crashes):
			excused++
		default:
			g.report(*o, bound)
		}
	}
	note := fmt.Sprintf("%s granted; no request was overtaken (bound %d)", plural.Count(g.granted, "request"), bound)
	if g.most > 0 {
		note = fmt.Sprintf("%s granted; a request overtaken at most %s (%v; bound %d)", plural.Count(g.granted, "request"), times(g.most), g.mostRef, bound)
	}
	if excused > 0 {
		note += fmt.Sprintf("; not held to the bound: %s overtaken more often after a process crashed", plural.Count(excused, "request"))
	}
	return g.f.result(note)
}

// times formats a count of times: "once", "twice", "3 times".
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

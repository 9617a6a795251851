package analyze

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// MutexRealtime checks mutual exclusion in wall-clock time.
var MutexRealtime = &Check{
	Name: "mutex-realtime",
	Doc: `critical sections on one resource do not overlap in wall-clock time

Each critical section (a process's k-th cs_enter on a resource up to its
k-th cs_exit, or its crash) covers the wall-time interval [enter, exit]; one
that never exits lasts until the end of the run. No two intervals of
different processes on one resource may overlap (touching ends are
allowed). Wall clocks of different machines disagree, so this check can
miss overlaps that mutex-causal judges exactly; it is what a user watching
the system would see. Two sections that overlap in wall time although one
exited before the other entered (its exit happened before the entry) did
not overlap: the clocks disagree, which clock-skew reports with the least
amount; the note counts them. A trace without wall times is
skipped (unless it has no critical section to check): that does not make
the verdict inconclusive, unless the check is required (dmx check
--require mutex-realtime).`,
	Requires: []string{NeedWall},
	New: func(cfg Config) Checker {
		return &mutexRealtime{res: make(map[string]*realtimeRes), last: make(map[int]int64), nodes: cfg.Run.Nodes}
	},
}

// Why the sweep can run during the walk, in memory that does not grow with
// the run.
//
// The overlaps are found by a sweep of each resource's sections in order
// of entry time, keeping the two sections that end last (best, and other:
// the one that ends last among another process's). Sections come in the
// walk's order, not in wall-time order, so each closed section waits in a
// heap until no section still to be swept can have entered earlier: a
// section still open entered at its known time; one not entered yet will
// enter at or after the wall time of its process's latest event, as long
// as each process's clock only moves forward (if one goes back, nothing
// is released before the end). The frontier is the least of those times;
// every section that entered before it is swept, in order (a process not
// seen yet may enter at any time: nothing is swept until every process of
// the run has been seen). A section that
// ended at or before the frontier can overlap no section still to come,
// and is forgotten, so that memory holds the sections of the last moments,
// not the run's.
//
// Two sections that overlap in wall time, one of which exited causally
// before the other entered, did not overlap: the clocks disagree. That is
// asked at each entry, of the sections exited before it that it may
// overlap in wall time (those that ended after it entered), with the O(1)
// happens-before test of HB; the answer is kept by the entering section as
// the ids of those sections (at most maxBefore).

type mutexRealtime struct {
	nodes    int // the run's processes: until each has been seen, nothing is released
	res      map[string]*realtimeRes
	names    []string // resources in order of first entry
	last     map[int]int64
	backward bool // a process's wall time went back: release nothing before the end
	ids      int64
	sections int
	skewed   int
	found    map[string][]rtOverlap // per resource, in sweep order
	more     int
}

type realtimeRes struct {
	open  openSpans
	heap  rtHeap    // closed sections not swept yet, by entry time
	pool  []*rtSpan // closed sections that may still overlap one to come
	best  *rtSpan
	other *rtSpan
}

// rtSpan is a critical section as mutex-realtime keeps it.
type rtSpan struct {
	*csSpan
	id     int64
	before []int64 // sections exited before this one entered (causally) that it may overlap in wall time
}

// rtOverlap is a finding kept until Finish, which writes it (wall times are
// written relative to the start of the run, known only then).
type rtOverlap struct {
	a, b csSpan
}

// maxBefore bounds the sections an entry records as causally before it.
const maxBefore = 64

func (c *mutexRealtime) Event(ev *trace.Event, hb *HB) {
	if ev.Wall != 0 {
		if l, ok := c.last[ev.Proc]; ok && ev.Wall < l {
			c.backward = true
		}
		c.last[ev.Proc] = max(c.last[ev.Proc], ev.Wall)
	}
	switch ev.Kind {
	case trace.KindCSEnter:
		r, added := entry(c.res, ev.Resource)
		if added {
			c.names = append(c.names, ev.Resource)
		}
		c.ids++
		c.sections++
		s := &rtSpan{csSpan: &csSpan{proc: ev.Proc, enter: ev.Ref(), t0: ev.Wall}, id: c.ids}
		// The latest sections closed first; a pool that the sweep
		// cannot shrink (a clock went back) is looked at so far only.
		for i := len(r.pool) - 1; i >= 0 && i >= len(r.pool)-4*maxBefore; i-- {
			x := r.pool[i]
			if x.proc != s.proc && x.t1 > s.t0 && len(s.before) < maxBefore && hb.HappenedBefore(x.exit) {
				s.before = append(s.before, x.id)
			}
		}
		r.open = append(r.open, s.csSpan)
		r.openSpan(s)
	case trace.KindCSExit:
		if r := c.res[ev.Resource]; r != nil {
			if s := r.closeOpen(ev.Proc, ev.Ref(), ev.Wall, false); s != nil {
				c.closed(r, s)
			}
		}
	case trace.KindCrash:
		for _, name := range c.names {
			r := c.res[name]
			for s := r.closeOpen(ev.Proc, ev.Ref(), ev.Wall, true); s != nil; s = r.closeOpen(ev.Proc, ev.Ref(), ev.Wall, true) {
				c.closed(r, s)
			}
		}
	}
}

// openSpan and closeOpen keep the rtSpan of each open csSpan.
func (r *realtimeRes) openSpan(s *rtSpan) { r.heap.opened = append(r.heap.opened, s) }

func (r *realtimeRes) closeOpen(proc int, exit trace.Ref, wall int64, crashed bool) *rtSpan {
	cs := r.open.close(proc, exit, wall, crashed)
	if cs == nil {
		return nil
	}
	i := slices.IndexFunc(r.heap.opened, func(s *rtSpan) bool { return s.csSpan == cs })
	s := r.heap.opened[i]
	r.heap.opened = slices.Delete(r.heap.opened, i, i+1)
	return s
}

// closed takes a section that just ended: it waits to be swept, and the
// sweep goes as far as the frontier now allows.
func (c *mutexRealtime) closed(r *realtimeRes, s *rtSpan) {
	heap.Push(&r.heap, s)
	r.pool = append(r.pool, s)
	c.sweep(r, c.frontier(r))
}

// frontier returns the entry time before which every section of r that
// will ever be swept is known: the least of the open sections' entries
// and of the processes' latest wall times; math.MinInt64 (nothing is
// released before the end) while a process of the run has not been seen
// (it may enter at any time), in a run that does not say how many it has,
// or once a clock went back.
func (c *mutexRealtime) frontier(r *realtimeRes) int64 {
	if c.backward || c.nodes <= 0 || len(c.last) < c.nodes {
		return math.MinInt64
	}
	f := int64(math.MaxInt64)
	for _, t := range c.last {
		f = min(f, t)
	}
	for _, s := range r.heap.opened {
		f = min(f, s.t0)
	}
	return f
}

// sweep releases, in order of entry, the sections of r that entered
// before frontier, and forgets those that can overlap nothing to come.
func (c *mutexRealtime) sweep(r *realtimeRes, frontier int64) {
	for r.heap.Len() > 0 && r.heap.items[0].t0 < frontier {
		s := heap.Pop(&r.heap).(*rtSpan)
		cand := r.best
		if cand != nil && cand.proc == s.proc {
			cand = r.other
		}
		switch {
		case cand == nil || s.t0 >= cand.t1:
		case slices.Contains(s.before, cand.id) || slices.Contains(cand.before, s.id):
			c.skewed++ // the clocks disagree: clock-skew's finding
		default:
			c.overlap(r, cand, s)
		}
		switch {
		case r.best == nil || s.t1 > r.best.t1:
			if r.best != nil && r.best.proc != s.proc {
				r.other = r.best
			}
			r.best = s
		case s.proc != r.best.proc && (r.other == nil || s.t1 > r.other.t1):
			r.other = s
		}
	}
	// What ended at the frontier overlaps nothing that enters after it;
	// what is still in the heap was not swept yet.
	r.pool = slices.DeleteFunc(r.pool, func(x *rtSpan) bool {
		return x.t1 <= frontier && !slices.Contains(r.heap.items, x)
	})
}

// overlap records that a and b overlap in wall time.
func (c *mutexRealtime) overlap(r *realtimeRes, a, b *rtSpan) {
	total := 0
	for _, o := range c.found {
		total += len(o)
	}
	if total >= MaxFindings {
		c.more++
		return
	}
	if c.found == nil {
		c.found = make(map[string][]rtOverlap)
	}
	name := ""
	for n, x := range c.res {
		if x == r {
			name = n
		}
	}
	c.found[name] = append(c.found[name], rtOverlap{*a.csSpan, *b.csSpan})
}

func (c *mutexRealtime) Finish(end End) Result {
	summary := fmt.Sprintf("%s on %s", plural.Count(c.sections, "critical section"), plural.Count(len(c.res), "resource"))
	if c.sections == 0 {
		return notApplicable("no critical sections")
	}
	if !end.HasWall {
		return skipped(summary)
	}
	for _, name := range c.names {
		r := c.res[name]
		for _, s := range slices.Clone(r.heap.opened) { // open to the end of the run
			s.t1 = max(end.Wall, s.t0)
			heap.Push(&r.heap, s)
		}
		r.heap.opened = nil
		c.sweep(r, math.MaxInt64)
	}
	at := func(t int64) string { return "+" + time.Duration(t-end.Start).String() }
	var f findings
	for _, name := range sortedKeys(c.res) {
		for _, o := range c.found[name] {
			cand, s := &o.a, &o.b
			d := time.Duration(min(s.t1, cand.t1) - s.t0)
			f.addParts(fmt.Sprintf("critical sections on %s overlap in wall time for %v: %v from %s to %s and %v from %s to %s",
				name, d, cand, at(cand.t0), at(cand.t1), s, at(s.t0), at(s.t1)),
				[]Part{cand.part(""), s.part("overlap " + d.String())}, s.refs(cand.refs(nil))...)
		}
	}
	f.more += c.more
	if c.skewed > 0 {
		summary += "; " + plural.Count(c.skewed, "overlap") + " in wall time of sections that were causally ordered: the clocks disagree (see clock-skew)"
	}
	return f.result(summary)
}

// rtHeap holds the closed sections not swept yet, the earliest entry
// first (ties by process and sequence number, the order of the sweep),
// and the open ones.
type rtHeap struct {
	items  []*rtSpan
	opened []*rtSpan
}

func (h rtHeap) Len() int { return len(h.items) }
func (h rtHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return cmp.Or(cmp.Compare(a.t0, b.t0), cmp.Compare(a.proc, b.proc), cmp.Compare(a.enter.Seq, b.enter.Seq)) < 0
}
func (h rtHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *rtHeap) Push(x any)   { h.items = append(h.items, x.(*rtSpan)) }
func (h *rtHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

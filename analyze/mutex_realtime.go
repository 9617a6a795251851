package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/dmxlab/dmx/render/plural"
	"github.com/dmxlab/dmx/trace"
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
both miss and invent overlaps that mutex-causal judges exactly; it is what
a user watching the system would see. A trace without wall times gives
unknown.`,
	Requires: []string{NeedWall},
	New:      func(trace.Run) Checker { return &mutexRealtime{res: make(map[string]*realtimeRes)} },
}

// Critical sections are far fewer than events, so they are collected (a few
// words each) and swept once per resource in order of entry time.
type mutexRealtime struct {
	res map[string]*realtimeRes
}

type realtimeRes struct {
	spans []*csSpan
	open  openSpans
}

func (c *mutexRealtime) Event(ev *trace.Event, _ *HB) {
	switch ev.Kind {
	case trace.KindCSEnter:
		r := c.res[ev.Resource]
		if r == nil {
			r = new(realtimeRes)
			c.res[ev.Resource] = r
		}
		s := &csSpan{proc: ev.Proc, enter: ev.Ref(), t0: ev.Wall}
		r.spans = append(r.spans, s)
		r.open = append(r.open, s)
	case trace.KindCSExit:
		if r := c.res[ev.Resource]; r != nil {
			r.open.close(ev.Proc, ev.Ref(), ev.Wall, false)
		}
	case trace.KindCrash:
		for _, r := range c.res {
			for r.open.close(ev.Proc, ev.Ref(), ev.Wall, true) != nil {
			}
		}
	}
}

func (c *mutexRealtime) Finish(end End) Result {
	var f findings
	n := 0
	at := func(t int64) string { return "+" + time.Duration(t-end.Start).String() }
	for _, name := range sortedKeys(c.res) {
		r := c.res[name]
		for _, s := range r.open {
			s.t1 = max(end.Wall, s.t0)
		}
		spans := r.spans
		n += len(spans)
		slices.SortFunc(spans, func(a, b *csSpan) int {
			return cmp.Or(cmp.Compare(a.t0, b.t0), cmp.Compare(a.proc, b.proc), cmp.Compare(a.enter.Seq, b.enter.Seq))
		})
		// best is the span seen so far that ends last; other the one that
		// ends last among those of another process than best's. A span
		// overlapping any earlier span of another process overlaps one of
		// these two, since all earlier spans started before it.
		var best, other *csSpan
		for _, s := range spans {
			cand := best
			if cand != nil && cand.proc == s.proc {
				cand = other
			}
			if cand != nil && s.t0 < cand.t1 {
				d := time.Duration(min(s.t1, cand.t1) - s.t0)
				f.addParts(fmt.Sprintf("critical sections on %s overlap in wall time for %v: %v from %s to %s and %v from %s to %s",
					name, d, cand, at(cand.t0), at(cand.t1), s, at(s.t0), at(s.t1)),
					[]Part{cand.part(""), s.part("overlap " + d.String())}, s.refs(cand.refs(nil))...)
			}
			switch {
			case best == nil || s.t1 > best.t1:
				if best != nil && best.proc != s.proc {
					other = best
				}
				best = s
			case s.proc != best.proc && (other == nil || s.t1 > other.t1):
				other = s
			}
		}
	}
	return f.result(fmt.Sprintf("%s on %s", plural.Count(n, "critical section"), plural.Count(len(c.res), "resource")))
}

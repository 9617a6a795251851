package analyze

import (
	"cmp"
	"fmt"
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
	New:      func(Config) Checker { return &mutexRealtime{res: make(map[string]*realtimeRes)} },
}

// Critical sections are far fewer than events, so they are collected (a few
// words each) and swept once per resource in order of entry time.
type mutexRealtime struct {
	res map[string]*realtimeRes
}

type realtimeRes struct {
	spans  []*csSpan
	open   openSpans
	recent []*csSpan // the last sections exited normally (recentExits)
}

// maxChain bounds the sections followed back from one to find another
// that happened before it.
const maxChain = 64

// precedes reports whether a exited before b entered (causally), following
// b's chain of sections back (csSpan.after).
func precedes(a, b *csSpan) bool {
	for x, i := b.after, 0; x != nil && i < maxChain; x, i = x.after, i+1 {
		if x == a {
			return true
		}
	}
	return false
}

func (c *mutexRealtime) Event(ev *trace.Event, hb *HB) {
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
		for i := len(r.recent) - 1; i >= 0; i-- {
			if hb.HappenedBefore(r.recent[i].exit) {
				s.after = r.recent[i]
				break
			}
		}
	case trace.KindCSExit:
		if r := c.res[ev.Resource]; r != nil {
			if s := r.open.close(ev.Proc, ev.Ref(), ev.Wall, false); s != nil {
				r.recent = append(r.recent, s)
				if len(r.recent) > recentExits {
					r.recent = r.recent[1:]
				}
			}
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
	n, skewed := 0, 0
	for _, r := range c.res {
		n += len(r.spans)
	}
	summary := fmt.Sprintf("%s on %s", plural.Count(n, "critical section"), plural.Count(len(c.res), "resource"))
	if n == 0 {
		return notApplicable("no critical sections")
	}
	if !end.HasWall {
		return skipped(summary)
	}
	at := func(t int64) string { return "+" + time.Duration(t-end.Start).String() }
	for _, name := range sortedKeys(c.res) {
		r := c.res[name]
		for _, s := range r.open {
			s.t1 = max(end.Wall, s.t0)
		}
		spans := r.spans
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
			switch {
			case cand == nil || s.t0 >= cand.t1:
			case precedes(cand, s) || precedes(s, cand):
				skewed++ // the clocks disagree: clock-skew's finding
			default:
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
	if skewed > 0 {
		summary += "; " + plural.Count(skewed, "overlap") + " in wall time of sections that were causally ordered: the clocks disagree (see clock-skew)"
	}
	return f.result(summary)
}

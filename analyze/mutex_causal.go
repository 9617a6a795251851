package analyze

import (
	"fmt"

	"github.com/dmxlab/dmx/render/plural"
	"github.com/dmxlab/dmx/trace"
)

// MutexCausal checks mutual exclusion in causal terms.
var MutexCausal = &Check{
	Name: "mutex-causal",
	Doc: `critical sections on one resource are ordered by happens-before

A critical section is a process's k-th cs_enter on a resource up to its k-th
cs_exit on that resource (or its crash). For every two of them on one
resource, the exit of one must have happened before the entry of the other.
If not, there is a consistent global state in which both processes are
inside: the finding says "overlapping" when one entry happened before the
other (the second process entered knowing the first was in, but not that it
had left), "concurrent" when neither entry happened before the other. This
holds whatever the wall clocks say; see mutex-realtime for those.

A section that ended in its process's crash cannot be followed causally by
anything (the dead send nothing; survivors only suspect it, through a
failure detector), so the next entry on the resource must come after the
crash in wall time instead, as in split-brain: every pair that involves a
section ended by a crash is judged by whether their wall intervals overlap.`,
	Requires: []string{NeedHB},
	New:      func(Config) Checker { return &mutexCausal{res: make(map[string]*causalRes)} },
}

// Why checking consecutive sections in delivery order suffices.
//
// Walk delivers events in a linear extension L of happens-before. Order the
// sections S1, S2, ... of one resource by their entries in L. Claim: all
// pairs are ordered (exit of one -> entry of the other) iff for every Sj,
// when its entry comes in L, (a) no section is open and (b) the exit last
// delivered, that of some Si, happened before Sj's entry.
//
// Sound (if a and b hold, all pairs are ordered): by (a) at the entry of
// S(j-1), every earlier section had exited before it, and S(j-1) exits after
// its own entry; by (a) at the entry of Sj, S(j-1) has exited too. So the
// exit last delivered before Sj's entry is S(j-1)'s, and (b) says
// exit(Sj-1) -> entry(Sj). Each section is one process's enter..exit, so
// entry -> exit by program order, and for i < j the chain exit(Si) ->
// entry(Si+1) -> exit(Si+1) -> ... -> entry(Sj) orders every pair.
//
// Complete (if all pairs are ordered, a and b hold): take Si entered before
// Sj in L. If exit(Sj) -> entry(Si) then entry(Sj) -> exit(Sj) -> entry(Si),
// and L would have entry(Sj) first. So exit(Si) -> entry(Sj) and exit(Si)
// precedes entry(Sj) in L: no earlier section is open (a); exits of later
// sections come after their entries, after Sj's, so the last exit before Sj
// is one of these Si (b).
//
// So one open set and one "last exit" per resource decide the property in
// O(1) per event, with the O(1) happens-before test of HB.
//
// A section ended by a crash breaks the argument's premise: nothing follows
// its end causally (the dead send nothing), and its crash is concurrent with
// the survivors' events, so L may deliver it early or late. Such sections
// are kept out of the causal argument: "last" is the last section that
// exited normally, and the argument above holds for the sections that do.
// Every pair that involves a crash-ended section is judged by wall time
// instead (the sections' wall intervals, the crash ending one, must not
// overlap). Since a section's end is not known at its entry, every
// violation is provisional until Finish, which applies that rule; at an
// entry, a crash-ended section already known is only recorded against it
// if it crashed after the entry in wall time (otherwise they cannot
// overlap), so memory stays bounded by the violations, not the entries.

type mutexCausal struct {
	res      map[string]*causalRes
	viol     []causalViolation
	more     int
	sections int64
	stray    int // exits with no open section
	strayRef trace.Ref
}

type causalRes struct {
	open    openSpans
	last    *csSpan   // the section whose normal exit was delivered last
	crashed []*csSpan // the sections that ended in a crash
}

// causalViolation is kept until Finish so that its message can name exits
// delivered after the violation was found, and so that a pair whose
// section ends in a crash can be judged by wall time.
type causalViolation struct {
	res         string
	a, b        *csSpan // a entered first in delivery order
	overlapping bool    // a's entry happened before b's
}

// maxPending bounds the violations kept for Finish; the rest are counted.
const maxPending = 100 * MaxFindings

func (c *mutexCausal) Event(ev *trace.Event, hb *HB) {
	switch ev.Kind {
	case trace.KindCSEnter:
		r := c.res[ev.Resource]
		if r == nil {
			r = new(causalRes)
			c.res[ev.Resource] = r
		}
		s := &csSpan{proc: ev.Proc, enter: ev.Ref(), t0: ev.Wall}
		c.sections++
		if len(r.open) > 0 {
			for _, o := range r.open {
				c.violate(ev.Resource, o, s, hb.HappenedBefore(o.enter))
			}
		} else if r.last != nil && !hb.HappenedBefore(r.last.exit) {
			c.violate(ev.Resource, r.last, s, hb.HappenedBefore(r.last.enter))
		}
		for _, k := range r.crashed {
			if k.t1 > ev.Wall {
				c.violate(ev.Resource, k, s, hb.HappenedBefore(k.enter))
			}
		}
		r.open = append(r.open, s)
	case trace.KindCSExit:
		var s *csSpan
		if r := c.res[ev.Resource]; r != nil {
			if s = r.open.close(ev.Proc, ev.Ref(), ev.Wall, false); s != nil {
				r.last = s
			}
		}
		if s == nil {
			if c.stray == 0 {
				c.strayRef = ev.Ref()
			}
			c.stray++
		}
	case trace.KindCrash:
		for _, r := range c.res {
			for s := r.open.close(ev.Proc, ev.Ref(), ev.Wall, true); s != nil; s = r.open.close(ev.Proc, ev.Ref(), ev.Wall, true) {
				r.crashed = append(r.crashed, s)
			}
		}
	}
}

// violate records a provisional violation.
func (c *mutexCausal) violate(res string, a, b *csSpan, overlapping bool) {
	if len(c.viol) >= maxPending {
		c.more++
		return
	}
	c.viol = append(c.viol, causalViolation{res: res, a: a, b: b, overlapping: overlapping})
}

// stands reports whether a provisional violation stands: always for two
// sections that exited normally (or never), and for a pair with a
// crash-ended section only if their wall intervals overlap.
func (v causalViolation) stands(end int64) bool {
	if !v.a.crashed && !v.b.crashed {
		return true
	}
	t1 := func(s *csSpan) int64 {
		if s.exit.Seq == 0 {
			return end
		}
		return s.t1
	}
	return v.a.t0 < t1(v.b) && v.b.t0 < t1(v.a)
}

func (c *mutexCausal) Finish(end End) Result {
	var f findings
	for _, v := range c.viol {
		if !v.stands(end.Wall) {
			continue
		}
		refs := v.b.refs(v.a.refs(nil))
		var msg string
		switch {
		case v.a.proc == v.b.proc:
			msg = fmt.Sprintf("overlapping critical sections on %s: %v and %v: P%d entered again before leaving", v.res, v.a, v.b, v.a.proc)
		case v.overlapping:
			msg = fmt.Sprintf("overlapping critical sections on %s: %v and %v: P%d entered knowing that P%d had entered, but not that it had left", v.res, v.a, v.b, v.b.proc, v.a.proc)
		default:
			msg = fmt.Sprintf("concurrent critical sections on %s: %v and %v: neither entry happened before the other", v.res, v.a, v.b)
		}
		parts := []Part{v.a.part(""), v.b.part("")}
		if v.a.exit.Seq != 0 && !v.a.crashed && !v.b.crashed {
			parts = append(parts, Part{Role: RoleNotBefore, Events: []trace.Ref{v.a.exit, v.b.enter}})
		}
		f.addParts(msg, parts, refs...)
	}
	f.more += c.more
	note := fmt.Sprintf("%s on %s", plural.Count(c.sections, "critical section"), plural.Count(len(c.res), "resource"))
	if c.stray > 0 {
		note += fmt.Sprintf("; %s without a matching cs_enter ignored (first %v)", plural.Count(c.stray, "cs_exit event"), c.strayRef)
	}
	return f.result(note)
}

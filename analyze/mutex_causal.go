package analyze

import (
	"fmt"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// MutexCausal checks mutual exclusion in causal terms.
var MutexCausal = &Check{
	Name: "mutex-causal",
	Doc: `critical sections on one resource are ordered by happens-before

A critical section is a process's k-th cs_enter on a resource up to its k-th
cs_exit on that resource, or up to its crash, which ends every section it
holds. For every two of them on one resource, the exit of one must have
happened before the entry of the other. If not, there is a consistent
global state in which both processes are inside: the finding says
"overlapping" when one entry happened before the other (the second process
entered knowing the first was in, but not that it had left), "concurrent"
when neither entry happened before the other. This holds whatever the wall
clocks say; see mutex-realtime for those.

A section that ended in its process's crash cannot be followed causally by
anything (the dead send nothing; survivors only suspect it, through a
failure detector), so a pair that involves one is judged by what shows
that the two overlapped in fact, each end against the other's entry:
  - happens-before, when each section's entry happened before the other's
    end (an end that never came, the section open at the end of the run,
    counts as after everything): then both were inside at once, whatever
    the clocks say. So a process that enters after hearing from one inside,
    and is heard from by it before it crashes, overlaps it;
  - else wall time: the two sections' wall intervals, the crash ending one,
    must not overlap;
  - else (a trace without wall times) nothing shows in which order the
    crash and the other entry came: the verdict is unknown, and the note
    names the crash and the entry.`,
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
// Every pair that involves a crash-ended section is judged by the rule of
// the check's doc instead. Since a section's end is not known at its entry,
// every violation is provisional until Finish, which applies that rule.
// The happens-before facts it needs are taken when they can be: "X's entry
// happened before Y's end" is asked at Y's end (HB is only valid for the
// current event), so each open section keeps the provisional violations it
// is in (bounded by maxPending) and settles them when it ends.
//
// The crash-ended sections of a resource are kept (few: one per crash
// inside a section) and compared with every later entry that does not know
// of their crash (through the process's recovery). An entry that knows the
// exit of the last section, which itself knew of crashes up to some point
// (knewCrashes), knows of those too, and is compared only with the rest.

type mutexCausal struct {
	res      map[string]*causalRes
	viol     []*causalViolation
	more     int
	sections int64
	// alsoUndecided counts the later entries that do not know of a crash
	// which, without wall times, is already undecided against an earlier
	// one: kept once per crash-ended section.
	alsoUndecided int
	stray         int // exits with no open section
	strayRef      trace.Ref
}

type causalRes struct {
	open    openSpans
	last    *csSpan   // the section whose normal exit was delivered last
	crashed []*csSpan // the sections that ended in a crash, in delivery order
}

// causalViolation is kept until Finish so that its message can name exits
// delivered after the violation was found, and so that a pair whose
// section ends in a crash can be judged by the facts that show an overlap.
type causalViolation struct {
	res         string
	a, b        *csSpan // a entered first in delivery order
	overlapping bool    // a's entry happened before b's
	// aToB: a's entry happened before b's end; bToA: b's entry happened
	// before a's end (an end never reached counts as after everything).
	// Both: the sections overlapped in fact.
	aToB, bToA bool
}

// maxPending bounds the violations kept for Finish; the rest are counted.
const maxPending = 100 * MaxFindings

func (c *mutexCausal) Event(ev *trace.Event, hb *HB) {
	switch ev.Kind {
	case trace.KindCSEnter:
		r, _ := entry(c.res, ev.Resource)
		s := &csSpan{proc: ev.Proc, enter: ev.Ref(), t0: ev.Wall}
		c.sections++
		if len(r.open) > 0 {
			for _, o := range r.open {
				ab := hb.HappenedBefore(o.enter)
				if v := c.violate(ev.Resource, o, s, ab); v != nil {
					v.aToB = ab // a's entry -> b's entry -> b's end
					o.settle = append(o.settle, v)
					s.settle = append(s.settle, v)
				}
			}
		} else if r.last != nil && !hb.HappenedBefore(r.last.exit) {
			if v := c.violate(ev.Resource, r.last, s, hb.HappenedBefore(r.last.enter)); v != nil {
				v.aToB = v.overlapping
				s.settle = append(s.settle, v)
			}
		}
		// The crash-ended sections this entry does not know the end of.
		from := 0
		if r.last != nil && hb.HappenedBefore(r.last.exit) {
			from = r.last.knewCrashes
		}
		known := from // the crashes s knows of through r.last
		for i := from; i < len(r.crashed); i++ {
			k := r.crashed[i]
			switch {
			case hb.HappenedBefore(k.exit):
				if known == i {
					known++
				}
			case k.t1 != 0 && ev.Wall >= k.t1:
				// Entered after the crash in wall time (the crash came
				// first in the walk: this entry cannot have happened
				// before it), so only the wall intervals could make
				// them overlap, and they do not.
			case k.t1 == 0 && k.undecided:
				c.alsoUndecided++ // no wall times: as undecided as the first
			default:
				ab := hb.HappenedBefore(k.enter)
				if v := c.violate(ev.Resource, k, s, ab); v != nil {
					v.aToB = ab
					s.settle = append(s.settle, v)
					k.undecided = k.t1 == 0
				}
			}
		}
		s.knewCrashes = known
		r.open = append(r.open, s)
	case trace.KindCSExit:
		var s *csSpan
		if r := c.res[ev.Resource]; r != nil {
			if s = r.open.close(ev.Proc, ev.Ref(), ev.Wall, false); s != nil {
				r.last = s
				s.settleAt(hb)
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
				s.settleAt(hb)
			}
		}
	}
}

// settleAt records, for the provisional violations s is in, whether the
// other section's entry happened before s's end, the current event.
func (s *csSpan) settleAt(hb *HB) {
	for _, v := range s.settle {
		switch s {
		case v.a:
			v.bToA = hb.HappenedBefore(v.b.enter)
		case v.b:
			v.aToB = v.aToB || hb.HappenedBefore(v.a.enter)
		}
	}
	s.settle = nil
}

// violate records a provisional violation, or returns nil if too many are
// kept already.
func (c *mutexCausal) violate(res string, a, b *csSpan, overlapping bool) *causalViolation {
	if len(c.viol) >= maxPending {
		c.more++
		return nil
	}
	v := &causalViolation{res: res, a: a, b: b, overlapping: overlapping}
	c.viol = append(c.viol, v)
	return v
}

// judgement is what Finish makes of a provisional violation.
type judgement int

const (
	stands    judgement = iota // a violation
	dismissed                  // the sections did not overlap
	undecided                  // nothing in the trace tells
)

// judge decides a provisional violation: it stands for two sections that
// exited normally (or never); a pair with a crash-ended section stands if
// happens-before shows that both were inside at once, else if their wall
// intervals overlap, and is undecided without wall times.
func (v *causalViolation) judge(end End) judgement {
	if !v.a.crashed && !v.b.crashed {
		return stands
	}
	// A section never ended lasts to the end of the run, after every
	// event.
	if (v.aToB || v.b.exit.Seq == 0) && (v.bToA || v.a.exit.Seq == 0) {
		return stands
	}
	if !end.HasWall {
		return undecided
	}
	t1 := func(s *csSpan) int64 {
		if s.exit.Seq == 0 {
			return end.Wall
		}
		return s.t1
	}
	if v.a.t0 < t1(v.b) && v.b.t0 < t1(v.a) {
		return stands
	}
	return dismissed
}

// enteredBefore says that s's entry happened before o's end, or that o
// never ended.
func (s *csSpan) enteredBefore(o *csSpan) string {
	if o.exit.Seq == 0 {
		return fmt.Sprintf("P%d was still inside at the end of the run", o.proc)
	}
	return fmt.Sprintf("%v happened before %s", s.enter, o.endOf())
}

// endOf names the end of a section: its exit or crash event, or the end of
// the run.
func (s *csSpan) endOf() string {
	switch {
	case s.exit.Seq == 0:
		return "the end of the run"
	case s.crashed:
		return fmt.Sprintf("P%d's crash %v", s.proc, s.exit)
	}
	return fmt.Sprintf("P%d's exit %v", s.proc, s.exit)
}

func (c *mutexCausal) Finish(end End) Result {
	if c.sections == 0 {
		return notApplicable("no critical sections")
	}
	var f findings
	var open []string // the undecided pairs, named
	nOpen := 0
	for _, v := range c.viol {
		j := v.judge(end)
		if j == dismissed {
			continue
		}
		crashed := v.a.crashed || v.b.crashed
		if j == undecided {
			nOpen++
			if len(open) < 3 {
				k, o := v.a, v.b
				if !k.crashed {
					k, o = o, k
				}
				open = append(open, fmt.Sprintf("%v and %v on %s: whether %s came before P%d entered at %v", v.a, v.b, v.res, k.endOf(), o.proc, o.enter))
			}
			continue
		}
		refs := v.b.refs(v.a.refs(nil))
		var msg string
		switch {
		case crashed && !(v.aToB || v.b.exit.Seq == 0) || crashed && !(v.bToA || v.a.exit.Seq == 0):
			msg = fmt.Sprintf("overlapping critical sections on %s: %v and %v: their wall intervals overlap, and a crash ends one", v.res, v.a, v.b)
		case crashed:
			msg = fmt.Sprintf("overlapping critical sections on %s: %v and %v: both were inside at once: %s, and %s",
				v.res, v.a, v.b, v.a.enteredBefore(v.b), v.b.enteredBefore(v.a))
		case v.a.proc == v.b.proc:
			msg = fmt.Sprintf("overlapping critical sections on %s: %v and %v: P%d entered again before leaving", v.res, v.a, v.b, v.a.proc)
		case v.overlapping:
			msg = fmt.Sprintf("overlapping critical sections on %s: %v and %v: P%d entered knowing that P%d had entered, but not that it had left", v.res, v.a, v.b, v.b.proc, v.a.proc)
		default:
			msg = fmt.Sprintf("concurrent critical sections on %s: %v and %v: neither entry happened before the other", v.res, v.a, v.b)
		}
		parts := []Part{v.a.part(""), v.b.part("")}
		if v.a.exit.Seq != 0 && !crashed {
			parts = append(parts, Part{Role: RoleNotBefore, Events: []trace.Ref{v.a.exit, v.b.enter}})
		}
		f.addParts(msg, parts, refs...)
	}
	f.more += c.more
	note := fmt.Sprintf("%s on %s", plural.Count(c.sections, "critical section"), plural.Count(len(c.res), "resource"))
	if c.stray > 0 {
		note += fmt.Sprintf("; %s without a matching cs_enter ignored (first %v)", plural.Count(c.stray, "cs_exit event"), c.strayRef)
	}
	nOpen += c.alsoUndecided
	return f.resultUndecided(note, nOpen, plural.Count(nOpen, "pair of sections")+
		" ended by a crash cannot be ordered: no message orders the crash and the other entry, and the trace has no wall times", open)
}

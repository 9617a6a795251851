package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// ClockSkew checks that the recorded wall times agree with happens-before.
var ClockSkew = &Check{
	Name: "clock-skew",
	Doc: `the wall clocks agree with happens-before

An event that happened before another took place earlier in real time, so
wall clocks that agree stamp it no later. Where an event's wall time is
earlier than that of an event in its causal past, the clocks of the two
processes disagree by at least the difference (a process's own clock
going back shows in its program order). The finding says by how much at
least, for each pair of processes, with the two events that show it.
Where this makes two critical sections on a resource overlap in wall time
although one's exit happened before the other's entry (each section's
entry is stamped before the other's exit: both ends are compared, the
second section's exit when it comes), the finding names the sections:
mutex-realtime does not count such an overlap as a violation (the
sections did not overlap; the clocks are off). The wall
time bound travels along the same edges as the Lamport clocks (one value
per process and per message in flight). A trace without wall times is
skipped.`,
	Requires: []string{NeedHB, NeedWall},
	New: func(Config) Checker {
		return &clockSkew{pairs: make(map[[2]int]*skew), open: make(map[csKey]*csSpan), res: make(map[string][]*csSpan), cand: make(map[csKey]*skew)}
	},
}

// skew is the largest disagreement shown between two processes' clocks:
// early happened before late, yet late's wall time is d earlier.
type skew struct {
	d           int64
	early, late trace.Ref
	ew, lw      int64
	sections    *[2]*csSpan // the sections that overlap because of it, if it is theirs
	res         string
}

type clockSkew struct {
	pairs    map[[2]int]*skew     // (behind, ahead) -> the largest skew shown
	sections map[[2]int]*skew     // the same, shown by two critical sections
	open     map[csKey]*csSpan    // entries not yet exited, per process and resource
	res      map[string][]*csSpan // per resource: the last sections exited normally
	// cand are the sections entered stamped before the exit of one that
	// happened before them, per entering process and resource: they
	// overlap in wall time if their exit is stamped after the other's
	// entry, which their exit (or the end of the run) tells.
	cand  map[csKey]*skew
	walls int64 // events with a wall time
}

// recentExits is how many exited sections per resource an entry is
// compared with.
const recentExits = 8

func (c *clockSkew) Event(ev *trace.Event, hb *HB) {
	if ev.Wall == 0 {
		return
	}
	c.walls++
	if bound, at := hb.WallBound(); bound > ev.Wall {
		k := [2]int{ev.Proc, at.Proc}
		if s := c.pairs[k]; s == nil || bound-ev.Wall > s.d {
			c.pairs[k] = &skew{d: bound - ev.Wall, early: at, late: ev.Ref(), ew: bound, lw: ev.Wall}
		}
	}
	switch ev.Kind {
	case trace.KindCSEnter:
		y := &csSpan{proc: ev.Proc, enter: ev.Ref(), t0: ev.Wall}
		k := csKey{ev.Proc, ev.Resource}
		c.open[k] = y
		// The latest section exited that this entry knows of: if its exit
		// is stamped later, the two may overlap in wall time only (if y's
		// exit is stamped after x's entry).
		rs := c.res[ev.Resource]
		for i := len(rs) - 1; i >= 0; i-- {
			x := rs[i]
			if x.proc == ev.Proc || !hb.HappenedBefore(x.exit) {
				continue
			}
			if x.t1 > ev.Wall {
				c.cand[k] = &skew{d: x.t1 - ev.Wall, early: x.exit, late: ev.Ref(), ew: x.t1, lw: ev.Wall, sections: &[2]*csSpan{x, y}, res: ev.Resource}
			}
			break
		}
	case trace.KindCSExit:
		k := csKey{ev.Proc, ev.Resource}
		y, ok := c.open[k]
		if !ok {
			return
		}
		delete(c.open, k)
		y.exit, y.t1 = ev.Ref(), ev.Wall
		c.settle(k, ev.Wall)
		rs := append(c.res[ev.Resource], y)
		if len(rs) > recentExits {
			rs = rs[1:]
		}
		c.res[ev.Resource] = rs
	case trace.KindCrash:
		for k := range c.open {
			if k.proc == ev.Proc {
				delete(c.open, k)
				c.settle(k, ev.Wall)
			}
		}
	}
}

// settle decides the candidate of the section of k that ended at wall time
// t1: the two sections overlap in wall time if it ended after the other
// one's entry.
func (c *clockSkew) settle(k csKey, t1 int64) {
	s := c.cand[k]
	if s == nil {
		return
	}
	delete(c.cand, k)
	if x := s.sections[0]; t1 <= x.t0 {
		return // y is stamped wholly before x: no overlap in wall time
	}
	if c.sections == nil {
		c.sections = make(map[[2]int]*skew)
	}
	pk := [2]int{k.proc, s.sections[0].proc}
	if o := c.sections[pk]; o == nil || s.d > o.d {
		c.sections[pk] = s
	}
}

func (c *clockSkew) Finish(end End) Result {
	if !end.HasWall {
		return Result{Verdict: Skipped, Note: "no wall times: no clocks to compare"}
	}
	for _, k := range sortedCSKeys(c.cand) { // sections open at the end
		c.settle(k, end.Wall)
	}
	at := func(t int64) string { return "+" + time.Duration(t-end.Start).String() }
	var f findings
	keys := func(m map[[2]int]*skew) [][2]int {
		ks := make([][2]int, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		slices.SortFunc(ks, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
		return ks
	}
	// One finding per pair of processes: the sections that overlap
	// because of their clocks if some do, and the largest disagreement.
	largest := func(s *skew) string {
		return fmt.Sprintf("%v at %s happened before %v at %s", s.early, at(s.ew), s.late, at(s.lw))
	}
	for _, k := range keys(c.sections) {
		s := c.sections[k]
		x := s.sections[0]
		msg := fmt.Sprintf("critical sections on %s overlap in wall time but not in fact: %v exited at %s, which happened before P%d entered at %v at %s: the wall clock of P%d is behind P%d's by at least %v",
			s.res, x, at(s.ew), k[0], s.late, at(s.lw), k[0], k[1], time.Duration(s.d))
		refs := []trace.Ref{x.enter, s.early, s.late}
		if p := c.pairs[k]; p != nil && p.d > s.d {
			msg += fmt.Sprintf(", and by at least %v elsewhere: %s", time.Duration(p.d), largest(p))
			refs = append(refs, p.early, p.late)
		}
		f.add(msg, refs...)
	}
	for _, k := range keys(c.pairs) {
		if c.sections[k] != nil {
			continue // said with the sections
		}
		s := c.pairs[k]
		who := fmt.Sprintf("the wall clock of P%d is behind P%d's by at least %v", k[0], k[1], time.Duration(s.d))
		if k[0] == k[1] {
			who = fmt.Sprintf("the wall clock of P%d went back by at least %v", k[0], time.Duration(s.d))
		}
		f.add(who+": "+largest(s), s.early, s.late)
	}
	return f.result(plural.Count(c.walls, "wall time") + " compared with their causal past")
}

// sortedCSKeys returns the keys of m by process and resource.
func sortedCSKeys[V any](m map[csKey]V) []csKey {
	keys := make([]csKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b csKey) int { return cmp.Or(cmp.Compare(a.proc, b.proc), cmp.Compare(a.res, b.res)) })
	return keys
}

package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dmxlab/dmx/render/plural"
	"github.com/dmxlab/dmx/trace"
)

// SplitBrain checks that no two processes believe they lead at once.
var SplitBrain = &Check{
	Name: "split-brain",
	Doc: `never two processes that both believe they lead

A process believes it leads from a leader event naming itself until it
crashes or decides that another process leads (or that none does), in the
election of the event's resource: each resource (one election per shard,
say) is judged on its own, and a crash ends a process's leadership in all
of them. Two such
"I lead" intervals of different processes must not coexist, which is
checked two ways:
  - causally: the end of one must have happened before the start of the
    other; if not, a consistent global state has both leading. A crash
    sends no message, so no process can learn of it causally and every
    fail-over would look concurrent: an interval that ends with a crash is
    compared in wall time only. So is one that ends with the process
    deciding that nobody leads: it stepped down on its own clock (a master
    whose lease ran out, Chubby-style), which is what the others count on,
    not a message;
  - in wall time: the intervals [start, end) must not overlap (an interval
    not ended lasts until the end of the run).
The finding names the two leader events (the two self-declarations), how
each interval ended, and in which of the two ways they overlapped. The
streaming check keeps per process its open interval and the last one it
left by a decision; the intervals themselves (one per self-declaration, far
fewer than events) are swept in wall time at the end.`,
	Requires: []string{NeedHB},
	New:      func(Config) Checker { return &splitBrain{el: make(map[string]*reigns)} },
}

// reign is one "I lead" interval.
type reign struct {
	proc  int
	start mark
	end   mark   // ref.Seq 0: still leading at the end of the run
	how   string // how it ended: "crash" or the deciding event's description
}

func (r *reign) ended() bool { return r.end.ref.Seq != 0 }

// part is the RoleReign part of r.
func (r *reign) part() Part {
	p := Part{Role: RoleReign, Events: []trace.Ref{r.start.ref}, Label: fmt.Sprintf("P%d leads", r.proc)}
	if r.ended() {
		p.Events = append(p.Events, r.end.ref)
	}
	return p
}

func (r *reign) String() string {
	s := fmt.Sprintf("P%d from %v leader(%d)", r.proc, r.start.ref, r.proc)
	switch {
	case !r.ended():
		return s + " to the end of the run"
	case r.how == "crash":
		return s + fmt.Sprintf(" until its crash %v", r.end.ref)
	}
	return s + fmt.Sprintf(" until %v %s", r.end.ref, r.how)
}

type splitBrain struct {
	pos     int64
	leaders int64
	el      map[string]*reigns // per election (resource)
	names   []string           // the elections' resources, in order of first event
}

// reigns are the "I lead" intervals of one election.
type reigns struct {
	cur     []*reign // per process: the interval it is in
	stepped []*reign // per process: the last interval it left by a decision
	all     []*reign
	waiting [][2]*reign        // (a, b): b began while a was open; a causal violation unless a ends untold
	causal  map[[2]*reign]bool // pairs found concurrent
	order   [][2]*reign        // causal pairs in the order found
}

func grow[T any](s []T, n int) []T {
	for n >= len(s) {
		var zero T
		s = append(s, zero)
	}
	return s
}

func (c *splitBrain) Event(ev *trace.Event, hb *HB) {
	c.pos++
	switch ev.Kind {
	case trace.KindLeader:
		c.leaders++
		e := c.el[ev.Resource]
		if e == nil {
			e = &reigns{causal: make(map[[2]*reign]bool)}
			c.el[ev.Resource] = e
			c.names = append(c.names, ev.Resource)
		}
		e.cur, e.stepped = grow(e.cur, ev.Proc), grow(e.stepped, ev.Proc)
		leader, _ := decision(ev)
		if leader != ev.Proc {
			if r := e.cur[ev.Proc]; r != nil {
				how := fmt.Sprintf("leader(%d)", leader)
				if leader < 0 {
					how = "no leader"
				}
				e.close(r, newMark(ev, c.pos), how)
				e.stepped[ev.Proc] = r
			}
			return
		}
		if e.cur[ev.Proc] != nil {
			return // it goes on leading (a new term, a repeated declaration)
		}
		r := &reign{proc: ev.Proc, start: newMark(ev, c.pos)}
		e.cur[ev.Proc] = r
		e.all = append(e.all, r)
		for q, o := range e.cur {
			if o != nil && q != ev.Proc {
				e.waiting = append(e.waiting, [2]*reign{o, r})
			}
		}
		// A process's earlier intervals ended before its last one did:
		// if that one's end happened before r, theirs did too.
		for q, o := range e.stepped {
			if o != nil && q != ev.Proc && !hb.HappenedBefore(o.end.ref) {
				e.found(o, r)
			}
		}
	case trace.KindCrash:
		// A crash ends the process's leadership in every election.
		for _, e := range c.el {
			if ev.Proc < len(e.cur) && e.cur[ev.Proc] != nil {
				e.close(e.cur[ev.Proc], newMark(ev, c.pos), "crash")
			}
		}
	}
}

// untold reports whether an interval that ended so ended without anything
// another process could learn of causally: a crash, or a step-down to no
// leader on the process's own clock (a lease that ran out).
func untold(how string) bool { return how == "crash" || how == "no leader" }

// close ends r; the intervals that began while it was open coexisted with
// it in a consistent global state, which counts unless r ended untold.
func (e *reigns) close(r *reign, end mark, how string) {
	r.end, r.how = end, how
	e.cur[r.proc] = nil
	e.waiting = slices.DeleteFunc(e.waiting, func(p [2]*reign) bool {
		if p[0] != r {
			return false
		}
		if !untold(how) {
			e.found(p[0], p[1])
		}
		return true
	})
}

func (e *reigns) found(a, b *reign) {
	k := [2]*reign{a, b}
	if !e.causal[k] {
		e.causal[k] = true
		e.order = append(e.order, k)
	}
}

func (c *splitBrain) Finish(end End) Result {
	if c.leaders == 0 {
		return noElection()
	}
	results := make([]Result, len(c.names))
	for i, name := range c.names {
		results[i] = c.el[name].judge(end)
	}
	return joinElections(c.names, results)
}

// judge decides split brain in one election.
func (c *reigns) judge(end End) Result {
	for _, p := range c.waiting { // a was still leading at the end
		c.found(p[0], p[1])
	}
	// A pair in which either interval ended by a crash or a step-down is
	// judged in wall time only, whatever order the reader delivered them
	// in: nothing follows a crash causally, so the causal test would call
	// every fail-over concurrent; and a lease's end is known by the clock.
	c.order = slices.DeleteFunc(c.order, func(k [2]*reign) bool {
		if untold(k[0].how) || untold(k[1].how) {
			delete(c.causal, k)
			return true
		}
		return false
	})
	// Wall-time overlaps: sweep the intervals in order of start.
	type overlap struct{ from, to int64 }
	walls := make(map[[2]*reign]overlap)
	var pairs [][2]*reign
	if end.HasWall {
		stop := func(r *reign) int64 {
			if r.ended() {
				return r.end.wall
			}
			return max(end.Wall, r.start.wall)
		}
		rs := slices.Clone(c.all)
		slices.SortStableFunc(rs, func(a, b *reign) int { return cmp.Compare(a.start.wall, b.start.wall) })
		var open []*reign
		for _, r := range rs {
			open = slices.DeleteFunc(open, func(o *reign) bool { return stop(o) <= r.start.wall })
			for _, o := range open {
				if o.proc != r.proc {
					k := [2]*reign{o, r}
					walls[k] = overlap{r.start.wall, min(stop(o), stop(r))}
					if !c.causal[k] && !c.causal[[2]*reign{r, o}] {
						pairs = append(pairs, k)
					}
				}
			}
			open = append(open, r)
		}
	}
	pairs = append(slices.Clone(c.order), pairs...)
	slices.SortStableFunc(pairs, func(a, b [2]*reign) int { return cmp.Compare(a[1].start.pos, b[1].start.pos) })

	var f findings
	for _, k := range pairs {
		a, b := k[0], k[1]
		w, inWall := walls[k]
		if !inWall {
			w, inWall = walls[[2]*reign{b, a}]
		}
		var how []string
		if c.causal[k] {
			if a.ended() {
				how = append(how, fmt.Sprintf("causally: %v did not happen before %v, so a consistent global state has both leading", a.end.ref, b.start.ref))
			} else {
				how = append(how, fmt.Sprintf("causally: P%d never stopped leading, so a consistent global state has both leading", a.proc))
			}
		}
		switch {
		case inWall:
			how = append(how, fmt.Sprintf("in wall time: for %v from +%v", time.Duration(w.to-w.from), time.Duration(w.from-end.Start)))
		case end.HasWall:
			how = append(how, "not in wall time")
		}
		parts := []Part{a.part(), b.part()}
		if c.causal[k] && a.ended() {
			parts = append(parts, Part{Role: RoleNotBefore, Events: []trace.Ref{a.end.ref, b.start.ref}})
		}
		f.addParts(fmt.Sprintf("split brain: P%d and P%d both believed they led: %v and %v; %s",
			a.proc, b.proc, a, b, strings.Join(how, "; ")), parts, a.start.ref, b.start.ref)
	}
	note := plural.Count(len(c.all), "leadership interval")
	if !end.HasWall {
		note += "; no wall times: checked causally only"
	}
	return f.result(note)
}

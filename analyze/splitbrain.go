package analyze

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// SplitBrain checks that no two processes believe they lead at once.
var SplitBrain = &Check{
	Name: "split-brain",
	Doc: `never two processes that both believe they lead

A process believes it leads from a leader event naming itself until it
crashes or decides that another process leads (or that none does: it steps
down), in the election of the event's resource: each resource (one
election per shard, say) is judged on its own, and a crash ends a
process's leadership in all of them. A run that declares Raft's rule,
params {"step_down": "higher-term"} (dmx import's step_down=<higher-term>
rule), also ends a leader's belief at the first message it receives that
carries a higher term than the one it leads in. Two such "I lead"
intervals of different processes must not coexist, which is checked:
  - causally, when both intervals ended by a decision (or not at all): the
    end of one must have happened before the start of the other; if not, a
    consistent global state has both leading;
  - when either ended untold, by a crash (a crash sends no message, so no
    process can learn of it causally and every fail-over would look
    concurrent) or by stepping down on its own clock (a master whose lease
    ran out), by what shows that they overlapped in fact: each interval's
    start happened before the other's end (an interval not ended lasts to
    the end of the run), so both led at once whatever the clocks say (a
    leader that hears from the next term's follower and then crashes);
    else by wall time; else, in a trace without wall times, nothing shows
    in which order they came: unknown, and the note names the pair;
  - in wall time: the intervals [start, end) must not overlap (an interval
    not ended lasts until the end of the run).
The finding names the two leader events (the two self-declarations), how
each interval ended, and in which of the ways they overlapped. The
streaming check keeps per election the intervals (one per self-
declaration, far fewer than events) and the pairs that no causal order
separates, settling each pair's facts at the intervals' ends; the
intervals are swept in wall time at the end.`,
	Requires: []string{NeedHB},
	New: func(cfg Config) Checker {
		return &splitBrain{el: make(map[string]*reigns), higherTerm: stepDownRule(cfg) == StepDownHigherTerm}
	},
}

// StepDownHigherTerm is the step-down rule of Raft (section 5.1: "If a
// server receives a request with a stale term ... if a candidate or leader
// discovers that its term is out of date, it immediately reverts to
// follower state"): a run's params declare it as {"step_down":
// "higher-term"}, and check split-brain then ends a leader's belief at the
// first message it receives that carries a higher term (the message's
// detail "term") than the term it declared.
const StepDownHigherTerm = "higher-term"

// stepDownRule returns the step-down rule the run's params declare.
func stepDownRule(cfg Config) string {
	var p struct {
		StepDown string `json:"step_down"`
	}
	if len(cfg.Run.Params) > 0 && json.Unmarshal(cfg.Run.Params, &p) == nil {
		return p.StepDown
	}
	return ""
}

// reign is one "I lead" interval.
type reign struct {
	proc  int
	start mark
	end   mark   // ref.Seq 0: still leading at the end of the run
	how   string // how it ended: "crash", "no leader" or the deciding event's description
	term  uint64 // the term it declared, 0 if none
	// The pairs it is in whose facts are taken at its end.
	settle []*rpair
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

// before says that x's start happened before y's end, or that y never
// ended.
func before(x, y *reign) string {
	switch {
	case !y.ended():
		return fmt.Sprintf("P%d still led at the end of the run", y.proc)
	case y.how == "crash":
		return fmt.Sprintf("%v happened before P%d's crash %v", x.start.ref, y.proc, y.end.ref)
	}
	return fmt.Sprintf("%v happened before P%d's %v %s", x.start.ref, y.proc, y.end.ref, y.how)
}

// rpair is two intervals of different processes that no causal order
// separates: b began while a was open, or after a ended without b knowing
// it. The facts say whether they overlapped in fact.
type rpair struct {
	a, b *reign // a began first in the walk
	p1   bool   // a's start happened before b's end
	p2   bool   // b's start happened before a's end
}

type splitBrain struct {
	pos        int64
	leaders    int64
	higherTerm bool               // the run declares Raft's step-down rule
	el         map[string]*reigns // per election (resource)
	names      []string           // the elections' resources, in order of first event
}

// reigns are the "I lead" intervals of one election.
type reigns struct {
	cur   []*reign // per process: the interval it is in
	all   []*reign // in the order they began
	done  []*reign // the intervals that ended, in the order they ended
	pairs []*rpair // in the order found
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
		e, added := entry(c.el, ev.Resource)
		if added {
			c.names = append(c.names, ev.Resource)
		}
		e.cur = grow(e.cur, ev.Proc)
		leader, term := decision(ev)
		if leader != ev.Proc {
			if r := e.cur[ev.Proc]; r != nil {
				how := fmt.Sprintf("leader(%d)", leader)
				if leader < 0 {
					how = "no leader"
				}
				e.close(r, newMark(ev, c.pos), how, hb)
			}
			return
		}
		if r := e.cur[ev.Proc]; r != nil {
			r.term = max(r.term, term)
			return // it goes on leading (a new term, a repeated declaration)
		}
		r := &reign{proc: ev.Proc, start: newMark(ev, c.pos), term: term}
		e.cur[ev.Proc] = r
		e.all = append(e.all, r)
		for q, o := range e.cur {
			if o != nil && q != ev.Proc {
				e.pair(o, r, hb, true)
			}
		}
		// The intervals that ended without r knowing it. A process's
		// earlier intervals ended before its later ones began: if r knows
		// the end of one, it knows the ends of those before it.
		knows := make(map[int]bool)
		for i := len(e.done) - 1; i >= 0; i-- {
			o := e.done[i]
			if o.proc == ev.Proc || knows[o.proc] {
				continue
			}
			if hb.HappenedBefore(o.end.ref) {
				knows[o.proc] = true
				continue
			}
			e.pair(o, r, hb, false)
		}
	case trace.KindCrash:
		// A crash ends the process's leadership in every election.
		for _, e := range c.el {
			if ev.Proc < len(e.cur) && e.cur[ev.Proc] != nil {
				e.close(e.cur[ev.Proc], newMark(ev, c.pos), "crash", hb)
			}
		}
	case trace.KindReceive:
		if !c.higherTerm {
			return
		}
		// The message's term is that of its resource's election.
		e := c.el[ev.Resource]
		if e == nil || ev.Proc >= len(e.cur) || e.cur[ev.Proc] == nil {
			return
		}
		if r := e.cur[ev.Proc]; r != nil {
			if m, err := ev.Message(); err == nil && m.Term > r.term {
				e.close(r, newMark(ev, c.pos), fmt.Sprintf("stepped down on hearing term %d", m.Term), hb)
			}
		}
	}
}

// pair records that a and b (which begins now) are not causally ordered;
// open says a has not ended.
func (e *reigns) pair(a, b *reign, hb *HB, open bool) {
	p := &rpair{a: a, b: b, p1: hb.HappenedBefore(a.start.ref)}
	e.pairs = append(e.pairs, p)
	b.settle = append(b.settle, p)
	if open {
		a.settle = append(a.settle, p)
	}
}

// untold reports whether an interval that ended so ended without anything
// another process could learn of causally: a crash, or a step-down to no
// leader on the process's own clock (a lease that ran out).
func untold(how string) bool { return how == "crash" || how == "no leader" }

// close ends r at the current event and takes the facts of its pairs.
func (e *reigns) close(r *reign, end mark, how string, hb *HB) {
	r.end, r.how = end, how
	e.cur[r.proc] = nil
	e.done = append(e.done, r)
	for _, p := range r.settle {
		if p.a == r {
			p.p2 = hb.HappenedBefore(p.b.start.ref)
		} else {
			p.p1 = p.p1 || hb.HappenedBefore(p.a.start.ref)
		}
	}
	r.settle = nil
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
	// The pairs that no causal order separates: a causal finding when both
	// intervals ended told (or never); with an untold end, a finding if
	// happens-before shows they overlapped, else the wall times decide
	// (below), else undecided.
	causal := make(map[[2]*reign]bool)
	inFact := make(map[[2]*reign]bool)
	var order [][2]*reign
	var open []string
	nOpen := 0
	for _, p := range c.pairs {
		k := [2]*reign{p.a, p.b}
		switch {
		case !untold(p.a.how) && !untold(p.b.how):
			causal[k] = true
		case (p.p1 || !p.b.ended()) && (p.p2 || !p.a.ended()):
			inFact[k] = true
		case end.HasWall:
			continue
		default:
			nOpen++
			if len(open) < 3 {
				open = append(open, fmt.Sprintf("%v and %v", p.a, p.b))
			}
			continue
		}
		order = append(order, k)
	}
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
					if !causal[k] && !causal[[2]*reign{r, o}] && !inFact[k] && !inFact[[2]*reign{r, o}] {
						pairs = append(pairs, k)
					}
				}
			}
			open = append(open, r)
		}
	}
	pairs = append(order, pairs...)
	slices.SortStableFunc(pairs, func(a, b [2]*reign) int { return cmp.Compare(a[1].start.pos, b[1].start.pos) })

	var f findings
	for _, k := range pairs {
		a, b := k[0], k[1]
		w, inWall := walls[k]
		if !inWall {
			w, inWall = walls[[2]*reign{b, a}]
		}
		var how []string
		switch {
		case causal[k] && a.ended():
			how = append(how, fmt.Sprintf("causally: %v did not happen before %v, so a consistent global state has both leading", a.end.ref, b.start.ref))
		case causal[k]:
			how = append(how, fmt.Sprintf("causally: P%d never stopped leading, so a consistent global state has both leading", a.proc))
		case inFact[k]:
			how = append(how, "in fact: "+before(b, a)+" and "+before(a, b)+", so both led at once")
		}
		switch {
		case inWall:
			how = append(how, fmt.Sprintf("in wall time: for %v from +%v", time.Duration(w.to-w.from), time.Duration(w.from-end.Start)))
		case end.HasWall:
			how = append(how, "not in wall time")
		}
		parts := []Part{a.part(), b.part()}
		if causal[k] && a.ended() {
			parts = append(parts, Part{Role: RoleNotBefore, Events: []trace.Ref{a.end.ref, b.start.ref}})
		}
		f.addParts(fmt.Sprintf("split brain: P%d and P%d both believed they led: %v and %v; %s",
			a.proc, b.proc, a, b, strings.Join(how, "; ")), parts, a.start.ref, b.start.ref)
	}
	note := plural.Count(len(c.all), "leadership interval")
	if !end.HasWall {
		note += "; no wall times: checked causally only"
	}
	return f.resultUndecided(note, nOpen, plural.Count(nOpen, "pair of leadership intervals")+
		", one ended by a crash or a step-down, cannot be ordered: nothing orders one's end before the other's start, and the trace has no wall times", open)
}

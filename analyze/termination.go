package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// Termination checks that every election ends with every live process
// knowing a leader.
var Termination = &Check{
	Name: "termination",
	Doc: `every election that started ends with every live process knowing a leader

Seed 001's liveness of an election: "election run terminates & for all
non-faulty processes p: p's elected is not Null". Each resource has its own
election (one per shard, say), judged on its own. For every election_start,
every process live at the end of the run must have decided a leader after
it (since it last recovered: a recovered process forgot what it knew). A
decision comes after a start if the start happened before it or, when they
are concurrent, by wall time. It suffices to check each process's latest
start; a start whose process crashed before sending anything never left it
and is not counted. The finding names the starts that did not end and the
live processes that decided nothing after them. If the run is incomplete,
an election that has not ended may still end: unknown.`,
	Requires: []string{NeedHB},
	New:      func(Config) Checker { return new(termination) },
}

type termination struct {
	el electorate
}

func (c *termination) Event(ev *trace.Event, hb *HB) { c.el.event(ev, hb) }

func (c *termination) Finish(end End) Result {
	if c.el.leaders == 0 && c.el.starts == 0 {
		return noElection()
	}
	return c.el.perElection(func(el *election) Result { return c.judge(el, end) })
}

// judge decides termination in one election.
func (c *termination) judge(el *election, end End) Result {
	n := max(end.Procs, len(el.procs))
	// Group the open starts by the live processes that did not answer.
	type open struct {
		starts  []int // processes whose latest start is not answered
		lacking []int
	}
	var opens []*open
	for q, w := range el.procs {
		if w == nil || w.start == nil {
			continue
		}
		var lacking []int
		for p := range n {
			if !c.el.live(p) {
				continue
			}
			if v := el.get(p); v == nil || v.belief == nil || v.isStale(q) {
				lacking = append(lacking, p)
			}
		}
		if len(lacking) == 0 {
			continue
		}
		i := slices.IndexFunc(opens, func(o *open) bool { return slices.Equal(o.lacking, lacking) })
		if i < 0 {
			opens = append(opens, &open{lacking: lacking})
			i = len(opens) - 1
		}
		opens[i].starts = append(opens[i].starts, q)
	}
	note := plural.Count(el.starts, "election start") + ", " + plural.Count(el.leaders, "decision")
	if el.starts == 0 {
		note = "no election started; " + plural.Count(el.leaders, "decision")
	}
	var f findings
	for _, o := range opens {
		var ss []string
		var refs []trace.Ref
		for _, q := range o.starts {
			s := el.procs[q].start
			ss = append(ss, fmt.Sprintf("%v election_start%s", s.ref, at(s.wall, end)))
			refs = append(refs, s.ref)
		}
		var ls []string
		for _, p := range o.lacking {
			v := el.get(p)
			crashed := c.el.lastCrash(p)
			switch {
			case (v == nil || v.belief == nil) && crashed.ref.Seq == 0:
				ls = append(ls, fmt.Sprintf("P%d decided nothing", p))
			case v == nil || v.belief == nil:
				ls = append(ls, fmt.Sprintf("P%d decided nothing since it recovered from %v", p, crashed.ref))
			default:
				ls = append(ls, fmt.Sprintf("P%d's last decision %v leader(%d) came before", p, v.belief.ref, v.belief.leader))
				refs = append(refs, v.belief.ref)
			}
		}
		what := "the election started at %s did not end: %s"
		if len(o.starts) > 1 {
			what = "the elections started at %s did not end: %s"
		}
		f.add(fmt.Sprintf(what, strings.Join(ss, ", "), strings.Join(ls, "; ")), refs...)
	}
	if f.count() > 0 && !end.Complete {
		msgs := make([]string, len(f.list))
		for i, fd := range f.list {
			msgs[i] = fd.Message
		}
		return Result{Verdict: Unknown, Note: "the run is incomplete: " + strings.Join(msgs, "; ") + "; " + note}
	}
	return f.result(note)
}

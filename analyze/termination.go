package analyze

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

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
and is not counted. The finding names the starts that did not end, the
live processes that decided nothing after them, and the cause the trace
shows: a message sent after the start that was lost (dropped by a fault,
or to a process that crashed), or that nothing was in flight. An election
still in progress when the run's own end came is unknown, not violated:
one with a message sent after its start still on its way to a live
process, or that began more recently (in wall time) than the run's
patience: the longest any process of the run took to decide after a
start, or twice the longest time-out the run's params declare (an
algorithm parameter named "...timeout", as bully's: a process waits out
one time-out for answers and one for the winner's announcement [seed
001]), whichever is longer. A run that ran for a fixed time ends in the
middle of its elections. If the run is incomplete, an
election that has not ended may still end: unknown.`,
	Requires: []string{NeedHB},
	New: func(cfg Config) Checker {
		return &termination{el: electorate{higherTerm: stepDownRule(cfg) == StepDownHigherTerm}, timeout: declaredTimeout(cfg.Run)}
	},
}

type termination struct {
	el      electorate
	g       progress
	timeout int64 // the longest time-out the run's params declare, ns
}

// declaredTimeout returns the longest time-out among the algorithm
// parameters of the run ({"algorithm": {"timeout": "250ms"}}, a duration
// or ns, for every name that ends in "timeout"), 0 if none.
func declaredTimeout(run trace.Run) int64 {
	var p struct {
		Algorithm map[string]any `json:"algorithm"`
	}
	if len(run.Params) == 0 || json.Unmarshal(run.Params, &p) != nil {
		return 0
	}
	var longest int64
	for k, v := range p.Algorithm {
		if !strings.HasSuffix(k, "timeout") {
			continue
		}
		var d int64
		switch v := v.(type) {
		case string:
			if t, err := time.ParseDuration(v); err == nil {
				d = int64(t)
			} else if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				d = n
			}
		case float64:
			d = int64(v)
		}
		longest = max(longest, d)
	}
	return longest
}

func (c *termination) Event(ev *trace.Event, hb *HB) {
	c.el.event(ev, hb)
	c.g.event(ev, hb)
}

func (c *termination) Finish(end End) Result {
	if c.el.leaders == 0 && c.el.starts == 0 {
		return noElection()
	}
	return c.el.perElection(func(el *election) Result { return c.judge(el, end) })
}

// maxLacking bounds the processes a finding names one by one.
const maxLacking = 10

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
	var going []string
	nGoing := 0
	for _, o := range opens {
		var ss []string
		var refs []trace.Ref
		var a account
		involved := append(slices.Clone(o.starts), o.lacking...)
		for _, q := range o.starts {
			s := el.procs[q].start
			ss = append(ss, fmt.Sprintf("%v election_start%s", s.ref, at(s.wall, end)))
			refs = append(refs, s.ref)
			c.g.messages(&a, end, func(m Message) bool {
				return m.Pos > s.pos && (slices.Contains(involved, m.Send.Proc) || slices.Contains(involved, m.To))
			})
			if end.HasWall && s.wall != 0 && a.recent == "" {
				switch age := end.Wall - s.wall; {
				case age < el.longest:
					a.recent = fmt.Sprintf("%v began %v before the run ended, and deciding took up to %v in this run",
						s.ref, time.Duration(age), time.Duration(el.longest))
				case age < 2*c.timeout:
					a.recent = fmt.Sprintf("%v began %v before the run ended, less than twice the run's time-out (%v)",
						s.ref, time.Duration(age), time.Duration(c.timeout))
				}
			}
		}
		var ls []string
		for i, p := range o.lacking {
			if i == maxLacking {
				ls = append(ls, fmt.Sprintf("and %d more processes likewise", len(o.lacking)-maxLacking))
				break
			}
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
		msg := fmt.Sprintf(what, strings.Join(ss, ", "), strings.Join(ls, "; "))
		if a.inProgress() {
			nGoing += len(o.starts)
			if len(going) < 3 {
				going = append(going, strings.Replace(msg, " did not end: ", " had not ended: ", 1)+"; "+a.String())
			}
			continue
		}
		why := a.String()
		if len(a.causes) == 0 {
			why = "nothing sent after it was in flight when the run ended"
		}
		f.add(msg+": "+why, append(refs, a.refs...)...)
	}
	if (f.count() > 0 || nGoing > 0) && !end.Complete {
		msgs := make([]string, len(f.list))
		for i, fd := range f.list {
			msgs[i] = fd.Message
		}
		return Result{Verdict: Unknown, Note: "the run is incomplete: " + strings.Join(append(msgs, going...), "; ") + "; " + note}
	}
	return f.resultUndecided(note, nGoing, plural.Count(nGoing, "election")+" "+plural.Form(nGoing, "was", "were")+
		" still in progress when the run ended, and may have ended", going)
}

package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// Agreement checks that the processes of an election decide one leader.
var Agreement = &Check{
	Name: "agreement",
	Doc: `the live processes decide the same leader

Seed 001: "All group members have to agree on the decision". Each
resource has its own election (one per shard, say), judged on its own. An
election is delimited in two ways, both checked:
  - per term: when leader events carry a term (detail "election", else
    "term", > 0, as in Raft- or Chubby-like algorithms), all decisions of
    one term, by any process at any time, must name the same leader;
  - at the end of the run: the live processes must believe in the same
    leader (a process's belief is its latest decision since it last
    recovered). Left out are the processes that are still electing (their
    own latest election_start came after their latest decision) and those
    whose belief names a process that is down at the end (their belief is
    out of date, not in conflict: the election that replaces it has not
    reached them, which termination reports). In a run that declares
    Raft's step-down rule ({"step_down": "higher-term"}), a process that
    receives a message of a higher term than its belief's believes in no
    leader until it decides again.
If the run is incomplete, a disagreement at the end is unknown (a
coordinator message may have been on its way); a disagreement within a
term is violated in any case. A trace without leader events gives ok ("no
election events").`,
	Requires: []string{NeedHB},
	New: func(cfg Config) Checker {
		return &agreement{el: electorate{higherTerm: stepDownRule(cfg) == StepDownHigherTerm}, terms: make(map[string]*agreementTerms)}
	},
}

type agreement struct {
	el    electorate
	terms map[string]*agreementTerms // per election (resource)
}

// agreementTerms are the terms of one election and what they found.
type agreementTerms struct {
	terms map[uint64]*termDecisions
	f     findings
}

// termDecisions is the first decision of each leader named in one term.
type termDecisions struct {
	first map[int]trace.Ref
	order []int // leaders in the order first named
}

func (c *agreement) Event(ev *trace.Event, hb *HB) {
	c.el.event(ev, hb)
	if ev.Kind != trace.KindLeader {
		return
	}
	leader, term := decision(ev)
	if leader < 0 || term == 0 {
		return
	}
	at := c.terms[ev.Resource]
	if at == nil {
		at = &agreementTerms{terms: make(map[uint64]*termDecisions)}
		c.terms[ev.Resource] = at
	}
	t := at.terms[term]
	if t == nil {
		t = &termDecisions{first: make(map[int]trace.Ref)}
		at.terms[term] = t
	}
	if _, seen := t.first[leader]; seen {
		return
	}
	if len(t.order) > 0 {
		// One finding per leader that joins a term already decided.
		other := t.order[0]
		at.f.add(fmt.Sprintf("term %d has two leaders: %v leader(%d) and %v leader(%d)",
			term, t.first[other], other, ev.Ref(), leader), t.first[other], ev.Ref())
	}
	t.first[leader] = ev.Ref()
	t.order = append(t.order, leader)
}

func (c *agreement) Finish(end End) Result {
	if c.el.leaders == 0 {
		return noElection()
	}
	results := make([]Result, len(c.el.names))
	for i, name := range c.el.names {
		at := c.terms[name]
		if at == nil {
			at = &agreementTerms{}
		}
		results[i] = c.judge(c.el.el[name], at, end)
	}
	return joinElections(c.el.names, results)
}

// judge decides agreement in one election, whose terms are at.
func (c *agreement) judge(el *election, at *agreementTerms, end End) Result {
	if el.leaders == 0 {
		return notApplicable(fmt.Sprintf("no decisions to compare; %s", plural.Count(el.starts, "election start")))
	}
	// The beliefs of the live processes, by leader.
	byLeader := make(map[int][]int)
	still, stale := 0, 0
	for p := range max(end.Procs, len(el.procs)) {
		v := el.get(p)
		if !c.el.live(p) || v == nil || v.belief == nil {
			continue
		}
		switch l := v.belief.leader; {
		case v.start != nil && v.start.pos > v.belief.pos:
			still++
		case !c.el.live(l):
			stale++
		default:
			byLeader[l] = append(byLeader[l], p)
		}
	}
	note := plural.Count(el.leaders, "decision")
	if len(at.terms) > 0 {
		note += " in " + plural.Count(len(at.terms), "term")
	}
	if len(byLeader) == 1 {
		for l, ps := range byLeader {
			verb := "follow"
			if len(ps) == 1 {
				verb = "follows"
			}
			note += fmt.Sprintf("; at the end %s %s P%d", procList(ps), verb, l)
		}
	}
	if still > 0 {
		note += fmt.Sprintf("; %s %s still electing at the end", plural.Count(still, "live process"), plural.Form(still, "was", "were"))
	}
	if stale > 0 {
		note += fmt.Sprintf("; %s still followed a crashed leader", plural.Count(stale, "live process"))
	}
	f := at.f
	if len(byLeader) > 1 {
		leaders := sortedKeys(byLeader)
		// The largest camp first.
		slices.SortStableFunc(leaders, func(a, b int) int { return cmp.Compare(len(byLeader[b]), len(byLeader[a])) })
		var parts []string
		var refs []trace.Ref
		for _, l := range leaders {
			var ds []string
			for _, p := range byLeader[l] {
				r := el.procs[p].belief.ref
				ds = append(ds, r.String())
				refs = append(refs, r)
			}
			verb := "follows"
			if len(byLeader[l]) > 1 {
				verb = "follow"
			}
			parts = append(parts, fmt.Sprintf("%s %s P%d (%s)", procList(byLeader[l]), verb, l, strings.Join(ds, ", ")))
		}
		msg := "live processes disagree at the end of the run: " + strings.Join(parts, "; ")
		if !end.Complete {
			if f.count() > 0 {
				return f.result(note + "; the run is incomplete, and " + msg)
			}
			return Result{Verdict: Unknown, Note: "the run is incomplete and " + msg + "; " + note}
		}
		f.add(msg, refs...)
	}
	return f.result(note)
}

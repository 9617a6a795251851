package analyze

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// The rules of check validity: which leader a decision may name.
const (
	// ValidityHighestID is seed 001's rule for bully and ring: the
	// leader is the highest id among the processes alive then.
	ValidityHighestID = "highest-id"
	// ValidityParticipant is the rule every election keeps, and the one a
	// trace of another program is held to: the leader is a process of the
	// run that took part in it and that the decider did not know to be
	// down.
	ValidityParticipant = "participant"
)

// ValidityRules are the rules of check validity, the weak one first.
var ValidityRules = []string{ValidityParticipant, ValidityHighestID}

// Validity checks that each decision names a leader the run's rule allows.
var Validity = &Check{
	Name: "validity",
	Doc: `every decision names a leader the election's rule allows

Each leader event must name a process of the run (0 <= id < N). Beyond
that, the rule is the one the algorithm promises (dmx list; a trace of
another program gets the weak one, or the rule its run's params declare as
{"validity": RULE}):
  - participant (weak: lease, and any election): the leader took part in
    the run (it recorded an event) and the decider did not know it to be
    down when it decided: the leader's last crash that happened before the
    decision was not followed by a recovery that did too, and the
    decider's failure detector did not suspect it (its last suspect or
    trust event about the leader was not a suspect).
  - highest-id (bully, ring, chang-roberts): seed 001's safety of an
    election, "p elected = a particular non-faulty process with the best
    attribute value": the leader is alive (it has not crashed, or it
    recovered after its last crash) and has the highest id among the
    processes alive then. Alive is judged by wall time: a crash or recover
    counts as before the decision if its wall time is earlier. In a trace
    without wall times, by happens-before: a crash or recover that happened
    before the decision came before it; one that comes later in the walk
    came after; one before it in the walk but concurrent with it leaves the
    process's state at the decision unknown, and so the decision if it
    matters. A process deciding that it leads itself is alive.
    A coordinator message that arrives after its sender crashed gives a
    decision for a dead process, which is reported.
Decisions that name no leader (negative id) are not checked. Findings group
the decisions that name the same wrong leader for the same reason.`,
	Requires: []string{NeedHB},
	New: func(cfg Config) Checker {
		rule, err := validityRule(cfg)
		return &validity{rule: rule, err: err, suspects: make(map[[2]int]bool)}
	},
}

// validityRule returns the rule cfg asks for, else the one the run's
// params declare, else the weak one.
func validityRule(cfg Config) (string, error) {
	rule := cfg.Validity
	if rule == "" && len(cfg.Run.Params) > 0 {
		var p struct {
			Validity string `json:"validity"`
		}
		if json.Unmarshal(cfg.Run.Params, &p) == nil {
			rule = p.Validity
		}
	}
	switch rule {
	case "":
		return ValidityParticipant, nil
	case ValidityParticipant, ValidityHighestID:
		return rule, nil
	}
	return "", fmt.Errorf("no validity rule %q (the rules are: %s)", rule, strings.Join(ValidityRules, ", "))
}

type validity struct {
	rule     string
	err      error
	pos      int64
	ups      [][]upDown // per process: its crashes and recoveries in walk order
	decs     []validDec
	seen     []bool          // per process: it recorded an event
	suspects map[[2]int]bool // (decider, suspected): the decider's detector suspects it
}

type upDown struct {
	mark
	up bool
}

type validDec struct {
	mark
	leader int
	known  mark // participant rule: the event by which the decider knew the leader down (Seq 0: none)
	how    string
	// uncertain are the processes whose state at the decision a trace
	// without wall times leaves open (highest-id rule): a crash or
	// recover of theirs came before the decision in the walk without
	// having happened before it.
	uncertain []int
}

func (c *validity) Event(ev *trace.Event, hb *HB) {
	c.pos++
	c.seen = grow(c.seen, ev.Proc)
	c.seen[ev.Proc] = true
	switch ev.Kind {
	case trace.KindCrash, trace.KindRecover:
		c.ups = grow(c.ups, ev.Proc)
		c.ups[ev.Proc] = append(c.ups[ev.Proc], upDown{newMark(ev, c.pos), ev.Kind == trace.KindRecover})
	case trace.KindSuspect, trace.KindTrust:
		if ev.Peer >= 0 {
			k := [2]int{ev.Proc, ev.Peer}
			if ev.Kind == trace.KindSuspect {
				c.suspects[k] = true
			} else {
				delete(c.suspects, k)
			}
		}
	case trace.KindLeader:
		l, _ := decision(ev)
		if l < 0 {
			return
		}
		d := validDec{mark: newMark(ev, c.pos), leader: l}
		if c.rule == ValidityParticipant && l != ev.Proc {
			d.known, d.how = c.knownDown(ev, l, hb)
		}
		if c.rule == ValidityHighestID && ev.Wall == 0 {
			for q := l; q < len(c.ups); q++ {
				if q == ev.Proc {
					continue // a decider is alive when it decides
				}
				ups := c.ups[q]
				if len(ups) > 0 && !hb.HappenedBefore(ups[len(ups)-1].ref) {
					d.uncertain = append(d.uncertain, q)
				}
			}
		}
		c.decs = append(c.decs, d)
	}
}

// knownDown returns the event by which the decider of ev knew process l to
// be down, and how: the last crash or recovery of l that happened before ev
// is a crash, or the decider's detector suspects l.
func (c *validity) knownDown(ev *trace.Event, l int, hb *HB) (mark, string) {
	if l < len(c.ups) {
		// l's events that happened before ev are a prefix of its program
		// order: the last of its crashes and recoveries among them says.
		for i := len(c.ups[l]) - 1; i >= 0; i-- {
			if u := c.ups[l][i]; hb.HappenedBefore(u.ref) {
				if !u.up {
					return u.mark, "crash"
				}
				break
			}
		}
	}
	if c.suspects[[2]int{ev.Proc, l}] {
		return mark{ref: ev.Ref()}, "suspect"
	}
	return mark{}, ""
}

// state returns whether process q is alive at decision d, and the crash or
// recover event that made it so (Seq 0: q never crashed before d). A
// process's crashes and recoveries are in program order, and so in order
// of wall time too: the last one before d decides.
func (c *validity) state(q int, d mark, hasWall bool) (bool, mark) {
	alive, last := true, mark{}
	if q >= len(c.ups) {
		return alive, last
	}
	for _, u := range c.ups[q] {
		before := u.pos < d.pos
		if hasWall {
			before = u.wall < d.wall || (u.wall == d.wall && u.pos < d.pos)
		}
		if !before {
			break
		}
		alive, last = u.up, u.mark
	}
	return alive, last
}

// judge returns why decision d breaks the rule ("" if it does not), the
// process to blame for "higher", and the event that shows it.
func (c *validity) judge(d validDec, n int, hasWall bool) (why string, culprit int, since mark) {
	if d.leader >= n {
		return "range", -1, mark{}
	}
	if c.rule == ValidityParticipant {
		switch {
		case d.leader >= len(c.seen) || !c.seen[d.leader]:
			return "absent", -1, mark{}
		case d.how != "":
			return d.how, -1, d.known
		}
		return "", -1, mark{}
	}
	unsure := func(q int) bool { return !hasWall && slices.Contains(d.uncertain, q) }
	if alive, m := c.state(d.leader, d.mark, hasWall); !alive && d.ref.Proc != d.leader && !unsure(d.leader) {
		return "dead", -1, m
	}
	undecided := unsure(d.leader)
	for q := n - 1; q > d.leader; q-- {
		switch up, m := c.state(q, d.mark, hasWall); {
		case unsure(q):
			undecided = true
		case up:
			return "higher", q, m
		}
	}
	if undecided {
		return "undecided", -1, mark{}
	}
	return "", -1, mark{}
}

func (c *validity) Finish(end End) Result {
	if c.err != nil {
		return Result{Verdict: Unknown, Err: c.err}
	}
	if len(c.decs) == 0 {
		return noElection()
	}
	n := max(end.Procs, len(c.seen))
	type key struct {
		leader, culprit int
		why             string
	}
	type group struct {
		first validDec
		since mark
		more  []trace.Ref
	}
	groups := make(map[key]*group)
	var order []key
	bad := 0
	var open []string
	nOpen := 0
	for _, d := range c.decs {
		why, culprit, since := c.judge(d, n, end.HasWall)
		if why == "" {
			continue
		}
		if why == "undecided" {
			nOpen++
			if len(open) < 3 {
				open = append(open, fmt.Sprintf("%v leader(%d): a crash or recovery of %s came before it in the walk, concurrent with it",
					d.ref, d.leader, procList(d.uncertain)))
			}
			continue
		}
		k := key{leader: d.leader, culprit: culprit, why: why}
		bad++
		if g := groups[k]; g != nil {
			g.more = append(g.more, d.ref)
			continue
		}
		groups[k] = &group{first: d, since: since}
		order = append(order, k)
	}
	var f findings
	for _, k := range order {
		g := groups[k]
		d := g.first
		var msg string
		switch k.why {
		case "range":
			msg = fmt.Sprintf("%v leader(%d) names P%d, but the run has %d processes", d.ref, d.leader, d.leader, n)
		case "absent":
			msg = fmt.Sprintf("%v leader(%d) names P%d, which took no part in the run (it recorded no event)", d.ref, d.leader, d.leader)
		case "crash":
			msg = fmt.Sprintf("%v leader(%d)%s names P%d, which P%d knew to be down: its crash %v happened before the decision", d.ref, d.leader, at(d.wall, end), d.leader, d.ref.Proc, g.since.ref)
		case "suspect":
			msg = fmt.Sprintf("%v leader(%d)%s names P%d, which P%d's failure detector suspected then", d.ref, d.leader, at(d.wall, end), d.leader, d.ref.Proc)
		case "dead":
			msg = fmt.Sprintf("%v leader(%d)%s names P%d, which had crashed at %v%s and not recovered", d.ref, d.leader, at(d.wall, end), d.leader, g.since.ref, at(g.since.wall, end))
		case "higher":
			how := "it never crashed"
			if g.since.ref.Seq != 0 {
				how = fmt.Sprintf("it had recovered at %v%s", g.since.ref, at(g.since.wall, end))
			}
			msg = fmt.Sprintf("%v leader(%d)%s names P%d, but P%d was alive and has a higher id (%s)", d.ref, d.leader, at(d.wall, end), d.leader, k.culprit, how)
		}
		refs := []trace.Ref{d.ref}
		if g.since.ref.Seq != 0 && g.since.ref != d.ref {
			refs = append(refs, g.since.ref)
		}
		if len(g.more) > 0 {
			msg += fmt.Sprintf("; so %s %s (%v", plural.Form(len(g.more), "does", "do"), plural.Count(len(g.more), "more decision"), g.more[0])
			if len(g.more) > 1 {
				msg += fmt.Sprintf(" .. %v", g.more[len(g.more)-1])
			}
			msg += ")"
			refs = append(refs, g.more...)
		}
		f.add(msg, refs...)
	}
	note := plural.Count(len(c.decs), "decision") + " checked"
	if bad > 0 {
		note = fmt.Sprintf("%d of %s named a wrong leader", bad, plural.Count(len(c.decs), "decision"))
	}
	note += "; rule " + c.rule
	if !end.HasWall && c.rule == ValidityHighestID {
		note += "; no wall times: crashes and recoveries ordered by happens-before"
	}
	return f.resultUndecided(note, nOpen, plural.Count(nOpen, "decision")+
		" cannot be judged: without wall times nothing orders a crash or recovery and the decision", open)
}

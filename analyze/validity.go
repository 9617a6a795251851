package analyze

import (
	"fmt"

	"github.com/dmxlab/dmx/render/plural"
	"github.com/dmxlab/dmx/trace"
)

// Validity checks that the leader decided is the highest live process.
var Validity = &Check{
	Name: "validity",
	Doc: `every decision names the highest-id process alive when it is made

Seed 001's safety of an election: "p elected = a particular non-faulty
process with the best attribute value": the highest id among the processes
that are up. Each leader event (at the moment it is made, which for the
last decision of an election is when the election ended) must name a
process that
  - exists (0 <= id < N),
  - is alive: it has not crashed, or it recovered after its last crash,
  - has the highest id among the processes alive then.
Alive is judged by wall time: a crash or recover counts as before the
decision if its wall time is earlier (in a trace without wall times: if it
comes earlier in the walk, a linear extension of happens-before). A process
deciding that it leads itself is alive. A coordinator message that arrives
after its sender crashed gives a decision for a dead process, which is
reported: the process decided a faulty leader. Decisions that name no
leader (negative id) are not checked. Findings group the decisions that
name the same wrong leader for the same reason.`,
	Requires: []string{NeedHB},
	New:      func(trace.Run) Checker { return new(validity) },
}

type validity struct {
	pos   int64
	ups   [][]upDown // per process: its crashes and recoveries in walk order
	decs  []validDec
	procs int
}

type upDown struct {
	mark
	up bool
}

type validDec struct {
	mark
	leader int
}

func (c *validity) Event(ev *trace.Event, _ *HB) {
	c.pos++
	switch ev.Kind {
	case trace.KindCrash, trace.KindRecover:
		for ev.Proc >= len(c.ups) {
			c.ups = append(c.ups, nil)
		}
		c.ups[ev.Proc] = append(c.ups[ev.Proc], upDown{newMark(ev, c.pos), ev.Kind == trace.KindRecover})
	case trace.KindLeader:
		if l, _ := decision(ev); l >= 0 {
			c.decs = append(c.decs, validDec{newMark(ev, c.pos), l})
		}
	}
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

func (c *validity) Finish(end End) Result {
	if len(c.decs) == 0 {
		return noElection()
	}
	n := max(end.Procs, len(c.ups))
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
	for _, d := range c.decs {
		k := key{leader: d.leader, culprit: -1}
		var since mark
		switch alive, m := c.state(d.leader, d.mark, end.HasWall); {
		case d.leader >= n:
			k.why = "range"
		case !alive && d.ref.Proc != d.leader:
			k.why, since = "dead", m
		default:
			for q := n - 1; q > d.leader; q-- {
				if up, m := c.state(q, d.mark, end.HasWall); up {
					k.why, k.culprit, since = "higher", q, m
					break
				}
			}
		}
		if k.why == "" {
			continue
		}
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
		if g.since.ref.Seq != 0 {
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
	if !end.HasWall {
		note += "; no wall times: crashes ordered by the walk"
	}
	return f.result(note)
}

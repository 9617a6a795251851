package analyze

import (
	"fmt"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// Clocks checks the recorded clocks against the rebuilt happens-before.
var Clocks = &Check{
	Name: "clocks",
	Doc: `recorded vector and Lamport clocks agree with happens-before

Happens-before is rebuilt from program order and send/receive pairs, not
from the recorded clocks. Every recorded vector clock must equal the one
rebuilt for its event (VC[p] = how many events of p happened before or at
it), and every recorded Lamport clock must exceed the recorded Lamport
clock of every event that happened before it (its program-order
predecessor and, for a receive, the send). A receive must also come from
the process that sent the message, and reach the one the send named.
Events that recorded no clock (nil vector, Lamport 0) are not checked.`,
	Requires: []string{NeedHB},
	New:      func(Config) Checker { return new(clocks) },
}

type clocks struct {
	f                       findings
	vcs, lamports, receives int64
}

func (c *clocks) Event(ev *trace.Event, hb *HB) {
	if ev.VC != nil {
		c.vcs++
		if want := hb.Clock(); !ev.VC.Equal(want) {
			c.f.add(fmt.Sprintf("%v: recorded vector clock %v, but happens-before gives %v", ev, ev.VC, want), ev.Ref())
		}
	}
	if ev.Lamport != 0 {
		c.lamports++
		if bound, ref := hb.LamportBound(); ev.Lamport <= bound {
			c.f.add(fmt.Sprintf("%v: recorded Lamport clock %d, not greater than %d of %v, which happened before it", ev, ev.Lamport, bound, ref), ev.Ref(), ref)
		}
	}
	if m, ok := hb.Send(); ok {
		c.receives++
		switch {
		case ev.Peer != trace.NoPeer && ev.Peer != m.Send.Proc:
			c.f.add(fmt.Sprintf("%v: says %s comes from P%d, but %v sent it", ev, trace.MsgName(m.ID, m.Send.Proc), ev.Peer, m.Send), ev.Ref(), m.Send)
		case m.To != trace.NoPeer && m.To != ev.Proc:
			c.f.add(fmt.Sprintf("%v: receives %s, which %v sent to P%d", ev, trace.MsgName(m.ID, m.Send.Proc), m.Send, m.To), ev.Ref(), m.Send)
		}
	}
}

func (c *clocks) Finish(End) Result {
	note := fmt.Sprintf("%d vector and %s verified", c.vcs, plural.Count(c.lamports, "Lamport clock"))
	if c.vcs == 0 && c.lamports == 0 {
		if c.receives == 0 {
			return notApplicable("no recorded clocks and no receives to verify")
		}
		note = fmt.Sprintf("no recorded clocks; the senders of %s verified", plural.Count(c.receives, "receive"))
	}
	return c.f.result(note)
}

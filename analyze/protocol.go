package analyze

import (
	"fmt"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// Protocol reports the failure events of a run: the runtime's contract
// broken. For a program of the user's own (dmx run --exec, dmx sim
// --exec) they are the lines it wrote that were not valid node protocol,
// and its deaths, hangs and floods, each naming the node, the line and
// the input it answered.
var Protocol = &Check{
	Name: "protocol",
	Doc: `every process kept the runtime's contract: for a program of your own, the node protocol

A failure event (an internal event whose detail has "error") records a
broken rule of the contract between dmx's runtime and an algorithm. A
program run with --exec breaks it by writing a line that is not valid node
protocol (not JSON, an unknown type, a missing member, a send to a node
that does not exist, an enter nobody asked for, an exit before the
release), by ending before it answered an input with done, by not
answering within its time-out, or by flooding; the event names the node,
the line and the input line it answered. Each is a finding. dmx's own
algorithms record one only when they break the contract (a bug in dmx).`,
	New: func(Config) Checker { return new(protocol) },
}

type protocol struct {
	f      findings
	procs  map[int]bool
	events bool
}

func (c *protocol) Event(ev *trace.Event, _ *HB) {
	c.events = true
	if ev.Kind != trace.KindInternal {
		return
	}
	d, err := ev.Details()
	if err != nil {
		return
	}
	if fl, ok := d.(trace.Failure); ok {
		if c.procs == nil {
			c.procs = map[int]bool{}
		}
		c.procs[ev.Proc] = true
		c.f.add(fmt.Sprintf("%v: %s", ev.Ref(), fl.Text), ev.Ref())
	}
}

func (c *protocol) Finish(End) Result {
	if !c.events {
		return notApplicable("no events")
	}
	if c.f.count() == 0 {
		return c.f.result("no failure event")
	}
	return c.f.result(fmt.Sprintf("%s at %s", plural.Count(c.f.count(), "failure"), plural.Count(len(c.procs), "process")))
}

package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// Liveness checks that every request for a critical section is granted.
var Liveness = &Check{
	Name: "liveness",
	Doc: `every cs_request is granted before the run ends

A process's k-th cs_request on a resource is granted by its k-th cs_enter on
that resource. A request still waiting when the run ended is a violation,
unless the process crashed after making it (a crash cancels the process's
pending requests), and the finding names the cause the trace shows: a
process it waited for (its latest wait event) that crashed, a message it
sent after asking, or one sent to it, that was lost (dropped by a fault,
or to a process that crashed); or it says that nothing to or from it was
in flight. A request that was still in progress when the run's own end
came (a message to or from it on its way to a live process) may have been
about to be granted: unknown, not violated, and the note names what was
on its way and any cause seen besides. If
the run is incomplete (cut short, Run.Complete false) a pending request
may yet have been granted: unknown too. Entries without a recorded
request are not counted.`,
	Requires: []string{NeedHB},
	New:      func(Config) Checker { return &liveness{pending: make(map[csKey][]request)} },
}

type csKey struct {
	proc int
	res  string
}

type request struct {
	ref  trace.Ref
	wall int64
}

type liveness struct {
	pending           map[csKey][]request // per process and resource, oldest first
	granted, canceled int64
	g                 progress
}

func (c *liveness) Event(ev *trace.Event, hb *HB) {
	c.g.event(ev, hb)
	switch ev.Kind {
	case trace.KindCSRequest:
		k := csKey{ev.Proc, ev.Resource}
		c.pending[k] = append(c.pending[k], request{ev.Ref(), ev.Wall})
	case trace.KindCSEnter:
		k := csKey{ev.Proc, ev.Resource}
		if q := c.pending[k]; len(q) > 0 {
			c.granted++
			if len(q) == 1 {
				delete(c.pending, k)
			} else {
				c.pending[k] = q[1:]
			}
		}
	case trace.KindCrash:
		for k, q := range c.pending {
			if k.proc == ev.Proc {
				c.canceled += int64(len(q))
				delete(c.pending, k)
			}
		}
	}
}

func (c *liveness) Finish(end End) Result {
	type left struct {
		csKey
		request
	}
	var all []left
	for k, q := range c.pending {
		for _, r := range q {
			all = append(all, left{k, r})
		}
	}
	slices.SortFunc(all, func(a, b left) int {
		return cmp.Or(cmp.Compare(a.ref.Proc, b.ref.Proc), cmp.Compare(a.ref.Seq, b.ref.Seq))
	})
	if len(all) == 0 && c.granted == 0 && c.canceled == 0 {
		return notApplicable("no cs_request events")
	}
	note := plural.Count(c.granted, "request") + " granted"
	if c.canceled > 0 {
		note += fmt.Sprintf(", %d canceled by a crash", c.canceled)
	}
	name := func(l left) string { return fmt.Sprintf("%v cs_request(%s)", l.ref, l.res) }
	if !end.Complete {
		if len(all) == 0 {
			return Result{Verdict: OK, Note: note + "; no request is pending"} // Evaluate says what is incomplete
		}
		var names []string
		for i, l := range all {
			if i == 10 {
				names = append(names, fmt.Sprintf("and %d more", len(all)-10))
				break
			}
			names = append(names, name(l))
		}
		return Result{Verdict: Unknown, Note: fmt.Sprintf("the run is incomplete and %s %s still pending: %s; %s",
			plural.Count(len(all), "request"), plural.Form(len(all), "is", "are"), strings.Join(names, ", "), note)}
	}
	var f findings
	var going []string
	nGoing := 0
	for _, l := range all {
		waited := ""
		if end.HasWall && end.Wall >= l.wall {
			waited = fmt.Sprintf(" (waited %v)", time.Duration(end.Wall-l.wall))
		}
		var a account
		c.g.waitedFor(&a, l.ref.Proc, l.res)
		c.g.messages(&a, end, func(m Message) bool {
			return m.Send.Proc == l.ref.Proc && m.Send.Seq > l.ref.Seq || m.To == l.ref.Proc
		})
		if a.inProgress() {
			nGoing++
			if len(going) < 3 {
				going = append(going, fmt.Sprintf("%s%s: %s", name(l), waited, a.String()))
			}
			continue
		}
		why := a.String()
		if len(a.causes) == 0 {
			why = "nothing to or from it was in flight when the run ended"
		}
		f.add(fmt.Sprintf("%s was never granted: P%d did not enter %s before the run ended%s: %s", name(l), l.ref.Proc, l.res, waited, why),
			append([]trace.Ref{l.ref}, a.refs...)...)
	}
	return f.resultUndecided(note, nGoing, plural.Count(nGoing, "request")+" "+plural.Form(nGoing, "was", "were")+
		" still in progress when the run ended, and may have been granted", going)
}

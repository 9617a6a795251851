package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/trace"
)

// progress follows what liveness and termination need to say why something
// that should have happened by the end of a run did not, or that it was
// still under way when the run's own end came: who is down (and since
// which crash), what each process last said it waits for, and which
// messages a fault dropped. With End.InFlight (the messages never
// received) that tells apart
//   - a cause the trace shows: the process waited for one that crashed, or
//     a message it needed was lost (dropped by a fault, or sent to a
//     process that crashed): the property was violated, and the finding
//     names the cause;
//   - work in progress: a message to or from it was still on its way to a
//     live process when the run ended (or, for an election, it began more
//     recently than the longest the run's elections took to decide): what
//     it waited for may have been about to happen, and the verdict is
//     unknown, whatever cause is seen besides (a time-out may have been
//     about to route around the crashed process).
//
// Memory: one entry per process down, per process and resource waited on,
// and per message dropped.
type progress struct {
	pos   int64
	down  map[int]trace.Ref   // crashed and not recovered: the crash
	last  map[int]mark        // each process's last crash
	waits map[csKey][]int     // the latest non-empty wait set per process and resource
	drops map[int64]trace.Ref // message id -> a drop event of it
}

func (g *progress) event(ev *trace.Event, hb *HB) {
	g.pos++
	switch ev.Kind {
	case trace.KindCrash:
		if g.down == nil {
			g.down = make(map[int]trace.Ref)
			g.last = make(map[int]mark)
		}
		g.down[ev.Proc] = ev.Ref()
		g.last[ev.Proc] = newMark(ev, g.pos)
		for k := range g.waits {
			if k.proc == ev.Proc {
				delete(g.waits, k)
			}
		}
	case trace.KindRecover:
		delete(g.down, ev.Proc)
	case trace.KindWait:
		w, _ := hb.Wait() // Evaluate refused an unreadable one
		k := csKey{ev.Proc, ev.Resource}
		if len(w.WaitingFor) == 0 {
			delete(g.waits, k)
			return
		}
		if g.waits == nil {
			g.waits = make(map[csKey][]int)
		}
		g.waits[k] = slices.Clone(w.WaitingFor)
	case trace.KindDrop:
		if ev.Msg != 0 {
			if g.drops == nil {
				g.drops = make(map[int64]trace.Ref)
			}
			g.drops[ev.Msg] = ev.Ref()
		}
	}
}

// maxSaid bounds the causes and the messages in flight one finding names.
const maxSaid = 4

// account is what the end of a run shows about something still awaited.
type account struct {
	causes []string    // what made it fail: a crashed process waited for, a message lost
	moving []string    // what was still in flight when the run ended
	recent string      // why it was still young when the run ended, if it was
	refs   []trace.Ref // the events the causes name
	more   int         // causes and messages not named
}

func (a *account) cause(ref trace.Ref, format string, args ...any) {
	if len(a.causes) >= maxSaid {
		a.more++
		return
	}
	a.causes = append(a.causes, fmt.Sprintf(format, args...))
	if ref.Seq != 0 && !slices.Contains(a.refs, ref) {
		a.refs = append(a.refs, ref)
	}
}

func (a *account) inFlight(format string, args ...any) {
	if len(a.moving) >= maxSaid {
		a.more++
		return
	}
	a.moving = append(a.moving, fmt.Sprintf(format, args...))
}

// inProgress reports whether the run ended while it was still under way:
// something on its way, or begun too recently to have ended.
func (a *account) inProgress() bool { return len(a.moving) > 0 || a.recent != "" }

// String says what the account shows: "it waited for P2, which crashed at
// P2#9; its request to P2 (P0#6) was lost: P2 crashed at P2#9".
func (a *account) String() string {
	parts := append(slices.Clone(a.causes), a.moving...)
	if a.recent != "" {
		parts = append(parts, a.recent)
	}
	s := strings.Join(parts, "; ")
	if a.more > 0 {
		s += fmt.Sprintf("; and %d more", a.more)
	}
	return s
}

// crashed names the crash that took p down, if p is down.
func (g *progress) crashed(p int) (trace.Ref, bool) {
	r, ok := g.down[p]
	return r, ok
}

// waitedFor adds to a the processes p's latest wait on res (or on no
// resource) names that are down.
func (g *progress) waitedFor(a *account, p int, res string) {
	set, ok := g.waits[csKey{p, res}]
	if !ok {
		set = g.waits[csKey{p, ""}]
	}
	for _, q := range set {
		if c, down := g.crashed(q); down {
			a.cause(c, "it waited for P%d, which crashed at %v", q, c)
		}
	}
}

// messages adds to a the messages never received that concern what is
// awaited: for is true of a message whose send or receiver matters (sent
// by the waiting process after it began to wait, or sent to it). A message
// a fault dropped, or whose receiver is down, was lost: a cause. Any other
// was still on its way when the run ended.
func (g *progress) messages(a *account, end End, for_ func(m Message) bool) {
	for _, m := range end.InFlight {
		if !for_(m) {
			continue
		}
		what := fmt.Sprintf("%s from P%d to P%d (%v)", orMsg(m.Type), m.Send.Proc, m.To, m.Send)
		switch d, dropped := g.drops[m.ID]; {
		case dropped:
			a.cause(d, "the %s was dropped at %v and never delivered", what, d)
		case m.To == trace.NoPeer:
		default:
			if c, down := g.crashed(m.To); down {
				a.cause(c, "the %s was lost: P%d crashed at %v", what, m.To, c)
			} else if c, ok := g.last[m.To]; ok && c.pos > m.Pos {
				a.cause(c.ref, "the %s was lost: P%d crashed at %v before receiving it", what, m.To, c.ref)
			} else {
				a.inFlight("the %s was still on its way", what)
			}
		}
	}
}

func orMsg(typ string) string {
	if typ == "" {
		return "message"
	}
	return typ
}

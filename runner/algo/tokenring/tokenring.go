package tokenring

import (
	"fmt"
	"slices"

	"github.com/dmxlab/dmx/runner/algo"
)

// MsgToken is the one message type.
const MsgToken = "token"

// TimerPass is the timer after which an unwanted token moves on.
const TimerPass = "pass"

// DefaultPassDelay is pass-delay's default, in ns.
const DefaultPassDelay = 1_000_000

var params = []algo.Param{
	{Name: "pass-delay", Default: "1ms", Doc: "how long an unwanted token stays before it is passed on (a duration, or ns); 0 passes it at once"},
}

// Spec describes the algorithm for dmx list and builds its machines.
var Spec = algo.Spec{
	Name:    "token-ring",
	Kind:    algo.MutualExclusion,
	Summary: "a token circulates from P_i to P_(i+1) mod N; whoever holds it may enter",
	Seeds: []string{
		"000 token ring algorithm",
		"001 token ring algorithm",
		"002 token ring algorithm",
		"004 token ring algorithm",
	},
	MsgTypes:   []string{MsgToken},
	Properties: []string{"mutex-causal", "mutex-realtime", "liveness", "deadlock"},
	Complexity: "1..inf messages per CS, N/2 on average under load; sync delay 1..N-1",
	Params:     params,
	New:        New,
}

// Machine is one process of the token ring.
type Machine struct {
	id, n     int
	passDelay int64
	hasToken  bool
	wanted    bool // a Request is pending or being served
	inCS      bool
	wait      []int // the last Wait set output
}

// New builds the machine of node c.ID.
func New(c algo.Config) (algo.Machine, error) {
	if err := c.Check(params); err != nil {
		return nil, err
	}
	d, err := c.DurationParam("pass-delay", DefaultPassDelay)
	if err != nil {
		return nil, err
	}
	return &Machine{id: c.ID, n: c.N, passDelay: d}, nil
}

func (m *Machine) next() int { return (m.id + 1) % m.n }
func (m *Machine) prev() int { return (m.id + m.n - 1) % m.n }

// Step implements algo.Machine.
func (m *Machine) Step(in algo.Input) []algo.Output {
	var out []algo.Output
	switch in.Kind {
	case algo.Start:
		if m.id == 0 {
			// Seed 000: "Process 0 creates a token for resource R".
			out = append(out, algo.NoteOut("token created"))
			out = m.receive(out)
		}
	case algo.Recover:
		// A recovered process starts without a token: if it held it, the
		// token is lost (seed 001: regenerating it needs an election).
		*m = Machine{id: m.id, n: m.n, passDelay: m.passDelay}
	case algo.Request:
		if m.wanted {
			return []algo.Output{algo.NoteOut("request ignored: already requested")}
		}
		m.wanted = true
		if m.hasToken {
			// The token is here, waiting for its pass timer: retain it.
			out = append(out, algo.CancelTimerOut(TimerPass))
			out = m.enter(out)
		} else {
			// Seed 001: "it waits to receive a token from its neighbor".
			out = m.setWait(out, []int{m.prev()})
		}
	case algo.Release:
		if !m.inCS {
			return []algo.Output{algo.NoteOut("release ignored: not in the critical section")}
		}
		// Seed 001: "when done, it passes the token to its neighbor".
		m.inCS, m.wanted = false, false
		out = m.pass(out)
	case algo.Deliver:
		if in.Msg.Type != MsgToken {
			return []algo.Output{algo.NoteOut("unknown message %q from P%d", in.Msg.Type, in.From)}
		}
		if m.hasToken {
			// Only a duplicated message can do this; the notes have one
			// token, so the two are not told apart.
			out = append(out, algo.NoteOut("a second token arrived from P%d", in.From))
		}
		out = m.receive(out)
	case algo.Timer:
		if in.TimerName != TimerPass {
			return []algo.Output{algo.NoteOut("unexpected timer %q", in.TimerName)}
		}
		if m.hasToken && !m.inCS {
			out = m.pass(out)
		}
	}
	return out
}

// receive is seed 000's "When process acquires token: checks to see if it
// needs to enter critical section; if no, send [token] to neighbor; if yes,
// access resource".
func (m *Machine) receive(out []algo.Output) []algo.Output {
	m.hasToken = true
	if m.wanted {
		return m.enter(out)
	}
	if m.n == 1 {
		return out // nobody to pass it to
	}
	if m.passDelay == 0 {
		return m.pass(out)
	}
	return append(out, algo.SetTimerOut(TimerPass, m.passDelay))
}

func (m *Machine) enter(out []algo.Output) []algo.Output {
	m.inCS = true
	out = m.setWait(out, nil)
	return append(out, algo.EnterCS())
}

// pass sends the token to P_(i+1) mod N (seed 000); with N = 1 it stays.
func (m *Machine) pass(out []algo.Output) []algo.Output {
	if m.n == 1 {
		return out
	}
	m.hasToken = false
	return append(out, algo.SendTo(m.next(), algo.Msg{Type: MsgToken}))
}

// setWait outputs a Wait when the set of processes this one is blocked on
// changes.
func (m *Machine) setWait(out []algo.Output, set []int) []algo.Output {
	if slices.Equal(m.wait, set) {
		return out
	}
	m.wait = slices.Clone(set)
	return append(out, algo.WaitFor(set))
}

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	s := "no-token"
	if m.hasToken {
		s = "token"
	}
	if m.inCS {
		s += " in-cs"
	} else if m.wanted {
		s += fmt.Sprintf(" wanted waiting-for=%v", m.wait)
	}
	return s
}

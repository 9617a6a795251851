package ratoken

import (
	_ "embed"
	"fmt"
	"slices"
	"strconv"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner/algo"
)

// Message types.
const (
	MsgRequest = "request"
	MsgToken   = "token"
)

var params = []algo.Param{
	{Name: "initial", Default: "0", Doc: "id of the process P_x that holds the token at initialization ([RI1])"},
}

// docGo is this package's doc.go, the documentation dmx list shows.
//
//go:embed doc.go
var docGo string

// Spec describes the algorithm for dmx list and builds its machines.
var Spec = algo.Spec{
	Doc:        algo.PackageDoc(docGo),
	Name:       "ra-token",
	Kind:       algo.MutualExclusion,
	Summary:    "Ricart-Agrawala second algorithm: timestamped requests to all, a token carrying token[], passed in the order i+1..n,1..i-1",
	Seeds:      []string{"001 [RI1] [RI2] [RA1] [RH1] [RH2] [RR1] [RR2]"},
	MsgTypes:   []string{MsgRequest, MsgToken},
	IDTypes:    []string{MsgRequest},
	Properties: []string{"mutex-causal", "mutex-realtime", "liveness"},
	Roles: func(n int, params map[string]string) map[int]string {
		x, err := strconv.Atoi(params["initial"])
		if params["initial"] == "" {
			x, err = 0, nil
		}
		if err != nil || x < 0 || x >= n {
			return nil
		}
		return map[int]string{x: "token holder"} // [RI1]: P_x holds the token
	},
	Costs: []theory.Cost{
		{Measure: theory.MessagesPerCS, Formula: "N, or 0 when it holds the token", Note: "N-1 requests, 1 token",
			Seed: "001 Ricart-Agrawala second algorithm: n messages for entering a CS",
			Eval: theory.InN(func(n float64) theory.Estimate { return theory.Between(0, n) })},
		{Measure: theory.SyncDelay, Formula: "1", Note: "the token, straight to the next requester", Eval: theory.Const(theory.Exact(1))},
	},
	Params: params,
	New:    New,
	Parts: func(p map[string]string) algo.Parts {
		x, err := strconv.Atoi(p["initial"])
		if err != nil {
			x = 0
		}
		return algo.Parts{Coordinator: algo.NoProc, Token: MsgToken, TokenHolder: x} // [RI1]: P_x holds it first
	},
}

type state int

const (
	noToken state = iota
	tokenPresent
	tokenHeld
)

func (s state) String() string {
	return [...]string{"NO-TOKEN", "TOKEN-PRESENT", "TOKEN-HELD"}[s]
}

// Machine is one process of the algorithm.
type Machine struct {
	id, n, initial int
	state          state
	waiting        bool     // [RA1]: a request was sent and the token has not come
	request        []uint64 // request_Pi[k]: the last request timestamp heard from P_k
	token          []uint64 // token[k] while this process has the token, else nil
}

// New builds the machine of node c.ID.
func New(c algo.Config) (algo.Machine, error) {
	if err := c.Validate(params); err != nil {
		return nil, err
	}
	x, err := c.NodeParam("initial")
	if err != nil {
		return nil, err
	}
	m := &Machine{id: c.ID, n: c.N, initial: x}
	m.reset()
	return m, nil
}

// reset is [RI1] and [RI2].
func (m *Machine) reset() {
	m.state = noToken
	m.waiting = false
	m.request = make([]uint64, m.n)
	m.token = nil
	if m.id == m.initial {
		m.state = tokenPresent
		m.token = make([]uint64, m.n)
	}
}

// Step implements algo.Machine.
func (m *Machine) Step(in algo.Input) []algo.Output {
	var out []algo.Output
	switch in.Kind {
	case algo.Start:
	case algo.Recover:
		// A restart is not the system's initialization: [RI1] gives P_x
		// the token once, when everything starts. A process that comes
		// back has no token, whoever it is (its token, if it had one, was
		// lost with the crash: seed 001, "the failure of a process, except
		// the one which holds the token, doesn't prevent progress"), and
		// request[] starts again from [RI2].
		m.reset()
		m.state, m.token = noToken, nil
	case algo.Request:
		if m.waiting || m.state == tokenHeld {
			return []algo.Output{algo.NoteOut("request ignored: already requested")}
		}
		// [RA1]
		if m.state == noToken {
			for j := 0; j < m.n; j++ {
				if j != m.id {
					out = append(out, algo.SendTo(j, algo.Msg{Type: MsgRequest, Stamp: in.Clock, ID: m.id}))
				}
			}
			m.waiting = true
			return out
		}
		out = m.enter(out)
	case algo.Release:
		if m.state != tokenHeld {
			return []algo.Output{algo.NoteOut("release ignored: not in the critical section (%v)", m.state)}
		}
		m.state = tokenPresent // [RR1]
		out = m.pass(out, in.Clock)
	case algo.Receive:
		switch in.Msg.Type {
		case MsgRequest:
			j := in.Msg.ID
			if j < 0 || j >= m.n {
				return append(out, algo.NoteOut("request from P%d names P%d, outside the group", in.From, j))
			}
			m.request[j] = max(m.request[j], in.Msg.Stamp) // [RH1]
			if m.state == tokenPresent {
				out = m.pass(out, in.Clock) // [RH2]
			}
		case MsgToken:
			if len(in.Msg.Vals) != m.n {
				return append(out, algo.NoteOut("token from P%d with %d entries, want %d", in.From, len(in.Msg.Vals), m.n))
			}
			if m.token != nil {
				out = append(out, algo.NoteOut("a second token arrived from P%d", in.From))
			}
			m.token = slices.Clone(in.Msg.Vals)
			if !m.waiting {
				// Not in the notes, which send the token only to a pending
				// request (only a duplicated message gets here): treat it
				// as [RR1] and [RR2] do, keep it or pass it on.
				m.state = tokenPresent
				out = append(out, algo.NoteOut("token from P%d without a pending request", in.From))
				return m.pass(out, in.Clock)
			}
			// [RA1]: "P_i waits until it receives the token"; then
			// state := TOKEN-HELD and P_i enters.
			out = m.enter(out)
		default:
			out = append(out, algo.NoteOut("unknown message %q from P%d", in.Msg.Type, in.From))
		}
	case algo.Timer:
		out = append(out, algo.NoteOut("unexpected timer %q", in.TimerName))
	}
	return out
}

func (m *Machine) enter(out []algo.Output) []algo.Output {
	m.waiting = false
	m.state = tokenHeld
	return append(out, algo.EnterCS())
}

// pass is [RR2]: the first P_k, searched in the order i+1, ..., n, 1, ...,
// i-1, with request[k] > token[k] gets the token; if there is none the
// process keeps it (TOKEN-PRESENT).
func (m *Machine) pass(out []algo.Output, clock uint64) []algo.Output {
	for d := 1; d < m.n; d++ {
		k := (m.id + d) % m.n
		if m.request[k] > m.token[k] {
			m.state = noToken
			m.token[m.id] = clock
			out = append(out, algo.SendTo(k, algo.Msg{Type: MsgToken, Vals: m.token}))
			m.token = nil
			return out
		}
	}
	return out
}

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	s := m.state.String()
	if m.waiting {
		s += " waiting"
	}
	s += fmt.Sprintf(" request=%v", m.request)
	if m.token != nil {
		s += fmt.Sprintf(" token=%v", m.token)
	}
	return s
}

// State implements algo.Inspector: the arrays of the second algorithm,
// request_Pi[] and, while this process has it, the token's token[].
func (m *Machine) State() any {
	st := struct {
		State   string   `json:"state"`
		Waiting bool     `json:"waiting"`
		Request []uint64 `json:"request"`
		Token   []uint64 `json:"token"`
	}{State: m.state.String(), Waiting: m.waiting, Request: algo.Clone(m.request)}
	if m.token != nil {
		st.Token = algo.Clone(m.token)
	}
	return st
}

package ricart

import (
	_ "embed"
	"fmt"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner/algo"
)

// Message types.
const (
	MsgRequest = "request"
	MsgReply   = "reply"
)

// docGo is this package's doc.go, the documentation dmx list shows.
//
//go:embed doc.go
var docGo string

// Spec describes the algorithm for dmx list and builds its machines.
var Spec = algo.Spec{
	Doc:     algo.PackageDoc(docGo),
	Name:    "ricart-agrawala",
	Kind:    algo.MutualExclusion,
	Summary: "multicast a timestamped request, wait for N-1 replies; replies to earlier requests and while in the CS are deferred",
	Seeds: []string{
		"003 [RI1] [RA1] [RA2] [RA3] [RE1] [RH1]",
		"004 Ricart and Agrawala pseudocode",
		"000 Ricart & Agrawala algorithm",
		"002 Ricart & Agrawala algorithm",
	},
	MsgTypes: []string{MsgRequest, MsgReply},
	IDTypes:  []string{MsgRequest, MsgReply},
	// Seed 004: "Ordering: Yes"; a request is overtaken at most once by
	// each other process (whose next request has a later timestamp).
	Properties: []string{"mutex-causal", "mutex-realtime", "liveness", "fairness", "starvation", "deadlock"},
	Costs: []theory.Cost{
		{Measure: theory.MessagesPerCS, Formula: "2(N-1)", Note: "N-1 requests, N-1 replies", Seed: "003 Ricart-Agrawala; 004 overview",
			Eval: theory.InN(func(n float64) theory.Estimate { return theory.Exact(2 * (n - 1)) })},
		{Measure: theory.SyncDelay, Formula: "1", Note: "the deferred reply", Seed: "004 Ricart and Agrawala, properties", Eval: theory.Const(theory.Exact(1))},
		{Measure: theory.ClientDelay, Formula: "2 (multicast + replies)", Seed: "004 Ricart and Agrawala, properties", Eval: theory.Const(theory.Exact(2))},
		{Measure: theory.Bandwidth, Formula: "2(N-1)", Note: "without hardware multicast", Seed: "004 Ricart and Agrawala, properties",
			Eval: theory.InN(func(n float64) theory.Estimate { return theory.Exact(2 * (n - 1)) })},
	},
	New: New,
}

// Machine is one process of Ricart-Agrawala.
type Machine struct {
	id, n    int
	state    algo.CSState
	t        uint64       // T_Pi of the current request ([RA1])
	replied  []bool       // replied[j]: P_j replied to the current request ([RA3])
	deferred []queued     // requests queued by [RH1], in arrival order
	wait     algo.WaitSet // the last Wait set output
}

// queued is a request (T_Pj, j) held back by [RH1].
type queued struct {
	from int
	t    uint64
}

// New builds the machine of node c.ID. The algorithm takes no parameters.
func New(c algo.Config) (algo.Machine, error) {
	if err := c.Validate(nil); err != nil {
		return nil, err
	}
	m := &Machine{id: c.ID, n: c.N}
	m.reset()
	return m, nil
}

// reset is [RI1]: state := RELEASED.
func (m *Machine) reset() {
	m.state = algo.Released
	m.t = 0
	m.replied = make([]bool, m.n)
	m.deferred = nil
	m.wait = nil
}

// Step implements algo.Machine.
func (m *Machine) Step(in algo.Input) []algo.Output {
	if o, ok := in.Ignored(m.n, m.state); ok {
		return []algo.Output{o}
	}
	var out []algo.Output
	switch in.Kind {
	case algo.Start:
	case algo.Recover:
		// A recovered process starts from [RI1]; the requests it had
		// deferred are forgotten, and their senders wait for ever (seed
		// 004: "Deadlock if any process fails").
		m.reset()
	case algo.Request:
		// [RA1]
		m.state = algo.Requested
		m.t = in.Clock
		clear(m.replied)
		// [RA2]: (T_Pi, i) to all other processes.
		for j := 0; j < m.n; j++ {
			if j != m.id {
				out = append(out, algo.SendTo(j, algo.Msg{Type: MsgRequest, Stamp: m.t, ID: m.id}))
			}
		}
		// [RA3]: wait for the n-1 replies (none if n = 1).
		out = m.progress(out)
	case algo.Release:
		// Exit: state := RELEASED, reply to every queued request.
		m.state = algo.Released
		for _, q := range m.deferred {
			out = append(out, algo.SendTo(q.from, algo.Msg{Type: MsgReply, Stamp: q.t, ID: m.id}))
		}
		m.deferred = nil
	case algo.Receive:
		switch in.Msg.Type {
		case MsgRequest:
			out = m.onRequest(out, in.From, in.Msg)
		case MsgReply:
			if m.state != algo.Requested {
				return append(out, algo.NoteOut("reply from P%d ignored: not requesting (%v)", in.From, m.state))
			}
			if in.Msg.Stamp != m.t {
				// [RA3] waits for the replies to this request (T_Pi, i);
				// a reply to an earlier one (sent before this process
				// crashed and came back) does not count.
				return append(out, algo.NoteOut("reply from P%d to request %d ignored: waiting for replies to %d", in.From, in.Msg.Stamp, m.t))
			}
			m.replied[in.From] = true
			out = m.progress(out)
		default:
			out = append(out, algo.NoteOut("unknown message %q from P%d", in.Msg.Type, in.From))
		}
	case algo.Timer:
		out = append(out, algo.NoteOut("unexpected timer %q", in.TimerName))
	}
	return out
}

// onRequest is [RH1] for a request (T_Pj, j) from P_j.
func (m *Machine) onRequest(out []algo.Output, from int, msg algo.Msg) []algo.Output {
	tj, j := msg.Stamp, msg.ID
	// (T_Pi, i) < (T_Pj, j): algo's total order of requests (seed 003 slide 7).
	mine := algo.StampedRequest{T: m.t, ID: m.id}
	if m.state == algo.Held || (m.state == algo.Requested && mine.Before(algo.StampedRequest{T: tj, ID: j})) {
		// Queue the request without replying.
		m.deferred = append(m.deferred, queued{from: from, t: tj})
		return out
	}
	return append(out, algo.SendTo(from, algo.Msg{Type: MsgReply, Stamp: tj, ID: m.id}))
}

// progress keeps the Wait set equal to the replies still missing ([RA3]) and
// applies [RE1] once there are none.
func (m *Machine) progress(out []algo.Output) []algo.Output {
	var missing []int
	for j := 0; j < m.n; j++ {
		if j != m.id && !m.replied[j] {
			missing = append(missing, j)
		}
	}
	out = m.wait.Set(out, missing)
	if len(missing) == 0 {
		// [RE1]: state := HELD; P_i enters the CS.
		m.state = algo.Held
		out = append(out, algo.EnterCS())
	}
	return out
}

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	s := m.state.String()
	if m.state != algo.Released {
		s += fmt.Sprintf(" T=%d", m.t)
	}
	if len(m.wait) > 0 {
		s += fmt.Sprintf(" waiting-for=%v", m.wait)
	}
	if len(m.deferred) > 0 {
		s += " deferred="
		for i, q := range m.deferred {
			if i > 0 {
				s += ","
			}
			s += fmt.Sprintf("(%d,%d)", q.t, q.from)
		}
	}
	return s
}

// State implements algo.Inspector: the state of seed 003's rules, the
// request's T_Pi, the replies received ([RA3]) and the requests deferred
// by [RH1] as (T_Pj, j).
func (m *Machine) State() any {
	type deferred struct {
		T    uint64 `json:"t"`
		From int    `json:"from"`
	}
	st := struct {
		State      string     `json:"state"`
		T          uint64     `json:"t,omitempty"`
		Replied    []int      `json:"replied"`
		Deferred   []deferred `json:"deferred"`
		WaitingFor []int      `json:"waiting_for"`
	}{State: m.state.String(), Replied: algo.Members(m.replied), Deferred: []deferred{}, WaitingFor: algo.Clone(m.wait)}
	if m.state != algo.Released {
		st.T = m.t
	}
	for _, q := range m.deferred {
		st.Deferred = append(st.Deferred, deferred{q.t, q.from})
	}
	return st
}

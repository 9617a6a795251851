package central

import (
	"cmp"
	_ "embed"
	"fmt"
	"strconv"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/bully"
	"github.com/dmxlab/dmx/runner/algo/election"
	"github.com/dmxlab/dmx/runner/algo/fd"
)

// Message types.
const (
	MsgRequest = "request"
	MsgGrant   = "grant"
	MsgRelease = "release"
)

var params = append([]algo.Param{
	{Name: "coordinator", Default: "0", Doc: "id of the coordinator process (it also competes for the resource); failover=none only"},
	{Name: "failover", Default: FailoverNone, Doc: "none: a fixed coordinator (the notes' algorithm); bully or ring: the coordinator is elected with that election algorithm and the heartbeat detector, and a new one takes over when it crashes (state query, epochs)"},
	{Name: "revoke", Default: "false", Doc: "failover: when the detector suspects the holder, take its grant back and grant the next; a crashed holder then blocks nobody, but a falsely suspected one is still in the critical section when the next enters"},
	{Name: "timeout", Default: "50ms", Doc: "failover: the election's time-out (default 50ms with bully, 200ms with ring)"},
	{Name: "initiators", Default: "0", Doc: "failover: who starts the first election at Start: comma-separated ids, all, or none"},
}, fd.HostedParams("failover", "a D below the delay spread makes false suspicions, which can break mutual exclusion here")...)

// variants are the configurations tests run besides the defaults.
var variants = []algo.Variant{
	{Params: map[string]string{"failover": FailoverBully}, Doc: "the coordinator elected with bully (seed 004 failover)"},
	{Params: map[string]string{"failover": FailoverBully, "revoke": "true", "initiators": "all"}, Doc: "grants of suspected holders revoked; every process starts the first election"},
	{Params: map[string]string{"failover": FailoverRing, "initiators": "all"}, Doc: "the coordinator elected with the ring election"},
}

// docGo is this package's doc.go, the documentation dmx list shows.
//
//go:embed doc.go
var docGo string

// Spec describes the algorithm for dmx list and builds its machines.
var Spec = algo.Spec{
	Doc:     algo.PackageDoc(docGo),
	Name:    "central",
	Kind:    algo.MutualExclusion,
	Summary: "central coordinator with a FIFO queue: request, grant (the notes' OK), release",
	Seeds: []string{
		"000 centralized algorithm",
		"002 centralized algorithm",
		"003 slides 5-6 central coordinator",
		"004 centralized algorithm",
	},
	MsgTypes: []string{MsgRequest, MsgGrant, MsgRelease,
		MsgStateQuery, MsgStateIdle, MsgStateRequesting, MsgStateHolding, MsgNack,
		bully.MsgElection, bully.MsgAnswer, bully.MsgCoordinator, fd.MsgHeartbeat},
	IDTypes:    []string{MsgRequest, MsgRelease, MsgGrant},
	Properties: []string{"mutex-causal", "mutex-realtime", "liveness", "deadlock"},
	Roles:      roles,
	Costs: []theory.Cost{
		{Measure: theory.MessagesPerCS, Formula: "3 per CS of a client, 0 for the coordinator's own", Note: "request, grant, release",
			Seed: "003 central coordinator: three messages per use of a CS", Eval: messagesPerCS},
		{Measure: theory.SyncDelay, Formula: "2 between clients (1 when the coordinator exits or enters)", Note: "release + grant",
			Seed: "004 centralized algorithm, properties", Eval: theory.Const(theory.Typical(2, 1, 2))},
		{Measure: theory.ClientDelay, Formula: "2 for a client (request + grant), 0 for the coordinator",
			Seed: "004 centralized algorithm, properties", Eval: theory.Const(theory.Typical(2, 0, 2))},
		{Measure: theory.Bandwidth, Formula: "3", Seed: "004 centralized algorithm, properties", Eval: theory.Const(theory.Exact(3))},
		{Measure: theory.MessagesPerRecovery, Formula: "an election + 2(N-1)",
			Note: "failover: per new coordinator, a state query to each other process and its reply; heartbeats apart"},
		fd.Cost("failover only", func(s theory.Setting) bool { return cmp.Or(s.Params["failover"], "none") != "none" }),
	},
	Params: params,
	// Over real UDP, failover elects with its election's parameters
	// there (algo.Spec.UDPParams).
	UDPParams: func(p map[string]string) map[string]string {
		switch p["failover"] {
		case FailoverBully:
			return bully.UDPParams(p)
		case FailoverRing:
			return election.RingUDPParams()
		}
		return nil
	},
	Variants: variants,
	New:      New,
	Parts: func(p map[string]string) algo.Parts {
		if f, ok := p["failover"]; ok && f != FailoverNone {
			return algo.Parts{Leader: true, Coordinator: algo.NoProc, TokenHolder: algo.NoProc}
		}
		c, err := strconv.Atoi(p["coordinator"])
		if err != nil {
			c = 0
		}
		return algo.Parts{Coordinator: c, TokenHolder: algo.NoProc}
	},
}

// messagesPerCS is seed 003's three messages for a critical section of a
// client and none for one of the coordinator, averaged over the run's
// critical sections.
func messagesPerCS(s theory.Setting) theory.Estimate {
	coord := 0
	if c, err := strconv.Atoi(s.Params["coordinator"]); err == nil {
		coord = c
	}
	var cs, own float64
	for p, c := range s.CS {
		cs += float64(c)
		if p == coord {
			own = float64(c)
		}
	}
	var e theory.Estimate
	if cs > 0 {
		e = theory.Exact(3 * (cs - own) / cs)
	}
	e.Formula = fmt.Sprintf("3 per CS of a client, 0 for the coordinator P%d's own", coord)
	return e
}

const none = -1

// Machine is one process of the central algorithm; the coordinator's
// machine also keeps the holder and the queue.
type Machine struct {
	id, n, coord int
	state        algo.CSState
	wait         algo.WaitSet // the last Wait set output

	// Coordinator only.
	holder int   // the process the resource is granted to, or none
	queue  []int // waiting requesters, FIFO (seed 000 "Service requests in FIFO order")
}

// New builds the machine of node c.ID.
func New(c algo.Config) (algo.Machine, error) {
	if err := c.Validate(params); err != nil {
		return nil, err
	}
	switch mode := c.Param("failover", FailoverNone); mode {
	case FailoverNone:
		for _, k := range failoverParams {
			if _, ok := c.Params[k]; ok {
				return nil, fmt.Errorf("parameter %s applies only with failover=bully or failover=ring", k)
			}
		}
	case FailoverBully, FailoverRing:
		if _, ok := c.Params["coordinator"]; ok {
			return nil, fmt.Errorf("parameter coordinator: with failover=%s the coordinator is elected", mode)
		}
		return newFailover(c, mode)
	default:
		return nil, fmt.Errorf("parameter failover=%q: want none, bully or ring", mode)
	}
	coord, err := c.NodeParam("coordinator")
	if err != nil {
		return nil, err
	}
	m := &Machine{id: c.ID, n: c.N, coord: coord}
	m.reset()
	return m, nil
}

func (m *Machine) reset() {
	m.state = algo.Released
	m.wait = nil
	m.holder = none
	m.queue = nil
}

func (m *Machine) isCoord() bool { return m.id == m.coord }

// Step implements algo.Machine.
func (m *Machine) Step(in algo.Input) []algo.Output {
	if o, ok := in.Ignored(m.n, m.state); ok {
		return []algo.Output{o}
	}
	var out []algo.Output
	switch in.Kind {
	case algo.Start:
	case algo.Recover:
		// A recovered process starts afresh: a coordinator forgets its queue
		// and holder (the single point of failure of seed 000 and 003).
		m.reset()
	case algo.Request:
		m.state = algo.Requested
		if m.isCoord() {
			// Seed 003 slide 6: the coordinator competes too; its request is
			// handled locally, without a message.
			out = m.coordRequest(out, m.id)
		} else {
			// Seed 003 slide 5 / seed 000 steps 1-2: send a request to the
			// coordinator and wait for its reply.
			out = append(out, algo.SendTo(m.coord, algo.Msg{Type: MsgRequest, ID: m.id, Stamp: in.Clock}))
			out = m.wait.Set(out, []int{m.coord})
		}
	case algo.Release:
		m.state = algo.Released
		if m.isCoord() {
			out = m.coordRelease(out, m.id)
		} else {
			// Seed 003 slide 5 / seed 000 step 5: notify the coordinator.
			out = append(out, algo.SendTo(m.coord, algo.Msg{Type: MsgRelease, ID: m.id}))
		}
	case algo.Receive:
		out = m.deliver(out, in)
	case algo.Timer:
		out = append(out, algo.NoteOut("unexpected timer %q", in.TimerName))
	}
	return out
}

func (m *Machine) deliver(out []algo.Output, in algo.Input) []algo.Output {
	switch in.Msg.Type {
	case MsgRequest:
		if !m.isCoord() {
			return append(out, algo.NoteOut("request from P%d ignored: not the coordinator", in.From))
		}
		return m.coordRequest(out, in.From)
	case MsgRelease:
		if !m.isCoord() {
			return append(out, algo.NoteOut("release from P%d ignored: not the coordinator", in.From))
		}
		if m.holder != in.From {
			// The notes assume reliable channels; a release from a process
			// that was not granted the resource has no rule, so it changes
			// nothing.
			if m.holder == none {
				return append(out, algo.NoteOut("release from P%d ignored: nobody holds the resource", in.From))
			}
			return append(out, algo.NoteOut("release from P%d ignored: the holder is P%d", in.From, m.holder))
		}
		return m.coordRelease(out, in.From)
	case MsgGrant:
		if m.state != algo.Requested {
			return append(out, algo.NoteOut("grant from P%d ignored: not requesting (%v)", in.From, m.state))
		}
		// Seed 003 slide 5: "The reply from the coordinator gives the right
		// to enter the CS."
		return m.enter(out)
	}
	return append(out, algo.NoteOut("unknown message %q from P%d", in.Msg.Type, in.From))
}

// coordRequest is the coordinator's handling of a request from j (itself
// included): grant at once if nobody holds the resource, else queue j and do
// not reply until a release (seed 000: "Coordinator does not reply until
// release / Maintain queue").
func (m *Machine) coordRequest(out []algo.Output, j int) []algo.Output {
	if m.holder == none {
		return m.grant(out, j)
	}
	m.queue = append(m.queue, j)
	return m.coordWait(out)
}

// coordRelease frees the resource and grants it to the head of the queue
// (seed 000: "Service requests in FIFO order").
func (m *Machine) coordRelease(out []algo.Output, j int) []algo.Output {
	m.holder = none
	if len(m.queue) == 0 {
		return out
	}
	next := m.queue[0]
	m.queue = m.queue[1:]
	return m.grant(out, next)
}

func (m *Machine) grant(out []algo.Output, j int) []algo.Output {
	m.holder = j
	if j == m.id {
		return m.enter(out)
	}
	out = append(out, algo.SendTo(j, algo.Msg{Type: MsgGrant, ID: j}))
	return m.coordWait(out)
}

// coordWait keeps the coordinator's own Wait set: when it is queued itself it
// waits for whoever holds the resource now.
func (m *Machine) coordWait(out []algo.Output) []algo.Output {
	if m.state == algo.Requested && m.holder != none && m.holder != m.id {
		return m.wait.Set(out, []int{m.holder})
	}
	return out
}

func (m *Machine) enter(out []algo.Output) []algo.Output {
	m.state = algo.Held
	out = m.wait.Set(out, nil)
	return append(out, algo.EnterCS())
}

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	s := m.state.String()
	if len(m.wait) > 0 {
		s += fmt.Sprintf(" waiting-for=%v", m.wait)
	}
	if m.isCoord() {
		h := "none"
		if m.holder != none {
			h = fmt.Sprintf("P%d", m.holder)
		}
		s += fmt.Sprintf(" coordinator holder=%s queue=%v", h, m.queue)
	}
	return s
}

// roles names the fixed coordinator; with failover the first one is
// elected, so nobody starts as coordinator.
func roles(n int, params map[string]string) map[int]string {
	if f := params["failover"]; f != "" && f != FailoverNone {
		return nil
	}
	c, err := strconv.Atoi(params["coordinator"])
	if params["coordinator"] == "" {
		c, err = 0, nil
	}
	if err != nil || c < 0 || c >= n {
		return nil
	}
	return map[int]string{c: "coordinator"}
}

// State implements algo.Inspector: the process's state as a client and,
// at the coordinator, who holds the grant and the FIFO queue.
func (m *Machine) State() any {
	st := struct {
		State       string `json:"state"`
		Coordinator int    `json:"coordinator"`
		Holder      *int   `json:"holder,omitempty"`
		Queue       []int  `json:"queue,omitempty"`
		WaitingFor  []int  `json:"waiting_for"`
	}{State: m.state.String(), Coordinator: m.coord, WaitingFor: algo.Clone(m.wait)}
	if m.id == m.coord {
		h := m.holder
		st.Holder, st.Queue = &h, algo.Clone(m.queue)
	}
	return st
}

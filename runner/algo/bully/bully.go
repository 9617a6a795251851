package bully

import (
	_ "embed"
	"fmt"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/election"
	"github.com/dmxlab/dmx/runner/algo/fd"
)

// Message types.
const (
	MsgElection    = "election"
	MsgAnswer      = "answer"
	MsgCoordinator = "coordinator"
)

// Timer names: the two waits of [RE1].
const (
	TimerAnswer      = "answer"
	TimerCoordinator = "coordinator"
)

// DefaultTimeout is the default of the parameter timeout, in ns.
const DefaultTimeout = 50_000_000

var params = election.Params(
	algo.Param{Name: "timeout", Default: "50ms", Doc: "[RE1]: how long to wait for an answer (a duration, or ns)"},
	algo.Param{Name: "coordinator-timeout", Default: "2x timeout", Doc: "[RE1]: how long to wait for the coordinator message after an answer; the winner itself first waits out its own answer time-out, so this must exceed timeout plus two message delays"},
)

// variants are the configurations tests run besides the defaults.
var variants = []algo.Variant{election.AllInitiators("")}

// docGo is this package's doc.go, the documentation dmx list shows.
//
//go:embed doc.go
var docGo string

// Spec describes the algorithm for dmx list and builds its machines.
var Spec = algo.Spec{
	Doc:     algo.PackageDoc(docGo),
	Name:    "bully",
	Kind:    algo.Election,
	Summary: "election messages to higher ids, answers, coordinator broadcast; time-outs; the highest live id wins",
	Seeds: []string{
		"001 [RE1] [RH1] [RH2], bully analysis",
		"000 bully algorithm",
		"002 the bully algorithm",
		"004 bully algorithm, heartbeat",
	},
	MsgTypes:   []string{MsgElection, MsgAnswer, MsgCoordinator, fd.MsgHeartbeat},
	IDTypes:    []string{MsgCoordinator},
	Properties: []string{"agreement", "validity", "split-brain", "termination"},
	Validity:   "highest-id", // seed 001: the highest id among the processes that are up
	Costs: []theory.Cost{
		{Measure: theory.MessagesPerElection, Formula: "best N-2, worst O(N^2) (N^2-1 when the lowest id starts)",
			Note: "best: the second highest id detects the failure; worst: N(N-1)/2 elections + N(N-1)/2 answers + N-1 coordinators",
			Seed: "001 the bully algorithm: analysis; 004 bully algorithm",
			Eval: theory.InN(func(n float64) theory.Estimate { return theory.Between(n-2, n*n-1) })},
		fd.Cost("", nil),
	},
	Params:    params,
	UDPParams: UDPParams,
	Variants:  variants,
	New:       New,
	Parts:     algo.ElectionParts,
}

// UDPParams are bully's parameters over real UDP (algo.Spec.UDPParams):
// the detector's (fd.UDPParams), and an answer waited for as long as the
// detector waits for a beat, 250ms, so that an answer too late for the
// time-out comes from a process the detector would suspect anyway (seed
// 004: "safety is broken if too tight deadline"). A leader killed is then
// replaced within about T+D+timeout = 500ms.
func UDPParams(map[string]string) map[string]string { return fd.UDPParams("timeout", "250ms") }

type phase int

const (
	off             phase = iota // ELECTION-OFF
	waitAnswer                   // ELECTION-ON, waiting for an answer
	waitCoordinator              // ELECTION-ON, answered, waiting for the coordinator message
)

func (p phase) String() string {
	return [...]string{"ELECTION-OFF", "ELECTION-ON waiting-answer", "ELECTION-ON waiting-coordinator"}[p]
}

// Machine is one process of the bully algorithm.
type Machine struct {
	id, n   int
	timeout int64
	// coordTimeout is the wait for the coordinator message. Seed 001's
	// [RE1] names two time-outs without saying how long; they cannot be
	// equal: the process that will win starts its own election about when
	// the answer reaches the waiting one, waits out its whole answer
	// time-out (nobody higher is alive), then announces itself one message
	// later, so an equal wait always loses the race by a message delay and
	// restarts the election, again and again.
	coordTimeout int64
	election.Core
	fd    *fd.Detector
	phase phase
	mine  uint64 // the number of the election this process holds (or held last)
}

// New builds the machine of node c.ID.
func New(c algo.Config) (algo.Machine, error) {
	s, err := election.Configure(c, params, DefaultTimeout)
	if err != nil {
		return nil, err
	}
	coord := 2 * s.Timeout
	if v, ok := c.Params["coordinator-timeout"]; ok && v != "2x timeout" {
		if coord, err = c.DurationParam("coordinator-timeout", coord); err != nil {
			return nil, err
		}
	}
	return &Machine{id: c.ID, n: c.N, timeout: s.Timeout, coordTimeout: coord, fd: s.FD,
		Core: election.Core{Initiator: s.Initiator, Dec: election.Undecided}}, nil
}

// Step implements algo.Machine.
func (m *Machine) Step(in algo.Input) []algo.Output {
	return m.Core.Step(in, m.fd, election.Rules{
		Elect:   m.elect,
		Busy:    func() bool { return m.phase != off },
		Message: m.onMessage,
		Timer:   m.onTimer,
	})
}

func (m *Machine) onMessage(out []algo.Output, from int, msg algo.Msg) []algo.Output {
	switch msg.Type {
	case MsgElection:
		// [RH1]: reply with an answer.
		out = append(out, algo.SendTo(from, algo.Msg{Type: MsgAnswer, Term: msg.Term}))
		// [RH2]: start an election unless holding one.
		if m.phase == off {
			out = m.elect(out)
		}
		return out
	case MsgAnswer:
		if m.phase != waitAnswer {
			return append(out, algo.NoteOut("answer from P%d ignored: %v", from, m.phase))
		}
		// [RE1]: an answer came; wait for the coordinator message.
		m.phase = waitCoordinator
		return append(out, algo.CancelTimerOut(TimerAnswer), algo.SetTimerOut(TimerCoordinator, m.coordTimeout))
	case MsgCoordinator:
		return m.coordinator(out, from, msg)
	}
	return append(out, algo.NoteOut("unknown message %q from P%d", msg.Type, from))
}

func (m *Machine) onTimer(out []algo.Output, name string) ([]algo.Output, bool) {
	switch name {
	case TimerAnswer:
		if m.phase == waitAnswer {
			out = m.win(out)
		}
	case TimerCoordinator:
		if m.phase == waitCoordinator {
			// [RE1]: "if no coordinator message arrives before time-out
			// then restart election procedure".
			out = append(out, algo.NoteOut("no coordinator message: restart the election"))
			m.phase = off // the timer that would be cancelled has fired
			out = m.elect(out)
		}
	default:
		return out, false
	}
	return out, true
}

// elect is [RE1]: ELECTION-ON, an election message to every higher process
// not suspected, and the wait for an answer.
func (m *Machine) elect(out []algo.Output) []algo.Output {
	if m.phase == waitCoordinator {
		out = append(out, algo.CancelTimerOut(TimerCoordinator))
	}
	m.phase = waitAnswer
	out = m.Begin(out, m.id, m.n)
	m.mine = m.Term
	for j := m.id + 1; j < m.n; j++ {
		if !m.fd.Suspected(j) {
			out = append(out, algo.SendTo(j, algo.Msg{Type: MsgElection, Term: m.mine}))
		}
	}
	return append(out, algo.SetTimerOut(TimerAnswer, m.timeout))
}

// win is [RE1] when no answer came before the time-out: this process is the
// coordinator and tells every process it does not suspect.
func (m *Machine) win(out []algo.Output) []algo.Output {
	m.phase = off
	out = m.Dec.Decide(out, m.id, m.mine) // mine is new: always a new decision
	for j := 0; j < m.n; j++ {
		if j != m.id && !m.fd.Suspected(j) {
			out = append(out, algo.SendTo(j, algo.Msg{Type: MsgCoordinator, ID: m.id, Term: m.mine}))
		}
	}
	return out
}

// coordinator handles a coordinator message from P_from.
//
// From a higher id it is the message [RE1] waits for: P_from leads, and
// the receiver is ELECTION-OFF. Seed 001 does not say what a process does
// with a coordinator message from a lower id, which only comes when that
// process missed this one (a too tight time-out, a false suspicion, or a
// recovery: seed 004's "Safety is broken if"). The receiver is up and has a
// higher id, so by seed 001 "the process with the highest identifier, among
// those which are up, is selected" it does not accept it, and holds an
// election by [RE1] (restarting the one it holds, if any), as a recovered
// process does (seed 000). Its own coordinator message then comes after the
// lower one everywhere, where taking whichever came last would otherwise
// leave the group split for good. Until then both believe they lead.
func (m *Machine) coordinator(out []algo.Output, from int, msg algo.Msg) []algo.Output {
	if from < m.id {
		out = append(out, algo.NoteOut("coordinator P%d has a lower id: hold an election", from))
		if m.phase == waitAnswer {
			out = append(out, algo.CancelTimerOut(TimerAnswer))
		}
		return m.elect(out)
	}
	switch m.phase {
	case waitAnswer:
		out = append(out, algo.CancelTimerOut(TimerAnswer))
	case waitCoordinator:
		out = append(out, algo.CancelTimerOut(TimerCoordinator))
	}
	m.phase = off
	return m.Dec.Decide(out, from, msg.Term)
}

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	return fmt.Sprintf("%v leader=%s term=%d %v", m.phase, election.LeaderString(m.Dec.Leader), m.Term, m.fd)
}

// State implements algo.Inspector: the leader and term, the phase of the
// election this process takes part in ([RE1]: waiting for an answer, then
// for the coordinator message) and the number of the one it holds.
func (m *Machine) State() any {
	return struct {
		election.View
		Phase    string `json:"phase"`
		Election uint64 `json:"election,omitempty"`
	}{m.Core.View(m.fd), m.phase.String(), m.mine}
}

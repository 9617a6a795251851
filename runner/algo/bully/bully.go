package bully

import (
	"fmt"
	"strconv"

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

var params = append([]algo.Param{
	{Name: "timeout", Default: "50ms", Doc: "[RE1]: how long to wait for an answer, and then for the coordinator message (a duration, or ns)"},
	election.InitiatorsParam,
}, fd.Params...)

// Spec describes the algorithm for dmx list and builds its machines.
var Spec = algo.Spec{
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
	Properties: []string{"agreement", "validity", "split-brain", "termination"},
	Complexity: "best N-2 (second highest detects the failure), worst O(N^2): N(N-1)/2 elections + N(N-1)/2 answers + N-1 coordinators = N^2-1 when the lowest id starts",
	Params:     params,
	New:        New,
}

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
	id, n     int
	timeout   int64
	initiator bool
	fd        *fd.Detector
	phase     phase
	dec       election.Decision // the coordinator this process knows
	term      uint64            // the highest election number seen
	mine      uint64            // the number of the election this process holds (or held last)
}

// New builds the machine of node c.ID.
func New(c algo.Config) (algo.Machine, error) {
	s, err := election.Configure(c, params, DefaultTimeout)
	if err != nil {
		return nil, err
	}
	return &Machine{id: c.ID, n: c.N, timeout: s.Timeout, initiator: s.Initiator, fd: s.FD, dec: election.Undecided}, nil
}

// Step implements algo.Machine.
func (m *Machine) Step(in algo.Input) []algo.Output {
	var out []algo.Output
	switch in.Kind {
	case algo.Start:
		out = m.fd.Start(in.Now)
		if m.initiator {
			out = m.elect(out)
		}
	case algo.Recover:
		// Seed 000: "If a dead process recovers, it holds an election to
		// find the coordinator." It remembers only its election number.
		m.term = in.Msg.Term
		out = m.fd.Start(in.Now)
		out = m.elect(out)
	case algo.Deliver:
		var mine bool
		out, mine = m.fd.Step(in)
		if mine {
			return out
		}
		m.term = max(m.term, in.Msg.Term)
		switch in.Msg.Type {
		case MsgElection:
			// [RH1]: reply with an answer.
			out = append(out, algo.SendTo(in.From, algo.Msg{Type: MsgAnswer, Term: in.Msg.Term}))
			// [RH2]: start an election unless holding one.
			if m.phase == off {
				out = m.elect(out)
			}
		case MsgAnswer:
			if m.phase != waitAnswer {
				return append(out, algo.NoteOut("answer from P%d ignored: %v", in.From, m.phase))
			}
			// [RE1]: an answer came; wait for the coordinator message.
			m.phase = waitCoordinator
			out = append(out, algo.CancelTimerOut(TimerAnswer), algo.SetTimerOut(TimerCoordinator, m.timeout))
		case MsgCoordinator:
			out = m.coordinator(out, in.From, in.Msg)
		default:
			out = append(out, algo.NoteOut("unknown message %q from P%d", in.Msg.Type, in.From))
		}
	case algo.Timer:
		switch in.TimerName {
		case TimerAnswer:
			if m.phase == waitAnswer {
				out = m.win(out)
			}
		case TimerCoordinator:
			if m.phase == waitCoordinator {
				// [RE1]: "if no coordinator message arrives before
				// time-out then restart election procedure".
				out = append(out, algo.NoteOut("no coordinator message: restart the election"))
				m.phase = off // the timer that would be cancelled has fired
				out = m.elect(out)
			}
		default:
			var mine bool
			out, mine = m.fd.Step(in)
			if !mine {
				return append(out, algo.NoteOut("unexpected timer %q", in.TimerName))
			}
			for _, p := range fd.Suspects(out) {
				// Seed 000: "When process P detects dead coordinator".
				if p == m.dec.Leader && m.phase == off {
					out = m.elect(out)
				}
			}
		}
	default:
		out = append(out, algo.NoteOut("unexpected input %v", in.Kind))
	}
	return out
}

// elect is [RE1]: ELECTION-ON, an election message to every higher process
// not suspected, and the wait for an answer.
func (m *Machine) elect(out []algo.Output) []algo.Output {
	if m.phase == waitCoordinator {
		out = append(out, algo.CancelTimerOut(TimerCoordinator))
	}
	m.phase = waitAnswer
	m.term = election.NextTerm(m.term, m.id, m.n)
	m.mine = m.term
	out = append(out, algo.Output{Kind: algo.StartElection, Msg: algo.Msg{Term: m.mine}},
		algo.Output{Kind: algo.Persist, Msg: algo.Msg{Type: "state", Term: m.mine}})
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
	out = m.dec.Decide(out, m.id, m.mine) // mine is new: always a new decision
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
	return m.dec.Decide(out, from, msg.Term)
}

// Leader is the coordinator this process knows, -1 if none.
func (m *Machine) Leader() int { return m.dec.Leader }

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	l := "?"
	if m.dec.Leader >= 0 {
		l = strconv.Itoa(m.dec.Leader)
	}
	return fmt.Sprintf("%v leader=%s term=%d %v", m.phase, l, m.term, m.fd)
}

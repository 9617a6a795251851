package changroberts

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/fd"
)

// Message types.
const (
	MsgElection = "election"
	MsgElected  = "elected"
)

// TimerTimeout is a participant's wait for the elected message.
const TimerTimeout = "timeout"

// DefaultTimeout is the default of the parameter timeout, in ns.
const DefaultTimeout = 200_000_000

var params = append([]algo.Param{
	{Name: "timeout", Default: "200ms", Doc: "how long a participant waits for the elected message before it starts a new election (seed 001 \"Failures?\")"},
	{Name: "initiators", Default: "0", Doc: "who starts an election at Start: comma-separated ids, all, or none"},
}, fd.Params...)

// Spec describes the algorithm for dmx list and builds its machines.
var Spec = algo.Spec{
	Name:    "chang-roberts",
	Kind:    algo.Election,
	Summary: "ring election with one id per message and a participant flag: lower ids are replaced or discarded, the id that comes back wins",
	Seeds: []string{
		"001 [RE1] [RE2] [RH1] [RD1], ring election protocol, failures",
		"000 Chang & Roberts ring algorithm",
		"004 Chang Roberts",
	},
	MsgTypes:   []string{MsgElection, MsgElected, fd.MsgHeartbeat},
	Properties: []string{"agreement", "validity", "split-brain", "termination"},
	Complexity: "best 2N (the would-be leader initiates), worst 3N-1 (its successor initiates), avg 2.5N; exactly 2N+(N-1-i) when P_i alone initiates",
	Params:     params,
	New:        New,
}

// Machine is one process of Chang and Roberts.
type Machine struct {
	id, n       int
	timeout     int64
	initiator   bool
	fd          *fd.Detector
	participant bool
	leader      int    // elected; -1: none
	decided     uint64 // the Term of that decision
	term        uint64 // the highest election number seen
}

// New builds the machine of node c.ID.
func New(c algo.Config) (algo.Machine, error) {
	if err := c.Check(params); err != nil {
		return nil, err
	}
	timeout, err := c.DurationParam("timeout", DefaultTimeout)
	if err != nil {
		return nil, err
	}
	init, err := initiators(c.Param("initiators", "0"), c.N)
	if err != nil {
		return nil, err
	}
	d, err := fd.FromConfig(c)
	if err != nil {
		return nil, err
	}
	return &Machine{id: c.ID, n: c.N, timeout: timeout, initiator: init[c.ID], fd: d, leader: -1}, nil
}

// initiators parses the parameter initiators for a group of n: a
// comma-separated list of ids, "all" or "none".
func initiators(v string, n int) ([]bool, error) {
	is := make([]bool, n)
	switch strings.TrimSpace(v) {
	case "none", "":
		return is, nil
	case "all":
		for i := range is {
			is[i] = true
		}
		return is, nil
	}
	for _, f := range strings.Split(v, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 || i >= n {
			return nil, fmt.Errorf("parameter initiators=%q: want ids in 0..%d, all or none", v, n-1)
		}
		is[i] = true
	}
	return is, nil
}

// next is the neighbour: the first successor the detector does not
// suspect, or -1 if every other process is suspected.
func (m *Machine) next() int {
	for k := 1; k < m.n; k++ {
		j := (m.id + k) % m.n
		if !m.fd.Suspected(j) {
			return j
		}
	}
	return -1
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
		// A recovered process knows no leader: it starts an election.
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
			out = m.onElection(out, in.Msg)
		case MsgElected:
			out = m.onElected(out, in.Msg)
		default:
			out = append(out, algo.NoteOut("unknown message %q from P%d", in.Msg.Type, in.From))
		}
	case algo.Timer:
		if in.TimerName == TimerTimeout {
			if m.participant {
				// Seed 001 "Failures?": "times out waiting for an
				// Elected message": re-initiate.
				out = append(out, algo.NoteOut("no elected message: new election"))
				out = m.elect(out)
			}
			return out
		}
		var mine bool
		out, mine = m.fd.Step(in)
		if !mine {
			return append(out, algo.NoteOut("unexpected timer %q", in.TimerName))
		}
		for _, p := range fd.Suspects(out) {
			if p == m.leader && !m.participant {
				out = m.elect(out)
			}
		}
	default:
		out = append(out, algo.NoteOut("unexpected input %v", in.Kind))
	}
	return out
}

// elect is [RE1] and [RE2].
func (m *Machine) elect(out []algo.Output) []algo.Output {
	m.term = NextTerm(m.term, m.id, m.n)
	out = append(out, algo.Output{Kind: algo.StartElection, Msg: algo.Msg{Term: m.term}},
		algo.Output{Kind: algo.Persist, Msg: algo.Msg{Type: "state", Term: m.term}})
	// [RE1]
	m.participant = true
	// [RE2]
	return m.send(out, algo.Msg{Type: MsgElection, ID: m.id, Term: m.term})
}

// send passes an election message to the neighbour, and (re)arms the wait
// for the elected message. With nobody left, this process is alone and
// leads.
func (m *Machine) send(out []algo.Output, msg algo.Msg) []algo.Output {
	j := m.next()
	if j < 0 {
		out = append(out, algo.NoteOut("every other process is suspected"))
		m.participant = false
		out = append(out, algo.CancelTimerOut(TimerTimeout))
		return m.decide(out, m.id, msg.Term)
	}
	return append(out, algo.SendTo(j, msg), algo.SetTimerOut(TimerTimeout, m.timeout))
}

// onElection is [RH1], after the failure detector's check.
func (m *Machine) onElection(out []algo.Output, msg algo.Msg) []algo.Output {
	j := m.id
	if msg.ID != j && m.fd.Suspected(msg.ID) {
		// Seed 001 "Fixing for failures (2)": the candidate is suspected:
		// start a new run.
		out = append(out, algo.NoteOut("election for P%d, which is suspected: new election", msg.ID))
		return m.elect(out)
	}
	switch {
	case msg.ID > j:
		m.participant = true
		return m.send(out, msg)
	case msg.ID < j:
		if m.participant {
			return append(out, algo.NoteOut("election for P%d discarded: participant", msg.ID))
		}
		m.participant = true
		return m.send(out, algo.Msg{Type: MsgElection, ID: j, Term: msg.Term})
	}
	// message.id = j: P_j is the coordinator.
	m.participant = false
	out = append(out, algo.CancelTimerOut(TimerTimeout))
	out = m.decide(out, j, msg.Term)
	if k := m.next(); k >= 0 {
		out = append(out, algo.SendTo(k, algo.Msg{Type: MsgElected, ID: j, Term: msg.Term}))
	}
	return out
}

// onElected is [RD1], after the failure detector's check.
func (m *Machine) onElected(out []algo.Output, msg algo.Msg) []algo.Output {
	if msg.ID == m.id {
		return out // back at the coordinator: every process has it
	}
	if m.fd.Suspected(msg.ID) {
		out = append(out, algo.NoteOut("elected P%d is suspected: new election", msg.ID))
		return m.elect(out)
	}
	if msg.ID < m.id {
		out = append(out, algo.NoteOut("elected P%d has a lower id: new election", msg.ID))
		return m.elect(out)
	}
	if m.participant {
		m.participant = false
		out = append(out, algo.CancelTimerOut(TimerTimeout))
	}
	out = m.decide(out, msg.ID, msg.Term)
	if k := m.next(); k >= 0 {
		out = append(out, algo.SendTo(k, msg))
	}
	return out
}

// decide records that c leads, by the run numbered term.
func (m *Machine) decide(out []algo.Output, c int, term uint64) []algo.Output {
	if m.leader == c && m.decided == term {
		return out
	}
	m.leader, m.decided = c, term
	return append(out, algo.Output{Kind: algo.Leader, Leader: c, Msg: algo.Msg{Term: term}})
}

// Elect starts an election now, by [RE1] and [RE2], unless this process is
// a participant already (an election it takes part in is under way). It is
// for a machine that embeds this one and has its own reason to want a new
// leader (token-ring with regenerate=true, when the token seems lost); the
// caller carries out the outputs as those of Step.
func (m *Machine) Elect() []algo.Output {
	if m.participant {
		return nil
	}
	return m.elect(nil)
}

// Leader is the leader this process knows (its variable elected), -1 if
// none.
func (m *Machine) Leader() int { return m.leader }

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	l := "?"
	if m.leader >= 0 {
		l = strconv.Itoa(m.leader)
	}
	s := "NON-PARTICIPANT"
	if m.participant {
		s = "PARTICIPANT"
	}
	return fmt.Sprintf("%s elected=%s term=%d %v", s, l, m.term, m.fd)
}

// NextTerm is the election number process id (of n) takes for a new
// election after seeing seen: the next number above seen that is id modulo
// n, so that no two processes ever number an election alike and a trace's
// elections are told apart by number alone.
func NextTerm(seen uint64, id, n int) uint64 {
	return (seen/uint64(n)+1)*uint64(n) + uint64(id)
}

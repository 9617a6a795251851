package changroberts

import (
	_ "embed"
	"fmt"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/election"
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

var params = election.Params(
	algo.Param{Name: "timeout", Default: "200ms", Doc: "how long a participant waits for the elected message before it starts a new election (seed 001 \"Failures?\")"},
)

// variants are the configurations tests run besides the defaults.
var variants = []algo.Variant{election.AllInitiators("seed 001: multiple initiators")}

// docGo is this package's doc.go, the documentation dmx list shows.
//
//go:embed doc.go
var docGo string

// Spec describes the algorithm for dmx list and builds its machines.
var Spec = algo.Spec{
	Doc:     algo.PackageDoc(docGo),
	Name:    "chang-roberts",
	Kind:    algo.Election,
	Summary: "ring election with one id per message and a participant flag: lower ids are replaced or discarded, the id that comes back wins",
	Seeds: []string{
		"001 [RE1] [RE2] [RH1] [RD1], ring election protocol, failures",
		"000 Chang & Roberts ring algorithm",
		"004 Chang Roberts",
	},
	MsgTypes:   []string{MsgElection, MsgElected, fd.MsgHeartbeat},
	IDTypes:    []string{MsgElection, MsgElected},
	Properties: []string{"agreement", "validity", "split-brain", "termination"},
	Validity:   "highest-id", // seed 001: the highest id among the processes that are up
	Costs: append(election.RingCosts("best: the would-be leader initiates; worst: its successor does; 2N+(N-1-i) when P_i alone initiates"),
		fd.Cost("", nil)),
	Params:    params,
	UDPParams: func(map[string]string) map[string]string { return election.RingUDPParams() },
	Variants:  variants,
	New:       New,
	Parts:     algo.ElectionParts,
}

// Machine is one process of Chang and Roberts.
// Its Ring's Waiting is the participant flag of [RE1]-[RE2]; its neighbour
// is Next.
type Machine struct {
	election.Ring
}

// New builds the machine of node c.ID.
func New(c algo.Config) (algo.Machine, error) {
	r, err := election.NewRing(c, params, DefaultTimeout)
	if err != nil {
		return nil, err
	}
	return &Machine{r}, nil
}

// Step implements algo.Machine.
func (m *Machine) Step(in algo.Input) []algo.Output {
	return m.StepRing(in, m.elect, m.onMessage, TimerTimeout, "no elected message: new election")
}

func (m *Machine) onMessage(out []algo.Output, from int, msg algo.Msg) []algo.Output {
	switch msg.Type {
	case MsgElection:
		return m.onElection(out, msg)
	case MsgElected:
		return m.onElected(out, msg)
	}
	return append(out, algo.NoteOut("unknown message %q from P%d", msg.Type, from))
}

// elect is [RE1] and [RE2].
func (m *Machine) elect(out []algo.Output) []algo.Output {
	out = m.Begin(out, m.ID, m.N)
	// [RE1]
	m.Waiting = true
	// [RE2]
	return m.send(out, algo.Msg{Type: MsgElection, ID: m.ID, Term: m.Term})
}

// send passes an election message to the neighbour, and (re)arms the wait
// for the elected message. With nobody left, this process is alone and
// leads.
func (m *Machine) send(out []algo.Output, msg algo.Msg) []algo.Output {
	j := m.Next()
	if j < 0 {
		out = append(out, algo.NoteOut("every other process is suspected"))
		m.Waiting = false
		out = append(out, algo.CancelTimerOut(TimerTimeout))
		return m.decide(out, m.ID, msg.Term)
	}
	return append(out, algo.SendTo(j, msg), algo.SetTimerOut(TimerTimeout, m.Timeout))
}

// onElection is [RH1], after the failure detector's check.
func (m *Machine) onElection(out []algo.Output, msg algo.Msg) []algo.Output {
	j := m.ID
	if msg.ID != j && m.FD.Suspected(msg.ID) {
		// Seed 001 "Fixing for failures (2)": the candidate is suspected:
		// start a new run.
		out = append(out, algo.NoteOut("election for P%d, which is suspected: new election", msg.ID))
		return m.elect(out)
	}
	switch {
	case msg.ID > j:
		m.Waiting = true
		return m.send(out, msg)
	case msg.ID < j:
		if m.Waiting {
			return append(out, algo.NoteOut("election for P%d discarded: participant", msg.ID))
		}
		m.Waiting = true
		return m.send(out, algo.Msg{Type: MsgElection, ID: j, Term: msg.Term})
	}
	// message.id = j: P_j is the coordinator.
	m.Waiting = false
	out = append(out, algo.CancelTimerOut(TimerTimeout))
	out = m.decide(out, j, msg.Term)
	if k := m.Next(); k >= 0 {
		out = append(out, algo.SendTo(k, algo.Msg{Type: MsgElected, ID: j, Term: msg.Term}))
	}
	return out
}

// onElected is [RD1], after the failure detector's check.
func (m *Machine) onElected(out []algo.Output, msg algo.Msg) []algo.Output {
	if msg.ID == m.ID {
		return out // back at the coordinator: every process has it
	}
	if m.FD.Suspected(msg.ID) {
		out = append(out, algo.NoteOut("elected P%d is suspected: new election", msg.ID))
		return m.elect(out)
	}
	if msg.ID < m.ID {
		out = append(out, algo.NoteOut("elected P%d has a lower id: new election", msg.ID))
		return m.elect(out)
	}
	if m.Waiting {
		m.Waiting = false
		out = append(out, algo.CancelTimerOut(TimerTimeout))
	}
	out = m.decide(out, msg.ID, msg.Term)
	if k := m.Next(); k >= 0 {
		out = append(out, algo.SendTo(k, msg))
	}
	return out
}

// decide records that c leads, by the run numbered term.
func (m *Machine) decide(out []algo.Output, c int, term uint64) []algo.Output {
	return m.Dec.Decide(out, c, term)
}

// Elect starts an election now, by [RE1] and [RE2], unless this process is
// a participant already (an election it takes part in is under way). It is
// for a machine that embeds this one and has its own reason to want a new
// leader (token-ring with regenerate=true, when the token seems lost); the
// caller carries out the outputs as those of Step.
func (m *Machine) Elect() []algo.Output {
	if m.Waiting {
		return nil
	}
	return m.elect(nil)
}

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	s := "NON-PARTICIPANT"
	if m.Waiting {
		s = "PARTICIPANT"
	}
	return fmt.Sprintf("%s elected=%s term=%d %v", s, election.LeaderString(m.Dec.Leader), m.Term, m.FD)
}

// State implements algo.Inspector: the leader and term, and the
// participant flag of [RE1]-[RE2].
func (m *Machine) State() any {
	return struct {
		election.View
		Participant bool `json:"participant"`
	}{m.Core.View(m.FD), m.Waiting}
}

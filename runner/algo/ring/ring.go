package ring

import (
	_ "embed"
	"fmt"
	"slices"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/election"
	"github.com/dmxlab/dmx/runner/algo/fd"
)

// Message types.
const (
	MsgElection    = "election"
	MsgCoordinator = "coordinator"
)

// TimerTimeout is the wait for a coordinator message after taking part in
// an election.
const TimerTimeout = "timeout"

// DefaultTimeout is the default of the parameter timeout, in ns.
const DefaultTimeout = 200_000_000

var params = election.Params(
	algo.Param{Name: "timeout", Default: "200ms", Doc: "how long a process that took part in an election waits for the coordinator message before it starts a new one (seed 001 \"Failures?\")"},
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
	Name:    "ring",
	Kind:    algo.Election,
	Summary: "the election message collects ids around the ring; its originator picks the highest and circulates a coordinator message",
	Seeds: []string{
		"000 ring algorithm",
		"001 the ring algorithm, failures",
	},
	MsgTypes:   []string{MsgElection, MsgCoordinator, fd.MsgHeartbeat},
	IDTypes:    []string{MsgCoordinator},
	Properties: []string{"agreement", "validity", "split-brain", "termination"},
	Validity:   "highest-id", // seed 001: the highest id among the processes that are up
	Costs: append(election.RingCosts("seed 001's figures are those of the single-id ring, chang-roberts; this ring sends 2N per initiator"),
		theory.Cost{Measure: theory.MessagesPerElection, Formula: "2N per initiator (2kN for k)", Note: "N election + N coordinator, whoever initiates",
			Eval: theory.InN(func(n float64) theory.Estimate { return theory.Exact(2 * n) })},
		fd.Cost("", nil)),
	Params:    params,
	UDPParams: func(map[string]string) map[string]string { return election.RingUDPParams() },
	Variants:  variants,
	New:       New,
	Parts:     algo.ElectionParts,
}

// Machine is one process of the ring election.
// Its Ring's Waiting says it took part in an election and waits for its
// coordinator message; its successor is Next.
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
	return m.StepRing(in, m.elect, m.onMessage, TimerTimeout, "no coordinator message: new election")
}

func (m *Machine) onMessage(out []algo.Output, from int, msg algo.Msg) []algo.Output {
	switch msg.Type {
	case MsgElection:
		return m.onElection(out, msg)
	case MsgCoordinator:
		return m.onCoordinator(out, msg)
	}
	return append(out, algo.NoteOut("unknown message %q from P%d", msg.Type, from))
}

// elect starts an election: an election message with this process's id to
// the next live process (seed 000).
func (m *Machine) elect(out []algo.Output) []algo.Output {
	out = m.Begin(out, m.ID, m.N)
	return m.forward(out, algo.Msg{Type: MsgElection, Term: m.Term, Vals: []uint64{uint64(m.ID)}})
}

// forward sends an election message on and waits for the coordinator
// message; with nobody left to send it to, this process is alone and leads.
func (m *Machine) forward(out []algo.Output, msg algo.Msg) []algo.Output {
	j := m.Next()
	if j < 0 {
		out = append(out, algo.NoteOut("every other process is suspected"))
		return m.decide(out, m.ID, msg.Term)
	}
	m.Waiting = true
	return append(out, algo.SendTo(j, msg), algo.SetTimerOut(TimerTimeout, m.Timeout))
}

// onElection: seed 000 "Upon receiving an election message: process
// forwards the message, adding its process ID to the body. Eventually
// message returns to originator: process sees its ID on list" and announces
// the coordinator, the highest id of the list.
func (m *Machine) onElection(out []algo.Output, msg algo.Msg) []algo.Output {
	if !slices.Contains(msg.Vals, uint64(m.ID)) {
		msg.Vals = append(slices.Clone(msg.Vals), uint64(m.ID))
		return m.forward(out, msg)
	}
	c := int(slices.Max(msg.Vals))
	out = m.decide(out, c, msg.Term)
	if j := m.Next(); j >= 0 {
		out = append(out, algo.SendTo(j, algo.Msg{Type: MsgCoordinator, ID: c, Term: msg.Term, Vals: []uint64{uint64(m.ID)}}))
	}
	return out
}

// onCoordinator: decide and forward, unless this process has seen this
// coordinator message already (it is back where it started). A coordinator
// message naming a lower id than this process's own comes from an election
// that missed it (it was suspected: down, or falsely suspected); the seeds
// do not say what to do with it. This process is up and higher ("election
// algorithms attempt to locate the process with the highest number, among
// those which are up", seed 001), so it does not take it on and holds an
// election, as a recovered process does.
func (m *Machine) onCoordinator(out []algo.Output, msg algo.Msg) []algo.Output {
	if slices.Contains(msg.Vals, uint64(m.ID)) {
		return out
	}
	if msg.ID < m.ID {
		out = append(out, algo.NoteOut("coordinator P%d has a lower id: new election", msg.ID))
		return m.elect(out)
	}
	out = m.decide(out, msg.ID, msg.Term)
	msg.Vals = append(slices.Clone(msg.Vals), uint64(m.ID))
	if j := m.Next(); j >= 0 {
		out = append(out, algo.SendTo(j, msg))
	}
	return out
}

// decide records that c leads, by the election numbered term.
func (m *Machine) decide(out []algo.Output, c int, term uint64) []algo.Output {
	if m.Waiting {
		m.Waiting = false
		out = append(out, algo.CancelTimerOut(TimerTimeout))
	}
	return m.Dec.Decide(out, c, term)
}

// Elect starts an election now, unless this process took part in one that
// has not ended yet (it waits for its coordinator message). It is for a
// machine that embeds this one and has its own reason to want a new leader
// (token-ring with regenerate=true, when the token seems lost); the caller
// carries out the outputs as those of Step.
func (m *Machine) Elect() []algo.Output {
	if m.Waiting {
		return nil
	}
	return m.elect(nil)
}

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	s := "idle"
	if m.Waiting {
		s = "electing"
	}
	return fmt.Sprintf("%s leader=%s term=%d %v", s, election.LeaderString(m.Dec.Leader), m.Term, m.FD)
}

// State implements algo.Inspector: the leader and term, and whether the
// process took part in an election whose coordinator message is still to
// come.
func (m *Machine) State() any {
	return struct {
		election.View
		Electing bool `json:"electing"`
	}{m.Core.View(m.FD), m.Waiting}
}

package election

import (
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/fd"
)

// Core is the state every election machine keeps, and the part of Step
// they share: the failure detector's duties (package fd), Start and
// Recover, and a new election when the leader is suspected.
type Core struct {
	Initiator bool     // starts an election at Start
	Term      uint64   // the highest election number seen
	Dec       Decision // the leader known
}

// Rules are the parts of an election machine's Step that differ between
// algorithms.
type Rules struct {
	// Elect holds an election now.
	Elect func(out []algo.Output) []algo.Output
	// Busy reports that an election this process takes part in is under
	// way: a suspected leader calls for no other.
	Busy func() bool
	// Message handles a delivered message that is not the detector's, once
	// Term has taken its number into account; it notes a type it does not
	// know.
	Message func(out []algo.Output, from int, msg algo.Msg) []algo.Output
	// Timer handles the machine's own timer name and reports whether the
	// name was its own (otherwise it goes to the detector).
	Timer func(out []algo.Output, name string) ([]algo.Output, bool)
}

// Step is an election machine's Step, with its detector d and rules r.
func (c *Core) Step(in algo.Input, d *fd.Detector, r Rules) []algo.Output {
	var out []algo.Output
	switch in.Kind {
	case algo.Start:
		out = d.Start(in.Now)
		if c.Initiator {
			out = r.Elect(out)
		}
	case algo.Recover:
		// Seed 000: "If a dead process recovers, it holds an election to
		// find the coordinator." It knows no leader and remembers only
		// its election number, so that it never reuses one.
		c.Term = in.Msg.Term
		out = d.Start(in.Now)
		out = r.Elect(out)
	case algo.Receive:
		var mine bool
		out, mine = d.Step(in)
		if mine {
			return out
		}
		c.Term = max(c.Term, in.Msg.Term)
		out = r.Message(out, in.From, in.Msg)
	case algo.Timer:
		if out, own := r.Timer(out, in.TimerName); own {
			return out
		}
		var mine bool
		out, mine = d.Step(in)
		if !mine {
			return append(out, algo.NoteOut("unexpected timer %q", in.TimerName))
		}
		for _, p := range fd.Suspects(out) {
			// Seed 000: "When process P detects dead coordinator".
			if p == c.Dec.Leader && !r.Busy() {
				out = r.Elect(out)
			}
		}
	default:
		out = append(out, algo.NoteOut("unexpected input %v", in.Kind))
	}
	return out
}

// Leader is the leader this process knows, -1 if none.
func (c *Core) Leader() int { return c.Dec.Leader }

// Begin opens a new election of process id (of n): it takes the next
// election number of its own (NextTerm), announces it (StartElection) and
// persists it, so that a restarted process never numbers an election as
// one it held before its crash.
func (c *Core) Begin(out []algo.Output, id, n int) []algo.Output {
	c.Term = NextTerm(c.Term, id, n)
	return append(out, algo.Output{Kind: algo.StartElection, Msg: algo.Msg{Term: c.Term}},
		algo.Output{Kind: algo.Persist, Msg: algo.Msg{Type: "state", Term: c.Term}})
}

// View is the part of an election machine's State that every election
// shares: the leader known (-1: none), the election number it was decided
// in, the highest election number seen, and whom the failure detector
// suspects.
type View struct {
	Leader      int    `json:"leader"`
	DecidedTerm uint64 `json:"decided_term"`
	Term        uint64 `json:"term"`
	Suspected   []int  `json:"suspected"`
}

// View returns the shared part of the machine's State, with d its
// failure detector.
func (c *Core) View(d *fd.Detector) View {
	v := View{Leader: c.Dec.Leader, DecidedTerm: c.Dec.Term, Term: c.Term, Suspected: []int{}}
	if d != nil {
		v.Suspected = append(v.Suspected, d.SuspectedSet()...)
	}
	return v
}

// Ring is the state and the Step the ring elections (chang-roberts, ring)
// share: a process of the ring, its failure detector, and whether it took
// part in an election whose outcome it still waits for.
type Ring struct {
	ID, N   int
	Timeout int64 // the wait for the outcome
	Core
	FD      *fd.Detector
	Waiting bool // took part in an election and waits for its outcome
}

// NewRing reads the Ring of node c.ID from c, as Configure does.
func NewRing(c algo.Config, params []algo.Param, defTimeout int64) (Ring, error) {
	s, err := Configure(c, params, defTimeout)
	if err != nil {
		return Ring{}, err
	}
	return Ring{ID: c.ID, N: c.N, Timeout: s.Timeout, FD: s.FD,
		Core: Core{Initiator: s.Initiator, Dec: Undecided}}, nil
}

// Next is the first successor the detector does not suspect, or -1 if
// every other process is suspected (seed 000: "If successor is down, skip
// over. Repeat until a running process is located").
func (r *Ring) Next() int { return Successor(r.ID, r.N, r.FD.Suspected) }

// StepRing is Core.Step with the ring election's elect and message, and
// its timer: the wait for the outcome, which, while the process still
// waits, notes lost (seed 001 "Failures?": "times out waiting for an
// Elected message") and holds the election again.
func (r *Ring) StepRing(in algo.Input, elect func([]algo.Output) []algo.Output,
	message func(out []algo.Output, from int, msg algo.Msg) []algo.Output, timer, lost string) []algo.Output {
	return r.Core.Step(in, r.FD, Rules{
		Elect:   elect,
		Busy:    func() bool { return r.Waiting },
		Message: message,
		Timer: func(out []algo.Output, name string) ([]algo.Output, bool) {
			if name != timer {
				return out, false
			}
			if r.Waiting {
				out = append(out, algo.NoteOut("%s", lost))
				out = elect(out)
			}
			return out, true
		},
	})
}

package replay

import (
	"fmt"
	"io"
	"sync"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// States answers, for a run in a trace, the state of a process after any
// of its events (dmx serve shows it beside a clicked event). It replays
// only that process (Proc), and keeps each process's replay where the last
// question left it: a question about a later event of the process goes on
// from there, reading only the events in between; one about an earlier
// event replays the process again from its start. The last answers are
// kept, so that going back to an event asked about costs nothing. States
// is safe for concurrent use; questions are answered one at a time.
type States struct {
	st     *trace.Store
	run    trace.Run
	lookup func(name string) *algo.Spec

	mu      sync.Mutex
	sends   *trace.SendLookup
	procs   map[int]*cursor
	answers map[trace.Ref]*StateAt
	order   []trace.Ref // of answers, oldest first
}

// keptAnswers is how many answers States keeps.
const keptAnswers = 256

// cursor is the replay of one process, where the last question left it.
type cursor struct {
	x     *Proc
	input *Step // the last input replayed: an output's state is that of its input
	err   error // what stopped the replay, at seq stop
	stop  int64
}

// StateAt is the state of a process after one of its events.
type StateAt struct {
	Step *Step
	// InputChanged is, for an output, what the input it comes from
	// (Step.Cause) changed in the machines' state.
	InputChanged []Change
	// From is the sequence number the replay went on from for this
	// answer (0: the process's start), Replayed how many events of the
	// process it replayed; Cached says the answer was kept from before.
	From, Replayed int64
	Cached         bool
}

// NewStates prepares answers about run, a run of st; lookup finds its
// algorithm. Close it before st.
func NewStates(st *trace.Store, run trace.Run, lookup func(name string) *algo.Spec) *States {
	return &States{st: st, run: run, lookup: lookup, procs: map[int]*cursor{}, answers: map[trace.Ref]*StateAt{}}
}

// Close releases what the answers read the trace with.
func (s *States) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sends != nil {
		err := s.sends.Close()
		s.sends = nil
		return err
	}
	return nil
}

// After returns the state of process at.Proc right after its event at.
// The error is a *BadTraceError if the run cannot be replayed, a
// *CutError if the run was cut short before the event, a *Divergence if
// this dmx's machines do not reproduce the process's events up to it.
func (s *States) After(at trace.Ref) (*StateAt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.answers[at]; ok {
		c := *a
		c.Cached = true
		return &c, nil
	}
	c := s.procs[at.Proc]
	if c != nil && c.x.Seq() >= at.Seq && c.err == nil {
		c = nil // past it: replay the process again
	}
	if c != nil && c.err != nil {
		if at.Seq >= c.stop {
			return nil, c.err
		}
		c = nil
	}
	if c == nil {
		if s.sends == nil {
			l, err := s.st.Sends(s.run.ID)
			if err != nil {
				return nil, err
			}
			s.sends = l
		}
		x, err := NewProc(s.run, at.Proc, ProcOptions{Lookup: s.lookup, Sent: s.sent, Drops: s.drops(at.Proc)})
		if err != nil {
			return nil, err
		}
		c = &cursor{x: x}
		s.procs[at.Proc] = c
	}
	a := &StateAt{From: c.x.Seq()}
	step, err := s.advance(c, at)
	a.Replayed = c.x.Seq() - a.From
	if err != nil {
		c.err, c.stop = err, c.x.Seq()+1
		return nil, err
	}
	a.Step = step
	if !step.Input && c.input != nil {
		a.InputChanged = c.input.Changed
	}
	s.keep(at, a)
	return a, nil
}

// advance replays c's process up to at and returns the step of at.
func (s *States) advance(c *cursor, at trace.Ref) (*Step, error) {
	r, err := s.st.ProcEvents(s.run.ID, at.Proc, c.x.Seq()+1)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("run %d has no event %v", s.run.ID, at)
		}
		if err != nil {
			return nil, err
		}
		if ev.Seq > at.Seq {
			return nil, fmt.Errorf("run %d has no event %v", s.run.ID, at)
		}
		step, err := c.x.Step(ev)
		if err != nil {
			return nil, err
		}
		if step.Input {
			c.input = step
		}
		if ev.Seq == at.Seq {
			return step, nil
		}
	}
}

// sent looks a message's send event up in the trace.
func (s *States) sent(msg int64) (*trace.Event, error) { return s.sends.Send(msg) }

// drops is a Source of the drop events of process p.
func (s *States) drops(p int) Source {
	return func() (trace.Reader, error) { return s.st.ProcEventsOfKind(s.run.ID, p, trace.KindDrop) }
}

// keep remembers an answer, forgetting the oldest beyond keptAnswers.
func (s *States) keep(at trace.Ref, a *StateAt) {
	s.answers[at] = a
	s.order = append(s.order, at)
	if len(s.order) > keptAnswers {
		delete(s.answers, s.order[0])
		s.order = s.order[1:]
	}
}

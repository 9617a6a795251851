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
	procs   map[int][]*cursor        // by process, the most recently used last
	drops   map[int]map[int64][]drop // by process, read once
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
	cause int64 // the input of the event asked about, when it was skipped
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
	return &States{st: st, run: run, lookup: lookup, procs: map[int][]*cursor{}, drops: map[int]map[int64][]drop{}, answers: map[trace.Ref]*StateAt{}}
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
	c, err := s.cursor(at)
	if err != nil {
		return nil, err
	}
	var a *StateAt
	if c != nil {
		a, err = s.advance(c, at, at.Seq-stepMargin)
	} else if c, err = s.restart(at.Proc); err == nil {
		// Past it, or first asked: replay the process from its start,
		// skipping the state of all but the last events.
		a, err = s.advance(c, at, at.Seq-stepMargin)
	}
	if a == nil && err == nil {
		// The event is an output of an input whose state was skipped:
		// once more, with the state from that input on.
		cause := c.cause
		if c, err = s.restart(at.Proc); err == nil {
			a, err = s.advance(c, at, cause-1)
		}
	}
	if err != nil {
		return nil, err
	}
	s.keep(at, a)
	return a, nil
}

// stepMargin is how many events before the one asked about a replay
// computes the state at: the input an output comes from is at most that
// far back but in runs with big steps (a multicast to many processes).
const stepMargin = 64

// keptCursors is how many replays of a process States keeps, at
// different events: going back and forth between parts of a run goes on
// from the nearest one before.
const keptCursors = 4

// cursor returns the kept replay of at's process nearest before at (nil:
// none), or the error that stopped a replay before at.
func (s *States) cursor(at trace.Ref) (*cursor, error) {
	cs := s.procs[at.Proc]
	best := -1
	for i, c := range cs {
		if c.err != nil {
			if at.Seq >= c.stop {
				return nil, c.err
			}
			continue
		}
		if c.x.Seq() < at.Seq && (best < 0 || c.x.Seq() > cs[best].x.Seq()) {
			best = i
		}
	}
	if best < 0 {
		return nil, nil
	}
	c := cs[best]
	s.procs[at.Proc] = append(append(cs[:best:best], cs[best+1:]...), c)
	return c, nil
}

// restart makes a new replay of process p.
func (s *States) restart(p int) (*cursor, error) {
	if s.sends == nil {
		l, err := s.st.Sends(s.run.ID)
		if err != nil {
			return nil, err
		}
		s.sends = l
	}
	drops, ok := s.drops[p]
	if !ok {
		var err error
		if drops, err = readDrops(s.dropSource(p)); err != nil {
			return nil, err
		}
		s.drops[p] = drops
	}
	x, err := newProc(s.run, p, ProcOptions{Lookup: s.lookup, Sent: s.sent}, drops)
	if err != nil {
		return nil, err
	}
	c := &cursor{x: x}
	cs := append(s.procs[p], c)
	if len(cs) > keptCursors {
		cs = cs[1:]
	}
	s.procs[p] = cs
	return c, nil
}

// advance replays c's process up to at, skipping the state of the events
// up to skipTo, and returns the answer; nil and no error if at is an
// output whose input was skipped (c.cause says which).
func (s *States) advance(c *cursor, at trace.Ref, skipTo int64) (*StateAt, error) {
	a := &StateAt{From: c.x.Seq()}
	step, err := s.walk(c, at, skipTo)
	a.Replayed = c.x.Seq() - a.From
	if err != nil {
		c.err, c.stop = err, c.x.Seq()+1
		return nil, err
	}
	if !step.Input {
		if c.input == nil || c.input.Event.Ref() != step.Cause {
			c.cause = step.Cause.Seq
			return nil, nil
		}
		a.InputChanged = c.input.Changed
	}
	a.Step = step
	return a, nil
}

func (s *States) walk(c *cursor, at trace.Ref, skipTo int64) (*Step, error) {
	r, err := s.st.ProcEvents(s.run.ID, at.Proc, c.x.Seq()+1)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for {
		ev, err := r.Next()
		if err == io.EOF || err == nil && ev.Seq > at.Seq {
			return nil, fmt.Errorf("run %d has no event %v", s.run.ID, at)
		}
		if err != nil {
			return nil, err
		}
		if ev.Seq <= skipTo {
			c.input = nil
			if err := c.x.Skip(ev); err != nil {
				return nil, err
			}
			continue
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

// dropSource is a Source of the drop events of process p.
func (s *States) dropSource(p int) Source {
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

package replay

import (
	"fmt"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// ProcOptions say how to replay one process of a run by itself.
type ProcOptions struct {
	// Lookup finds an algorithm by the name the run row gives.
	Lookup func(name string) *algo.Spec
	// Sent returns the send event of a message of the run (nil, nil if
	// the trace has none): a receive hands the process the message and
	// the clocks its send carries, and the replay of one process has not
	// met the sender's events.
	Sent func(msg int64) (*trace.Event, error)
	// Drops gives the drop events of the process (any other event it
	// gives is skipped), read once when the replay starts: a drop the
	// network made in the middle of a step is made again there, before
	// the step's later outputs. Nil: the process has none.
	Drops Source
}

// CutError says a process cannot be replayed up to an event because the
// run was cut short before it: a receive whose send its sender's recorder
// never wrote (it died), which the replay cannot deliver.
type CutError struct {
	At     trace.Ref // the first event the replay cannot reach
	Reason string
}

func (e *CutError) Error() string { return e.Reason }

// Proc replays one process of a run by itself, event by event, in its
// program order: what a process's machines do depends only on its own
// inputs, and the messages it receives are taken from their recorded
// sends (ProcOptions.Sent). Reaching the state after an event of one
// process so costs a walk over that process's earlier events, not over
// the run. Each event is checked against what the machines produce, as
// Run does; the first divergence ends the replay.
type Proc struct {
	rp *replayer
	p  *proc
}

// NewProc prepares the replay of process id of run. Its error is a
// *BadTraceError when the run cannot be replayed (imported, an algorithm
// this dmx does not have, no such process).
func NewProc(run trace.Run, id int, opt ProcOptions) (*Proc, error) {
	return newProc(run, id, opt, nil)
}

// newProc is NewProc with the process's drops already read (nil: read
// them from opt.Drops).
func newProc(run trace.Run, id int, opt ProcOptions, drops map[int64][]drop) (*Proc, error) {
	if run.Mode == "import" {
		return nil, bad("run %d was imported from another tool: replay needs a run dmx recorded (sim or udp), whose machines it can run again", run.ID)
	}
	if opt.Lookup == nil || opt.Sent == nil {
		return nil, fmt.Errorf("replay of P%d: no algorithm lookup or no lookup of sends", id)
	}
	plan, err := runner.PlanFromRun(run, opt.Lookup)
	if err != nil {
		return nil, &BadTraceError{err}
	}
	if id < 0 || id >= run.Nodes {
		return nil, bad("run %d has no process %d (it has %d)", run.ID, id, run.Nodes)
	}
	rp := &replayer{plan: plan, opt: Options{Lookup: opt.Lookup}, res: &Result{Run: run, PerProc: make([]int64, run.Nodes)},
		sends: map[int64]sent{}, sent: opt.Sent, drops: map[int64][]drop{}}
	for i := 0; i < run.Nodes; i++ {
		rp.procs = append(rp.procs, &proc{id: i, rp: rp, hist: runner.NewHistory(i)})
	}
	if drops != nil {
		rp.drops = drops
	} else if opt.Drops != nil {
		if rp.drops, err = readDrops(opt.Drops); err != nil {
			return nil, err
		}
	}
	return &Proc{rp: rp, p: rp.procs[id]}, nil
}

// Seq returns the sequence number of the last event replayed (0: none).
func (x *Proc) Seq() int64 { return x.p.hist.Last().Seq }

// Step replays the process's next recorded event, ev (its sequence number
// must follow Seq), and returns it with the process's state after it, as
// Options.Visit sees it (Index counts the events of this process). Once
// the replay fails (a divergence, a *CutError, a *BadTraceError) every
// later call returns that error.
func (x *Proc) Step(ev *trace.Event) (*Step, error) {
	if err := x.failed(); err != nil {
		return nil, err
	}
	if ev.Proc != x.p.id || ev.Seq != x.Seq()+1 {
		return nil, fmt.Errorf("replay of P%d: got %v after P%d#%d", x.p.id, ev, x.p.id, x.Seq())
	}
	var step *Step
	x.rp.opt.Visit = func(s *Step) bool { step = s; return true }
	x.rp.visit(ev, nil)
	x.rp.opt.Visit = nil
	if err := x.failed(); err != nil {
		return nil, err
	}
	if step != nil && !step.Input && x.p.stale {
		st := x.p.state()
		st.Lamport, st.VC = step.State.Lamport, step.State.VC
		step.State = st
	}
	return step, nil
}

// Skip replays the process's next recorded event as Step does, checking
// it, but without the machines' state before and after it (most of the
// cost of a step): for the events before the one whose state is wanted.
// The Step of an output whose input was skipped has the state right (the
// machines change only on inputs), but nothing of what the input changed.
func (x *Proc) Skip(ev *trace.Event) error {
	if err := x.failed(); err != nil {
		return err
	}
	if ev.Proc != x.p.id || ev.Seq != x.Seq()+1 {
		return fmt.Errorf("replay of P%d: got %v after P%d#%d", x.p.id, ev, x.p.id, x.Seq())
	}
	x.rp.quiet = true
	x.rp.visit(ev, nil)
	x.rp.quiet = false
	return x.failed()
}

// failed returns what ended the replay, if anything did.
func (x *Proc) failed() error {
	switch {
	case x.rp.err != nil:
		return x.rp.err
	case x.rp.res.Divergence != nil:
		return x.rp.res.Divergence
	}
	return nil
}

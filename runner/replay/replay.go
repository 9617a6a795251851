package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// Options say how to replay a run.
type Options struct {
	// Lookup finds an algorithm by the name the run row gives
	// (registry.Lookup).
	Lookup func(name string) *algo.Spec
	// Until, if set, ends the replay after this event.
	Until trace.Ref
	// Visit, if set, is called after every event of the run, in the
	// causal order of the replay, with the event and the state of its
	// process. It returns false to end the replay there.
	Visit func(*Step) bool
}

// Step is one event of the replay, as Options.Visit sees it.
type Step struct {
	Index int64       // 1 for the first event of the walk
	Event trace.Event // the recorded event (matched by the replay)
	// Input says the event is an input the replay fed the process's
	// machines; otherwise it is one of their outputs, that of Cause.
	Input bool
	Cause trace.Ref
	// State is the process after the event: the event's clocks and its
	// machines' state after the input the event belongs to.
	State ProcState
	// Changed is what the input changed in the machines' state (nothing
	// for an output: the machine changed when it took the input).
	Changed []Change
}

// ProcState is the state of a replayed process.
type ProcState struct {
	Lamport  uint64         `json:"lamport"`
	VC       trace.VC       `json:"vc"`
	Down     bool           `json:"down,omitempty"`
	Timers   []string       `json:"timers,omitempty"` // "resource/name" of the timers set
	Machines []MachineState `json:"machines"`
}

// MachineState is the state of one algorithm instance (algo.Inspector):
// Resource is "" for elections and multicast, which guard none.
type MachineState struct {
	Resource string          `json:"resource"`
	State    json.RawMessage `json:"state"`
}

// Change is one member of a machine's state that an input changed, with
// its JSON before and after (null when it was or became absent).
type Change struct {
	Resource string          `json:"resource"`
	Key      string          `json:"key"`
	Before   json.RawMessage `json:"before"`
	After    json.RawMessage `json:"after"`
}

// Result is what a replay found.
type Result struct {
	Run trace.Run
	// Events counts the recorded events the replay reproduced, in all and
	// per process (index = process id).
	Events  int64
	PerProc []int64
	// Divergence is the first event the machines did not reproduce; nil
	// if they reproduced every event replayed.
	Divergence *Divergence
	// Cut says the run was cut short (not complete): the replay went up
	// to the cut and what a process would have done after it is unknown.
	Cut bool
	// Stopped says the replay ended early, at Options.Until or because
	// Visit said so.
	Stopped bool
}

// Matches reports whether the replay reproduced every event it replayed.
func (r *Result) Matches() bool { return r.Divergence == nil }

// Divergence is where a replay and the recording part.
type Divergence struct {
	Proc int
	// Input is the input event whose handling diverged; nil if the
	// process had handled none yet.
	Input *trace.Event
	// Recorded is the event the trace has where the replay diverged; nil
	// if the trace has no more events of the process.
	Recorded *trace.Event
	// Replayed is what the machine produced there; nil if it produced
	// nothing more.
	Replayed *trace.Event
	// Reason says what differs, e.g. "lamport 12, replayed 11".
	Reason string
	// Before is the process's state before Input.
	Before ProcState
}

func (d *Divergence) Error() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "P%d diverges", d.Proc)
	if d.Input != nil {
		fmt.Fprintf(&b, " handling %v", d.Input)
	}
	fmt.Fprintf(&b, ": %s", d.Reason)
	return b.String()
}

// BadTraceError says the trace cannot be replayed at all: not a run dmx
// recorded, an algorithm this dmx does not have, a run row its events
// contradict, or a trace that breaks the event model.
type BadTraceError struct{ Err error }

func (e *BadTraceError) Error() string { return e.Err.Error() }
func (e *BadTraceError) Unwrap() error { return e.Err }

func bad(format string, args ...any) error {
	return &BadTraceError{fmt.Errorf(format, args...)}
}

// Source opens a reader of a run's events from the start: Run reads them
// twice (first for the drops a network fault made in the middle of a
// step, which the replay must make at the same point). A reader that is an
// io.Closer is closed after use.
type Source func() (trace.Reader, error)

// Events returns a Source of events in memory.
func Events(evs []trace.Event) Source {
	return func() (trace.Reader, error) { return &trace.SliceReader{Events: evs}, nil }
}

// Run replays one recorded run whose events src gives. Its error is a
// *BadTraceError when the trace cannot be replayed, or the reader's.
func Run(run trace.Run, src Source, opt Options) (*Result, error) {
	if run.Mode == "import" {
		return nil, bad("run %d was imported from another tool: replay needs a run dmx recorded (sim or udp), whose machines it can run again", run.ID)
	}
	if opt.Lookup == nil {
		return nil, errors.New("replay: no algorithm lookup")
	}
	plan, err := runner.PlanFromRun(run, opt.Lookup)
	if err != nil {
		return nil, &BadTraceError{err}
	}
	if run.Nodes < 1 || run.Nodes > analyze.MaxProcs {
		// A machine is made per process: a claim of 2,000,000,000 took
		// 14.8 GB. (A trace.Store checks claims against the events.)
		return nil, bad("run %d has %d processes", run.ID, run.Nodes)
	}
	rp := &replayer{plan: plan, opt: opt, res: &Result{Run: run, PerProc: make([]int64, run.Nodes)}, sends: map[int64]sent{}}
	for i := 0; i < run.Nodes; i++ {
		rp.procs = append(rp.procs, &proc{id: i, rp: rp, hist: runner.NewHistory(i)})
	}
	drops, err := readDrops(src)
	if err != nil {
		return nil, err
	}
	rp.drops = drops
	r, err := src()
	if err != nil {
		return nil, err
	}
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	// The nodes still up at the end stop: a machine that runs a program
	// (runner/exec) lets it go. What they record then is not compared.
	defer func() {
		for _, p := range rp.procs {
			if p.node != nil {
				p.node.Stop()
			}
		}
	}()
	_, werr := analyze.Walk(run, r, rp.visit)
	if rp.err != nil {
		return nil, rp.err
	}
	res := rp.res
	if werr != nil && res.Divergence == nil && !res.Stopped {
		var be *analyze.BrokenError
		if errors.As(werr, &be) {
			return nil, &BadTraceError{werr}
		}
		return nil, werr
	}
	if res.Divergence != nil || res.Stopped {
		return res, nil
	}
	res.Cut = !run.Complete
	for _, p := range rp.procs {
		if len(p.pending) == 0 || res.Cut {
			continue
		}
		ev := p.pending[0]
		res.Divergence = &Divergence{Proc: p.id, Input: p.inputEvent(), Replayed: &ev, Before: p.before,
			Reason: fmt.Sprintf("the machine produced %v, which the trace does not have (it ends at %v)", &ev, p.hist.Last())}
		break
	}
	return res, nil
}

// drop is a recorded drop event: a network fault discarded a copy of a
// message its process sent.
type drop struct {
	seq    int64
	fault  string
	resend bool
}

// readDrops reads the drop events of a run. A drop that the network made
// while its process was still handling an input (the sender's send and
// the drop are recorded in one step) must be made again at that point of
// the replay, before the rest of the step's outputs.
func readDrops(src Source) (map[int64][]drop, error) {
	r, err := src()
	if err != nil {
		return nil, err
	}
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	drops := map[int64][]drop{}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return drops, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read trace: %w", err)
		}
		if ev.Kind != trace.KindDrop {
			continue
		}
		d, err := ev.Drop()
		if err != nil {
			continue // the replay names it when it comes to it
		}
		drops[ev.Msg] = append(drops[ev.Msg], drop{ev.Seq, d.Fault, d.Resend})
	}
}

// sent is what a receive needs of its message's send: the clocks the
// sender stamped and the message it sent.
type sent struct {
	lamport uint64
	vc      trace.VC
	msg     algo.Msg
}

type replayer struct {
	drops map[int64][]drop // drop events by message id
	plan  runner.Plan
	opt   Options
	res   *Result
	procs []*proc
	sends map[int64]sent
	index int64
	done  bool  // stopped or diverged: the rest of the walk is ignored
	err   error // the trace cannot be replayed
	// sent, in a replay of one process (Proc), looks up the sends of the
	// messages it gets in the trace, in place of sends.
	sent func(msg int64) (*trace.Event, error)
	// quiet skips the state before and after each input (Proc.Skip):
	// what a replay that only goes forward to a later event needs not.
	quiet bool
}

// proc is one process of the replay.
type proc struct {
	id      int
	rp      *replayer
	node    *runner.Node // nil before its start and while it is down
	env     *env
	hist    *runner.History // its recorded events so far
	pending []trace.Event   // produced by the node, not yet met in the trace
	input   trace.Ref       // the input pending follows from
	inEv    trace.Event     // that input's event, its slices its own
	before  ProcState       // the state before input
	after   ProcState       // the state after input
	changed []Change
	stale   bool // before, after and changed are not those of input (quiet)
	down    bool
	origin  int64         // the run's origin of Input.Now, from the start event
	place   trace.Start   // where the node ran (its address and namespace), from the start event
	skew    time.Duration // the wall clock's offset (a skew fault), kept by restarts
}

// env is a process's runtime environment during a replay: its time is
// that of the recorded input, its timers and workload never fire (the
// trace says when they did), and what it records is kept for comparison.
type env struct {
	p    *proc
	wall int64
}

// Now and Wall are those of the recorded input, the node's skew taken
// off: the node adds it to the wall time of what it records.
func (e *env) Now() int64                               { return e.Wall() - e.p.origin }
func (e *env) Wall() int64                              { return e.wall - int64(e.p.skew) }
func (e *env) After(time.Duration, func()) runner.Timer { return noTimer{} }

// Transmit makes the drop the trace records right after the send of e, if
// there is one: the network made it before the sender's next output.
func (e *env) Transmit(env *runner.Envelope) {
	nd := e.p.node
	if nd == nil {
		return
	}
	for _, d := range e.p.rp.drops[env.ID] {
		if d.seq == nd.Seq()+1 {
			nd.Dropped(env, d.fault, d.resend)
		}
	}
}
func (e *env) Record(ev *trace.Event) {
	c := *ev
	c.VC = ev.VC.Clone()
	c.Detail = append([]byte(nil), ev.Detail...)
	e.p.pending = append(e.p.pending, c)
}

type noTimer struct{}

func (noTimer) Stop() {}

func (rp *replayer) visit(ev *trace.Event, _ *analyze.HB) {
	if rp.done {
		return
	}
	if ev.Proc < 0 || ev.Proc >= len(rp.procs) {
		rp.fail(bad("%v: no process %d in a run of %d", ev, ev.Proc, len(rp.procs)))
		return
	}
	if !ev.Kind.Known() {
		rp.fail(bad("%v: event kind %q is not one dmx records", ev, ev.Kind))
		return
	}
	p := rp.procs[ev.Proc]
	// A drop met while outputs are pending was made in the middle of a
	// step: the replay made it there too (env.Transmit).
	input := isInput(ev) && !(ev.Kind == trace.KindDrop && len(p.pending) > 0)
	if ev.Kind == trace.KindCrash && len(p.pending) > 0 {
		// Killed while it handled an input: the outputs it did not
		// record are lost with it.
		p.pending = nil
	}
	if len(p.pending) == 0 {
		if !input {
			rp.diverge(p, ev, nil, fmt.Sprintf("the trace has %v, but the machine produced nothing more after %v", ev, p.hist.Last()))
			return
		}
		if ok := rp.drive(p, ev); !ok {
			return
		}
	} else if input {
		head := p.pending[0]
		rp.diverge(p, ev, &head, fmt.Sprintf("the machine produced %v, but the trace has the input %v there", &head, ev))
		return
	}
	if ev.Kind != trace.KindCrash {
		head := p.pending[0]
		if why := differ(ev, &head); why != "" {
			rp.diverge(p, ev, &head, why)
			return
		}
		p.pending = p.pending[1:]
	}
	if ev.Kind == trace.KindSend && rp.sent == nil {
		m, _ := ev.Message()
		rp.sends[ev.Msg] = sent{ev.Lamport, ev.VC.Clone(), algo.Msg(m)}
	}
	p.hist.Add(ev, rp.plan.Spec.Kind == algo.Multicast)
	rp.index++
	rp.res.Events++
	rp.res.PerProc[p.id]++
	if rp.opt.Visit != nil {
		st := &Step{Index: rp.index, Event: *ev, Input: input, Cause: p.input, State: p.after}
		st.Event.VC, st.Event.Detail = ev.VC.Clone(), append([]byte(nil), ev.Detail...)
		st.State.Lamport, st.State.VC = ev.Lamport, st.Event.VC
		if input {
			st.Changed = p.changed
		}
		if !rp.opt.Visit(st) {
			rp.stop()
			return
		}
	}
	if rp.opt.Until != (trace.Ref{}) && ev.Ref() == rp.opt.Until {
		rp.stop()
	}
}

func (rp *replayer) stop() {
	rp.done = true
	rp.res.Stopped = true
}

func (rp *replayer) fail(err error) {
	rp.done = true
	rp.err = err
}

func (rp *replayer) diverge(p *proc, rec, rep *trace.Event, why string) {
	d := &Divergence{Proc: p.id, Input: p.inputEvent(), Reason: why}
	if !p.stale {
		d.Before = p.before
	}
	if rec != nil {
		c := *rec
		c.VC = rec.VC.Clone()
		c.Detail = append([]byte(nil), rec.Detail...)
		d.Recorded = &c
	}
	if rep != nil {
		c := *rep
		d.Replayed = &c
	}
	rp.res.Divergence = d
	rp.done = true
}

// isInput reports whether ev is an input of its process: an event the
// runtime records before (or instead of) handing something to a machine.
func isInput(ev *trace.Event) bool {
	switch ev.Kind {
	case trace.KindStart, trace.KindReceive, trace.KindTimeout, trace.KindCSRequest, trace.KindCSExit,
		trace.KindCrash, trace.KindRecover, trace.KindStop, trace.KindFault, trace.KindDrop:
		// Fault and drop events are the runtime's, at the driver's word:
		// the replay gives it the same word.
		return true
	case trace.KindInternal:
		switch d, _ := ev.Details(); d := d.(type) {
		case trace.Multicast:
			return true // a multicast the workload asked for
		case trace.Note:
			return d.Msg != 0 // the runtime ignored a delivered message
		}
	}
	return false
}

// drive feeds the input ev to p's machines. It reports false if the replay
// ended there (a divergence, or a trace it cannot replay).
func (rp *replayer) drive(p *proc, ev *trace.Event) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			rp.fail(bad("%v: the algorithm failed on this input (a bug in dmx, please report it): %v", ev, r))
			ok = false
		}
	}()
	p.stale = rp.quiet
	if !rp.quiet {
		p.before = p.state()
	}
	p.input = ev.Ref()
	p.inEv = *ev
	p.inEv.VC, p.inEv.Detail = ev.VC.Clone(), append([]byte(nil), ev.Detail...)
	p.changed = nil
	if p.env != nil {
		p.env.wall = ev.Wall
	}
	var err error
	switch ev.Kind {
	case trace.KindStart:
		err = rp.start(p, ev)
	case trace.KindRecover:
		err = rp.restart(p, ev)
	case trace.KindCrash:
		err = rp.crash(p, ev)
	default:
		if p.node == nil {
			what := "before it started"
			if p.down {
				what = "while it was down"
			}
			err = fmt.Errorf("%v happens %s", ev, what)
			break
		}
		err = rp.input(p, ev)
	}
	if err != nil {
		rp.diverge(p, ev, nil, err.Error())
		return false
	}
	if rp.done {
		return false
	}
	if !rp.quiet {
		p.after = p.state()
		if ev.Kind != trace.KindStart && ev.Kind != trace.KindRecover {
			// A start or a recovery makes the machines: nothing changed.
			p.changed = changes(p.before, p.after)
		}
	}
	if ev.Kind != trace.KindCrash && len(p.pending) == 0 {
		rp.diverge(p, ev, nil, fmt.Sprintf("the machine recorded nothing for the input %v", ev))
		return false
	}
	return true
}

func (rp *replayer) setup(p *proc) runner.NodeSetup {
	pl := rp.plan
	return runner.NodeSetup{ID: p.id, N: pl.N, Spec: pl.Spec, Params: pl.Params, Seed: pl.Seed, Workload: pl.Workload, Origin: p.origin, Addr: p.place.Addr, Netns: p.place.Netns}
}

func (rp *replayer) start(p *proc, ev *trace.Event) error {
	if p.node != nil || p.down || p.hist.Last().Seq > 0 {
		return fmt.Errorf("%v: the process had started already", ev)
	}
	d, err := ev.Start()
	if err != nil {
		rp.fail(&BadTraceError{err})
		return nil
	}
	if d.Algorithm != rp.plan.Spec.Name || d.N != rp.plan.N {
		name := d.Algorithm
		if name == "" {
			name = "no algorithm"
		}
		rp.fail(bad("%v says %s with %d processes, the run row %s with %d: not a run this trace's row describes", ev, name, d.N, rp.plan.Spec.Name, rp.plan.N))
		return nil
	}
	p.origin = d.Origin
	p.place = d
	p.env = &env{p: p, wall: ev.Wall}
	nd, err := runner.NewNode(rp.setup(p), p.env)
	if err != nil {
		rp.fail(&BadTraceError{err})
		return nil
	}
	p.node = nd
	nd.Start()
	return nil
}

// crash takes the process down. The crash event is the runtime's (or the
// launcher's, for a killed process): it follows from the last event, and
// the machines lose everything but what they persisted.
func (rp *replayer) crash(p *proc, ev *trace.Event) error {
	if p.down {
		return fmt.Errorf("%v: the process was down already", ev)
	}
	// A process killed before it recorded its start has only its crash
	// (the runner's), and may be restarted from it.
	want := p.hist.Crash(ev.Wall, rp.plan.N, trace.Crash{})
	want.Detail = ev.Detail // why it crashed is the driver's to say
	if why := differ(ev, &want); why != "" {
		return errors.New(why)
	}
	if p.node != nil {
		// Its machines go as a crash takes them (a program is killed);
		// the crash it records is the one the trace has.
		c, _ := ev.Crash()
		p.node.Crash(c)
		p.pending = nil
	}
	p.node, p.down = nil, true
	return nil
}

// crashReason is the reason a crash event gives, for the replayed node's own.
// restart brings a crashed process back as a new incarnation that resumes
// from its recorded history, as dmx run's launcher does (the simulator's
// Recover gives the same machines the same inputs).
func (rp *replayer) restart(p *proc, ev *trace.Event) error {
	if !p.down {
		return fmt.Errorf("%v: the process was not down", ev)
	}
	d, err := ev.Crash()
	if err != nil {
		return err
	}
	if d.Amnesia {
		p.hist.Forget()
	}
	s := rp.setup(p)
	w := rp.plan.Workload
	s.Resume = p.hist.Resume(w.For(p.id))
	s.Resume.Amnesia = d.Amnesia
	p.env = &env{p: p, wall: ev.Wall}
	nd, err := runner.NewNode(s, p.env)
	if err != nil {
		rp.fail(&BadTraceError{err})
		return nil
	}
	p.node, p.down = nd, false
	nd.SetSkew(p.skew)
	nd.Start()
	return nil
}

// input hands p's running node the input ev records.
func (rp *replayer) input(p *proc, ev *trace.Event) error {
	nd := p.node
	switch ev.Kind {
	case trace.KindInternal:
		if d, _ := ev.Details(); d != nil {
			if m, ok := d.(trace.Multicast); ok {
				nd.Request(m.Resource)
				return nil
			}
		}
		fallthrough // the runtime's note on a message it ignored
	case trace.KindReceive:
		s, err := rp.sentOf(ev)
		if err != nil {
			return err
		}
		if ev.Peer < 0 || ev.Peer >= rp.plan.N {
			return fmt.Errorf("%v: sender P%d is not in the run", ev, ev.Peer)
		}
		nd.Receive(&runner.Envelope{ID: ev.Msg, From: ev.Peer, To: p.id, Lamport: s.lamport, VC: s.vc.Clone(), Msg: s.msg})
		return nil
	case trace.KindTimeout:
		d, err := ev.Timeout()
		if err != nil {
			return err
		}
		if !slices.Contains(nd.Armed(), runner.TimerRef{Resource: ev.Resource, Name: d.Timer}) {
			return fmt.Errorf("%v: P%d has no timer %q set on %q", ev, p.id, d.Timer, ev.Resource)
		}
		nd.Fire(ev.Resource, d.Timer)
		return nil
	case trace.KindCSRequest:
		nd.Request(ev.Resource)
		return nil
	case trace.KindCSExit:
		nd.Release(ev.Resource)
		return nil
	case trace.KindFault:
		d, err := ev.Fault()
		if err != nil {
			return err
		}
		if d.Phase == trace.FaultStart {
			if fs, err := runner.ParseFaults(d.Fault); err == nil && len(fs) == 1 && fs[0].Kind == runner.FaultSkew {
				// The wall clock is set off from here on, restarts
				// included.
				p.skew = fs[0].Skew
				nd.SetSkew(p.skew)
			}
		}
		nd.RecordFault(d)
		return nil
	case trace.KindDrop:
		d, err := ev.Drop()
		if err != nil {
			return err
		}
		s, err := rp.sentOf(ev)
		if err != nil {
			return err
		}
		nd.Dropped(&runner.Envelope{ID: ev.Msg, From: p.id, To: ev.Peer, Lamport: s.lamport, VC: s.vc.Clone(), Msg: s.msg}, d.Fault, d.Resend)
		return nil
	case trace.KindStop:
		nd.Stop()
		return nil
	}
	return fmt.Errorf("%v is no input dmx knows", ev)
}

// msgName names the message ev sends, receives or drops as a reader says
// it, "P1's message 3" (trace.MsgName), not by its id, 4294967299: its
// sender is ev's peer for a receive, else ev's process.
func msgName(ev *trace.Event) string {
	if ev.Kind == trace.KindReceive {
		return trace.MsgName(ev.Msg, ev.Peer)
	}
	return trace.MsgName(ev.Msg, ev.Proc)
}

// sentOf returns the send of the message ev receives or drops: from the
// sends the walk met, or in a replay of one process, from the trace.
func (rp *replayer) sentOf(ev *trace.Event) (sent, error) {
	if rp.sent == nil {
		s, ok := rp.sends[ev.Msg]
		if !ok {
			return s, fmt.Errorf("%v: %s was never sent", ev, msgName(ev))
		}
		return s, nil
	}
	sev, err := rp.sent(ev.Msg)
	if err != nil {
		rp.fail(fmt.Errorf("%v: read the send of %s: %w", ev, msgName(ev), err))
		return sent{}, err
	}
	if sev == nil {
		if !rp.res.Run.Complete {
			// The sender's recorder died before it wrote the send:
			// the run ends in a cut here for this process.
			rp.fail(&CutError{At: ev.Ref(), Reason: fmt.Sprintf("%v receives %s, whose send the trace does not hold (the run was cut short: %s)", ev, msgName(ev), orStatus(rp.res.Run.Status))})
		} else {
			rp.fail(bad("%v: %s was never sent", ev, msgName(ev)))
		}
		return sent{}, rp.err
	}
	m, _ := sev.Message()
	return sent{sev.Lamport, sev.VC.Clone(), algo.Msg(m)}, nil
}

func orStatus(status string) string {
	if status == "" || status == "running" {
		return "not complete"
	}
	return status
}

// inputEvent returns a copy of the input the process handles, or nil if
// it has handled none.
func (p *proc) inputEvent() *trace.Event {
	if p.input.Seq == 0 {
		return nil
	}
	c := p.inEv
	return &c
}

// state returns the process's state now.
func (p *proc) state() ProcState {
	var st ProcState
	if p.node == nil {
		st.Down = p.down
		last := p.hist.Last()
		st.Lamport, st.VC = last.Lamport, last.VC.Clone()
		return st
	}
	st.Lamport, st.VC = p.node.Lamport(), p.node.VC().Clone()
	for _, t := range p.node.Armed() {
		st.Timers = append(st.Timers, t.Resource+"/"+t.Name)
	}
	for _, r := range p.node.Resources() {
		ms := MachineState{Resource: r, State: json.RawMessage("null")}
		if in, ok := p.node.Machine(r).(algo.Inspector); ok {
			if b, err := json.Marshal(in.State()); err == nil {
				ms.State = b
			}
		}
		st.Machines = append(st.Machines, ms)
	}
	return st
}

// changes lists the members of the machines' states that differ between
// before and after.
func changes(before, after ProcState) []Change {
	var out []Change
	old := map[string]map[string]json.RawMessage{}
	for _, m := range before.Machines {
		old[m.Resource] = members(m.State)
	}
	for _, m := range after.Machines {
		was, now := old[m.Resource], members(m.State)
		for _, k := range sortedKeys(was, now) {
			a, b := was[k], now[k]
			if bytes.Equal(a, b) {
				continue
			}
			out = append(out, Change{Resource: m.Resource, Key: k, Before: orNull(a), After: orNull(b)})
		}
	}
	return out
}

func orNull(b json.RawMessage) json.RawMessage {
	if b == nil {
		return json.RawMessage("null")
	}
	return b
}

// members splits a state's JSON object into its members.
func members(state json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(state, &m) != nil {
		return map[string]json.RawMessage{}
	}
	return m
}

// differ says how the replayed event got differs from the recorded one
// want, or "" if they are the same (wall time apart).
func differ(want, got *trace.Event) string {
	name := want.String()
	switch {
	case want.Seq != got.Seq:
		return fmt.Sprintf("%s: the machine produced %v instead (sequence number %d)", name, got, got.Seq)
	case want.Kind != got.Kind:
		return fmt.Sprintf("%s: the machine produced %v instead", name, got)
	case want.Resource != got.Resource:
		return fmt.Sprintf("%s: resource %q, replayed %q", name, want.Resource, got.Resource)
	case want.Peer != got.Peer:
		return fmt.Sprintf("%s: peer %d, replayed %d", name, want.Peer, got.Peer)
	case want.MsgType != got.MsgType:
		return fmt.Sprintf("%s: message type %q, replayed %q", name, want.MsgType, got.MsgType)
	case want.Msg != got.Msg:
		return fmt.Sprintf("%s: %s, replayed %s", name, msgName(want), msgName(got))
	case want.Lamport != got.Lamport:
		return fmt.Sprintf("%s: Lamport clock %d, replayed %d", name, want.Lamport, got.Lamport)
	case !vcEqual(want.VC, got.VC):
		return fmt.Sprintf("%s: vector clock %v, replayed %v", name, want.VC, got.VC)
	case !sameDetail(want, got):
		return fmt.Sprintf("%s: detail %s, replayed %s", name, orNone(want.Detail), orNone(got.Detail))
	}
	return ""
}

func vcEqual(a, b trace.VC) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sameDetail compares details byte for byte, and else by what they say:
// another writer may order keys or space them differently.
func sameDetail(want, got *trace.Event) bool {
	if bytes.Equal(want.Detail, got.Detail) {
		return true
	}
	a, errA := want.Details()
	b, errB := got.Details()
	return errA == nil && errB == nil && a != nil && reflect.DeepEqual(a, b)
}

func orNone(b []byte) string {
	if len(b) == 0 {
		return "none"
	}
	return string(b)
}

// sortedKeys returns the keys of a and b, each once, sorted.
func sortedKeys(a, b map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

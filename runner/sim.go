package runner

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// Recorder receives the events of a run. Record must not keep ev or its
// slices after it returns.
type Recorder interface {
	Record(ev *trace.Event) error
}

// RecorderFunc is a function that records events: a Recorder.
type RecorderFunc func(ev *trace.Event) error

// Record implements Recorder.
func (f RecorderFunc) Record(ev *trace.Event) error { return f(ev) }

// Collector is a Recorder that keeps every event in memory (tests, small
// runs).
type Collector struct{ Events []trace.Event }

// Record implements Recorder.
func (c *Collector) Record(ev *trace.Event) error {
	e := *ev
	e.VC = ev.VC.Clone()
	if ev.Detail != nil {
		e.Detail = append([]byte(nil), ev.Detail...)
	}
	c.Events = append(c.Events, e)
	return nil
}

// SimHooks are what a caller of the simulator may add to a plan that is
// not part of the run's description: a way to stop it, and for tests a
// choice of the process a fault hits.
type SimHooks struct {
	// Stop, if not nil, cuts the run short (marked incomplete) once it is
	// closed: Ctrl-C under dmx sim.
	Stop <-chan struct{}
	// Aim, if not nil, picks the process that a crash, pause or recover
	// Plan.Faults[i] hits when it is due, in place of its Proc (a negative
	// result skips the fault): tests aim crashes at a process chosen from
	// the run's state, such as a random live one.
	Aim func(i int, f Fault) int
	// MaxEvents, if > 0, cuts the run short (marked incomplete) once it
	// has recorded this many events.
	MaxEvents int64
}

// SimResult says how a simulated run ended.
type SimResult struct {
	Complete bool   // the run ended by itself, not by the time limit
	Status   string // human summary
	Events   int64  // events recorded
	End      time.Duration
	// Notes are the faults that did not apply, and why (each also an event
	// of the trace).
	Notes []string
}

// Simulate carries out p (a DriverSim plan; no Driver means one) on a
// deterministic simulated network: the same seed gives the same events in
// the same order. Time is simulated: a run of an hour takes milliseconds.
// stop, if not nil, cuts the run short (marked incomplete) once it is
// closed: Ctrl-C under dmx sim.
func Simulate(p Plan, rec Recorder, stop <-chan struct{}) (SimResult, error) {
	return SimulateWith(p, rec, SimHooks{Stop: stop})
}

// SimulateWith is Simulate with hooks.
func SimulateWith(p Plan, rec Recorder, h SimHooks) (SimResult, error) {
	if p.driver() != DriverSim {
		return SimResult{}, fmt.Errorf("simulate a %s plan: the simulator carries out %s plans", p.Driver, DriverSim)
	}
	if err := p.Validate(); err != nil {
		return SimResult{}, err
	}
	if err := p.CheckFaults(SimApplies); err != nil {
		return SimResult{}, err
	}
	if len(p.Schedule) > 0 {
		return simulateSchedule(p, rec)
	}
	s, err := newSim(p.WithDefaults(), rec, h)
	if err != nil {
		return SimResult{}, err
	}
	res, err := s.run(h)
	if err != nil || s.err != nil {
		return res, cmp.Or(err, s.err)
	}
	s.inj.Finish()
	for _, nd := range s.nodes {
		nd.Stop()
	}
	if s.err != nil {
		return res, s.err
	}
	if res.Status == "" {
		res.Status = s.endStatus()
	}
	res.Events, res.End, res.Notes = s.events, time.Duration(s.now), s.notes
	return res, nil
}

// newSim builds the simulation of p (with its defaults): its network, its
// nodes, its fault schedule and, for an election, its end.
func newSim(p Plan, rec Recorder, h SimHooks) (*sim, error) {
	s := &sim{plan: p, rec: rec, net: rand.New(rand.NewPCG(p.Seed, streamNet))}
	s.lastArrival = make([]int64, p.N*p.N)
	s.paused, s.held, s.inc = make([]bool, p.N), make([][]*simItem, p.N), make([]int, p.N)
	for _, f := range p.Faults {
		if f.Network() || p.Raw() {
			// Messages go through the fault layer and the model of the
			// transport; a plan without network faults keeps the plain
			// channels (and its traces).
			s.netf = NewNetFaults(p.Faults, rand.New(rand.NewPCG(p.Seed, StreamFault)))
			s.chans = make([]simChan, p.N*p.N)
			break
		}
	}
	if p.Raw() && s.netf == nil {
		s.netf = NewNetFaults(nil, nil)
		s.chans = make([]simChan, p.N*p.N)
	}
	for i := 0; i < p.N; i++ {
		env := &simEnv{s: s, id: i}
		nd, err := NewNode(NodeSetup{ID: i, N: p.N, Spec: p.Spec, Params: p.Params, Seed: p.Seed, Workload: p.Workload}, env)
		if err != nil {
			return nil, err
		}
		nd.OnDone = s.progress
		s.nodes = append(s.nodes, nd)
	}
	s.inj = NewInjector(p, s)
	s.inj.aimHook = h.Aim
	for _, st := range s.inj.Steps() {
		s.push(&simItem{at: int64(st.At), node: -1, f: func() { st.Do(); s.progress() }})
	}
	if p.Spec.Kind == algo.Election {
		s.push(&simItem{at: int64(p.Duration), node: -1, stop: true})
	}
	return s, nil
}

// run starts the nodes and carries out what comes due, in time order,
// until the queue is empty, the run's end comes, a limit cuts it short or
// h.Stop interrupts it.
func (s *sim) run(h SimHooks) (SimResult, error) {
	p := s.plan
	for _, nd := range s.nodes {
		nd.Start()
	}
	res := SimResult{Complete: true}
	for steps := 0; s.q.Len() > 0 && s.err == nil; steps++ {
		if h.Stop != nil && steps%256 == 0 {
			select {
			case <-h.Stop:
				res.Complete, res.Status = false, "interrupted"
				return res, nil
			default:
			}
		}
		it := heap.Pop(&s.q).(*simItem)
		if it.dead {
			continue
		}
		if it.node >= 0 && s.paused[it.node] {
			// A paused process does nothing: what is due to it waits
			// until it resumes.
			s.held[it.node] = append(s.held[it.node], it)
			continue
		}
		if h.MaxEvents > 0 && s.events >= h.MaxEvents {
			res.Complete = false
			res.Status = fmt.Sprintf("cut short: the most events allowed (%d) reached", h.MaxEvents)
			return res, nil
		}
		if it.at > int64(p.Sim.Limit) {
			res.Complete = false
			res.Status = fmt.Sprintf("cut short: simulated time limit %v reached", p.Sim.Limit)
			s.now = int64(p.Sim.Limit)
			return res, nil
		}
		s.now = it.at
		if it.stop && s.netf != nil && s.stopping && s.quietAt() > s.now {
			// Under network faults the last messages may still be on
			// their way: the run ends once nothing happened for the
			// linger (as under dmx run; five lingers at most, for a token
			// circulates for ever) and no message waits to be sent again
			// (twenty lingers at most).
			it.at = s.quietAt()
			s.push(it)
			continue
		}
		if it.stop {
			return res, nil
		}
		it.f()
		for _, nd := range s.nodes {
			if err := nd.Err(); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// endStatus is the status of a run that ended by itself.
func (s *sim) endStatus() string {
	unfinished, down := 0, []string{}
	for _, nd := range s.nodes {
		switch {
		case nd.Done():
		case nd.Crashed():
			down = append(down, fmt.Sprintf("P%d", nd.ID))
		default:
			unfinished++
		}
	}
	return EndStatus(s.plan.Spec.Kind, time.Duration(s.now), unfinished, len(s.nodes), down)
}

type sim struct {
	plan        Plan // with its defaults
	rec         Recorder
	net         *rand.Rand
	nodes       []*Node
	q           simQueue
	now         int64
	seq         uint64
	lastArrival []int64 // per (from, to): FIFO channels
	events      int64
	err         error
	inj         *Injector
	stopping    bool
	doneAt      int64    // when every workload was done
	lastEvent   int64    // when the last event was recorded
	resending   int      // messages waiting to be sent again (simnet.go)
	notes       []string // faults not applied

	// netf is the network fault layer; with it, messages take the model
	// of the transport (chans, per (from, to)). nil: plain channels.
	netf  *NetFaults
	chans []simChan
	inc   []int // each process's incarnation: bumped by a crash

	paused []bool
	held   [][]*simItem // what came due to each paused process
}

// EndStatus says how a run that ended by itself ended: an election ran
// its time; the workloads finished, or nothing more could happen with
// some unfinished; down names the processes that ended the run crashed
// without finishing theirs.
func EndStatus(kind algo.Kind, ran time.Duration, unfinished, n int, down []string) string {
	switch {
	case kind == algo.Election:
		return fmt.Sprintf("ran for %v", ran)
	case unfinished == 0 && len(down) == 0:
		return "every workload finished"
	case unfinished == 0:
		return fmt.Sprintf("the live nodes finished their workloads; %s did not: crashed", strings.Join(down, ", "))
	}
	s := fmt.Sprintf("nothing more can happen, but %d of %d nodes did not finish their workload", unfinished, n)
	if len(down) > 0 {
		s += fmt.Sprintf(" (and %s crashed without finishing)", strings.Join(down, ", "))
	}
	return s
}

// progress ends the run (after the linger) once every node is done or down
// and no fault is still to come.
func (s *sim) progress() {
	if s.stopping || s.inj.Waiting() || s.plan.Spec.Kind == algo.Election {
		return
	}
	for _, nd := range s.nodes {
		if !nd.Done() && !nd.Crashed() {
			return
		}
	}
	s.stopping, s.doneAt = true, s.now
	s.push(&simItem{at: s.now + int64(s.plan.Sim.Linger), node: -1, stop: true})
}

// quietAt is when a run with network faults may stop: a linger after its
// last event, later while a message waits to be sent again, but at most
// twenty lingers after its workloads were done.
func (s *sim) quietAt() int64 {
	linger := int64(s.plan.Sim.Linger)
	at := min(s.lastEvent+linger, s.doneAt+5*linger)
	if s.resending > 0 {
		at = max(at, s.now+linger)
	}
	return min(at, s.doneAt+20*linger)
}

// The simulator's side of the faults (FaultDriver): the injector decides
// what happens when, these carry it out on the simulated processes.

func (s *sim) Elapsed() time.Duration { return time.Duration(s.now) }

func (s *sim) After(d time.Duration, f func()) {
	s.push(&simItem{at: s.now + int64(d), node: -1, f: func() { f(); s.progress() }})
}

func (s *sim) Up(p int) bool { return s.nodes[p].started && !s.nodes[p].Crashed() }

func (s *sim) Crash(p int, f *Fault) {
	// The fault and how the process ended, as dmx run records them
	// ({"fault":"crash:leader@600ms","reason":"killed by SIGKILL"}).
	s.nodes[p].Crash(trace.Crash{Fault: f.String(), Reason: "stopped by the simulator"})
	s.inc[p]++
	if s.chans != nil {
		// Its channels start afresh, both ways (what was on them is stale).
		for q := 0; q < s.plan.N; q++ {
			s.chans[p*s.plan.N+q], s.chans[q*s.plan.N+p] = simChan{}, simChan{}
		}
	}
	// A crash ends a pause: what waited for the process dies with it.
	s.paused[p], s.held[p] = false, nil
}

func (s *sim) Recover(p int, f *Fault) {
	if f.Amnesia {
		s.nodes[p].Forget()
	}
	s.nodes[p].Recover()
	if s.netf.Any() {
		// Recording a fault's start again: this incarnation is under it.
		for _, a := range s.netf.active {
			if s.netf.Affects(a.Index, a.Proc, p, s.plan.N) {
				s.nodes[p].FaultEvent(s.plan.Faults[a.Index].String(), trace.FaultStart, "")
			}
		}
	}
}

// SimApplies is the simulator's word on a fault (Plan.CheckFaults): it
// carries out every kind of the language, process and clock faults in
// Process, network faults through its model of the transport.
func SimApplies(f *Fault) error {
	switch f.Kind {
	case FaultCrash, FaultRecover, FaultPause, FaultSkew:
		return nil
	}
	if f.Kind.Target() == TargetNetwork {
		return nil
	}
	return fmt.Errorf("the simulator cannot apply %s faults", f.Kind)
}

// Process carries out a pause or a skew on p.
func (s *sim) Process(p int, f *Fault) {
	switch f.Kind {
	case FaultPause:
		s.pause(p, f)
	case FaultSkew:
		s.nodes[p].SetSkew(f.Skew)
		s.nodes[p].FaultEvent(f.String(), trace.FaultStart, "")
	default:
		s.NotApplied(f, "the simulator cannot apply it")
	}
}

// pause stops p for f.End-f.At: what comes due for it meanwhile is held,
// and happens when it resumes.
func (s *sim) pause(p int, f *Fault) {
	spec := f.String()
	s.nodes[p].FaultEvent(spec, trace.FaultStart, "")
	s.paused[p] = true
	inc := s.inc[p]
	s.push(&simItem{at: s.now + int64(f.End-f.At), node: -1, f: func() {
		if !s.paused[p] || s.inc[p] != inc {
			return // crashed meanwhile
		}
		s.paused[p] = false
		s.nodes[p].FaultEvent(spec, trace.FaultEnd, "")
		// What came due meanwhile happens now, in the order it came due.
		for _, it := range s.held[p] {
			it.at = s.now
			s.push(it)
		}
		s.held[p] = nil
	}})
}

func (s *sim) NetStart(i, proc int) { s.netPhase(i, proc, trace.FaultStart) }

func (s *sim) NetEnd(i int) {
	proc := -1
	for _, a := range s.netf.active {
		if a.Index == i {
			proc = a.Proc
		}
	}
	s.netPhase(i, proc, trace.FaultEnd)
	s.netf.End(i)
}

// netPhase records fault i's start or end at every live process it acts on.
func (s *sim) netPhase(i, proc int, phase string) {
	if phase == trace.FaultStart {
		s.netf.Start(i, proc)
	}
	spec := s.plan.Faults[i].String()
	for p, nd := range s.nodes {
		if s.netf.Affects(i, proc, p, s.plan.N) {
			nd.FaultEvent(spec, phase, "")
		}
	}
}

func (s *sim) NotApplied(f *Fault, reason string) {
	s.notes = append(s.notes, FaultNote(f, reason))
	for p, nd := range s.nodes {
		if s.Up(p) && !nd.stopped {
			nd.FaultEvent(f.String(), trace.FaultNotApplied, reason)
			return
		}
	}
}

func (s *sim) push(it *simItem) {
	s.seq++
	it.seq = s.seq
	heap.Push(&s.q, it)
}

type simEnv struct {
	s  *sim
	id int
}

func (e *simEnv) Now() int64  { return e.s.now }
func (e *simEnv) Wall() int64 { return e.s.now }

func (e *simEnv) After(d time.Duration, f func()) Timer {
	it := &simItem{at: e.s.now + int64(d), node: e.id, f: f}
	e.s.push(it)
	return it
}

func (e *simEnv) Transmit(env *Envelope) {
	s := e.s
	if s.netf != nil {
		s.transmit(env)
		return
	}
	at := s.now + int64(s.plan.Sim.Delay.Draw(s.net))
	if !s.plan.Sim.Reorder {
		ch := env.From*s.plan.N + env.To
		if at < s.lastArrival[ch] {
			at = s.lastArrival[ch]
		}
		s.lastArrival[ch] = at
	}
	to := s.nodes[env.To]
	s.push(&simItem{at: at, node: env.To, f: func() { to.Receive(env) }})
}

func (e *simEnv) Record(ev *trace.Event) {
	if e.s.err != nil {
		return
	}
	e.s.inj.Observe(ev)
	e.s.events++
	e.s.lastEvent = e.s.now
	if err := e.s.rec.Record(ev); err != nil {
		e.s.err = errors.Join(fmt.Errorf("record %s", ev), err)
	}
}

type simItem struct {
	at   int64
	seq  uint64 // ties broken by scheduling order: deterministic
	node int    // the process it happens at (held while that one is paused); -1: none
	f    func()
	stop bool
	dead bool
	idx  int
}

// Stop implements Timer.
func (it *simItem) Stop() { it.dead = true }

type simQueue []*simItem

func (q simQueue) Len() int { return len(q) }
func (q simQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q simQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i]; q[i].idx = i; q[j].idx = j }
func (q *simQueue) Push(x any)   { it := x.(*simItem); it.idx = len(*q); *q = append(*q, it) }
func (q *simQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// simulateSchedule carries out a plan's schedule step by step (a World).
func simulateSchedule(p Plan, rec Recorder) (SimResult, error) {
	w, err := NewWorld(p, rec)
	if err != nil {
		return SimResult{}, err
	}
	for _, st := range p.Schedule {
		if err := w.Apply(st); err != nil {
			return SimResult{Status: "failed: " + err.Error()}, fmt.Errorf("schedule: %w", err)
		}
	}
	complete, err := w.Finish()
	res := SimResult{Complete: complete, End: time.Duration(w.now), Events: w.Events()}
	res.Status = fmt.Sprintf("the schedule's %d steps done", len(p.Schedule))
	if !complete {
		res.Status = fmt.Sprintf("cut short: the schedule ends after %d steps, where more could happen", len(p.Schedule))
	}
	return res, err
}

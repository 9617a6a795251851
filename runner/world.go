package runner

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/deep"
	"github.com/dmxlab/dmx/trace"
)

// StepKind is what a Step of a World does.
type StepKind string

// The kinds of steps.
const (
	StepDeliver StepKind = "deliver" // the message at Index of the channel From->Proc arrives (lost if Proc is down)
	StepTimer   StepKind = "timer"   // Proc's machine timer Timer on Resource fires
	StepRequest StepKind = "request" // Proc's workload asks for Resource (a multicast algorithm: multicasts)
	StepRelease StepKind = "release" // Proc leaves the critical section of Resource
	StepCrash   StepKind = "crash"   // Proc crashes
	StepRecover StepKind = "recover" // Proc recovers
	StepLose    StepKind = "lose"    // the message at Index of the channel From->Proc is lost (raw channels; its sender records the drop)
)

// Step is one thing that happens in a World: the unit of a schedule. Its
// text form (String, ParseStep) is what a scenario's "schedule" lists,
// what dmx explore prints of a counterexample, and what the algorithms'
// interaction scripts are written in (runner/algotest):
//
//	deliver P0>P2       the oldest message in flight from P0 to P2 arrives
//	deliver P0>P2 #1    the one after it (channels that reorder)
//	timer P1 cs backoff machine timer "backoff" of P1's instance on cs fires ("-": no resource)
//	request P1 cs       P1's workload asks for cs
//	release P1 cs       P1 leaves cs
//	crash P1            P1 crashes
//	recover P1          P1 recovers
//	lose P0>P2          the oldest message in flight from P0 to P2 is lost
//	lose P0>P2 #1       the one after it
type Step struct {
	Kind     StepKind
	Proc     int    // where it happens; for a delivery or a loss, the receiver
	From     int    // deliver, lose: the sender
	Index    int    // deliver, lose: the message's position among those in flight on its channel, oldest first
	Resource string // request, release, timer
	Timer    string // timer
}

func (s Step) String() string {
	switch s.Kind {
	case StepDeliver, StepLose:
		if s.Index > 0 {
			return fmt.Sprintf("%s P%d>P%d #%d", s.Kind, s.From, s.Proc, s.Index)
		}
		return fmt.Sprintf("%s P%d>P%d", s.Kind, s.From, s.Proc)
	case StepTimer:
		r := s.Resource
		if r == "" {
			r = "-"
		}
		return fmt.Sprintf("timer P%d %s %s", s.Proc, r, s.Timer)
	case StepRequest, StepRelease:
		return fmt.Sprintf("%s P%d %s", s.Kind, s.Proc, s.Resource)
	}
	return fmt.Sprintf("%s P%d", s.Kind, s.Proc)
}

// ParseStep reads a step in the form String writes.
func ParseStep(text string) (Step, error) {
	f := strings.Fields(text)
	bad := func(format string, args ...any) (Step, error) {
		return Step{}, fmt.Errorf("step %q: %s", text, fmt.Sprintf(format, args...))
	}
	if len(f) < 2 {
		return bad("want KIND PROCESS..., e.g. deliver P0>P1 or request P1 cs")
	}
	proc := func(s string) (int, bool) {
		p, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(s, "P"), "p"))
		return p, err == nil && p >= 0
	}
	s := Step{Kind: StepKind(f[0])}
	var ok bool
	switch s.Kind {
	case StepDeliver, StepLose:
		from, to, cut := strings.Cut(f[1], ">")
		if s.From, ok = proc(from); !ok || !cut {
			return bad("want %s FROM>TO, e.g. %[1]s P0>P1", s.Kind)
		}
		if s.Proc, ok = proc(to); !ok {
			return bad("want %s FROM>TO, e.g. %[1]s P0>P1", s.Kind)
		}
		if len(f) == 3 {
			i, err := strconv.Atoi(strings.TrimPrefix(f[2], "#"))
			if err != nil || i < 0 || !strings.HasPrefix(f[2], "#") {
				return bad("want #INDEX after the channel, e.g. #1")
			}
			s.Index = i
		} else if len(f) != 2 {
			return bad("want %s FROM>TO [#INDEX]", s.Kind)
		}
	case StepTimer:
		if len(f) != 4 {
			return bad("want timer PROCESS RESOURCE NAME (RESOURCE - for none)")
		}
		s.Resource, s.Timer = f[2], f[3]
		if s.Resource == "-" {
			s.Resource = ""
		}
	case StepRequest, StepRelease:
		if len(f) != 3 {
			return bad("want %s PROCESS RESOURCE", s.Kind)
		}
		s.Resource = f[2]
	case StepCrash, StepRecover:
		if len(f) != 2 {
			return bad("want %s PROCESS", s.Kind)
		}
	default:
		return bad("unknown step %q (known: deliver, timer, request, release, crash, recover, lose)", f[0])
	}
	if s.Kind != StepDeliver && s.Kind != StepLose {
		if s.Proc, ok = proc(f[1]); !ok {
			return bad("process %q: want a process such as P1", f[1])
		}
	}
	return s, nil
}

// ParseSteps reads a schedule, one step a string.
func ParseSteps(texts []string) ([]Step, error) {
	out := make([]Step, 0, len(texts))
	for i, t := range texts {
		s, err := ParseStep(t)
		if err != nil {
			return nil, fmt.Errorf("schedule step %d: %w", i+1, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// StepTime is how much simulated time a step of a World takes: the wall
// time of the events of step k is k x StepTime.
const StepTime = time.Millisecond

// World is a run driven one step at a time by its caller: the nodes of a
// plan, the messages in flight between them (a channel per ordered pair of
// processes), the machine timers set, and the workload's requests and
// releases. Nothing happens unless a Step says so, and any step that is
// enabled may happen next: time is only the count of steps (StepTime
// each), a timer may fire before any message arrives, a channel delivers
// in order unless the plan lets messages overtake (Sim.Reorder). It is the
// asynchronous model in which dmx explore searches every schedule, and
// what dmx sim runs when a scenario gives a schedule (Plan.Schedule): the
// same steps record the same trace. The algorithms' interaction scripts
// step one by hand (NewHandWorld).
//
// Faults are steps too: Crash and Recover apply whenever the process is up
// or down, Lose to any message in flight when channels are raw (reliable
// ones send a lost message again: a loss is only a delay, which the
// schedules already hold); which ones happen is the caller's choice
// (explore's fault budget). Nested workloads are not supported.
type World struct {
	plan  Plan
	n     int
	nodes []*Node
	// shared[p] says nodes[p] is shared with a clone (copy on write: a
	// step changes one node, so Clone copies none and the step copies
	// the one it changes); nil: none is.
	shared []bool
	chans  [][]*Envelope // index from*n+to: in flight, oldest first
	load   []procLoad
	now    int64
	steps  int
	evs    int64 // events recorded
	rec    Recorder
	err    error
	// Observe, if set, sees every event the world's nodes record, after
	// the world has taken it into account.
	Observe func(ev *trace.Event)
	// Shift makes Fingerprint count two states that differ only by the
	// same amount added to every Lamport timestamp as one state, when
	// every machine is an algo.Shifter and every node is up (the search
	// sets it only where no process crashes: a recovery may reset
	// timestamps to zero, which a shift does not commute with).
	Shift bool

	// stamps is Fingerprint's stampWords, kept here so that hashing a
	// state allocates nothing.
	stamps stampWords

	// hand: a world a test steps by hand (NewHandWorld).
	hand bool
}

// procLoad is a process's workload in a World.
type procLoad struct {
	resources []string
	left      []int   // entries still to make, per resource
	phase     []phase // per resource
}

type phase uint8

const (
	idle phase = iota
	requesting
	holding
)

// worldEnv is a node's Env in a World: time is the step count, timers and
// the workload's own callbacks never fire (steps do what they would).
type worldEnv struct {
	w  *World
	id int
}

type worldTimer struct{}

func (worldTimer) Stop() {}

// dueTimer is a timer of a world stepped by hand: the time it is due.
type dueTimer int64

func (dueTimer) Stop() {}

func (e *worldEnv) Now() int64  { return e.w.now }
func (e *worldEnv) Wall() int64 { return e.w.now }
func (e *worldEnv) After(d time.Duration, _ func()) Timer {
	if e.w.hand {
		return dueTimer(e.w.now + int64(d))
	}
	return worldTimer{}
}
func (e *worldEnv) Transmit(env *Envelope) {
	if e.w.hand {
		// What is on the wire does not change with the sender's memory:
		// a script may show a message long after it was sent.
		env.Msg.Vals = slices.Clone(env.Msg.Vals)
	}
	i := env.From*e.w.n + env.To
	e.w.chans[i] = append(e.w.chans[i], env)
}
func (e *worldEnv) Record(ev *trace.Event) { e.w.record(ev) }

// NewWorld builds the world of p (a simulator plan) and starts its nodes,
// in process order; rec, if not nil, records every event.
func NewWorld(p Plan, rec Recorder) (*World, error) {
	if p.driver() != DriverSim {
		return nil, fmt.Errorf("a %s plan: a schedule drives the simulator only", p.Driver)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p = p.WithDefaults()
	if p.Workload.Nested {
		return nil, &PlanError{Field: "nested", Err: errors.New("a schedule of steps does not drive nested workloads")}
	}
	w := &World{plan: p, n: p.N, rec: rec, chans: make([][]*Envelope, p.N*p.N)}
	wl := p.Workload
	wl.Normalize()
	for i := 0; i < p.N; i++ {
		nd, err := NewNode(NodeSetup{ID: i, N: p.N, Spec: p.Spec, Params: p.Params, Seed: p.Seed, Workload: p.Workload}, &worldEnv{w, i})
		if err != nil {
			return nil, err
		}
		w.nodes = append(w.nodes, nd)
		own := wl.For(i)
		pl := procLoad{resources: own.Resources, left: make([]int, len(own.Resources)), phase: make([]phase, len(own.Resources))}
		if p.Spec.Kind != algo.Election {
			for j := range pl.left {
				pl.left[j] = own.Entries
			}
		}
		w.load = append(w.load, pl)
	}
	for _, nd := range w.nodes {
		nd.Start()
	}
	return w, w.failed()
}

// NewHandWorld builds a world that a test steps by hand, as the
// interaction scripts of the algorithms' tests do (runner/algotest):
// n nodes of spec with params and seed 1, not started (Start starts one),
// with no workload and no recorder. It differs from a plan's world in
// three ways, so that a script can stage any moment of a run and show
// what a machine does with it:
//
//   - time moves only when a timer fires (to the time it is due: Due) or
//     by Advance, not by the step: machines that read the time (a lease, a
//     failure detector) see it as a run would;
//   - request and release are the test's own, taken whenever the process
//     is up, whatever it asked before (the machine's contract is the
//     test's to check);
//   - any message in flight may arrive next, as on channels that reorder,
//     and a test may also hand a node a message that was never sent
//     (Inject) or a timer that is not set (InjectTimer).
func NewHandWorld(spec algo.Spec, n int, params map[string]string) (*World, error) {
	if n < 1 {
		return nil, errors.New("want n >= 1")
	}
	p := Plan{Spec: &spec, N: n, Params: params, Seed: 1, Sim: SimOptions{Reorder: true}}
	w := &World{plan: p, n: n, chans: make([][]*Envelope, n*n), load: make([]procLoad, n), hand: true}
	for i := range n {
		nd, err := NewNode(NodeSetup{ID: i, N: n, Spec: &spec, Params: params, Seed: 1}, &worldEnv{w, i})
		if err != nil {
			return nil, err
		}
		w.nodes = append(w.nodes, nd)
	}
	return w, nil
}

func (w *World) record(ev *trace.Event) {
	w.evs++
	if ev.Kind == trace.KindCSEnter {
		pl := &w.load[ev.Proc]
		if j := slices.Index(pl.resources, ev.Resource); j >= 0 {
			pl.phase[j] = holding
		}
	}
	if w.Observe != nil {
		w.Observe(ev)
	}
	if w.rec != nil && w.err == nil {
		if err := w.rec.Record(ev); err != nil {
			w.err = fmt.Errorf("record %s: %w", ev, err)
		}
	}
}

func (w *World) failed() error {
	if w.err != nil {
		return w.err
	}
	for _, nd := range w.nodes {
		if err := nd.Err(); err != nil {
			return err
		}
	}
	return nil
}

// N returns the number of processes.
func (w *World) N() int { return w.n }

// Plan returns the world's plan, with its defaults.
func (w *World) Plan() Plan { return w.plan }

// Events returns how many events the world's nodes have recorded.
func (w *World) Events() int64 { return w.evs }

// Steps returns how many steps the world has taken.
func (w *World) Steps() int { return w.steps }

// Node returns process p's node, for reading: it may be shared with a
// clone of the world (change a world only by its steps).
func (w *World) Node(p int) *Node { return w.nodes[p] }

// own returns process p's node, copied first if a clone shares it.
func (w *World) own(p int) (*Node, error) {
	if w.shared != nil && w.shared[p] {
		cn, err := w.nodes[p].clone(&worldEnv{w, p})
		if err != nil {
			return nil, err
		}
		w.nodes[p], w.shared[p] = cn, false
	}
	return w.nodes[p], nil
}

// InFlight returns the messages in flight from one process to another,
// oldest first; the caller must not modify them.
func (w *World) InFlight(from, to int) []*Envelope { return w.chans[from*w.n+to] }

// Holders returns the processes in the critical section of resource r.
func (w *World) Holders(r string) []int {
	var out []int
	for p, pl := range w.load {
		if j := slices.Index(pl.resources, r); j >= 0 && pl.phase[j] == holding && !w.nodes[p].Crashed() {
			out = append(out, p)
		}
	}
	return out
}

// Waiting returns the processes that are up and wait for a critical
// section they asked for.
func (w *World) Waiting() []int {
	var out []int
	for p, pl := range w.load {
		if w.nodes[p].Crashed() {
			continue
		}
		if slices.Contains(pl.phase, requesting) {
			out = append(out, p)
		}
	}
	return out
}

// Enabled appends to buf the steps that may happen next, faults apart, in
// a fixed order (by process, then deliveries by sender, timers, the
// workload), and returns it.
func (w *World) Enabled(buf []Step) []Step {
	buf = buf[:0]
	for p := 0; p < w.n; p++ {
		nd := w.nodes[p]
		for q := 0; q < w.n; q++ {
			ch := w.chans[q*w.n+p]
			k := len(ch)
			if k > 1 && !w.plan.Sim.Reorder {
				k = 1
			}
			for i := 0; i < k; i++ {
				buf = append(buf, Step{Kind: StepDeliver, Proc: p, From: q, Index: i})
			}
		}
		if nd.Crashed() || nd.Stopped() {
			continue
		}
		for _, t := range nd.Armed() {
			buf = append(buf, Step{Kind: StepTimer, Proc: p, Resource: t.Resource, Timer: t.Name})
		}
		pl := &w.load[p]
		for j, r := range pl.resources {
			switch {
			case pl.phase[j] == holding:
				buf = append(buf, Step{Kind: StepRelease, Proc: p, Resource: r})
			case pl.phase[j] == idle && pl.left[j] > 0:
				buf = append(buf, Step{Kind: StepRequest, Proc: p, Resource: r})
			}
		}
	}
	return buf
}

// Quiescent reports whether no step but a fault can happen.
func (w *World) Quiescent() bool {
	var buf [1]Step
	return len(w.Enabled(buf[:0])) == 0
}

// Can says why step s cannot happen now, or returns nil if it can: a step
// that Enabled lists, or a crash of a process that is up, a recovery of
// one that is down.
func (w *World) Can(s Step) error {
	if err := w.check(s); err != nil {
		return fmt.Errorf("step %d (%v): %w", w.steps+1, s, err)
	}
	return nil
}

// slot returns the workload of s's process and the place of s's resource
// in it, which a request or release moves on; nil in a world stepped by
// hand, which has no workload.
func (w *World) slot(s Step) (*procLoad, int) {
	if w.hand {
		return nil, -1
	}
	pl := &w.load[s.Proc]
	return pl, slices.Index(pl.resources, s.Resource)
}

// Apply carries out step s, which must be one that can happen (Can); if it
// cannot, Apply changes nothing and says why.
func (w *World) Apply(s Step) error {
	if err := w.Can(s); err != nil {
		return err
	}
	nd, err := w.own(s.Proc)
	if err != nil {
		return err
	}
	if s.Kind == StepLose {
		if _, err := w.own(s.From); err != nil {
			return err
		}
	}
	w.steps++
	if !w.hand {
		w.now = int64(w.steps) * int64(StepTime)
	}
	switch s.Kind {
	case StepDeliver:
		i := s.From*w.n + s.Proc
		e := w.chans[i][s.Index]
		w.chans[i] = slices.Delete(slices.Clip(w.chans[i]), s.Index, s.Index+1)
		nd.Receive(e) // lost if the receiver is down
	case StepLose:
		i := s.From*w.n + s.Proc
		e := w.chans[i][s.Index]
		w.chans[i] = slices.Delete(slices.Clip(w.chans[i]), s.Index, s.Index+1)
		// The network lost it: the sender's runtime records the drop, as
		// the simulator's fault layer makes it (nothing if the sender is
		// down).
		w.nodes[s.From].Dropped(e, "loss", false)
	case StepTimer:
		if w.hand {
			due, _ := w.Due(s.Proc, TimerRef{s.Resource, s.Timer})
			w.now = max(w.now, int64(due)) // the clock moves to its due time
		}
		nd.Fire(s.Resource, s.Timer)
	case StepRequest:
		if pl, j := w.slot(s); pl != nil {
			if w.plan.Spec.Kind == algo.Multicast {
				pl.left[j]--
			} else {
				pl.phase[j] = requesting
			}
		}
		nd.Request(s.Resource)
	case StepRelease:
		if pl, j := w.slot(s); pl != nil {
			pl.phase[j], pl.left[j] = idle, pl.left[j]-1
		}
		nd.Release(s.Resource)
	case StepCrash:
		nd.Crash(trace.Crash{Reason: "scheduled"})
		// What it asked for or held is abandoned: the entry is made
		// again after a recovery, as in the simulator.
		clear(w.load[s.Proc].phase)
	case StepRecover:
		nd.Recover()
	}
	return w.failed()
}

// check says why s cannot happen now, if it cannot.
func (w *World) check(s Step) error {
	if s.Proc < 0 || s.Proc >= w.n {
		return fmt.Errorf("no process P%d (0..%d)", s.Proc, w.n-1)
	}
	nd := w.nodes[s.Proc]
	switch s.Kind {
	case StepDeliver:
		if s.From < 0 || s.From >= w.n {
			return fmt.Errorf("no process P%d (0..%d)", s.From, w.n-1)
		}
		k := len(w.chans[s.From*w.n+s.Proc])
		switch {
		case s.Index >= k:
			return fmt.Errorf("%d messages in flight from P%d to P%d", k, s.From, s.Proc)
		case s.Index > 0 && !w.plan.Sim.Reorder:
			return errors.New("channels are FIFO: only the oldest message in flight can arrive (a scenario with reorder lets others)")
		}
		return nil
	case StepLose:
		if s.From < 0 || s.From >= w.n {
			return fmt.Errorf("no process P%d (0..%d)", s.From, w.n-1)
		}
		if !w.plan.Raw() {
			return errors.New("channels are reliable: a lost message is sent again, so it only arrives later (a loss needs channels raw)")
		}
		if k := len(w.chans[s.From*w.n+s.Proc]); s.Index >= k {
			return fmt.Errorf("%d messages in flight from P%d to P%d", k, s.From, s.Proc)
		}
		return nil
	case StepCrash:
		if !nd.started {
			return errors.New("the process has not started")
		}
		if nd.Crashed() || nd.Stopped() {
			return errors.New("the process is not up")
		}
		return nil
	case StepRecover:
		if !nd.Crashed() {
			return errors.New("the process is not down")
		}
		return nil
	}
	if nd.Crashed() {
		return errors.New("the process is down")
	}
	pl := &w.load[s.Proc]
	switch s.Kind {
	case StepTimer:
		if !slices.Contains(nd.Armed(), TimerRef{s.Resource, s.Timer}) {
			if s.Resource == "" {
				return fmt.Errorf("P%d has no timer %q set", s.Proc, s.Timer)
			}
			return fmt.Errorf("P%d has no timer %q set on %q", s.Proc, s.Timer, s.Resource)
		}
		return nil
	case StepRequest, StepRelease:
		if w.hand {
			return nil
		}
		j := slices.Index(pl.resources, s.Resource)
		switch {
		case j < 0:
			return fmt.Errorf("P%d's workload has no resource %q", s.Proc, s.Resource)
		case s.Kind == StepRelease && pl.phase[j] != holding:
			return fmt.Errorf("P%d does not hold %s", s.Proc, s.Resource)
		case s.Kind == StepRequest && pl.phase[j] != idle:
			return fmt.Errorf("P%d has asked for %s already", s.Proc, s.Resource)
		case s.Kind == StepRequest && pl.left[j] == 0:
			return fmt.Errorf("P%d has made all its entries on %s", s.Proc, s.Resource)
		}
		return nil
	}
	return fmt.Errorf("unknown step kind %q", s.Kind)
}

// Now returns the world's time: in a world stepped by hand, what timers
// and Advance made it; else the steps taken times StepTime.
func (w *World) Now() time.Duration { return time.Duration(w.now) }

// Due returns when process p's timer t is due, if it is set, in a world
// stepped by hand (NewHandWorld); other worlds keep no due times.
func (w *World) Due(p int, t TimerRef) (time.Duration, bool) {
	if p < 0 || p >= w.n {
		return 0, false
	}
	d, ok := w.nodes[p].Timers(t.Resource)[t.Name].(dueTimer)
	return time.Duration(d), ok
}

// byHand says why a world not stepped by hand cannot do what only a test
// does (start a process, move the clock, inject an input).
func (w *World) byHand(p int) error {
	if !w.hand {
		return errors.New("only a world stepped by hand (NewHandWorld) takes this")
	}
	if p < 0 || p >= w.n {
		return fmt.Errorf("no process P%d (0..%d)", p, w.n-1)
	}
	return nil
}

// Start starts process p, in a world stepped by hand (NewWorld starts
// every process itself).
func (w *World) Start(p int) error {
	if err := w.byHand(p); err != nil {
		return err
	}
	if w.nodes[p].started {
		return fmt.Errorf("P%d has started already", p)
	}
	w.nodes[p].Start()
	return w.failed()
}

// Advance moves the clock of a world stepped by hand forward by d.
func (w *World) Advance(d time.Duration) error {
	if err := w.byHand(0); err != nil {
		return err
	}
	w.now += int64(d)
	return nil
}

// RaiseLamport raises process p's Lamport clock to c if it is lower, in
// a world stepped by hand: a script stages equal or ordered request
// timestamps with it.
func (w *World) RaiseLamport(p int, c uint64) error {
	if err := w.byHand(p); err != nil {
		return err
	}
	w.nodes[p].RaiseLamport(c)
	return nil
}

// Inject hands e, a message that was never sent, to its receiver now (it
// is lost if the receiver is down), in a world stepped by hand: what a
// machine does with a message no run of its algorithm would send.
func (w *World) Inject(e *Envelope) error {
	if err := w.byHand(e.To); err != nil {
		return err
	}
	if e.From < 0 || e.From >= w.n {
		return fmt.Errorf("no process P%d (0..%d)", e.From, w.n-1)
	}
	w.nodes[e.To].Receive(e)
	return w.failed()
}

// InjectTimer fires process p's timer t now although it is not set, in a
// world stepped by hand: a timer its machine does not expect.
func (w *World) InjectTimer(p int, t TimerRef) error {
	if err := w.byHand(p); err != nil {
		return err
	}
	switch nd := w.nodes[p]; {
	case nd.Crashed():
		return fmt.Errorf("P%d is down", p)
	case slices.Contains(nd.Armed(), t):
		return fmt.Errorf("P%d's timer %s is set", p, t.Name)
	}
	w.nodes[p].Fire(t.Resource, t.Name)
	return w.failed()
}

// Finish ends the run: every node that is up stops. It reports whether
// the run was over by itself (no step but a fault could happen).
func (w *World) Finish() (complete bool, err error) {
	complete = w.Quiescent()
	w.now = int64(w.steps+1) * int64(StepTime)
	for p := range w.nodes {
		nd, err := w.own(p)
		if err != nil {
			return false, err
		}
		nd.Stop()
	}
	return complete, w.failed()
}

// Close releases what the world's machines hold outside the runtime (a
// foreign program's process: runner/exec), as a stop would, recording
// nothing: a search that drops a world without finishing it closes it.
// The world takes no steps after it.
func (w *World) Close() {
	for _, nd := range w.nodes {
		nd.closeMachines(false)
	}
}

// Clone returns an independent copy of the world, with no Recorder and
// no Observe: explore branches a run with it.
func (w *World) Clone() (*World, error) {
	c := *w
	c.rec, c.Observe = nil, nil
	// The nodes are shared until a step changes one (own).
	c.nodes = slices.Clone(w.nodes)
	if w.shared == nil {
		w.shared = make([]bool, len(w.nodes))
	}
	for i := range w.shared {
		w.shared[i] = true
	}
	c.shared = slices.Clone(w.shared)
	c.chans = make([][]*Envelope, len(w.chans))
	for i, ch := range w.chans {
		if len(ch) > 0 {
			c.chans[i] = slices.Clone(ch) // envelopes are never modified once sent
		}
	}
	c.load = make([]procLoad, len(w.load))
	for i, pl := range w.load {
		c.load[i] = procLoad{resources: pl.resources, left: slices.Clone(pl.left), phase: slices.Clone(pl.phase)}
	}
	return &c, nil
}

// Fingerprint mixes into h what decides the world's future: each node's
// machines, Lamport clock, persisted state, timers set and whether it is
// up, each process's workload, and the messages in flight (their contents
// and the Lamport clocks they carry). Vector clocks, sequence numbers and
// message ids are left out: they are recorded, but no machine reads them,
// so two states that differ only there behave alike. A machine that
// implements algo.Abstracter counts by its Abstract value. With Shift, a
// message's stamp counts as its receiver's algo.StampAbstracter keeps it,
// the clock it carries as the larger of it and its receiver's clock (all
// the receiver's max will read of it), and the timestamps written through
// stampWords as they can still compare: one below every clock as none,
// and, where no process will request again, one above every waiting
// request as none too (stampLimit).
func (w *World) Fingerprint(h *deep.Hasher) {
	base, shift := w.shiftBase()
	stamps := &w.stamps
	*stamps = stampWords{h: h}
	var out algo.Words = h
	if shift {
		out = stamps
		if top, ok := w.stampLimit(); ok {
			// Every timestamp above top counts as one: see
			// algo.Pender and stampLimit.
			stamps.capped, stamps.limit = true, int64(top-base)
		}
	}
	for p, nd := range w.nodes {
		nd.fingerprint(h, base, shift, stamps)
		pl := &w.load[p]
		for j := range pl.left {
			h.Word(uint64(pl.left[j])<<8 | uint64(pl.phase[j]))
		}
	}
	for i, ch := range w.chans {
		if len(ch) == 0 {
			continue
		}
		h.Word(uint64(i)<<32 | uint64(len(ch)))
		for _, e := range ch {
			m := &e.Msg
			h.String(m.Type)
			h.String(m.Resource)
			if sa, ok := w.nodes[i%w.n].machines[m.Resource].(algo.StampAbstracter); ok && shift {
				sa.AbstractStamp(out, *m, w.nodes[i%w.n].lamport, base)
			} else {
				h.Word(m.Stamp - base)
			}
			h.Word(uint64(m.ID))
			h.Word(m.Term)
			h.Word(uint64(len(m.Vals)))
			for _, v := range m.Vals {
				h.Word(v)
			}
			h.String(m.Body)
			// The clock a message carries is read only by its receiver's
			// max on delivery, with a clock at least the receiver's now
			// (a clock only rises, and, with shift, no node crashes to
			// reset it): max(L, c) counts, not L.
			if shift {
				algo.Stamp(out, max(e.Lamport, w.nodes[i%w.n].lamport)-base)
			} else {
				h.Word(e.Lamport - base)
			}
		}
	}
}

// stampLimit returns the largest timestamp of a waiting request, if no
// process will make a request after the one it makes or holds now and
// every machine is an algo.Pender (with none waiting, 0). Then a
// timestamp above it compares alike with every one it can still meet:
// the waiting requests' are all below it, none is made later, and a
// clock that takes such a timestamp in by max, or rises by one, stays
// above it. So the values above it count as one (World.Fingerprint);
// those not above it count whole.
func (w *World) stampLimit() (uint64, bool) {
	for _, pl := range w.load {
		for j := range pl.left {
			if pl.phase[j] == idle && pl.left[j] > 0 || pl.phase[j] != idle && pl.left[j] > 1 {
				return 0, false
			}
		}
	}
	var top uint64
	for _, nd := range w.nodes {
		for _, m := range nd.machines {
			pm, ok := m.(algo.Pender)
			if !ok {
				return 0, false
			}
			if t, ok := pm.Pending(); ok {
				top = max(top, t)
			}
		}
	}
	return top, true
}

// Shifts reports whether Fingerprint counts states that differ by a shift
// of every timestamp as one now (see Shift).
func (w *World) Shifts() bool {
	_, ok := w.shiftBase()
	return ok
}

// shiftBase says by how much Fingerprint lowers every timestamp: the
// smallest of the nodes' clocks, if w.Shift and every machine is an
// algo.Shifter on a node that is up; 0 and false otherwise. The smallest
// clock rises by d when every timestamp does, so two states that differ
// by a shift are hashed alike.
func (w *World) shiftBase() (uint64, bool) {
	if !w.Shift {
		return 0, false
	}
	base := uint64(math.MaxUint64)
	for _, nd := range w.nodes {
		if !nd.started || nd.crashed || nd.stopped || nd.err != nil {
			return 0, false
		}
		for _, m := range nd.machines {
			if _, ok := m.(algo.Shifter); !ok {
				return 0, false
			}
		}
		base = min(base, nd.lamport)
	}
	if base == math.MaxUint64 {
		return 0, false
	}
	return base, true
}

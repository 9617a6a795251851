package runner

import (
	"container/heap"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// Recorder receives the events of a run. Record must not keep ev or its
// slices after it returns.
type Recorder interface {
	Record(ev *trace.Event) error
}

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

// SimResult says how a simulated run ended.
type SimResult struct {
	Complete bool   // the run ended by itself, not by the time limit
	Status   string // human summary
	Events   int64  // events recorded
	End      time.Duration
}

// Simulate carries out p (a DriverSim plan; no Driver means one) on a
// deterministic simulated network: the same seed gives the same events in
// the same order. Time is simulated: a run of an hour takes milliseconds.
// stop, if not nil, cuts the run short (marked incomplete) once it is
// closed: Ctrl-C under dmx sim.
func Simulate(p Plan, rec Recorder, stop <-chan struct{}) (SimResult, error) {
	if p.driver() != DriverSim {
		return SimResult{}, fmt.Errorf("simulate a %s plan: the simulator carries out %s plans", p.Driver, DriverSim)
	}
	if err := p.Validate(); err != nil {
		return SimResult{}, err
	}
	if len(p.Schedule) > 0 {
		return simulateSchedule(p, rec)
	}
	p = p.WithDefaults()
	s := &sim{plan: p, rec: rec, net: rand.New(rand.NewPCG(p.Seed, streamNet)), leader: -1}
	s.lastArrival = make([]int64, p.N*p.N)
	for i := 0; i < p.N; i++ {
		env := &simEnv{s: s, id: i}
		nd, err := NewNode(NodeSetup{ID: i, N: p.N, Spec: p.Spec, Params: p.Params, Seed: p.Seed, Workload: p.Workload}, env)
		if err != nil {
			return SimResult{}, err
		}
		nd.OnDone = s.progress
		nd.OnLeader = func(l int) { s.leader = l }
		s.nodes = append(s.nodes, nd)
	}
	for _, f := range p.Faults {
		s.pendingFaults++
		s.push(&simItem{at: int64(f.At), f: func() { s.inject(f) }})
	}
	if p.Spec.Kind == algo.Election {
		s.push(&simItem{at: int64(p.Duration), stop: true})
	}
	for _, nd := range s.nodes {
		nd.Start()
	}
	res := SimResult{Complete: true}
	for steps := 0; s.q.Len() > 0 && s.err == nil; steps++ {
		if stop != nil && steps%256 == 0 {
			select {
			case <-stop:
				res.Complete = false
				res.Status = "interrupted"
			default:
			}
			if !res.Complete {
				break
			}
		}
		it := heap.Pop(&s.q).(*simItem)
		if it.dead {
			continue
		}
		if it.at > int64(p.Sim.Limit) {
			res.Complete = false
			res.Status = fmt.Sprintf("cut short: simulated time limit %v reached", p.Sim.Limit)
			s.now = int64(p.Sim.Limit)
			break
		}
		s.now = it.at
		if it.stop {
			break
		}
		it.f()
		for _, nd := range s.nodes {
			if err := nd.Err(); err != nil {
				return res, err
			}
		}
	}
	if s.err != nil {
		return res, s.err
	}
	for _, nd := range s.nodes {
		nd.Stop()
	}
	if s.err != nil {
		return res, s.err
	}
	if res.Status == "" {
		unfinished := 0
		for _, nd := range s.nodes {
			if !nd.Done() && !nd.Crashed() {
				unfinished++
			}
		}
		switch {
		case p.Spec.Kind == algo.Election:
			res.Status = fmt.Sprintf("ran for %v", time.Duration(s.now))
		case unfinished == 0:
			res.Status = "every workload finished"
		default:
			res.Status = fmt.Sprintf("nothing more can happen, but %d of %d nodes did not finish their workload", unfinished, len(s.nodes))
		}
	}
	res.Events, res.End = s.events, time.Duration(s.now)
	return res, nil
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
	leader      int // the leader most recently decided by any node, or -1
	// pendingFaults counts faults not yet injected: the run does not end
	// before they are (a recovery brings back work to do).
	pendingFaults int
	stopping      bool
}

// progress ends the run (after the linger) once every node is done or down
// and no fault is still to come.
func (s *sim) progress() {
	if s.stopping || s.pendingFaults > 0 || s.plan.Spec.Kind == algo.Election {
		return
	}
	for _, nd := range s.nodes {
		if !nd.Done() && !nd.Crashed() {
			return
		}
	}
	s.stopping = true
	s.push(&simItem{at: s.now + int64(s.plan.Sim.Linger), stop: true})
}

// inject carries out a fault that is due: a case per fault kind (see
// fault.go). A fault aimed at the leader before there is one does nothing.
func (s *sim) inject(f Fault) {
	s.pendingFaults--
	p := f.Proc
	if p == Leader {
		p = s.leader
	}
	if p >= 0 {
		switch f.Kind {
		case FaultCrash:
			s.nodes[p].Crash("fault " + f.String())
		case FaultRecover:
			s.nodes[p].Recover()
		}
	}
	s.progress()
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
	it := &simItem{at: e.s.now + int64(d), f: f}
	e.s.push(it)
	return it
}

func (e *simEnv) Transmit(env *Envelope) {
	s := e.s
	at := s.now + int64(s.plan.Sim.Delay.Draw(s.net))
	if !s.plan.Sim.Reorder {
		ch := env.From*s.plan.N + env.To
		if at < s.lastArrival[ch] {
			at = s.lastArrival[ch]
		}
		s.lastArrival[ch] = at
	}
	to := s.nodes[env.To]
	s.push(&simItem{at: at, f: func() { to.Receive(env) }})
}

func (e *simEnv) Record(ev *trace.Event) {
	if e.s.err != nil {
		return
	}
	e.s.events++
	if err := e.s.rec.Record(ev); err != nil {
		e.s.err = errors.Join(fmt.Errorf("record %s", ev), err)
	}
}

type simItem struct {
	at   int64
	seq  uint64 // ties broken by scheduling order: deterministic
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

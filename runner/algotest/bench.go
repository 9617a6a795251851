package algotest

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// Bench drives an algorithm's runner.Nodes by hand, one input at a time,
// for interaction scripts (RunScripts) and for tests that stage a run
// exactly. The nodes live in a runner.World stepped by hand
// (runner.NewHandWorld), and every input is one of the world's steps
// (runner.Step: the steps of scenarios' schedules and of explore's
// counterexamples): a message sent stays in flight until a step delivers
// it, a timer fires only when a step fires it (the clock moves forward to
// its due time), and the workload asks and leaves only when told. Crashes
// and recoveries are the runtime's own: a crashed node gets no input, its
// timers die, messages to it are lost when their turn comes, and a
// recovered node is a fresh machine stepped with Recover and what it
// persisted. The bench adds what a test needs beside the world: the
// order in which the messages in flight were sent (Stabilize delivers in
// it), the messages sent by type, each node's leader, and the output.
//
// Every step of a machine is written to the bench's output in the format
// of the scripts: "P<id> <input> @<clock>" (the node's Lamport clock after
// the input's event), then the outputs indented under it (FormatOutput).
//
// A Bench made by NewBench fails its test on any error of its methods; the
// scripts' bench returns the errors, and the interpreter prints them.
type Bench struct {
	tb       testing.TB
	spec     algo.Spec
	w        *runner.World
	machines []algo.Machine // each node's current machine
	beliefs  []int
	failed   []bool    // the node's Err has been reported
	flight   []message // the messages in flight, in the order they were sent
	sent     map[string]int
	injected int64
	out      []string
	hide     bool // leave heartbeats out of the output
}

// message names a message in flight: its channel and its id.
type message struct {
	from, to int
	id       int64
}

// NewBench builds n nodes of spec with params, not yet started, for test
// t: an error of any of the bench's methods, or a node's broken contract,
// fails t.
func NewBench(t testing.TB, spec algo.Spec, n int, params map[string]string) *Bench {
	t.Helper()
	b, err := newBench(spec, n, params)
	if err != nil {
		t.Fatal(err)
	}
	b.tb = t
	return b
}

// Elect builds n nodes of spec with params, starts them all and delivers
// the messages in send order, and those their deliveries send, until none
// is left; no timer fires: an election without failure, staged exactly,
// whose messages Sent counts.
func Elect(t testing.TB, spec algo.Spec, n int, params map[string]string) *Bench {
	t.Helper()
	b := NewBench(t, spec, n, params)
	b.Start()
	b.Stabilize()
	return b
}

func newBench(spec algo.Spec, n int, params map[string]string) (*Bench, error) {
	b := &Bench{spec: spec, machines: make([]algo.Machine, max(n, 0)),
		beliefs: make([]int, max(n, 0)), failed: make([]bool, max(n, 0)), sent: map[string]int{}}
	tapped := tap(spec, func(id int, m algo.Machine) { b.machines[id] = m }, b.print)
	w, err := runner.NewHandWorld(*tapped, n, params)
	if err != nil {
		return nil, err
	}
	w.Observe = b.observe
	b.w = w
	for id := range b.beliefs {
		b.beliefs[id] = -1
	}
	return b, nil
}

// observe follows the events the nodes record: the messages sent, in
// order, and each node's leader.
func (b *Bench) observe(ev *trace.Event) {
	switch ev.Kind {
	case trace.KindSend:
		b.sent[ev.MsgType]++
		b.flight = append(b.flight, message{ev.Proc, ev.Peer, ev.Msg})
	case trace.KindLeader:
		b.beliefs[ev.Proc] = max(ev.Peer, -1)
	case trace.KindCrash, trace.KindRecover:
		b.beliefs[ev.Proc] = -1
	}
}

// print writes one step of a machine to the output.
func (b *Bench) print(id int, in algo.Input, outs []algo.Output) {
	b.printf("P%d %s", id, describeInput(id, in))
	for _, o := range outs {
		b.printf("  %s", FormatOutput(id, o))
	}
}

func (b *Bench) printf(format string, args ...any) {
	b.out = append(b.out, fmt.Sprintf(format, args...))
}

// done prints what a step broke (a node's Err, once) and returns err; a
// test's bench fails its test on either. The world repeats a node's Err
// after every step: the scripts' bench prints it once and goes on.
func (b *Bench) done(err error) error {
	for id := range b.machines {
		nerr := b.w.Node(id).Err()
		if nerr == nil {
			continue
		}
		if !b.failed[id] {
			b.failed[id] = true
			b.printf("  error: %v", nerr)
			if b.tb != nil && err == nil {
				err = nerr
			}
		}
		if err == nerr && b.tb == nil {
			err = nil
		}
	}
	if err != nil && b.tb != nil {
		b.tb.Helper()
		b.tb.Fatal(err)
	}
	return err
}

// Step takes step s, if it can happen now: the steps of a scenario's
// schedule and of explore's counterexamples (runner.Step), "deliver
// P0>P2" and the others. A message delivered to a node that is down is
// lost.
func (b *Bench) Step(s runner.Step) error {
	if err := b.w.Can(s); err != nil {
		return b.done(err)
	}
	if s.Kind == runner.StepDeliver {
		e := b.w.InFlight(s.From, s.Proc)[s.Index]
		b.flight = slices.DeleteFunc(b.flight, func(m message) bool { return m == message{s.From, s.Proc, e.ID} })
		if b.w.Node(s.Proc).Crashed() {
			b.lost(e)
		}
	}
	err := b.w.Apply(s)
	if s.Kind == runner.StepCrash {
		b.printf("P%d crash", s.Proc)
	}
	return b.done(err)
}

// at takes step s (a request or a release) at Lamport clock clock, if not
// 0: the node's clock is raised so that the input's event ticks it to
// clock.
func (b *Bench) at(s runner.Step, clock uint64) error {
	if err := b.w.Can(s); err != nil || clock == 0 {
		return b.Step(s)
	}
	if l := b.w.Node(s.Proc).Lamport(); l >= clock {
		return b.done(fmt.Errorf("clock=%d: P%d's clock is already %d", clock, s.Proc, l))
	}
	b.w.RaiseLamport(s.Proc, clock-1)
	return b.Step(s)
}

// Output returns what happened since the last call, and forgets it.
func (b *Bench) Output() []string {
	o := b.out
	b.out = nil
	return o
}

// Sent returns the messages sent so far, by type.
func (b *Bench) Sent() map[string]int { return maps.Clone(b.sent) }

// Machine returns node id's current machine.
func (b *Bench) Machine(id int) algo.Machine { return b.machines[id] }

// Leaders returns each node's belief: the leader it last decided since it
// last started, -1 for none or when the node is down.
func (b *Bench) Leaders() []int {
	l := slices.Clone(b.beliefs)
	for i := range l {
		if b.w.Node(i).Crashed() {
			l[i] = -1
		}
	}
	return l
}

// Start starts nodes ids (all, in id order, if none are given).
func (b *Bench) Start(ids ...int) error {
	if len(ids) == 0 {
		for i := range b.machines {
			ids = append(ids, i)
		}
	}
	for _, id := range ids {
		if err := b.w.Start(id); err != nil {
			return b.done(err)
		}
	}
	return b.done(nil)
}

// Fire fires node id's timer name at its due time, moving the clock there
// if it is later than now. Firing a timer that is not armed is an error.
func (b *Bench) Fire(id int, name string) error {
	return b.Step(runner.Step{Kind: runner.StepTimer, Proc: id, Resource: b.machineResource(), Timer: name})
}

// machineResource is the resource the nodes' machines guard: the
// workload's for mutual exclusion, none for the others.
func (b *Bench) machineResource() string {
	if b.spec.Kind == algo.MutualExclusion {
		return runner.DefaultResource
	}
	return ""
}

// timers returns node id's armed timers by name, with their due times.
func (b *Bench) timers(id int) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, t := range b.w.Node(id).Armed() {
		if t.Resource == b.machineResource() {
			out[t.Name], _ = b.w.Due(id, t)
		}
	}
	return out
}

// Crash crashes node id.
func (b *Bench) Crash(id int) error { return b.Step(runner.Step{Kind: runner.StepCrash, Proc: id}) }

// inFlight returns message m's envelope and its place among those in
// flight on its channel.
func (b *Bench) inFlight(m message) (*runner.Envelope, int) {
	for i, e := range b.w.InFlight(m.from, m.to) {
		if e.ID == m.id {
			return e, i
		}
	}
	panic(fmt.Sprintf("algotest: message %d from P%d to P%d is not in flight", m.id, m.from, m.to))
}

// deliverAll delivers, in send order, the messages in flight for which
// match returns true.
func (b *Bench) deliverAll(match func(e *runner.Envelope) bool) {
	var take []message
	for _, m := range b.flight {
		if e, _ := b.inFlight(m); match(e) {
			take = append(take, m)
		}
	}
	for _, m := range take {
		b.deliver(m)
	}
}

// inject delivers a crafted message that was never sent, stamped with the
// Lamport clock clock.
func (b *Bench) inject(from, to int, m algo.Msg, clock uint64) error {
	b.injected++
	m.Resource = b.machineResource()
	e := &runner.Envelope{ID: -b.injected, From: from, To: to, Lamport: clock, VC: make(trace.VC, len(b.machines)), Msg: m}
	if to >= 0 && to < len(b.machines) && b.w.Node(to).Crashed() {
		b.lost(e)
	}
	return b.done(b.w.Inject(e))
}

// Stabilize delivers the messages in flight in send order, and those their
// deliveries send, until none is left (an error after 100000 deliveries:
// something circulates for ever).
func (b *Bench) Stabilize() error {
	for i := 0; len(b.flight) > 0; i++ {
		if i >= 100000 {
			return b.done(fmt.Errorf("stabilize: still messages in flight after %d deliveries", i))
		}
		if err := b.deliver(b.flight[0]); err != nil {
			return err
		}
	}
	return b.done(nil)
}

// The failure detector's heartbeat timer and message (fd.TimerBeat and
// fd.MsgHeartbeat: package fd's tests use this one, which cannot import it).
const (
	beatTimer = "fd-beat"
	heartbeat = "heartbeat"
)

// Beat fires the heartbeat timer of every live node that has one armed, in
// id order (each at its due time), and then delivers the heartbeats in
// flight: one round of seed 004's "send beat every T" by everyone.
func (b *Bench) Beat() error {
	for id := range b.machines {
		if _, ok := b.timers(id)[beatTimer]; ok && !b.w.Node(id).Crashed() {
			if err := b.Fire(id, beatTimer); err != nil {
				return err
			}
		}
	}
	b.deliverAll(func(e *runner.Envelope) bool { return e.Msg.Type == heartbeat })
	return b.done(nil)
}

// deliver delivers message m.
func (b *Bench) deliver(m message) error {
	_, i := b.inFlight(m)
	return b.Step(runner.Step{Kind: runner.StepDeliver, Proc: m.to, From: m.from, Index: i})
}

func (b *Bench) lost(e *runner.Envelope) {
	b.printf("lost %d->%d %s (P%d is down)", e.From, e.To, FormatMsg(e.Msg), e.To)
}

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
// exactly. It is the nodes' Env: a message sent waits in a pending list
// until it is delivered, a timer fires only when asked to (the bench's clock
// moves forward to its due time), and the workload asks and leaves only
// when told. Crashes and recoveries are the runtime's own (Node.Crash,
// Node.Recover): a crashed node gets no input, its timers die, messages to
// it are lost when their turn comes, and a recovered node is a fresh
// machine stepped with Recover and what it persisted.
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
	resource string // the resource a mutual-exclusion node's machine guards
	nodes    []*runner.Node
	machines []algo.Machine // each node's current machine
	beliefs  []int
	failed   []bool // the node's Err has been reported
	pending  []*runner.Envelope
	sent     map[string]int
	injected int64
	now      int64
	out      []string
	hide     bool // leave heartbeats out of the output
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
	if n < 1 {
		return nil, fmt.Errorf("want n >= 1")
	}
	b := &Bench{spec: spec, resource: runner.DefaultResource, machines: make([]algo.Machine, n),
		beliefs: make([]int, n), failed: make([]bool, n), sent: map[string]int{}}
	tapped := tap(spec, func(id int, m algo.Machine) { b.machines[id] = m }, b.print)
	for id := range n {
		nd, err := runner.NewNode(runner.NodeSetup{ID: id, N: n, Spec: tapped, Params: params, Seed: 1}, benchEnv{b, id})
		if err != nil {
			return nil, err
		}
		b.nodes = append(b.nodes, nd)
		b.beliefs[id] = -1
	}
	return b, nil
}

// benchEnv is node id's runner.Env.
type benchEnv struct {
	b  *Bench
	id int
}

func (e benchEnv) Now() int64  { return e.b.now }
func (e benchEnv) Wall() int64 { return e.b.now }

func (e benchEnv) After(d time.Duration, f func()) runner.Timer {
	return &benchTimer{due: e.b.now + int64(d), f: f}
}

// Transmit keeps the message pending, with a copy of its slice (what is on
// the wire does not change with the sender's memory).
func (e benchEnv) Transmit(env *runner.Envelope) {
	env.Msg.Vals = slices.Clone(env.Msg.Vals)
	e.b.pending = append(e.b.pending, env)
}

func (e benchEnv) Record(ev *trace.Event) {
	b := e.b
	switch ev.Kind {
	case trace.KindSend:
		b.sent[ev.MsgType]++
	case trace.KindLeader:
		b.beliefs[ev.Proc] = max(ev.Peer, -1)
	case trace.KindCrash, trace.KindRecover:
		b.beliefs[ev.Proc] = -1
	}
}

// benchTimer is a timer of the bench: it fires only when the bench fires
// it.
type benchTimer struct {
	due     int64
	f       func()
	stopped bool
}

func (t *benchTimer) Stop() { t.stopped = true }

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

// done prints what a node call broke (a node's Err, once) and returns err;
// a test's bench fails its test on either.
func (b *Bench) done(err error) error {
	for id, nd := range b.nodes {
		if nd.Err() != nil && !b.failed[id] {
			b.failed[id] = true
			b.printf("  error: %v", nd.Err())
			if b.tb != nil && err == nil {
				err = nd.Err()
			}
		}
	}
	if err != nil && b.tb != nil {
		b.tb.Helper()
		b.tb.Fatal(err)
	}
	return err
}

// node returns node id if it exists and, with up, if it is up.
func (b *Bench) node(id int, up bool) (*runner.Node, error) {
	if id < 0 || id >= len(b.nodes) {
		return nil, fmt.Errorf("node %d: want an id in 0..%d", id, len(b.nodes)-1)
	}
	if up && b.nodes[id].Crashed() {
		return nil, fmt.Errorf("P%d is down", id)
	}
	return b.nodes[id], nil
}

// Output returns what happened since the last call, and forgets it.
func (b *Bench) Output() []string {
	o := b.out
	b.out = nil
	return o
}

// Now is the bench's clock.
func (b *Bench) Now() time.Duration { return time.Duration(b.now) }

// Sent returns the messages sent so far, by type.
func (b *Bench) Sent() map[string]int { return maps.Clone(b.sent) }

// Machine returns node id's current machine.
func (b *Bench) Machine(id int) algo.Machine { return b.machines[id] }

// Leaders returns each node's belief: the leader it last decided since it
// last started, -1 for none or when the node is down.
func (b *Bench) Leaders() []int {
	l := slices.Clone(b.beliefs)
	for i, nd := range b.nodes {
		if nd.Crashed() {
			l[i] = -1
		}
	}
	return l
}

// Start starts nodes ids (all, in id order, if none are given).
func (b *Bench) Start(ids ...int) error {
	if len(ids) == 0 {
		for i := range b.nodes {
			ids = append(ids, i)
		}
	}
	for _, id := range ids {
		nd, err := b.node(id, false)
		if err != nil {
			return b.done(err)
		}
		nd.Start()
	}
	return b.done(nil)
}

// Request has node id's workload ask for the critical section; clock, if
// not 0, is the input's Lamport clock (the node's clock is raised to it,
// never lowered).
func (b *Bench) Request(id int, clock uint64) error {
	return b.workload(id, clock, (*runner.Node).Request)
}

// Release has node id's workload leave the critical section, like Request.
func (b *Bench) Release(id int, clock uint64) error {
	return b.workload(id, clock, (*runner.Node).Release)
}

func (b *Bench) workload(id int, clock uint64, do func(*runner.Node, string)) error {
	nd, err := b.node(id, true)
	if err == nil && clock > 0 {
		if nd.Lamport() >= clock {
			err = fmt.Errorf("clock=%d: P%d's clock is already %d", clock, id, nd.Lamport())
		} else {
			nd.RaiseLamport(clock - 1) // the input's event ticks it to clock
		}
	}
	if err != nil {
		return b.done(err)
	}
	do(nd, b.resource)
	return b.done(nil)
}

// Fire fires node id's timer name at its due time, moving the clock there
// if it is later than now. Firing a timer that is not armed is an error.
func (b *Bench) Fire(id int, name string) error { return b.fire(id, name, false) }

// FireUnarmed fires node id's timer name now although it is not armed: a
// timer its machine does not expect.
func (b *Bench) FireUnarmed(id int, name string) error { return b.fire(id, name, true) }

func (b *Bench) fire(id int, name string, stale bool) error {
	nd, err := b.node(id, true)
	if err != nil {
		return b.done(err)
	}
	due, ok := b.timers(id)[name]
	switch {
	case ok && stale:
		return b.done(fmt.Errorf("P%d's timer %s is armed", id, name))
	case !ok && !stale:
		return b.done(fmt.Errorf("P%d has no timer %s armed", id, name))
	}
	if ok {
		b.now = max(b.now, due)
	}
	nd.Fire(b.machineResource(), name)
	return b.done(nil)
}

// machineResource is the resource the nodes' machines guard: the
// workload's for mutual exclusion, none for the others.
func (b *Bench) machineResource() string {
	if b.spec.Kind == algo.MutualExclusion {
		return b.resource
	}
	return ""
}

// timers returns node id's armed timers by name, with their due times.
func (b *Bench) timers(id int) map[string]int64 {
	out := map[string]int64{}
	for name, t := range b.nodes[id].Timers(b.machineResource()) {
		if bt, ok := t.(*benchTimer); ok && !bt.stopped {
			out[name] = bt.due
		}
	}
	return out
}

// Advance moves the clock forward by d.
func (b *Bench) Advance(d time.Duration) { b.now += int64(d) }

// Crash crashes node id.
func (b *Bench) Crash(id int) error {
	nd, err := b.node(id, true)
	if err != nil {
		return b.done(err)
	}
	if nd.Crash(trace.Crash{Reason: "crash by hand"}); !nd.Crashed() {
		return b.done(fmt.Errorf("P%d has not started: it cannot crash", id))
	}
	b.printf("P%d crash", id)
	return b.done(nil)
}

// Recover restarts the crashed node id.
func (b *Bench) Recover(id int) error {
	nd, err := b.node(id, false)
	if err == nil && !nd.Crashed() {
		err = fmt.Errorf("P%d is up", id)
	}
	if err != nil {
		return b.done(err)
	}
	nd.Recover()
	return b.done(nil)
}

// Deliver delivers, in send order, the pending messages for which match
// returns true (all if match is nil), at most limit of them (limit < 0: no
// limit), and returns how many it took. A message to a node that is down
// is lost.
func (b *Bench) Deliver(match func(e *runner.Envelope) bool, limit int) int {
	var take, rest []*runner.Envelope
	for _, e := range b.pending {
		if limit != 0 && (match == nil || match(e)) {
			take = append(take, e)
			limit--
		} else {
			rest = append(rest, e)
		}
	}
	b.pending = rest
	for _, e := range take {
		b.deliver(e)
	}
	return len(take)
}

// Inject delivers a crafted message that was never sent, stamped with the
// Lamport clock clock.
func (b *Bench) Inject(from, to int, m algo.Msg, clock uint64) error {
	if _, err := b.node(from, false); err != nil {
		return b.done(err)
	}
	if _, err := b.node(to, false); err != nil {
		return b.done(err)
	}
	b.injected++
	m.Resource = b.machineResource()
	b.deliver(&runner.Envelope{ID: -b.injected, From: from, To: to, Lamport: clock, VC: make(trace.VC, len(b.nodes)), Msg: m})
	return b.done(nil)
}

// Stabilize delivers the pending messages in send order, and those their
// deliveries send, until none is left (an error after 100000 deliveries:
// something circulates for ever).
func (b *Bench) Stabilize() error {
	for i := 0; len(b.pending) > 0; i++ {
		if i >= 100000 {
			return b.done(fmt.Errorf("stabilize: still messages pending after %d deliveries", i))
		}
		e := b.pending[0]
		b.pending = b.pending[1:]
		b.deliver(e)
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
	for id, nd := range b.nodes {
		if _, ok := b.timers(id)[beatTimer]; ok && !nd.Crashed() {
			if err := b.Fire(id, beatTimer); err != nil {
				return err
			}
		}
	}
	b.Deliver(func(e *runner.Envelope) bool { return e.Msg.Type == heartbeat }, -1)
	return b.done(nil)
}

func (b *Bench) deliver(e *runner.Envelope) {
	if b.nodes[e.To].Crashed() {
		b.printf("lost %d->%d %s (P%d is down)", e.From, e.To, FormatMsg(e.Msg), e.To)
		return
	}
	b.nodes[e.To].Receive(e)
}

package runner

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/deep"
	"github.com/dmxlab/dmx/trace"
)

// Envelope is an algorithm message in transit, stamped by the runtime.
type Envelope struct {
	ID      int64    `json:"id"`
	From    int      `json:"from"`
	To      int      `json:"to"`
	Lamport uint64   `json:"lc"`
	VC      trace.VC `json:"vc"`
	Msg     algo.Msg `json:"msg"`
}

// Timer is a scheduled callback that can be stopped.
type Timer interface{ Stop() }

// TimerFunc is a Timer whose Stop calls the function: what a driver's
// After returns when stopping is one call.
type TimerFunc func()

// Stop calls f.
func (f TimerFunc) Stop() { f() }

// Env is what a driver provides to a Node. All of a Node's methods, and every
// callback given to After, run on one goroutine (the driver's loop), so the
// Node needs no locks.
type Env interface {
	Now() int64                            // ns since the run started
	Wall() int64                           // wall-clock ns (simulated runs: simulated ns)
	After(d time.Duration, f func()) Timer // run f on the loop after d
	Transmit(e *Envelope)                  // hand a stamped message to the network
	Record(ev *trace.Event)                // record an event; must not keep ev or its slices
}

// NodeSetup is what a node is built from.
type NodeSetup struct {
	ID, N    int
	Spec     *algo.Spec
	Params   map[string]string
	Seed     uint64
	Workload Workload
	// Resume, if set, makes the node a recovered incarnation of a process
	// that crashed: Start records a recover event instead of a start event
	// and carries on from where the trace left the process.
	Resume *Resume
	// Origin is the wall-clock time (Unix ns, as Env.Wall counts) at which
	// the run's time starts: a machine's Input.Now is the wall time of the
	// event that recorded the input minus Origin. Real runs set it to the
	// runner's start time (the start event records it, so that a replay
	// feeds the machines the same Now); the simulator, whose wall times are
	// simulated time, leaves it 0.
	Origin int64
	// Addr and Netns say where a real run placed the node: the address
	// it listens on and its network namespace, if it has one of its own
	// (dmx run --net netns). The start event records them.
	Addr, Netns string
}

// Resume is what a restarted process takes over from its crashed
// incarnation: the runtime's counters (so that the trace goes on without a
// gap), what the machines persisted (their stable storage), and the entries
// its workload still has to make. The runner reads all of it from the trace.
type Resume struct {
	Seq     int64               `json:"seq"`
	Lamport uint64              `json:"lamport"`
	VC      trace.VC            `json:"vc"`
	Sent    int64               `json:"sent"`
	Saved   map[string]algo.Msg `json:"saved,omitempty"`
	Amnesia bool                `json:"amnesia,omitempty"` // Saved was lost: the recover event says so
	Left    map[string]int      `json:"left,omitempty"`
}

// Random streams derived from the run's seed. Each consumer has its own
// stream so that, say, a change in network delays does not shift the draws
// of a workload: the seed still reproduces everything.
const (
	streamNet      = 1
	StreamFault    = 2 // the network fault layer's draws (+ the node's id under dmx run)
	streamWorkload = 1 << 20
	streamMachine  = 2 << 20
)

// Node is one process's runtime: it wraps one algorithm machine per resource,
// stamps clocks, records events and drives the workload.
type Node struct {
	ID, N     int
	spec      *algo.Spec
	env       Env
	resources []string
	machines  map[string]algo.Machine
	wl        Workload
	wrand     *rand.Rand

	lamport uint64
	vc      trace.VC
	seq     int64
	sent    int64
	timers  map[string]Timer // by resource + "\x00" + timer name
	left    map[string]int   // entries still to make, per resource
	plan    []string         // nested workloads: this entry's lock order
	planIdx int              // nested workloads: index in plan of the resource asked for last
	ev      trace.Event      // reused for every record
	det     []byte           // reused for every record's detail
	inNow   int64            // Input.Now of the input being handled: its event's wall time - Origin

	saved   map[string]algo.Msg // what each machine persisted last
	skew    time.Duration       // added to the wall clock (a skew fault)
	amnesia bool                // the next recovery has lost what was persisted (Forget)
	resume  *Resume
	setup   NodeSetup
	gen     int // bumped by a crash: callbacks of an older generation do nothing
	started bool
	done    bool
	stopped bool
	crashed bool
	err     error

	// OnDone, if set, is called once when the workload has finished.
	OnDone func()
	// OnLeader, if set, is called when the node decides who leads.
	OnLeader func(leader int)
	// OnHalt, if set, is called when a machine halts (algo.Halt) and the
	// node has gone down for it: a node process ends then, so that the
	// runner knows it is down (its crash event is recorded already).
	OnHalt func()
}

// NewNode builds a node and its machines. It records nothing until Start.
func NewNode(s NodeSetup, env Env) (*Node, error) {
	if s.Spec == nil {
		return nil, fmt.Errorf("node %d: no algorithm", s.ID)
	}
	wl := s.Workload
	wl.Normalize()
	all := wl.AllResources()
	wl = wl.For(s.ID)
	n := &Node{
		ID: s.ID, N: s.N, spec: s.Spec, env: env, wl: wl,
		vc:       make(trace.VC, s.N),
		machines: map[string]algo.Machine{},
		timers:   map[string]Timer{},
		left:     map[string]int{},
		wrand:    rand.New(rand.NewPCG(s.Seed, streamWorkload+uint64(s.ID))),
		saved:    map[string]algo.Msg{},
		setup:    s,
	}
	n.resources = all
	if s.Spec.Kind != algo.MutualExclusion {
		// Elections and multicast have one instance that guards nothing.
		n.resources = []string{""}
	}
	// A restarted process's machines get the random streams the simulator
	// gives a recovered node (Recover): those of incarnation Seq.
	var incarnation int64
	if s.Resume != nil {
		incarnation = s.Resume.Seq
	}
	if err := n.build(incarnation); err != nil {
		return nil, err
	}
	if r := s.Resume; r != nil {
		n.resume = r
		n.seq, n.lamport, n.sent, n.amnesia = r.Seq, r.Lamport, r.Sent, r.Amnesia
		copy(n.vc, r.VC)
		for k, v := range r.Saved {
			n.saved[k] = v
		}
		// A recovered process draws other random numbers than its first
		// incarnation did.
		n.wrand = rand.New(rand.NewPCG(s.Seed, streamWorkload+uint64(s.ID)+uint64(r.Seq)<<32))
	}
	return n, nil
}

// build makes fresh machines; incarnation > 0 gives them other random
// streams than the first incarnation's.
func (n *Node) build(incarnation int64) error {
	s := n.setup
	for i, r := range n.resources {
		m, err := s.Spec.New(algo.Config{
			ID: s.ID, N: s.N, Resource: r, Params: s.Params,
			Rand: rand.New(rand.NewPCG(s.Seed, streamMachine+uint64(s.ID)<<8+uint64(i)+uint64(incarnation)<<32)),
		})
		if err != nil {
			return fmt.Errorf("%s: %w", s.Spec.Name, err)
		}
		n.machines[r] = m
	}
	return nil
}

// Err returns the first broken rule of the runtime contract an algorithm
// committed (e.g. a send to a process that does not exist), if any.
func (n *Node) Err() error { return n.err }

// Done reports whether the workload has finished.
func (n *Node) Done() bool { return n.done }

// Lamport returns the node's Lamport clock.
func (n *Node) Lamport() uint64 { return n.lamport }

// Seq returns the number of events the node has recorded.
func (n *Node) Seq() int64 { return n.seq }

// Start records the start event, starts every machine and the workload. A
// node built with a Resume recovers instead.
func (n *Node) Start() {
	if n.started {
		return
	}
	n.started = true
	if n.resume != nil {
		for r, k := range n.resume.Left {
			n.left[r] = k
		}
		n.recover()
		return
	}
	n.recordInput(trace.KindStart, "", func(ev *trace.Event) {
		ev.Detail = n.detail(trace.Start{Algorithm: n.spec.Name, N: n.N, Resources: n.wl.Resources, Origin: n.setup.Origin, Addr: n.setup.Addr, Netns: n.setup.Netns})
	})
	for _, r := range n.resources {
		n.step(r, algo.Input{Kind: algo.Start})
	}
	if n.wl.Entries == 0 && n.spec.Kind != algo.Election {
		n.finish()
		return
	}
	n.startWorkload(n.wl.Entries)
}

// startWorkload schedules the next request of every resource that has
// entries left (all of them start with entries each on a fresh start).
func (n *Node) startWorkload(entries int) {
	if n.spec.Kind == algo.Election {
		return // elections have no workload: the run's duration ends them
	}
	for _, r := range n.wl.Resources {
		if _, ok := n.left[r]; !ok {
			n.left[r] = entries
		}
	}
	pending := false
	for _, r := range n.wl.Resources {
		if n.left[r] > 0 {
			pending = true
			if n.wl.Nested {
				// One entry takes every resource; entries left is the
				// largest count (a crash may have cut a release short).
				for _, x := range n.wl.Resources {
					if n.left[x] > n.left[r] {
						r = x
					}
				}
				n.scheduleRequest(r)
				break
			}
			n.scheduleRequest(r)
		}
	}
	if !pending {
		n.finish()
	}
}

// Crash stops the node as a crash would: no more inputs, timers gone,
// machines' state lost (only what they persisted survives). The crash event
// is recorded here with d as its detail (under dmx run the runner records
// it on the killed process's behalf, with the same members: the fault and
// how the process ended).
func (n *Node) Crash(d trace.Crash) {
	if n.crashed || n.stopped || !n.started {
		return
	}
	n.record(trace.KindCrash, "", func(ev *trace.Event) {
		ev.Detail = n.detail(d)
	})
	n.crashed = true
	n.gen++
	for k, t := range n.timers {
		t.Stop()
		delete(n.timers, k)
	}
	// A machine that holds a process (a foreign program) loses it: the
	// crash kills it.
	n.closeMachines(true)
}

// closeMachines closes the machines that hold something outside the
// runtime (algo.Closer); crash says the node crashed.
func (n *Node) closeMachines(crash bool) {
	for _, r := range n.resources {
		if c, ok := n.machines[r].(algo.Closer); ok {
			c.Close(crash)
		}
	}
}

// Forget loses what the node's machines persisted: a restart after it is
// one with amnesia (a recover:P:amnesia fault), which its recover event
// says (trace.Crash.Amnesia), so that a replay restarts it so too.
func (n *Node) Forget() {
	clear(n.saved)
	n.amnesia = true
}

// SetSkew sets the node's wall clock d off (a skew fault): the wall time
// of its events, not the time its machines and timers go by.
func (n *Node) SetSkew(d time.Duration) { n.skew = d }

// FaultEvent records a fault event: an injected fault began
// (trace.FaultStart) or ended acting at this process, or could not be
// applied (trace.FaultNotApplied, recorded here for the injector). A node
// that is down or stopped records nothing.
func (n *Node) FaultEvent(fault, phase, reason string) {
	n.RecordFault(trace.Fault{Fault: fault, Phase: phase, Reason: reason})
}

// RecordFault records a fault event with detail d: FaultEvent with what
// made a network fault of a real run (d.By, d.How).
func (n *Node) RecordFault(d trace.Fault) {
	if !n.started || n.stopped || n.crashed {
		return
	}
	n.record(trace.KindFault, "", func(ev *trace.Event) {
		ev.Detail = n.detail(d)
	})
}

// Dropped records that the network fault layer discarded a copy of the
// message e this node sent: fault names the fault, resend says whether the
// transport sends it again.
func (n *Node) Dropped(e *Envelope, fault string, resend bool) {
	if !n.started || n.stopped || n.crashed {
		return
	}
	n.record(trace.KindDrop, e.Msg.Resource, func(ev *trace.Event) {
		ev.Msg, ev.MsgType, ev.Peer = e.ID, e.Msg.Type, e.To
		ev.Detail = n.detail(trace.Drop{Msg: trace.Message(e.Msg), Fault: fault, Resend: resend})
	})
}

// Crashed reports whether the node is down.
func (n *Node) Crashed() bool { return n.crashed }

// Recover restarts a crashed node: fresh machines, which get Recover with
// what they persisted, and the rest of the workload. A request that was
// pending or a critical section that was held at the crash is abandoned
// (the entry is made again).
func (n *Node) Recover() {
	if !n.crashed || n.stopped {
		return
	}
	n.crashed = false
	n.gen++
	if err := n.build(int64(n.seq)); err != nil {
		n.fail(err)
		return
	}
	n.recover()
}

func (n *Node) recover() {
	var fill func(ev *trace.Event)
	if n.amnesia {
		n.amnesia = false
		fill = func(ev *trace.Event) {
			ev.Detail = n.detail(trace.Crash{Reason: "restarted without what it persisted", Amnesia: true})
		}
	}
	n.recordInput(trace.KindRecover, "", fill)
	for _, r := range n.resources {
		n.step(r, algo.Input{Kind: algo.Recover, Msg: n.saved[r]})
	}
	n.done = false
	n.startWorkload(0)
}

// TimerRef names a machine timer that is set: its resource and name.
type TimerRef struct {
	Resource, Name string
}

// Armed returns the machine timers that are set, sorted by resource and
// name: the timers a driver that steps a node by hand may fire (World).
func (n *Node) Armed() []TimerRef {
	if len(n.timers) == 0 {
		return nil
	}
	out := make([]TimerRef, 0, len(n.timers))
	for k := range n.timers {
		r, name, _ := strings.Cut(k, "\x00")
		out = append(out, TimerRef{r, name})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Resource != out[j].Resource {
			return out[i].Resource < out[j].Resource
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Machine returns the algorithm instance of resource r (for elections and
// multicast, r is ""), or nil.
func (n *Node) Machine(r string) algo.Machine { return n.machines[r] }

// Resources returns the resources the node has an algorithm instance for,
// in the order their random streams are numbered ("" alone for elections
// and multicast).
func (n *Node) Resources() []string { return n.resources }

// VC returns the node's vector clock; the caller must not modify it.
func (n *Node) VC() trace.VC { return n.vc }

// Stopped reports whether the node has stopped.
func (n *Node) Stopped() bool { return n.stopped }

// Receive hands a message that arrived from the network to its machine.
func (n *Node) Receive(e *Envelope) {
	if n.stopped || n.crashed {
		return // lost: its receiver is down
	}
	if _, ok := n.machines[e.Msg.Resource]; !ok {
		n.record(trace.KindInternal, e.Msg.Resource, func(ev *trace.Event) {
			ev.Peer = e.From
			ev.Detail = n.detail(trace.Note{Text: "message for unknown resource ignored", Msg: e.ID})
		})
		return
	}
	if e.Lamport > n.lamport {
		n.lamport = e.Lamport
	}
	n.vc.Merge(e.VC)
	n.recordInput(trace.KindReceive, e.Msg.Resource, func(ev *trace.Event) {
		ev.Msg, ev.MsgType, ev.Peer = e.ID, e.Msg.Type, e.From
		ev.Detail = n.msgDetail(e.Msg)
	})
	n.step(e.Msg.Resource, algo.Input{Kind: algo.Receive, From: e.From, Msg: e.Msg})
}

// Stop records the stop event and cancels every timer; the node does nothing
// after it. A node that is down at the end records nothing: the dead do not
// stop.
func (n *Node) Stop() {
	if n.stopped {
		return
	}
	if !n.crashed {
		n.record(trace.KindStop, "", nil)
	}
	n.stopped = true
	for k, t := range n.timers {
		t.Stop()
		delete(n.timers, k)
	}
	n.closeMachines(false)
}

// Request asks for the critical section of resource r now (for a multicast
// algorithm: multicasts one message), as the workload does when a think time
// ends. It is for drivers that step a node by hand (interaction scripts,
// replay); a node that is down or stopped ignores it.
func (n *Node) Request(r string) {
	if n.stopped || n.crashed {
		return
	}
	if _, ok := n.machines[r]; !ok && n.spec.Kind != algo.Multicast {
		n.fail(fmt.Errorf("request for resource %q, which P%d does not guard", r, n.ID))
		return
	}
	n.request(r)
}

// Release leaves the critical section of resource r now, as the workload
// does when a hold time ends; like Request, for drivers that step a node by
// hand.
func (n *Node) Release(r string) {
	if n.stopped || n.crashed || n.machines[r] == nil {
		return
	}
	n.release(r)
}

// Fire fires the timer name of resource r's machine now, whether or not it
// is armed (an armed one is stopped), as a driver that steps a node by hand
// needs: replay re-executes a recorded timeout, and an interaction script
// shows what a machine does with a timer it does not expect. A node that is
// down or stopped ignores it.
func (n *Node) Fire(r, name string) {
	if n.stopped || n.crashed {
		return
	}
	if n.machines[r] == nil {
		n.fail(fmt.Errorf("timer %s for resource %q, which P%d does not guard", name, r, n.ID))
		return
	}
	if t, ok := n.timers[r+"\x00"+name]; ok {
		t.Stop()
	}
	n.fire(r, name)
}

// Timers returns the timers armed by the machine of resource r, by name:
// what the Env's After returned for each, from which a driver that steps a
// node by hand reads when each is due (it fires one with Fire).
func (n *Node) Timers(r string) map[string]Timer {
	out := map[string]Timer{}
	for k, t := range n.timers {
		if res, name, _ := strings.Cut(k, "\x00"); res == r {
			out[name] = t
		}
	}
	return out
}

// RaiseLamport raises the node's Lamport clock to c if it is lower, as the
// delivery of a message stamped c would: an interaction script sets up
// equal or ordered request timestamps with it.
func (n *Node) RaiseLamport(c uint64) { n.lamport = max(n.lamport, c) }

// after runs f after d unless the node crashes or stops first.
func (n *Node) after(d time.Duration, f func()) {
	gen := n.gen
	n.env.After(d, func() {
		if gen == n.gen && !n.stopped && !n.crashed {
			f()
		}
	})
}

func (n *Node) scheduleRequest(r string) {
	d := n.wl.Think.Draw(n.wrand)
	if n.wl.Contention == ContentionNone {
		// Slot k*N+i of resource r's schedule; resources take turns too.
		ri := 0
		for i, x := range n.wl.Resources {
			if x == r {
				ri = i
			}
		}
		k := int64(n.wl.Entries - n.left[r])
		if n.wl.Nested {
			ri = 0
		}
		slot := (k*int64(len(n.wl.Resources))+int64(ri))*int64(n.N) + int64(n.ID)
		d = time.Duration(slot*int64(n.wl.Slot) - n.env.Now())
		if d < 0 {
			d = 0
		}
	}
	if n.wl.Nested {
		n.after(d, n.beginNested)
		return
	}
	n.after(d, func() { n.request(r) })
}

// beginNested starts a nested entry: it asks for the first resource of this
// entry's lock order; each grant asks for the next (holding the earlier
// ones), and the last one starts the hold time.
func (n *Node) beginNested() {
	order := append([]string(nil), n.wl.Resources...)
	switch n.wl.Order {
	case OrderReverseOdd:
		if n.ID%2 == 1 {
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
	case OrderRandom:
		n.wrand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	n.plan, n.planIdx = order, 0
	n.request(order[0])
}

func (n *Node) request(r string) {
	if n.spec.Kind == algo.Multicast {
		// For a multicast algorithm a request is one message to multicast;
		// the machine's sends follow this event. Its one instance guards
		// no resource: r only counts the workload's entries (the detail
		// names it, so that a restarted process resumes its count).
		m := n.resources[0]
		n.recordInput(trace.KindInternal, m, func(ev *trace.Event) {
			ev.Detail = n.detail(trace.Multicast{Entry: n.wl.Entries - n.left[r] + 1, Resource: r})
		})
		n.step(m, algo.Input{Kind: algo.Request, Resource: m})
		n.entryDone(r)
		return
	}
	n.recordInput(trace.KindCSRequest, r, nil)
	n.step(r, algo.Input{Kind: algo.Request, Resource: r})
}

func (n *Node) release(r string) {
	n.recordInput(trace.KindCSExit, r, nil)
	n.step(r, algo.Input{Kind: algo.Release, Resource: r})
	n.entryDone(r)
}

// releaseNested leaves every resource of a nested entry, innermost first.
func (n *Node) releaseNested(plan []string) {
	for i := len(plan) - 1; i >= 0; i-- {
		n.recordInput(trace.KindCSExit, plan[i], nil)
		n.step(plan[i], algo.Input{Kind: algo.Release, Resource: plan[i]})
		n.left[plan[i]]--
	}
	for _, k := range n.left {
		if k > 0 {
			n.scheduleRequest(plan[0])
			return
		}
	}
	n.finish()
}

func (n *Node) entryDone(r string) {
	n.left[r]--
	if n.left[r] > 0 {
		n.scheduleRequest(r)
		return
	}
	for _, k := range n.left {
		if k > 0 {
			return
		}
	}
	n.finish()
}

func (n *Node) finish() {
	if n.done {
		return
	}
	n.done = true
	if n.OnDone != nil {
		n.OnDone()
	}
}

func (n *Node) fire(r, name string) {
	if n.stopped || n.crashed {
		return
	}
	delete(n.timers, r+"\x00"+name)
	n.recordInput(trace.KindTimeout, r, func(ev *trace.Event) {
		ev.Detail = n.detail(trace.Timeout{Timer: name})
	})
	n.step(r, algo.Input{Kind: algo.Timer, TimerName: name})
}

// step gives one input to the machine of resource r and carries out its
// outputs in order. The input's event was recorded last by recordInput
// (Start and Recover step every machine after one event).
func (n *Node) step(r string, in algo.Input) {
	in.Now = n.inNow
	in.Clock = n.lamport
	outs := n.machines[r].Step(in)
	for _, o := range outs {
		if n.stopped || n.crashed {
			return // a Halt went down
		}
		n.apply(r, o)
	}
}

func (n *Node) apply(r string, o algo.Output) {
	switch o.Kind {
	case algo.Send:
		n.send(r, o)
	case algo.SetTimer:
		key := r + "\x00" + o.TimerName
		if t, ok := n.timers[key]; ok {
			t.Stop()
		}
		name := o.TimerName
		if n.timers == nil {
			n.timers = map[string]Timer{}
		}
		n.timers[key] = n.env.After(time.Duration(o.After), func() { n.fire(r, name) })
	case algo.CancelTimer:
		key := r + "\x00" + o.TimerName
		if t, ok := n.timers[key]; ok {
			t.Stop()
			delete(n.timers, key)
		}
	case algo.Enter:
		n.entered(r)
	case algo.Leader:
		n.record(trace.KindLeader, r, func(ev *trace.Event) {
			ev.Peer = o.Leader
			ev.Detail = n.detail(trace.Leader{Leader: o.Leader, Term: o.Msg.Term})
		})
		if n.OnLeader != nil {
			n.OnLeader(o.Leader)
		}
	case algo.Persist:
		if n.saved == nil {
			n.saved = map[string]algo.Msg{}
		}
		n.saved[r] = o.Msg
		n.record(trace.KindInternal, r, func(ev *trace.Event) {
			ev.Detail = n.detail(trace.Persist{State: trace.Message(o.Msg)})
		})
	case algo.Suspect, algo.Trust:
		kind := trace.KindSuspect
		if o.Kind == algo.Trust {
			kind = trace.KindTrust
		}
		n.record(kind, r, func(ev *trace.Event) { ev.Peer = o.To })
	case algo.MulticastDelivered:
		n.record(trace.KindDeliver, r, func(ev *trace.Event) {
			ev.Peer = o.From
			ev.Detail = n.detail(trace.Delivery{From: o.From, Stamp: o.Msg.Stamp, ID: o.Msg.ID})
		})
	case algo.Wait:
		set := append([]int(nil), o.Set...)
		sort.Ints(set)
		n.record(trace.KindWait, r, func(ev *trace.Event) {
			ev.Detail = n.detail(trace.Wait{WaitingFor: set})
		})
	case algo.Note:
		n.record(trace.KindInternal, r, func(ev *trace.Event) {
			ev.Detail = n.detail(trace.Note{Text: o.Text})
		})
	case algo.Fail:
		// A failure the run survives: recorded, not Err (which ends the
		// run), so that a check names it (analyze.Protocol).
		n.record(trace.KindInternal, r, func(ev *trace.Event) {
			ev.Detail = n.detail(trace.Failure{Text: o.Text})
		})
	case algo.Halt:
		n.Crash(trace.Crash{Reason: o.Text})
		if n.OnHalt != nil {
			n.OnHalt()
		}
	case algo.StartElection:
		n.record(trace.KindElectionStart, r, func(ev *trace.Event) {
			ev.Detail = n.detail(trace.ElectionStart{Term: o.Msg.Term})
		})
	default:
		n.fail(fmt.Errorf("%s at P%d returned an output of unknown kind %d", n.spec.Name, n.ID, o.Kind))
	}
}

// send records the send of o's message on resource r and hands it,
// stamped, to the network.
func (n *Node) send(r string, o algo.Output) {
	if o.To < 0 || o.To >= n.N {
		n.fail(fmt.Errorf("%s at P%d sent %q to P%d, which does not exist (N=%d)", n.spec.Name, n.ID, o.Msg.Type, o.To, n.N))
		return
	}
	n.sent++
	m := o.Msg
	m.Resource = r
	id := trace.MsgID(n.ID, n.sent)
	ev := n.record(trace.KindSend, r, func(ev *trace.Event) {
		ev.Msg, ev.MsgType, ev.Peer = id, m.Type, o.To
		ev.Detail = n.msgDetail(m)
	})
	n.env.Transmit(&Envelope{ID: id, From: n.ID, To: o.To, Lamport: ev.Lamport, VC: n.vc.Clone(), Msg: m})
}

// entered records the entry into r's critical section, and has the
// workload ask for the next resource of a nested entry, or leave after
// the hold time.
func (n *Node) entered(r string) {
	n.record(trace.KindCSEnter, r, nil)
	if n.wl.Nested {
		if n.planIdx < len(n.plan)-1 {
			n.planIdx++
			next := n.plan[n.planIdx]
			n.after(0, func() { n.request(next) })
			return
		}
		plan := n.plan
		n.after(n.wl.Hold.Draw(n.wrand), func() { n.releaseNested(plan) })
		return
	}
	n.after(n.wl.Hold.Draw(n.wrand), func() { n.release(r) })
}

func (n *Node) fail(err error) {
	if n.err == nil {
		n.err = err
	}
	n.record(trace.KindInternal, "", func(ev *trace.Event) {
		ev.Detail = n.detail(trace.Failure{Text: err.Error()})
	})
}

// record ticks the clocks and records one event of this node. fill sets the
// kind-specific fields.
func (n *Node) record(kind trace.Kind, r string, fill func(ev *trace.Event)) *trace.Event {
	n.seq++
	n.lamport++
	n.vc[n.ID]++
	ev := &n.ev
	*ev = trace.Event{
		Proc: n.ID, Seq: n.seq, Kind: kind, Lamport: n.lamport, VC: n.vc,
		Wall: n.env.Wall() + int64(n.skew), Peer: trace.NoPeer, Resource: r,
	}
	if fill != nil {
		fill(ev)
	}
	n.env.Record(ev)
	return ev
}

// recordInput records the event of an input the machines are about to get
// and takes their Input.Now from its wall time: what the trace holds is
// what a replay feeds them.
func (n *Node) recordInput(kind trace.Kind, r string, fill func(ev *trace.Event)) {
	ev := n.record(kind, r, fill)
	// A skew sets the wall clock off, not the time machines go by.
	n.inNow = ev.Wall - int64(n.skew) - n.setup.Origin
}

// msgDetail is the detail of a send or a receive of m: its id recorded
// even when 0 if its type carries one (algo.Spec.IDTypes).
func (n *Node) msgDetail(m algo.Msg) json.RawMessage {
	if n.spec.CarriesID(m.Type) {
		return n.detail(trace.IDMessage(m))
	}
	return n.detail(trace.Message(m))
}

// detail encodes d into the node's detail buffer, which serves every event
// in turn: Env.Record keeps neither the event nor its slices.
func (n *Node) detail(d trace.Detail) json.RawMessage {
	n.det = trace.AppendDetail(n.det[:0], d)
	if len(n.det) == 0 {
		return nil // a message without fields: no detail
	}
	return n.det
}

// clone returns a copy of the node that records through env and shares
// nothing mutable with n: its machines are copied deep. Callbacks (OnDone,
// OnLeader) are not copied. It is for drivers whose Env fires no callback
// a node gave it (World): the copy's timers are the original's names.
func (n *Node) clone(env Env) (*Node, error) {
	c := *n
	c.env = env
	c.OnDone, c.OnLeader, c.OnHalt = nil, nil, nil
	c.ev, c.det = trace.Event{}, nil
	c.vc = n.vc.Clone()
	c.plan = slices.Clone(n.plan)
	c.machines = make(map[string]algo.Machine, len(n.machines))
	for r, m := range n.machines {
		if cl, ok := m.(algo.Cloner); ok {
			c.machines[r] = cl.Clone()
			continue
		}
		cm, err := deep.Copy(m)
		if err != nil {
			return nil, fmt.Errorf("%s: copy P%d's machine: %w", n.spec.Name, n.ID, err)
		}
		c.machines[r] = cm
	}
	// c.wrand stays shared: the workload's draws time the node's own
	// callbacks, which such a driver never fires.
	// The maps are copied only when not empty: a nil map reads as an
	// empty one, and the few writes to them make them first (most states
	// a search copies have no timers and nothing persisted).
	c.saved, c.timers = nil, nil
	if len(n.saved) > 0 {
		var err error
		if c.saved, err = deep.Copy(n.saved); err != nil {
			return nil, err
		}
	}
	if len(n.timers) > 0 {
		c.timers = maps.Clone(n.timers)
	}
	c.left = maps.Clone(n.left)
	return &c, nil
}

// stampWords passes the words a Shifter describes itself with (lowered by
// base) to the hasher, and its timestamps as they count (algo.Stamp): one
// below base, below every node's clock, counts as none, since every
// timestamp still to come is above it; and, with capped, where no process
// will request again, so does one above limit, since it compares alike
// with every timestamp it can still meet (algo.Pender, World.stampLimit).
type stampWords struct {
	h      *deep.Hasher
	capped bool
	limit  int64 // with capped: the largest waiting request's timestamp, lowered by base
}

// stampNone is what a timestamp that counts as none is written as.
const stampNone = math.MaxUint64

func (s *stampWords) Word(v uint64) { s.h.Word(v) }

func (s *stampWords) Stamp(v uint64) {
	if rel := int64(v); rel < 0 || s.capped && rel > s.limit {
		v = stampNone
	}
	s.h.Word(v)
}

// fingerprint mixes into h what decides the node's future behaviour: its
// machines, Lamport clock, persisted state, timers set, and whether it is
// up (see World.Fingerprint).
//
// With shift, every timestamp is lowered by base (World.Shift) and
// written through stamps.
func (n *Node) fingerprint(h *deep.Hasher, base uint64, shift bool, stamps *stampWords) {
	var flags uint64
	for i, b := range []bool{n.started, n.crashed, n.stopped, n.err != nil} {
		if b {
			flags |= 1 << i
		}
	}
	h.Word(flags)
	var out algo.Words = h
	if shift {
		out = stamps
	}
	algo.Stamp(out, n.lamport-base)
	for _, r := range n.resources {
		if a, ok := n.machines[r].(algo.Shifter); ok && shift {
			a.AbstractFrom(out, n.lamport, base)
			continue
		}
		if a, ok := n.machines[r].(algo.Abstracter); ok {
			h.Value(a.Abstract(n.lamport))
			continue
		}
		h.Value(n.machines[r])
	}
	if len(n.saved) > 0 {
		h.Value(n.saved)
	}
	h.Word(uint64(len(n.timers)))
	if len(n.timers) == 0 {
		return
	}
	for _, t := range n.Armed() {
		h.String(t.Resource)
		h.String(t.Name)
	}
}

package algotest

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/dmxlab/dmx/runner/algo"
)

// Crash is a crash of Node at time At (ns since the run started) and its
// recovery at Recover (0: it stays down).
type Crash struct {
	Node        int
	At, Recover int64
}

func (c Crash) String() string {
	if c.Recover == 0 {
		return fmt.Sprintf("P%d crashes at t=%d", c.Node, c.At)
	}
	return fmt.Sprintf("P%d crashes at t=%d, recovers at t=%d", c.Node, c.At, c.Recover)
}

// Event kinds of crash runs (beside those of net.go).
const (
	evCrash evKind = 100 + iota
	evRecover
)

// crashRun is the state RunCrashes keeps beside the network's.
type crashRun struct {
	*net
	crashes  []Crash
	down     []bool
	crashSeq []uint64   // events scheduled up to this seq, for a node, died with its crash
	stored   []algo.Msg // stable storage: the last value each node persisted
	restarts []int
	lost     int
}

// persister wraps a machine and keeps what it persists.
type persister struct {
	m    algo.Machine
	slot *algo.Msg
}

func (p persister) Step(in algo.Input) []algo.Output {
	outs := p.m.Step(in)
	for _, o := range outs {
		if o.Kind == algo.Persist {
			v := o.Msg
			v.Vals = slices.Clone(v.Vals)
			*p.slot = v
		}
	}
	return outs
}

// RunCrashes is Run with crashes, as the runtime does them (package algo):
// a crashed node gets no input, the messages in flight to it and those that
// arrive while it is down are lost, its timers and its workload's pending
// request or release die with it (a node in the critical section leaves it
// by crashing). On recovery the bench builds a fresh machine with spec.New
// and steps it with Recover, whose Msg is the Msg of the node's last
// algo.Persist output; the node's workload then resumes with a new request
// for the entries it has not made. Messages the node sent before it
// crashed are still delivered. A node that never recovers stops counting
// for liveness.
//
// Safety and the contract are checked as in Run; liveness too, so a test
// that expects a run to get stuck after a crash should look at the error.
func RunCrashes(spec algo.Spec, opt Options, crashes []Crash) (*Result, error) {
	opt.defaults()
	for _, c := range crashes {
		if c.Node < 0 || c.Node >= opt.N || c.At < 0 || (c.Recover != 0 && c.Recover <= c.At) {
			return nil, fmt.Errorf("crash %v: bad node or times (N=%d)", c, opt.N)
		}
	}
	n := newNet(spec, opt)
	c := &crashRun{
		net:      n,
		crashes:  crashes,
		down:     make([]bool, opt.N),
		crashSeq: make([]uint64, opt.N),
		stored:   make([]algo.Msg, opt.N),
		restarts: make([]int, opt.N),
	}
	for id := 0; id < opt.N; id++ {
		m, err := c.build(id)
		if err != nil {
			return nil, err
		}
		n.add(m)
	}
	err := c.run()
	n.finish()
	return n.res, err
}

// build makes node id's machine: the first one, or a fresh one after a
// restart (with its own random stream, as a new process would have).
func (c *crashRun) build(id int) (algo.Machine, error) {
	m, err := c.machine(id, c.restarts[id])
	if err != nil {
		return nil, err
	}
	return persister{m: m, slot: &c.stored[id]}, nil
}

func (c *crashRun) run() error {
	n := c.net
	if err := n.start(n.step); err != nil {
		return err
	}
	for _, cr := range c.crashes {
		n.push(&event{at: cr.At, kind: evCrash, node: cr.Node})
		if cr.Recover != 0 {
			n.push(&event{at: cr.Recover, kind: evRecover, node: cr.Node})
		}
	}
	for {
		if n.finished() {
			return c.drain()
		}
		if n.res.Steps >= n.opt.MaxSteps {
			return n.fail(Liveness, "workload not finished after %d steps (entries %v)", n.res.Steps, n.res.Entered)
		}
		e := n.pop()
		if e == nil {
			f := n.fail(Liveness, "stuck: no message in flight and no timer pending, entries %v", n.res.Entered)
			f.Stuck = true
			return f
		}
		n.now = e.at
		if e.kind == evCrash {
			c.crash(e.node)
			continue
		}
		if e.kind == evRecover {
			if err := c.recover(e.node); err != nil {
				return err
			}
			continue
		}
		if c.dead(e) {
			continue
		}
		in, ok := n.input(e)
		if !ok {
			continue
		}
		if err := n.step(e.node, in, e.clock); err != nil {
			return err
		}
	}
}

// dead reports whether e is lost to a crash: its node is down, or it was
// scheduled for the node before its last crash.
func (c *crashRun) dead(e *event) bool {
	if !c.down[e.node] && e.seq > c.crashSeq[e.node] {
		return false
	}
	if e.kind == evDeliver {
		c.lost++
		c.logf("P%d lost %d->%d %s", e.node, e.from, e.node, FormatMsg(e.msg))
	}
	return true
}

func (c *crashRun) crash(id int) {
	n := c.net
	if c.down[id] {
		return
	}
	nd := n.nodes[id]
	c.down[id] = true
	c.crashSeq[id] = n.seq
	nd.inCS, nd.requested, nd.wait = false, false, nil
	clear(nd.timers)
	recovers := false
	for _, cr := range c.crashes {
		if cr.Node == id && cr.Recover > n.now {
			recovers = true
		}
	}
	if !recovers {
		n.want[id] = false
	}
	n.logf("P%d crash", id)
}

func (c *crashRun) recover(id int) error {
	n := c.net
	if !c.down[id] {
		return nil
	}
	c.restarts[id]++
	m, err := c.build(id)
	if err != nil {
		return err
	}
	nd := n.nodes[id]
	nd.m = m
	c.down[id] = false
	// A restarted node keeps its Lamport clock: the runtime owns it.
	if err := n.step(id, algo.Input{Kind: algo.Recover, Msg: c.stored[id]}, 0); err != nil {
		return err
	}
	if n.want[id] && nd.done < n.opt.Entries {
		n.push(&event{at: n.now + n.draw(0, n.opt.Think), kind: evRequest, node: id})
	}
	return nil
}

// drain is net.drain for a crash run: messages to a node that is down are
// lost, and a recovery still due happens at its turn.
func (c *crashRun) drain() error {
	n := c.net
	for round := 0; round < 2*len(n.nodes)+8; round++ {
		var batch, rest []*event
		for _, e := range n.queue {
			switch e.kind {
			case evDeliver, evCrash, evRecover:
				batch = append(batch, e)
			default:
				rest = append(rest, e)
			}
		}
		if len(batch) == 0 {
			break
		}
		n.queue = rest
		slices.SortFunc(batch, func(a, b *event) int {
			if a.at != b.at {
				return cmp.Compare(a.at, b.at)
			}
			return cmp.Compare(a.seq, b.seq)
		})
		for _, e := range batch {
			n.now = max(n.now, e.at)
			switch {
			case e.kind == evCrash:
				c.crash(e.node)
			case e.kind == evRecover:
				if err := c.recover(e.node); err != nil {
					return err
				}
			case c.dead(e):
			default:
				if err := n.step(e.node, algo.Input{Kind: algo.Receive, From: e.from, Msg: e.msg}, e.clock); err != nil {
					return err
				}
			}
		}
	}
	for id, nd := range n.nodes {
		if !c.down[id] && len(nd.wait) > 0 {
			return n.fail(Contract, "P%d still waits for %v after the workload finished", id, nd.wait)
		}
	}
	return nil
}

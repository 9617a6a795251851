package algotest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/runner/algo"
)

// Options configure one run of the in-memory network. Zero fields take the
// defaults documented on each.
type Options struct {
	N        int               // group size (required)
	Seed     uint64            // drives every random choice of the run
	Params   map[string]string // algorithm parameters
	Resource string            // default "cs"

	// Entries is how many times each node in Requesters enters the critical
	// section; default 3. Requesters lists the nodes that run the workload;
	// nil means all of them.
	Entries    int
	Requesters []int

	// FIFO delivers the messages of each (from, to) channel in the order they
	// were sent. Without it messages may overtake each other.
	FIFO bool

	// Message delays are drawn from [MinDelay, MaxDelay] ns (default 100µs to
	// 5ms); think times before each request from [0, Think] (default 10ms);
	// hold times from [0, Hold] (default 3ms).
	MinDelay, MaxDelay int64
	Think, Hold        int64

	// MaxSteps bounds the run (inputs given to machines); default 500000. A
	// run that has not finished its workload by then fails for liveness.
	MaxSteps int

	// Log keeps the last Log steps, formatted, for the failure report.
	Log int
}

func (o *Options) defaults() {
	if o.Resource == "" {
		o.Resource = "cs"
	}
	if o.Entries == 0 {
		o.Entries = 3
	}
	if o.MaxDelay == 0 {
		o.MinDelay, o.MaxDelay = 100_000, 5_000_000
	}
	if o.Think == 0 {
		o.Think = 10_000_000
	}
	if o.Hold == 0 {
		o.Hold = 3_000_000
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = 500_000
	}
}

// Result is what a run did.
type Result struct {
	Seed     uint64
	Entered  []int          // critical-section entries per node
	Sent     map[string]int // messages sent, by type
	SentBy   []int          // messages sent, by node
	Messages int            // messages sent in all
	Steps    int            // inputs given to machines
	Now      int64          // simulated ns at the end
	Waits    [][]int        // each node's last Wait set
	Log      []string       // the last Options.Log steps
}

// Failure kinds.
const (
	Safety   = "safety"   // two nodes in the critical section at once
	Liveness = "liveness" // a request never entered: the run got stuck or ran out of steps
	Contract = "contract" // a machine broke the contract of package algo
)

// Failure is why a run failed. Run returns it as its error.
type Failure struct {
	Kind  string  // Safety, Liveness or Contract
	Seed  uint64  // the run's seed
	Msg   string  // what happened
	Stuck bool    // Liveness: nothing was left to deliver or fire
	Waits [][]int // each node's last Wait set
	Cycle []int   // a cycle in the wait-for graph, if there is one
	Log   []string
}

func (f *Failure) Error() string {
	s := fmt.Sprintf("%s violation (seed %d): %s", f.Kind, f.Seed, f.Msg)
	if f.Kind == Liveness {
		s += "; waiting:"
		for i, w := range f.Waits {
			if len(w) > 0 {
				s += fmt.Sprintf(" P%d->%v", i, w)
			}
		}
		if len(f.Cycle) > 0 {
			s += fmt.Sprintf("; wait-for cycle %v", f.Cycle)
		}
	}
	return s
}

type evKind int

const (
	evDeliver evKind = iota
	evTimer
	evRequest
	evRelease
)

type event struct {
	at   int64
	seq  uint64
	kind evKind
	node int
	// deliveries
	from  int
	msg   algo.Msg
	clock uint64
	// timers
	name string
	gen  uint64
}

type node struct {
	m         algo.Machine
	clock     uint64
	requested bool // a Request was given and not yet released
	inCS      bool
	done      int
	wait      []int
	timers    map[string]uint64 // name -> generation of the live timer
}

type net struct {
	opt     Options
	spec    algo.Spec
	rnd     *rand.Rand
	nodes   []*node
	queue   []*event
	seq     uint64
	now     int64
	res     *Result
	lastDue map[[2]int]int64 // FIFO: last delivery time per channel
	log     []string
	want    []bool // node runs the workload
}

// Run runs spec's machines on a fresh in-memory network until every
// requester has entered and left the critical section opt.Entries times, and
// then delivers the messages still in flight (firing no more timers). It
// returns a *Failure as its error if the run broke safety, liveness or the
// contract, and an ordinary error if a machine could not be built.
func Run(spec algo.Spec, opt Options) (*Result, error) {
	opt.defaults()
	n := newNet(spec, opt)
	for id := 0; id < opt.N; id++ {
		m, err := n.machine(id, 0)
		if err != nil {
			return nil, err
		}
		n.add(m)
	}
	err := n.run()
	n.finish()
	return n.res, err
}

// newNet is the network of a run of spec under opt (defaults applied),
// before its machines are added. Every run of the bench draws from the
// same stream, seeded alike, so that a seed means one schedule.
func newNet(spec algo.Spec, opt Options) *net {
	n := &net{
		opt:     opt,
		spec:    spec,
		rnd:     rand.New(rand.NewPCG(opt.Seed, 0x646d78)),
		lastDue: map[[2]int]int64{},
		res: &Result{
			Seed:    opt.Seed,
			Entered: make([]int, opt.N),
			Sent:    map[string]int{},
			SentBy:  make([]int, opt.N),
		},
		want: make([]bool, opt.N),
	}
	if opt.Requesters == nil {
		for i := range n.want {
			n.want[i] = true
		}
	}
	for _, r := range opt.Requesters {
		n.want[r] = true
	}
	return n
}

// machine builds node id's machine after restarts restarts, with its own
// random stream (a restarted process is a new one).
func (n *net) machine(id, restarts int) (algo.Machine, error) {
	m, err := n.spec.New(algo.Config{
		ID: id, N: n.opt.N, Resource: n.opt.Resource, Params: n.opt.Params,
		Rand: rand.New(rand.NewPCG(n.opt.Seed, uint64(id)+1+uint64(restarts)<<32)),
	})
	if err != nil {
		return nil, fmt.Errorf("new %s node %d: %w", n.spec.Name, id, err)
	}
	return m, nil
}

// add adds the next node, running m.
func (n *net) add(m algo.Machine) {
	n.nodes = append(n.nodes, &node{m: m, timers: map[string]uint64{}})
}

// finish records the end of the run in its Result.
func (n *net) finish() {
	n.res.Now = n.now
	n.res.Log = n.log
	n.res.Waits = n.waits()
}

// start gives Start to every node at time 0, in a random order, before
// anything else, with step (net.step or a wrapper of it), and schedules
// the first request of every node that runs the workload.
func (n *net) start(step func(id int, in algo.Input, msgClock uint64) error) error {
	for _, id := range n.rnd.Perm(len(n.nodes)) {
		if err := step(id, algo.Input{Kind: algo.Start}, 0); err != nil {
			return err
		}
	}
	for id := range n.nodes {
		if n.want[id] && n.opt.Entries > 0 {
			n.push(&event{at: n.draw(0, n.opt.Think), kind: evRequest, node: id})
		}
	}
	return nil
}

// input is the input e gives its node: a delivery, a timer (false if it
// was cancelled or replaced since), or a step of the request/hold
// workload, whose next request it schedules after a release.
func (n *net) input(e *event) (algo.Input, bool) {
	nd := n.nodes[e.node]
	switch e.kind {
	case evDeliver:
		return algo.Input{Kind: algo.Receive, From: e.from, Msg: e.msg}, true
	case evTimer:
		if nd.timers[e.name] != e.gen {
			return algo.Input{}, false // cancelled or replaced
		}
		delete(nd.timers, e.name)
		return algo.Input{Kind: algo.Timer, TimerName: e.name}, true
	case evRequest:
		nd.requested = true
		return algo.Input{Kind: algo.Request, Resource: n.opt.Resource}, true
	case evRelease:
		nd.inCS, nd.requested = false, false
		nd.done++
		if nd.done < n.opt.Entries {
			n.push(&event{at: n.now + n.draw(0, n.opt.Think), kind: evRequest, node: e.node})
		}
		return algo.Input{Kind: algo.Release, Resource: n.opt.Resource}, true
	}
	panic(fmt.Sprintf("algotest: event kind %d is not an input", e.kind))
}

func (n *net) waits() [][]int {
	w := make([][]int, len(n.nodes))
	for i, nd := range n.nodes {
		w[i] = slices.Clone(nd.wait)
	}
	return w
}

func (n *net) fail(kind, format string, args ...any) *Failure {
	w := n.waits()
	return &Failure{Kind: kind, Seed: n.opt.Seed, Msg: fmt.Sprintf("t=%d: ", n.now) + fmt.Sprintf(format, args...),
		Waits: w, Cycle: Cycle(w), Log: n.log}
}

func (n *net) push(e *event) {
	n.seq++
	e.seq = n.seq
	n.queue = append(n.queue, e)
}

// pop removes the earliest event (ties: the one scheduled first).
func (n *net) pop() *event {
	if len(n.queue) == 0 {
		return nil
	}
	best := 0
	for i, e := range n.queue[1:] {
		b := n.queue[best]
		if e.at < b.at || (e.at == b.at && e.seq < b.seq) {
			best = i + 1
		}
	}
	e := n.queue[best]
	n.queue[best] = n.queue[len(n.queue)-1]
	n.queue = n.queue[:len(n.queue)-1]
	return e
}

func (n *net) draw(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + n.rnd.Int64N(hi-lo+1)
}

func (n *net) finished() bool {
	for i, nd := range n.nodes {
		if n.want[i] && (nd.done < n.opt.Entries || nd.requested) {
			return false
		}
	}
	return true
}

func (n *net) logf(format string, args ...any) {
	if n.opt.Log <= 0 {
		return
	}
	if len(n.log) >= n.opt.Log {
		n.log = n.log[1:]
	}
	n.log = append(n.log, fmt.Sprintf("t=%-9d ", n.now)+fmt.Sprintf(format, args...))
}

func (n *net) run() error {
	if err := n.start(n.step); err != nil {
		return err
	}
	for {
		if n.finished() {
			if err := n.drain(); err != nil {
				return err
			}
			for id, nd := range n.nodes {
				if len(nd.wait) > 0 {
					return n.fail(Contract, "P%d still waits for %v after the workload finished", id, nd.wait)
				}
			}
			return nil
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
		in, ok := n.input(e)
		if !ok {
			continue
		}
		if err := n.step(e.node, in, e.clock); err != nil {
			return err
		}
	}
}

// drain delivers the messages still in flight once the workload is done, so
// that message counts cover every message the entries caused (an ack can
// still be on its way after its requester has entered and left). It goes in
// rounds: each round delivers the messages in flight when it began; what they
// cause is delivered in the next round, up to 2N+8 rounds, after which
// messages are left undelivered (a ring's token circulates for ever). Timers
// do not fire any more.
func (n *net) drain() error {
	for round := 0; round < 2*len(n.nodes)+8; round++ {
		var batch, rest []*event
		for _, e := range n.queue {
			if e.kind == evDeliver {
				batch = append(batch, e)
			} else {
				rest = append(rest, e)
			}
		}
		if len(batch) == 0 {
			return nil
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
			if err := n.step(e.node, algo.Input{Kind: algo.Receive, From: e.from, Msg: e.msg}, e.clock); err != nil {
				return err
			}
		}
	}
	return nil
}

// step gives in to node id (msgClock: the Lamport clock a delivered message
// carried) and carries out the outputs, checking them.
func (n *net) step(id int, in algo.Input, msgClock uint64) error {
	nd := n.nodes[id]
	in.Now = n.now
	in.Clock = max(nd.clock, msgClock) + 1
	nd.clock = in.Clock
	n.res.Steps++
	n.logf("P%d %s", id, describeInput(id, in))
	// The machine gets its own copy of the message's slice: it must not keep
	// it, and if it does it must not see the bench change it.
	in.Msg.Vals = slices.Clone(in.Msg.Vals)
	outs := nd.m.Step(in)
	for _, o := range outs {
		nd.clock++
		n.logf("P%d   %s", id, FormatOutput(id, o))
		switch o.Kind {
		case algo.Send:
			if o.To < 0 || o.To >= len(n.nodes) {
				return n.fail(Contract, "P%d sent %s to P%d, outside 0..%d", id, o.Msg.Type, o.To, len(n.nodes)-1)
			}
			m := o.Msg
			m.Resource = n.opt.Resource
			m.Vals = slices.Clone(m.Vals)
			n.res.Sent[m.Type]++
			n.res.SentBy[id]++
			n.res.Messages++
			at := n.now + n.draw(n.opt.MinDelay, n.opt.MaxDelay)
			if n.opt.FIFO {
				ch := [2]int{id, o.To}
				at = max(at, n.lastDue[ch])
				n.lastDue[ch] = at
			}
			n.push(&event{at: at, kind: evDeliver, node: o.To, from: id, msg: m, clock: nd.clock})
		case algo.SetTimer:
			if o.After < 0 {
				return n.fail(Contract, "P%d set timer %s %d ns in the past", id, o.TimerName, o.After)
			}
			n.seq++
			nd.timers[o.TimerName] = n.seq
			n.push(&event{at: n.now + o.After, kind: evTimer, node: id, name: o.TimerName, gen: n.seq})
		case algo.CancelTimer:
			delete(nd.timers, o.TimerName)
		case algo.Enter:
			if !nd.requested {
				return n.fail(Contract, "P%d entered the critical section without a pending request", id)
			}
			if nd.inCS {
				return n.fail(Contract, "P%d entered the critical section twice for one request", id)
			}
			for j, other := range n.nodes {
				if other.inCS {
					return n.fail(Safety, "P%d entered the critical section while P%d holds it", id, j)
				}
			}
			nd.inCS = true
			n.res.Entered[id]++
			n.push(&event{at: n.now + n.draw(0, n.opt.Hold), kind: evRelease, node: id})
		case algo.Wait:
			for _, w := range o.Set {
				if w < 0 || w >= len(n.nodes) || w == id {
					return n.fail(Contract, "P%d waits for %v: %d is not another node", id, o.Set, w)
				}
			}
			nd.wait = slices.Clone(o.Set)
		}
	}
	if nd.inCS && len(nd.wait) > 0 {
		return n.fail(Contract, "P%d is in the critical section but its Wait set is %v", id, nd.wait)
	}
	return nil
}

// describeInput formats node id's input for scripts and run logs: a
// delivery with its message, a timer's name, a Recover with the value
// stored, else the input's kind; then the input's clock.
func describeInput(id int, in algo.Input) string {
	switch in.Kind {
	case algo.Receive:
		return fmt.Sprintf("deliver %d->%d %s @%d", in.From, id, FormatMsg(in.Msg), in.Clock)
	case algo.Timer:
		return fmt.Sprintf("timer %s @%d", in.TimerName, in.Clock)
	case algo.Recover:
		if in.Msg.Type != "" {
			return fmt.Sprintf("recover stored=[%s] @%d", FormatMsg(in.Msg), in.Clock)
		}
	}
	return fmt.Sprintf("%s @%d", in.Kind, in.Clock)
}

// Cycle returns a cycle in the wait-for graph whose edges are i -> j for
// every j in waits[i], as the list of nodes along it, or nil if the graph
// has none. A cycle among blocked processes is a deadlock (seed 001,
// "Modeling Deadlocks": deadlocked iff the WFG has a cycle).
func Cycle(waits [][]int) []int {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(waits))
	var stack []int
	var found []int
	var visit func(u int) bool
	visit = func(u int) bool {
		color[u] = grey
		stack = append(stack, u)
		for _, v := range waits[u] {
			if v < 0 || v >= len(waits) {
				continue
			}
			if color[v] == grey {
				i := slices.Index(stack, v)
				found = slices.Clone(stack[i:])
				return true
			}
			if color[v] == white && visit(v) {
				return true
			}
		}
		stack = stack[:len(stack)-1]
		color[u] = black
		return false
	}
	for u := range waits {
		if color[u] == white && visit(u) {
			return found
		}
	}
	return nil
}

// FormatWaits formats wait sets as "P1->[2 3] P2->[0]", leaving out nodes
// that wait for nobody.
func FormatWaits(waits [][]int) string {
	var parts []string
	for i, w := range waits {
		if len(w) > 0 {
			parts = append(parts, fmt.Sprintf("P%d->%s", i, formatSet(w)))
		}
	}
	return strings.Join(parts, " ")
}

package algotest

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
)

// Failure kinds of election runs (RunElection), after the properties of seed
// 001 "The Leader Election Problem" and the checks dmx runs on traces.
const (
	Agreement   = "agreement"   // two live processes ended with different leaders
	Validity    = "validity"    // the leader they agree on is not the one the rule names
	SplitBrain  = "split-brain" // two live processes believed they lead at once
	Termination = "termination" // a live process ended knowing no leader
)

// ElectionValidity says which leader a run must end with.
type ElectionValidity int

const (
	// HighestLive: the highest live id (seed 001: "the non-faulty process
	// with the best (highest) election attribute value is elected").
	HighestLive ElectionValidity = iota
	// AnyLive: any live process (seed 001 "It doesn't matter which process
	// is elected"; Chubby's majority vote elects whoever gets the votes).
	AnyLive
)

// ElectionLeader is the Proc of an ElectionFault aimed at whichever process
// leads when the fault fires.
const ElectionLeader = -1

// ElectionFault is a crash or a recovery of Proc at time At (ns).
type ElectionFault struct {
	At      int64
	Recover bool // false: a crash
	Proc    int  // or ElectionLeader (crashes only)
}

func (f ElectionFault) String() string {
	k := "crash"
	if f.Recover {
		k = "recover"
	}
	p := strconv.Itoa(f.Proc)
	if f.Proc == ElectionLeader {
		p = "leader"
	}
	return fmt.Sprintf("%s:%s@%v", k, p, time.Duration(f.At))
}

// ElectionOptions configure one run of RunElection. Zero fields take the
// defaults documented on each.
type ElectionOptions struct {
	N      int               // group size (required)
	Seed   uint64            // drives every random choice of the run
	Params map[string]string // algorithm parameters

	// Message delays are drawn from [MinDelay, MaxDelay] ns (default 100µs
	// to 5ms). FIFO keeps each channel in send order.
	MinDelay, MaxDelay int64
	FIFO               bool

	// Faults is a fixed schedule. LeaderCrashes more crashes of whoever
	// leads are drawn at times in [CrashFrom, CrashTo] (default 100ms to
	// 600ms); if RecoverMax > 0 each of those nodes recovers after a delay
	// drawn from [RecoverMin, RecoverMax]. The last live node never crashes.
	Faults                 []ElectionFault
	LeaderCrashes          int
	CrashFrom, CrashTo     int64
	RecoverMin, RecoverMax int64

	// The run ends Settle ns (default 1s) after the last fault; the checks
	// of the end (termination, agreement, validity) look at that moment.
	Settle int64

	Validity ElectionValidity
	// AllowSplitBrain records the moments two live nodes believe they lead
	// (Result.SplitBrains) instead of failing the run.
	AllowSplitBrain bool

	MaxSteps int // default 3,000,000
	Log      int // keep the last Log steps for the failure report
}

func (o *ElectionOptions) defaults() {
	if o.MaxDelay == 0 {
		o.MinDelay, o.MaxDelay = 100_000, 5_000_000
	}
	if o.CrashTo == 0 {
		o.CrashFrom, o.CrashTo = 100_000_000, 600_000_000
	}
	if o.Settle == 0 {
		o.Settle = 1_000_000_000
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = 3_000_000
	}
}

// SplitBrainEpisode is a moment at which several live nodes believed they
// lead: it begins At, with the step that made Leaders (two or more) believe
// so at once.
type SplitBrainEpisode struct {
	At      int64
	Leaders []int
}

// ElectionResult is what an election run did.
type ElectionResult struct {
	Seed     uint64
	Leaders  []int          // each node's belief at the end: the last leader it decided, -1 for none or down
	Alive    []bool         // which nodes are up at the end
	Sent     map[string]int // messages sent, by type
	SentBy   []int          // messages sent, by node
	Messages int            // messages sent in all
	Lost     int            // messages lost to crashes
	Faults   []string       // the faults that happened, e.g. "crash:4@312ms"

	Elections       int // StartElection outputs
	Decisions       int // Leader outputs
	Suspicions      int // Suspect outputs
	FalseSuspicions int // Suspect outputs naming a node that was up
	SplitBrains     []SplitBrainEpisode

	Steps int
	Now   int64
	Log   []string
}

// ElectionMessages is the number of messages sent whose type is not in
// skip (e.g. the failure detector's heartbeats).
func (r *ElectionResult) ElectionMessages(skip ...string) int {
	t := 0
	for k, v := range r.Sent {
		if !slices.Contains(skip, k) {
			t += v
		}
	}
	return t
}

type eKind int

const (
	eDeliver eKind = iota
	eTimer
	eFault
)

type eEvent struct {
	at   int64
	seq  uint64
	kind eKind
	node int
	inc  int // the incarnation of node the event is for
	// deliveries
	from  int
	msg   algo.Msg
	clock uint64
	// timers
	name string
	gen  uint64
	// faults
	fault ElectionFault
}

type eQueue []*eEvent

func (q eQueue) Len() int { return len(q) }
func (q eQueue) Less(i, j int) bool {
	return q[i].at < q[j].at || (q[i].at == q[j].at && q[i].seq < q[j].seq)
}
func (q eQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eQueue) Push(x any)   { *q = append(*q, x.(*eEvent)) }
func (q *eQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

type eNode struct {
	m        algo.Machine
	clock    uint64
	up       bool
	inc      int
	belief   int               // the last leader decided, -1 for none
	timers   map[string]uint64 // name -> generation of the live timer
	stored   algo.Msg          // stable storage: the last value persisted
	restarts int
}

type electionNet struct {
	opt       ElectionOptions
	spec      algo.Spec
	rnd       *rand.Rand
	nodes     []*eNode
	q         eQueue
	seq       uint64
	now       int64
	end       int64
	res       *ElectionResult
	lastDue   map[[2]int]int64
	decisions []int // every Leader output's value, in order, for crash:leader
	splitOpen bool
	log       []string
}

// RunElection runs spec's election machines on a seeded in-memory network:
// every node gets Start at time 0 (in a random order), then messages are
// delivered after random delays and timers fire when due, while the faults
// of the schedule happen. The run ends Settle after the last fault.
//
// Crashes are as the runtime does them (package algo): a crashed node gets
// no input, the messages in flight to it and those that arrive while it is
// down are lost, and its timers die; the messages it sent before crashing
// are still delivered. On recovery the bench builds a fresh machine with
// spec.New and steps it with Recover, whose Msg is the last value the node
// Persisted.
//
// A node's belief is the leader of its last Leader output (a negative
// Leader: none), reset when it crashes. After every step the bench checks
// that at most one live node believes it leads itself (seed 001: "one and
// only one process is chosen"), unless AllowSplitBrain; at the end, that
// every live node believes in a leader (termination), the same one
// (agreement), and the one Validity names. It returns a *Failure as its
// error when a check fails, and an ordinary error if a machine could not be
// built.
func RunElection(spec algo.Spec, opt ElectionOptions) (*ElectionResult, error) {
	opt.defaults()
	if opt.N < 1 {
		return nil, fmt.Errorf("election run: N=%d", opt.N)
	}
	n := &electionNet{
		opt:     opt,
		spec:    spec,
		rnd:     rand.New(rand.NewPCG(opt.Seed, 0x656c6563)),
		lastDue: map[[2]int]int64{},
		res: &ElectionResult{
			Seed:   opt.Seed,
			Sent:   map[string]int{},
			SentBy: make([]int, opt.N),
		},
	}
	for id := 0; id < opt.N; id++ {
		nd := &eNode{up: true, belief: -1, timers: map[string]uint64{}}
		n.nodes = append(n.nodes, nd)
		if err := n.build(id); err != nil {
			return nil, err
		}
	}
	err := n.run()
	n.res.Now = n.now
	n.res.Log = n.log
	n.res.Leaders = make([]int, opt.N)
	n.res.Alive = make([]bool, opt.N)
	for i, nd := range n.nodes {
		n.res.Leaders[i] = -1
		if nd.up {
			n.res.Leaders[i] = nd.belief
		}
		n.res.Alive[i] = nd.up
	}
	return n.res, err
}

func (n *electionNet) build(id int) error {
	nd := n.nodes[id]
	m, err := n.spec.New(algo.Config{
		ID: id, N: n.opt.N, Resource: "election", Params: n.opt.Params,
		Rand: rand.New(rand.NewPCG(n.opt.Seed, uint64(id)+1+uint64(nd.restarts)<<32)),
	})
	if err != nil {
		return fmt.Errorf("new %s node %d: %w", n.spec.Name, id, err)
	}
	nd.m = m
	return nil
}

func (n *electionNet) push(e *eEvent) {
	n.seq++
	e.seq = n.seq
	heap.Push(&n.q, e)
}

func (n *electionNet) draw(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + n.rnd.Int64N(hi-lo+1)
}

func (n *electionNet) logf(format string, args ...any) {
	if n.opt.Log <= 0 {
		return
	}
	if len(n.log) >= n.opt.Log {
		n.log = n.log[1:]
	}
	n.log = append(n.log, fmt.Sprintf("t=%-10v ", time.Duration(n.now))+fmt.Sprintf(format, args...))
}

func (n *electionNet) fail(kind, format string, args ...any) *Failure {
	return &Failure{Kind: kind, Seed: n.opt.Seed,
		Msg: fmt.Sprintf("t=%v: ", time.Duration(n.now)) + fmt.Sprintf(format, args...) +
			fmt.Sprintf(" (beliefs %s; faults %v)", n.beliefs(), n.res.Faults),
		Log: n.log}
}

// beliefs formats every node's belief: "P0->4 P1->4 P2:down".
func (n *electionNet) beliefs() string {
	var parts []string
	for i, nd := range n.nodes {
		switch {
		case !nd.up:
			parts = append(parts, fmt.Sprintf("P%d:down", i))
		case nd.belief < 0:
			parts = append(parts, fmt.Sprintf("P%d->?", i))
		default:
			parts = append(parts, fmt.Sprintf("P%d->%d", i, nd.belief))
		}
	}
	return strings.Join(parts, " ")
}

func (n *electionNet) run() error {
	// The fault schedule: the fixed faults, then the drawn leader crashes
	// and their recoveries.
	faults := slices.Clone(n.opt.Faults)
	for k := 0; k < n.opt.LeaderCrashes; k++ {
		at := n.draw(n.opt.CrashFrom, n.opt.CrashTo)
		faults = append(faults, ElectionFault{At: at, Proc: ElectionLeader})
	}
	last := int64(0)
	for _, f := range faults {
		n.push(&eEvent{at: f.At, kind: eFault, fault: f})
		last = max(last, f.At)
	}
	if n.opt.RecoverMax > 0 {
		last += n.opt.RecoverMax
	}
	n.end = last + n.opt.Settle

	for _, id := range n.rnd.Perm(len(n.nodes)) {
		if err := n.step(id, algo.Input{Kind: algo.Start}, 0); err != nil {
			return err
		}
	}
	for n.q.Len() > 0 {
		if n.res.Steps >= n.opt.MaxSteps {
			return n.fail(Termination, "still running after %d steps", n.res.Steps)
		}
		e := heap.Pop(&n.q).(*eEvent)
		if e.at > n.end {
			break
		}
		n.now = e.at
		switch e.kind {
		case eFault:
			if err := n.fault(e.fault); err != nil {
				return err
			}
			continue
		case eDeliver:
			nd := n.nodes[e.node]
			if !nd.up || nd.inc != e.inc {
				n.res.Lost++
				n.logf("P%d lost %d->%d %s", e.node, e.from, e.node, FormatMsg(e.msg))
				continue
			}
			if err := n.step(e.node, algo.Input{Kind: algo.Receive, From: e.from, Msg: e.msg}, e.clock); err != nil {
				return err
			}
		case eTimer:
			nd := n.nodes[e.node]
			if !nd.up || nd.inc != e.inc || nd.timers[e.name] != e.gen {
				continue // died with a crash, cancelled or replaced
			}
			delete(nd.timers, e.name)
			if err := n.step(e.node, algo.Input{Kind: algo.Timer, TimerName: e.name}, 0); err != nil {
				return err
			}
		}
	}
	n.now = max(n.now, n.end)
	return n.checkEnd()
}

// fault carries out one fault of the schedule.
func (n *electionNet) fault(f ElectionFault) error {
	p := f.Proc
	if p == ElectionLeader {
		// Whoever leads: the most recent decision that names a live node.
		p = -1
		for i := len(n.decisions) - 1; i >= 0; i-- {
			if d := n.decisions[i]; d >= 0 && d < len(n.nodes) && n.nodes[d].up {
				p = d
				break
			}
		}
		if p < 0 {
			n.logf("crash:leader skipped: no live node leads")
			return nil
		}
	}
	if p < 0 || p >= len(n.nodes) {
		return fmt.Errorf("fault %v: no node %d", f, p)
	}
	nd := n.nodes[p]
	if f.Recover {
		if nd.up {
			return nil
		}
		nd.restarts++
		if err := n.build(p); err != nil {
			return err
		}
		nd.up, nd.belief = true, -1
		n.res.Faults = append(n.res.Faults, ElectionFault{At: n.now, Recover: true, Proc: p}.String())
		n.logf("P%d recover", p)
		// A restarted node keeps its Lamport clock: the runtime owns it.
		return n.step(p, algo.Input{Kind: algo.Recover, Msg: nd.stored}, 0)
	}
	if !nd.up {
		return nil
	}
	live := 0
	for _, x := range n.nodes {
		if x.up {
			live++
		}
	}
	if live <= 1 {
		n.logf("crash of P%d skipped: the last live node", p)
		return nil
	}
	nd.up, nd.belief = false, -1
	nd.inc++
	clear(nd.timers)
	n.res.Faults = append(n.res.Faults, ElectionFault{At: n.now, Proc: p}.String())
	n.logf("P%d crash", p)
	if n.opt.RecoverMax > 0 && f.Proc == ElectionLeader {
		n.push(&eEvent{at: n.now + n.draw(n.opt.RecoverMin, n.opt.RecoverMax), kind: eFault,
			fault: ElectionFault{Recover: true, Proc: p}})
	}
	n.splitCheck() // a crash can end an episode
	return nil
}

// step gives in to node id (msgClock: the Lamport clock a delivered message
// carried) and carries out the outputs, checking them.
func (n *electionNet) step(id int, in algo.Input, msgClock uint64) error {
	nd := n.nodes[id]
	in.Now = n.now
	in.Clock = max(nd.clock, msgClock) + 1
	nd.clock = in.Clock
	n.res.Steps++
	n.logf("P%d %s", id, describeInput(id, in))
	in.Msg.Vals = slices.Clone(in.Msg.Vals)
	outs := nd.m.Step(in)
	for _, o := range outs {
		nd.clock++
		n.logf("P%d   %s", id, FormatOutput(id, o))
		switch o.Kind {
		case algo.Send:
			if o.To < 0 || o.To >= len(n.nodes) || o.To == id {
				return n.fail(Contract, "P%d sent %s to P%d: not another node of 0..%d", id, o.Msg.Type, o.To, len(n.nodes)-1)
			}
			m := o.Msg
			m.Resource = "election"
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
			n.push(&eEvent{at: at, kind: eDeliver, node: o.To, inc: n.nodes[o.To].inc, from: id, msg: m, clock: nd.clock})
		case algo.SetTimer:
			if o.After < 0 {
				return n.fail(Contract, "P%d set timer %s %d ns in the past", id, o.TimerName, o.After)
			}
			n.seq++
			nd.timers[o.TimerName] = n.seq
			n.push(&eEvent{at: n.now + o.After, kind: eTimer, node: id, inc: nd.inc, name: o.TimerName, gen: n.seq})
		case algo.CancelTimer:
			delete(nd.timers, o.TimerName)
		case algo.Leader:
			if o.Leader >= len(n.nodes) {
				return n.fail(Contract, "P%d decided leader %d, outside 0..%d", id, o.Leader, len(n.nodes)-1)
			}
			nd.belief = max(o.Leader, -1)
			n.res.Decisions++
			n.decisions = append(n.decisions, nd.belief)
		case algo.StartElection:
			n.res.Elections++
		case algo.Suspect:
			if o.To < 0 || o.To >= len(n.nodes) || o.To == id {
				return n.fail(Contract, "P%d suspects P%d: not another node", id, o.To)
			}
			n.res.Suspicions++
			if n.nodes[o.To].up {
				n.res.FalseSuspicions++
			}
		case algo.Trust:
			if o.To < 0 || o.To >= len(n.nodes) || o.To == id {
				return n.fail(Contract, "P%d trusts P%d: not another node", id, o.To)
			}
		case algo.Persist:
			v := o.Msg
			v.Vals = slices.Clone(v.Vals)
			nd.stored = v
		case algo.Enter, algo.Wait, algo.MulticastDelivered:
			return n.fail(Contract, "P%d output %s: not an election output", id, FormatOutput(id, o))
		}
	}
	if err := n.splitCheck(); err != nil {
		return err
	}
	return nil
}

// splitCheck looks for two live nodes that both believe they lead.
func (n *electionNet) splitCheck() error {
	var self []int
	for i, nd := range n.nodes {
		if nd.up && nd.belief == i {
			self = append(self, i)
		}
	}
	if len(self) < 2 {
		n.splitOpen = false
		return nil
	}
	if n.splitOpen {
		return nil
	}
	n.splitOpen = true
	n.res.SplitBrains = append(n.res.SplitBrains, SplitBrainEpisode{At: n.now, Leaders: self})
	n.logf("split brain: %v all believe they lead", self)
	if n.opt.AllowSplitBrain {
		return nil
	}
	return n.fail(SplitBrain, "processes %v all believe they lead", self)
}

// checkEnd checks termination, agreement and validity at the end of a run.
func (n *electionNet) checkEnd() error {
	leader, highest := -2, -1
	for i, nd := range n.nodes {
		if !nd.up {
			continue
		}
		highest = i
		if nd.belief < 0 {
			return n.fail(Termination, "P%d knows no leader at the end", i)
		}
		if leader == -2 {
			leader = nd.belief
		} else if nd.belief != leader {
			return n.fail(Agreement, "live nodes end with different leaders")
		}
	}
	if leader < 0 {
		return nil // no live node
	}
	switch n.opt.Validity {
	case HighestLive:
		if leader != highest {
			return n.fail(Validity, "the leader is P%d, the highest live id is %d", leader, highest)
		}
	case AnyLive:
		if !n.nodes[leader].up {
			return n.fail(Validity, "the leader P%d is down", leader)
		}
	}
	return nil
}

// SweepElection runs RunElection for every group size in ns and every seed
// 1..seeds (the flags -algotest.seeds and -algotest.seed apply as in
// Sweep). base gives the other options; N, Seed and Log are set here. After
// each successful run, check (if not nil) may verify the result further. On
// the first failure it reruns the seed with a log of its last steps and
// fails t, printing the seed and how to rerun it.
func SweepElection(t testing.TB, spec algo.Spec, ns []int, seeds int, base ElectionOptions, check func(*ElectionResult) error) {
	t.Helper()
	sweep(t, spec.Name, ns, seeds, 80, func(n int, seed uint64, logSteps int) (*ElectionResult, []string, error) {
		opt := base
		opt.N, opt.Seed, opt.Log = n, seed, logSteps
		res, err := RunElection(spec, opt)
		if res == nil {
			return nil, nil, err
		}
		return res, res.Log, err
	}, check, nil)
}

// SweepInitiators runs SweepElection with no failure for each N in ns and
// each way of starting the election: the lowest id alone (the parameter
// initiators=0), every process at once (all), and the would-be leader
// alone (top: N-1), each in its own subtest. Seed 001: "Multiple processes
// are allowed to call an election simultaneously. All of them together must
// yield only a single leader", and "The result of an election should not
// depend on which process calls for it".
func SweepInitiators(t *testing.T, spec algo.Spec, ns []int, seeds int, settle int64) {
	for _, init := range []string{"0", "all", "top"} {
		t.Run("initiators="+init, func(t *testing.T) {
			for _, n := range ns {
				p := map[string]string{"initiators": init}
				if init == "top" {
					p["initiators"] = fmt.Sprint(n - 1)
				}
				SweepElection(t, spec, []int{n}, seeds, ElectionOptions{Params: p, Settle: settle}, nil)
			}
		})
	}
}

package algotest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// Options configure one randomized run (Run, Sweep). Zero fields take the
// defaults documented on each.
type Options struct {
	N      int               // group size (required)
	Seed   uint64            // drives every random choice of the run
	Params map[string]string // algorithm parameters

	// The workload (mutual exclusion and multicast algorithms): each node
	// in Requesters (nil: all of them) makes Entries entries (default 3),
	// each after a think time drawn from [0, Think] (default 10ms) and held
	// for [0, Hold] (default 3ms); for a multicast algorithm an entry is
	// one multicast. Election runs have no workload.
	Entries     int
	Requesters  []int
	Think, Hold time.Duration

	// Message delays are drawn from [MinDelay, MaxDelay] (default 100µs to
	// 5ms). FIFO delivers the messages of each channel in the order they
	// were sent; without it they may overtake each other.
	MinDelay, MaxDelay time.Duration
	FIFO               bool

	// Crashes is a fixed schedule. Random more crashes of Target (a node
	// id or a Target constant) happen at times drawn from [CrashFrom,
	// CrashTo] (default 20ms to 300ms); if RecoverMax > 0, each of those
	// nodes recovers after a delay drawn from [RecoverMin, RecoverMax].
	// The last live node never crashes. Pick chooses the node of a
	// TargetPick crash (-1: none) from the current machines and which
	// nodes are up.
	Crashes                []Crash
	Random                 int
	Target                 int
	CrashFrom, CrashTo     time.Duration
	RecoverMin, RecoverMax time.Duration
	Pick                   func(ms []algo.Machine, up []bool) int

	// Settle is how long an election run goes on after its last crash or
	// recovery (default 1s): the checks of the end (agreement,
	// termination) look at that moment.
	Settle time.Duration
	// Limit is the simulated time after which a run is cut short (default
	// 10s): a workload not finished by then fails for liveness.
	Limit time.Duration

	// Allow names checks whose violations are kept in Result.Checks
	// without failing the run, for runs that show a weakness the seeds
	// describe (e.g. "split-brain" when a process id reappears).
	Allow []string
	// Invariant, if set, is checked after every step of every machine with
	// the current machines and which nodes are up (a down node's machine
	// is its last incarnation's; the slices are reused: do not keep them);
	// an error fails the run.
	Invariant func(ms []algo.Machine, up []bool) error
}

func (o *Options) defaults() {
	if o.Entries == 0 {
		o.Entries = 3
	}
	if o.MaxDelay == 0 {
		o.MinDelay, o.MaxDelay = 100*time.Microsecond, 5*time.Millisecond
	}
	if o.Think == 0 {
		o.Think = 10 * time.Millisecond
	}
	if o.Hold == 0 {
		o.Hold = 3 * time.Millisecond
	}
	if o.CrashTo == 0 {
		o.CrashFrom, o.CrashTo = 20*time.Millisecond, 300*time.Millisecond
	}
	if o.Settle == 0 {
		o.Settle = time.Second
	}
	if o.Limit == 0 {
		o.Limit = 10 * time.Second
	}
}

// Crash targets: the Proc of a Crash, or Options.Target, resolved when the
// crash happens.
const (
	TargetLeader = -1 - iota // the most recently decided leader that is up (seed 003 slide 6: "If the coordinator crashes")
	TargetInCS               // a node in the critical section (a token ring: the token's holder); a random live node if none is
	TargetRandom             // any live node
	TargetPick               // whatever Options.Pick returns
)

// Crash is a crash of Proc (a node id or a Target constant) at At; if
// RecoverAfter > 0, the node comes back that much later.
type Crash struct {
	Proc         int
	At           time.Duration
	RecoverAfter time.Duration
}

// Failure kinds beside the names of analyze's checks.
const (
	Contract  = "contract"  // a machine broke the contract of package algo
	Invariant = "invariant" // Options.Invariant failed
	// Settled: an election run whose algorithm claims termination ended
	// with a live process that believes in no leader, or in one that is
	// down, or (if the algorithm claims validity by the highest-id rule)
	// in another than the highest live process. Checks termination and validity judge the
	// elections that started and each decision when it is made; this is
	// the end a run must settle to even if, say, nobody noticed the
	// leader's crash and no election started, or a coordinator message
	// arrived after its sender crashed (a decision validity reports, and a
	// run with crashes therefore allows).
	Settled = "settled"
)

// Failure is why a run failed; Run returns it as its error.
type Failure struct {
	Seed  uint64
	Kind  string // Contract, Invariant, or the name of the first check that failed
	Msg   string // what happened
	Stuck bool   // the run ended with nothing left to happen, its workload unfinished (not cut short by the limit)
	// Failed are the checks that failed: violated, or unknown on a run
	// cut short.
	Failed []analyze.Result
	Cycle  []int    // the processes of a deadlock (check deadlock), if any
	Log    []string // the events up to the failure, formatted
}

func (f *Failure) Error() string {
	return fmt.Sprintf("%s failed (seed %d): %s", f.Kind, f.Seed, f.Msg)
}

// Violates reports whether check c failed in the run.
func (f *Failure) Violates(c *analyze.Check) bool {
	return slices.ContainsFunc(f.Failed, func(r analyze.Result) bool { return r.Check == c.Name })
}

// Delivery is one multicast as a process delivered it: the origin and the
// message's Stamp and ID.
type Delivery struct {
	From  int
	Stamp uint64
	ID    int
}

func (d Delivery) String() string { return fmt.Sprintf("P%d#%d@%d", d.From, d.ID, d.Stamp) }

// SplitBrainEpisode is a moment at which two processes believed they lead
// (a finding of check split-brain): the later of their self-declarations.
type SplitBrainEpisode struct {
	At      time.Duration
	Leaders []int
	// Wall says that the two led at once in wall time; else only causally
	// (the end of one did not happen before the start of the other).
	Wall bool
}

// Result is what a run did: its trace, the verdicts of the algorithm's
// checks on it, and counts taken from the trace.
type Result struct {
	Seed     uint64
	Events   []trace.Event    // the run's trace
	Checks   []analyze.Result // analyze's checks of the algorithm's properties (algo.Spec.Properties)
	Complete bool             // the run ended by itself, not cut short by Options.Limit
	Status   string
	End      time.Duration

	Entered   []int          // critical-section entries per node
	Sent      map[string]int // messages sent, by type (self-sends included)
	SentBy    []int          // messages sent, by node
	Messages  int            // messages sent in all
	SelfSends int            // messages a node sent to itself
	Lost      int            // messages never received: lost to a crash, or in flight at the end

	Multicasts []int        // multicasts made, per node
	Delivered  [][]Delivery // each node's deliveries, in order

	Leaders         []int    // each node's belief at the end: the leader it last decided since it last started, -1 for none or down
	Faults          []string // the crashes and recoveries that happened, e.g. "crash:4@312ms"
	Decisions       int      // leader events
	Suspicions      int      // suspect events
	FalseSuspicions int      // suspect events naming a node that was up
	SplitBrains     []SplitBrainEpisode
}

// Run runs spec's machines on runner.Simulate, the simulator of dmx sim:
// runner.Nodes stamp clocks and record the trace, the workload and the
// crashes are the runtime's, and a seed gives one run. It then checks the
// trace with analyze.Evaluate for the properties the algorithm claims
// (spec.Properties, those in opt.Allow aside) and returns a *Failure as its
// error if one fails, if the run was cut short at opt.Limit, or if a
// machine broke the contract of package algo (checked step by step, see
// doc.go) or opt.Invariant. An ordinary error says the run could not be
// made (bad options, a machine that cannot be built).
func Run(spec algo.Spec, opt Options) (*Result, error) {
	// Size the buffers after the last run's: tests run the same kind of
	// run many times, and growing the slices of a run of thousands of
	// events costs more than simulating it.
	k := int(lastEvents.Load())
	k += k / 4
	buf := &buffers{events: make([]trace.Event, 0, k), vcs: make([]uint64, 0, k*opt.N), detail: make([]byte, 0, 32*k)}
	res, err := run1(spec, opt, buf)
	if res != nil {
		lastEvents.Store(int64(len(res.Events)))
	}
	return res, err
}

// lessGC raises the garbage collector's target to gcPercent, unless it is
// higher or off already, and returns what restores it. A run allocates
// much (every step of every machine, every recorded event) and keeps
// little beside its trace; at the default target the collector would take
// a third of a sweep's time. The bench trades memory for it.
func lessGC() func() {
	old := debug.SetGCPercent(gcPercent)
	if old < 0 || old > gcPercent {
		debug.SetGCPercent(old)
	}
	return func() { debug.SetGCPercent(old) }
}

const gcPercent = 400

// lastEvents is the number of events of the last run of Run.
var lastEvents atomic.Int64

// buffers hold the events of a run. A sweep hands the buffers of a run it
// is done with to the next one: runs of thousands of events each would
// otherwise spend more time growing slices than simulating.
type buffers struct {
	events []trace.Event
	vcs    []uint64 // the events' vector clocks, one after the other
	detail []byte   // and their details
}

// reuse takes back the buffers of res, a Result nobody uses any more.
func (b *buffers) reuse(res *Result) {
	b.events, b.vcs, b.detail = res.Events[:0], b.vcs[:0], b.detail[:0]
}

func run1(spec algo.Spec, opt Options, buf *buffers) (*Result, error) {
	defer lessGC()()
	opt.defaults()
	r, err := newRun(spec, opt)
	if err != nil {
		return nil, err
	}
	r.buf, r.res.Events = buf, buf.events
	r.clocks = slices.Contains(spec.Properties, analyze.Clocks.Name)
	return r.exec()
}

// run is one Run: what the machines' tap and the recorder keep.
type run struct {
	spec    algo.Spec
	opt     Options
	rnd     *rand.Rand
	plan    []Crash // the crash schedule
	crashOf []int   // for each fault of the simulated plan, its crash's index in plan
	hit     []int   // the node plan[i] crashed, -1: none (yet)
	nodes   []nodeState
	res     *Result
	buf     *buffers // the recorded events and their slices' backing store
	clocks  bool     // check clocks runs: keep the events' vector clocks
	ms      []algo.Machine
	ups     []bool
	recvd   int
	err     *Failure // the first broken contract or invariant
}

// nodeState is what the bench knows of a node beside its trace.
type nodeState struct {
	m         algo.Machine // the current incarnation's machine
	up        bool
	requested bool // a Request was given and not yet released
	inCS      bool
	wait      []int
	belief    int
}

func newRun(spec algo.Spec, opt Options) (*run, error) {
	if opt.N < 1 {
		return nil, fmt.Errorf("run of %s: N=%d", spec.Name, opt.N)
	}
	r := &run{
		spec: spec, opt: opt,
		rnd:   rand.New(rand.NewPCG(opt.Seed, 0x616c676f)),
		nodes: make([]nodeState, opt.N),
		res: &Result{
			Seed: opt.Seed, Entered: make([]int, opt.N), Sent: map[string]int{}, SentBy: make([]int, opt.N),
			Multicasts: make([]int, opt.N), Delivered: make([][]Delivery, opt.N),
		},
	}
	for i := range r.nodes {
		r.nodes[i].up, r.nodes[i].belief = true, -1
	}
	r.plan = slices.Clone(opt.Crashes)
	for range opt.Random {
		c := Crash{Proc: opt.Target, At: r.draw(opt.CrashFrom, opt.CrashTo)}
		if opt.RecoverMax > 0 {
			c.RecoverAfter = r.draw(max(opt.RecoverMin, 1), opt.RecoverMax)
		}
		r.plan = append(r.plan, c)
	}
	r.hit = make([]int, len(r.plan))
	for i, c := range r.plan {
		r.hit[i] = -1
		if c.Proc >= opt.N || c.Proc < TargetPick || c.At < 0 || c.RecoverAfter < 0 {
			return nil, fmt.Errorf("crash %+v: no such node or target, or a negative time (N=%d)", c, opt.N)
		}
	}
	return r, nil
}

func (r *run) draw(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.rnd.Int64N(int64(hi-lo)+1))
}

// config is the simulated run: spec's machines behind a tap, the workload
// of the options, and the crash plan as faults aimed by r.aim.
func (r *run) config() runner.Plan {
	o := r.opt
	wl := runner.Workload{Entries: o.Entries, Think: runner.Dist{Max: o.Think}, Hold: runner.Dist{Max: o.Hold}}
	if o.Requesters != nil {
		none := 0
		wl.Procs = map[int]runner.ProcWorkload{}
		for id := range o.N {
			if !slices.Contains(o.Requesters, id) {
				wl.Procs[id] = runner.ProcWorkload{Entries: &none}
			}
		}
	}
	cfg := runner.Plan{
		Driver: runner.DriverSim, Spec: tap(r.spec, r.built, r.stepped), N: o.N, Seed: o.Seed, Params: o.Params, Workload: wl,
		Sim: runner.SimOptions{Delay: runner.Dist{Min: o.MinDelay, Max: o.MaxDelay}, Reorder: !o.FIFO, Limit: o.Limit},
	}
	// Each fault's target is chosen by r.aim when it fires; its Proc is a
	// placeholder (P0) and r.crashOf maps it back to its place in r.plan.
	last := time.Duration(0)
	r.crashOf = r.crashOf[:0]
	for i, c := range r.plan {
		cfg.Faults = append(cfg.Faults, runner.Fault{Kind: runner.FaultCrash, At: c.At})
		r.crashOf = append(r.crashOf, i)
		if c.RecoverAfter > 0 {
			cfg.Faults = append(cfg.Faults, runner.Fault{Kind: runner.FaultRecover, At: c.At + c.RecoverAfter})
			r.crashOf = append(r.crashOf, i)
		}
		last = max(last, c.At+c.RecoverAfter)
	}
	if r.spec.Kind == algo.Election {
		cfg.Duration = last + o.Settle
		if cfg.Sim.Limit != 0 { // 0: the default, ten times Duration at least
			cfg.Sim.Limit = max(cfg.Sim.Limit, cfg.Duration+time.Second)
		}
	}
	return cfg
}

func (r *run) exec() (*Result, error) {
	cfg := r.config()
	sim, err := runner.SimulateWith(cfg, r, runner.SimHooks{Aim: r.aim})
	res := r.res
	res.Complete, res.Status, res.End = sim.Complete, sim.Status, sim.End
	r.finish()
	var f *Failure
	switch {
	case errors.As(err, &f):
		return res, f
	case err != nil && len(res.Events) == 0:
		return res, err // nothing ran: bad options, or a machine that cannot be built
	case err != nil:
		// The runtime refused an output (a send to a node that does not
		// exist): the machine broke the contract.
		return res, r.failure(Contract, "%v", err)
	}
	run := trace.Run{Algorithm: r.spec.Name, Nodes: r.opt.N, Seed: r.opt.Seed, Mode: "sim", Complete: sim.Complete, Status: sim.Status}
	checks, err := r.checks()
	if err != nil {
		return res, err
	}
	// Held as dmx check holds them (the validity rule the algorithm
	// promises).
	_, opts, err := analyze.Applicable(runner.Claims(&r.spec))
	if err != nil {
		return res, err
	}
	res.Checks, err = analyze.Evaluate(run, &trace.SliceReader{Events: res.Events}, checks, opts...)
	if err != nil {
		return res, fmt.Errorf("%s seed %d: the runtime recorded a broken trace: %w", r.spec.Name, r.opt.Seed, err)
	}
	r.splitBrains()
	if f := r.verdict(); f != nil {
		return res, f
	}
	return res, nil
}

// checks are the checks of the algorithm's properties. Check clocks, which
// analyze.For adds to every set, judges the runtime's stamps, not the
// algorithm, and runner's tests check those: it runs only where the
// algorithm names it (without it the recorder keeps no vector clocks).
func (r *run) checks() ([]*analyze.Check, error) {
	cs, _, err := analyze.Applicable(runner.Claims(&r.spec))
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(cs, func(c *analyze.Check) bool {
		return c == analyze.Clocks && !r.clocks
	}), nil
}

// finish takes the counts of the end from the nodes' states.
func (r *run) finish() {
	res := r.res
	res.Lost = res.Messages - r.recvd
	res.Leaders = make([]int, len(r.nodes))
	for i, nd := range r.nodes {
		res.Leaders[i] = -1
		if nd.up {
			res.Leaders[i] = nd.belief
		}
	}
}

// verdict is the run's failure, if any: a check that failed (its
// violations allowed aside), a run cut short, or a broken contract found
// at the end.
func (r *run) verdict() *Failure {
	var failed []analyze.Result
	for _, c := range r.res.Checks {
		if c.Verdict != analyze.OK && c.Verdict != analyze.NotApplicable && !slices.Contains(r.opt.Allow, c.Check) {
			failed = append(failed, c)
		}
	}
	if len(failed) == 0 && !r.res.Complete {
		f := r.failure(analyze.Liveness.Name, "cut short after %v: %s", r.opt.Limit, r.res.Status)
		f.Failed = []analyze.Result{{Check: analyze.Liveness.Name, Verdict: analyze.Unknown, Note: r.res.Status}}
		return f
	}
	if len(failed) == 0 {
		return r.endContract()
	}
	c := failed[0]
	msg := string(c.Verdict)
	if len(c.Findings) > 0 {
		msg += ": " + c.Findings[0].Message
		if k := len(c.Findings); k > 1 {
			msg += fmt.Sprintf(" (and %d more)", k-1)
		}
	}
	if c.Note != "" {
		msg += " [" + c.Note + "]"
	}
	if !r.res.Complete {
		msg += "; the run was cut short: " + r.res.Status
	}
	f := r.failure(c.Check, "%s", msg)
	f.Failed = failed
	f.Stuck = r.res.Complete && f.Violates(analyze.Liveness)
	var at []trace.Ref
	if len(c.Findings) > 0 {
		at = c.Findings[0].Events
	}
	f.Log = r.logUpTo(at)
	for _, x := range failed {
		if x.Check == analyze.Deadlock.Name && len(x.Findings) > 0 {
			for _, e := range x.Findings[0].Events {
				if !slices.Contains(f.Cycle, e.Proc) {
					f.Cycle = append(f.Cycle, e.Proc)
				}
			}
			slices.Sort(f.Cycle)
		}
	}
	return f
}

// failure is a Failure of the run, with the last events as its log.
func (r *run) failure(kind, format string, args ...any) *Failure {
	return &Failure{Kind: kind, Seed: r.opt.Seed, Msg: fmt.Sprintf(format, args...), Log: r.logUpTo(nil)}
}

// logLen is how many events a failure report shows.
const logLen = 60

// logUpTo formats the logLen events up to the last of refs (all refs are
// events of the run), or the last logLen events if refs is empty.
func (r *run) logUpTo(refs []trace.Ref) []string {
	evs := r.res.Events
	end := len(evs)
	if len(refs) > 0 {
		end = 0
		for i := range evs {
			if slices.Contains(refs, evs[i].Ref()) {
				end = i + 1
			}
		}
	}
	var out []string
	for i := max(0, end-logLen); i < end; i++ {
		out = append(out, formatEvent(&evs[i]))
	}
	return out
}

// splitBrains lists the episodes check split-brain found, whether or not
// they fail the run.
func (r *run) splitBrains() {
	wall := func(ref trace.Ref) time.Duration {
		for i := range r.res.Events {
			if ev := &r.res.Events[i]; ev.Proc == ref.Proc && ev.Seq == ref.Seq {
				return time.Duration(ev.Wall)
			}
		}
		return 0
	}
	for _, c := range r.res.Checks {
		if c.Check != analyze.SplitBrain.Name {
			continue
		}
		for _, f := range c.Findings {
			ep := SplitBrainEpisode{Wall: strings.Contains(f.Message, "in wall time: for")}
			for _, e := range f.Events {
				ep.At = max(ep.At, wall(e))
				ep.Leaders = append(ep.Leaders, e.Proc)
			}
			slices.Sort(ep.Leaders)
			r.res.SplitBrains = append(r.res.SplitBrains, ep)
		}
		slices.SortStableFunc(r.res.SplitBrains, func(a, b SplitBrainEpisode) int { return int(a.At - b.At) })
	}
}

// aim resolves the node a fault of the plan hits when it fires: a crash's
// target among the live nodes (never the last one), a recovery's crashed
// node.
func (r *run) aim(fi int, f runner.Fault) int {
	i := r.crashOf[fi]
	if f.Kind == runner.FaultRecover {
		return r.hit[i]
	}
	p := r.plan[i].Proc
	var live []int
	for id, nd := range r.nodes {
		if nd.up {
			live = append(live, id)
		}
	}
	if p < 0 && len(live) <= 1 {
		return -1 // a target is never the last live node
	}
	switch p {
	case TargetLeader:
		p = -1
		for _, ev := range slices.Backward(r.res.Events) {
			if ev.Kind == trace.KindLeader && ev.Peer >= 0 && ev.Peer < len(r.nodes) && r.nodes[ev.Peer].up {
				p = ev.Peer
				break
			}
		}
	case TargetInCS:
		p = -1
		for _, id := range live {
			if r.nodes[id].inCS {
				p = id
			}
		}
		if p < 0 {
			p = live[r.rnd.IntN(len(live))]
		}
	case TargetRandom:
		p = live[r.rnd.IntN(len(live))]
	case TargetPick:
		p = -1
		if r.opt.Pick != nil {
			p = r.opt.Pick(r.state())
		}
	}
	if p < 0 || p >= len(r.nodes) || !r.nodes[p].up {
		return -1
	}
	r.hit[i] = p
	return p
}

// state returns the current machines and which nodes are up, for Pick
// and Invariant, in slices it reuses (they are called after every step).
func (r *run) state() ([]algo.Machine, []bool) {
	if r.ms == nil {
		r.ms, r.ups = make([]algo.Machine, len(r.nodes)), make([]bool, len(r.nodes))
	}
	for i, nd := range r.nodes {
		r.ms[i], r.ups[i] = nd.m, nd.up
	}
	return r.ms, r.ups
}

// built is told of every machine the runtime builds: a node's first, and a
// fresh one at each recovery.
func (r *run) built(id int, m algo.Machine) {
	r.nodes[id].m = m
	r.nodes[id].requested, r.nodes[id].inCS, r.nodes[id].wait = false, false, nil
}

// Record implements runner.Recorder: it keeps the event for analyze, takes
// the counts of the Result, and stops the run at the first broken contract
// or invariant.
func (r *run) Record(ev *trace.Event) error {
	if r.err != nil {
		return r.err
	}
	e := *ev
	b := r.buf
	e.VC = nil
	if r.clocks {
		b.vcs = append(b.vcs, ev.VC...)
		e.VC = b.vcs[len(b.vcs)-len(ev.VC) : len(b.vcs) : len(b.vcs)]
	}
	if ev.Detail != nil {
		b.detail = append(b.detail, ev.Detail...)
		e.Detail = b.detail[len(b.detail)-len(ev.Detail) : len(b.detail) : len(b.detail)]
	}
	res := r.res
	res.Events = append(res.Events, e)
	nd := &r.nodes[ev.Proc]
	switch ev.Kind {
	case trace.KindSend:
		res.Sent[ev.MsgType]++
		res.SentBy[ev.Proc]++
		res.Messages++
		if ev.Peer == ev.Proc {
			res.SelfSends++
		}
	case trace.KindReceive:
		r.recvd++
	case trace.KindCSEnter:
		res.Entered[ev.Proc]++
	case trace.KindLeader:
		res.Decisions++
		nd.belief = max(ev.Peer, -1)
	case trace.KindSuspect:
		res.Suspicions++
		if ev.Peer >= 0 && ev.Peer < len(r.nodes) && r.nodes[ev.Peer].up {
			res.FalseSuspicions++
		}
	case trace.KindCrash, trace.KindRecover:
		nd.up, nd.belief = ev.Kind == trace.KindRecover, -1
		nd.requested, nd.inCS, nd.wait = false, false, nil
		res.Faults = append(res.Faults, fmt.Sprintf("%s:%d@%v", ev.Kind, ev.Proc, time.Duration(ev.Wall)))
	}
	return nil
}

// stepped checks one step of node id's machine against the contract of
// package algo, and opt.Invariant.
func (r *run) stepped(id int, in algo.Input, outs []algo.Output) {
	if r.err != nil {
		return
	}
	if err := contract(r.spec.Kind, len(r.nodes), id, &r.nodes[id], r.res, in, outs); err != nil {
		r.err = r.failure(Contract, "%v", err)
		return
	}
	if r.opt.Invariant != nil {
		if err := r.opt.Invariant(r.state()); err != nil {
			r.err = r.failure(Invariant, "%v", err)
		}
	}
}

// endContract checks, at the end of a run whose checks passed, what
// analyze's checks leave out of its last state: an election run has
// Settled; no live node of a finished workload still waits; and every
// multicast made was delivered by someone (check total-order finds those
// some process did not deliver, not those none did).
func (r *run) endContract() *Failure {
	if r.spec.Kind == algo.Election && slices.Contains(r.spec.Properties, analyze.Termination.Name) &&
		!slices.Contains(r.opt.Allow, analyze.Termination.Name) {
		highest := -1
		for id, nd := range r.nodes {
			if nd.up {
				highest = id
			}
		}
		for id, nd := range r.nodes {
			switch {
			case !nd.up:
			case nd.belief < 0 || !r.nodes[nd.belief].up:
				return r.failure(Settled, "P%d ends believing in leader %d, which is not a live process (leaders %v)", id, nd.belief, r.res.Leaders)
			case nd.belief != highest && slices.Contains(r.spec.Properties, analyze.Validity.Name) && r.spec.Validity == analyze.ValidityHighestID:
				return r.failure(Settled, "P%d ends believing in leader %d, not in the highest live process P%d (leaders %v)", id, nd.belief, highest, r.res.Leaders)
			}
		}
	}
	var waiting []string
	for id, nd := range r.nodes {
		if nd.up && len(nd.wait) > 0 {
			waiting = append(waiting, fmt.Sprintf("P%d->%s", id, formatSet(nd.wait)))
		}
	}
	if len(waiting) > 0 {
		return r.failure(Contract, "the workload finished but %s still wait", strings.Join(waiting, " "))
	}
	seen := map[Delivery]bool{}
	reached := make([]int, len(r.nodes)) // distinct multicasts of each origin delivered somewhere
	for _, ds := range r.res.Delivered {
		for _, d := range ds {
			if !seen[d] {
				seen[d] = true
				reached[d.From]++
			}
		}
	}
	for from, k := range r.res.Multicasts {
		if reached[from] < k {
			return r.failure(Contract, "P%d made %d multicasts, of which only %d were delivered by any process", from, k, reached[from])
		}
	}
	return nil
}

package algotest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
)

// Crash targets of a FailoverCrash: a node id, or one of these, resolved
// when the crash happens.
const (
	TargetLeader = -1 - iota // the most recently decided leader that is up (seed 003 slide 6: "If the coordinator crashes")
	TargetInCS               // a node in the critical section (for a token ring: the token's holder); a random live node if none is
	TargetRandom             // any live node
	TargetPick               // whatever FailoverOptions.Pick returns
)

// FailoverCrash is a crash of Proc (a node id or a Target constant) at At
// ns; if RecoverAfter > 0 the node comes back that many ns later.
type FailoverCrash struct {
	At           int64
	Proc         int
	RecoverAfter int64
}

// FailoverOptions configure RunFailover: a mutual-exclusion workload (the
// embedded Options, as for Run) with crashes and recoveries of nodes chosen
// while the run goes on.
type FailoverOptions struct {
	Options

	// Crashes is a fixed schedule. Random more crashes of RandomTarget are
	// drawn at times in [CrashFrom, CrashTo] (default 20ms to 300ms); if
	// RecoverMax > 0 each of those nodes recovers after a delay drawn from
	// [RecoverMin, RecoverMax]. The last live node never crashes.
	Crashes                []FailoverCrash
	Random                 int
	RandomTarget           int
	CrashFrom, CrashTo     int64
	RecoverMin, RecoverMax int64

	// Pick chooses the node a TargetPick crash hits (-1: none) from the
	// current machines and which nodes are up.
	Pick func(ms []algo.Machine, up []bool) int

	// Invariant, if set, is checked after every step with the current
	// machines and which nodes are up (the machines of down nodes are
	// their last incarnation's); an error fails the run as a Safety
	// violation.
	Invariant func(ms []algo.Machine, up []bool) error
}

// FailoverResult is what a failover run did.
type FailoverResult struct {
	*Result
	Faults    []string // the crashes and recoveries that happened, e.g. "crash:4@31ms"
	Decisions int      // Leader outputs
	Elections int      // StartElection outputs
	Lost      int      // messages lost to crashes

	Suspicions      int // Suspect outputs
	FalseSuspicions int // Suspect outputs naming a node that was up
}

// failoverRun is a crash run whose crashes pick their node when they
// happen.
type failoverRun struct {
	*crashRun
	fopt      FailoverOptions
	plan      []FailoverCrash
	inner     []algo.Machine // the machines without the bench's wrappers
	decisions []int          // every Leader output's value, in order
	faults    []string
	elections int
	suspects  [2]int // all, and of nodes that were up
	invErr    error
}

// watched wraps a machine to keep what it persists (algo.Persist), the
// leaders it decides, and to check the invariant after its steps.
type watched struct {
	r  *failoverRun
	id int
	m  algo.Machine
}

func (w watched) Step(in algo.Input) []algo.Output {
	outs := w.m.Step(in)
	for _, o := range outs {
		switch o.Kind {
		case algo.Persist:
			v := o.Msg
			v.Vals = slices.Clone(v.Vals)
			w.r.stored[w.id] = v
		case algo.Leader:
			w.r.decisions = append(w.r.decisions, o.Leader)
		case algo.StartElection:
			w.r.elections++
		case algo.Suspect:
			w.r.suspects[0]++
			if o.To >= 0 && o.To < len(w.r.down) && !w.r.down[o.To] {
				w.r.suspects[1]++
			}
		}
	}
	if w.r.fopt.Invariant != nil && w.r.invErr == nil {
		up := make([]bool, len(w.r.down))
		for i, d := range w.r.down {
			up[i] = !d
		}
		if err := w.r.fopt.Invariant(w.r.inner, up); err != nil {
			w.r.invErr = err
		}
	}
	return outs
}

// RunFailover runs spec's machines under opt's workload as RunCrashes does
// (same crash semantics: a crashed node gets no input, messages to it are
// lost, a recovered node is a fresh machine stepped with Recover and what
// it persisted, its workload resumes with a new request), with crashes
// whose node is chosen when they happen: the current leader (a node that
// output Leader naming itself or named by others), a node in the critical
// section, a random one, or opt.Pick's choice.
//
// It checks after every step that no two nodes are in the critical section
// (Safety), the contract, and opt.Invariant; at the end, that every request
// of a live node was entered (Liveness: the run ends with the workload of
// every live node done, or fails).
func RunFailover(spec algo.Spec, opt FailoverOptions) (*FailoverResult, error) {
	opt.Options.defaults()
	if opt.CrashTo == 0 {
		opt.CrashFrom, opt.CrashTo = 20_000_000, 300_000_000
	}
	n := newNet(spec, opt.Options)
	r := &failoverRun{fopt: opt, inner: make([]algo.Machine, opt.N)}
	wrapped := spec
	wrapped.New = func(c algo.Config) (algo.Machine, error) {
		m, err := spec.New(c)
		if err != nil {
			return nil, err
		}
		r.inner[c.ID] = m
		return watched{r: r, id: c.ID, m: m}, nil
	}
	n.spec = wrapped
	r.crashRun = &crashRun{
		net:      n,
		down:     make([]bool, opt.N),
		crashSeq: make([]uint64, opt.N),
		stored:   make([]algo.Msg, opt.N),
		restarts: make([]int, opt.N),
	}
	for id := 0; id < opt.N; id++ {
		m, err := r.build(id)
		if err != nil {
			return nil, err
		}
		n.add(m)
	}
	r.plan = slices.Clone(opt.Crashes)
	for k := 0; k < opt.Random; k++ {
		fc := FailoverCrash{At: n.draw(opt.CrashFrom, opt.CrashTo), Proc: opt.RandomTarget}
		if opt.RecoverMax > 0 {
			fc.RecoverAfter = n.draw(max(opt.RecoverMin, 1), opt.RecoverMax)
		}
		r.plan = append(r.plan, fc)
	}
	err := r.run()
	n.finish()
	res := &FailoverResult{Result: n.res, Faults: r.faults, Decisions: len(r.decisions), Elections: r.elections, Lost: r.lost,
		Suspicions: r.suspects[0], FalseSuspicions: r.suspects[1]}
	return res, err
}

func (r *failoverRun) run() error {
	n := r.net
	if err := n.start(r.stepChecked); err != nil {
		return err
	}
	for i, fc := range r.plan {
		n.push(&event{at: fc.At, kind: evCrash, gen: uint64(i)})
	}
	for {
		if n.finished() {
			if err := r.drain(); err != nil {
				return err
			}
			return r.invErr
		}
		if n.res.Steps >= n.opt.MaxSteps {
			return n.fail(Liveness, "workload not finished after %d steps (entries %v; faults %v)", n.res.Steps, n.res.Entered, r.faults)
		}
		e := n.pop()
		if e == nil {
			f := n.fail(Liveness, "stuck: no message in flight and no timer pending, entries %v; faults %v", n.res.Entered, r.faults)
			f.Stuck = true
			return f
		}
		n.now = e.at
		switch e.kind {
		case evCrash:
			r.crashPlanned(r.plan[e.gen])
			continue
		case evRecover:
			if !r.down[e.node] {
				continue
			}
			r.faults = append(r.faults, fmt.Sprintf("recover:%d@%v", e.node, time.Duration(n.now)))
			if err := r.recover(e.node); err != nil {
				return err
			}
			if r.invErr != nil {
				return n.fail(Safety, "%v", r.invErr)
			}
			continue
		}
		if r.dead(e) {
			continue
		}
		in, ok := n.input(e)
		if !ok {
			continue
		}
		if err := r.stepChecked(e.node, in, e.clock); err != nil {
			return err
		}
	}
}

func (r *failoverRun) stepChecked(id int, in algo.Input, clock uint64) error {
	if err := r.net.step(id, in, clock); err != nil {
		return err
	}
	if r.invErr != nil {
		return r.net.fail(Safety, "%v", r.invErr)
	}
	return nil
}

// crashPlanned resolves fc's target and crashes it (the last live node
// excepted), scheduling its recovery.
func (r *failoverRun) crashPlanned(fc FailoverCrash) {
	n := r.net
	var live []int
	for i, d := range r.down {
		if !d {
			live = append(live, i)
		}
	}
	if len(live) <= 1 {
		n.logf("crash skipped: the last live node")
		return
	}
	p := fc.Proc
	switch p {
	case TargetLeader:
		p = -1
		for i := len(r.decisions) - 1; i >= 0; i-- {
			if d := r.decisions[i]; d >= 0 && d < len(n.nodes) && !r.down[d] {
				p = d
				break
			}
		}
	case TargetInCS:
		p = -1
		for _, i := range live {
			if n.nodes[i].inCS {
				p = i
			}
		}
		if p < 0 {
			p = live[n.rnd.IntN(len(live))]
		}
	case TargetRandom:
		p = live[n.rnd.IntN(len(live))]
	case TargetPick:
		p = -1
		if r.fopt.Pick != nil {
			up := make([]bool, len(r.down))
			for i, d := range r.down {
				up[i] = !d
			}
			p = r.fopt.Pick(r.inner, up)
		}
	}
	if p < 0 || p >= len(n.nodes) || r.down[p] {
		n.logf("crash of %d skipped: no such live node", fc.Proc)
		return
	}
	if fc.RecoverAfter > 0 {
		r.crashes = append(r.crashes, Crash{Node: p, At: n.now, Recover: n.now + fc.RecoverAfter})
		n.push(&event{at: n.now + fc.RecoverAfter, kind: evRecover, node: p})
	}
	r.faults = append(r.faults, fmt.Sprintf("crash:%d@%v", p, time.Duration(n.now)))
	r.crash(p)
}

// SweepFailover runs RunFailover for every group size in ns and every seed
// 1..seeds (the flags -algotest.seeds and -algotest.seed apply as in
// Sweep). After each successful run, check (if not nil) may verify the
// result further. On the first failure it reruns the seed with a log of
// its last steps and fails t, printing the seed and how to rerun it.
func SweepFailover(t testing.TB, spec algo.Spec, ns []int, seeds int, base FailoverOptions, check func(*FailoverResult) error) {
	t.Helper()
	sweep(t, spec.Name, ns, seeds, 80, func(n int, seed uint64, logSteps int) (*FailoverResult, []string, error) {
		opt := base
		opt.N, opt.Seed, opt.Log = n, seed, logSteps
		res, err := RunFailover(spec, opt)
		if res == nil {
			return nil, nil, err
		}
		return res, res.Log, err
	}, check, func(res *FailoverResult) string {
		var faults []string
		if res != nil {
			faults = res.Faults
		}
		return fmt.Sprintf("faults: %v\n", faults)
	})
}

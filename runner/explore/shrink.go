package explore

import (
	"slices"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/trace"
)

// DefaultShrinkBudget bounds the runs Shrink tries when given 0.
const DefaultShrinkBudget = 5000

// Shrink returns a violation smaller than v that still violates the check
// v violates first (Violation.Check): with fewer processes, fewer entries,
// and fewer steps (faults included), each cut kept only if it still
// violates. A cut leaves steps that can no longer happen (a delivery of a
// message nobody sent now, a request beyond the entries): they are
// dropped as the run is carried out. It tries at most budget runs (0:
// DefaultShrinkBudget); opt gives the checks (Options.Checks).
func Shrink(v *Violation, opt Options, budget int) (*Violation, error) {
	s, err := newSearch(opt)
	if err != nil {
		return nil, err
	}
	if budget <= 0 {
		budget = DefaultShrinkBudget
	}
	sh := &shrinker{s: s, want: v.Check, budget: budget, best: v}
	for changed := true; changed && sh.budget > 0; {
		changed = false
		for _, pass := range []func() (bool, error){sh.procs, sh.entries, sh.steps} {
			c, err := pass()
			if err != nil {
				return nil, err
			}
			changed = changed || c
		}
	}
	out := *sh.best
	out.Original = v.Original
	if w := s.watch(out.Plan); w != "" {
		out.Watched = w
	}
	return &out, nil
}

// watch carries out p's schedule under the monitors and says what they see:
// the first suspicion, else a final state where processes wait.
func (s *search) watch(p runner.Plan) string {
	sched := p.Schedule
	p.Schedule = nil
	w, err := runner.NewWorld(p, nil)
	if err != nil {
		return ""
	}
	m := s.newMonitor()
	m.attach(w)
	for _, st := range sched {
		if w.Apply(st) != nil {
			return ""
		}
		if m.suspect != "" {
			return m.suspect
		}
	}
	if waiting := w.Waiting(); len(waiting) > 0 && w.Quiescent() {
		return waitText(waiting)
	}
	return ""
}

type shrinker struct {
	s      *search
	want   string // the check that must still be violated
	budget int
	best   *Violation
}

// try carries out plan p's schedule, dropping the steps that cannot
// happen, and returns the violation its trace shows, or nil.
func (sh *shrinker) try(p runner.Plan) (*Violation, error) {
	sh.budget--
	if sh.s.opt.over() {
		sh.budget = 0 // keep the best so far
		return nil, nil
	}
	sched := p.Schedule
	p.Schedule = nil
	if err := p.Validate(); err != nil {
		return nil, nil // a cut the algorithm does not accept (too few processes)
	}
	var c runner.Collector
	w, err := runner.NewWorld(p, &c)
	if err != nil {
		return nil, nil
	}
	var kept []runner.Step
	for _, st := range sched {
		if w.Can(st) != nil {
			continue
		}
		if err := w.Apply(st); err != nil {
			return nil, err
		}
		kept = append(kept, st)
	}
	complete, err := w.Finish()
	if err != nil {
		return nil, err
	}
	p.Schedule = kept
	run := p.RunRow()
	run.ID, run.Complete = 1, complete
	results, err := analyze.Evaluate(run, &trace.SliceReader{Events: c.Events}, sh.s.checks)
	if err != nil {
		return nil, err
	}
	for _, r := range results {
		if r.Check == sh.want && r.Verdict == analyze.Violated {
			return &Violation{Plan: p, Events: c.Events, Run: run, Results: results, Check: sh.want, Watched: sh.best.Watched}, nil
		}
	}
	return nil, nil
}

// accept makes v the best violation if it is smaller.
func (sh *shrinker) accept(v *Violation) bool {
	if v == nil || !Smaller(v.Size(), sh.best.Size()) {
		return false
	}
	sh.best = v
	return true
}

// Smaller reports whether size a is smaller than b: fewer processes, then
// fewer entries, then fewer steps, then fewer faults.
func Smaller(a, b Size) bool {
	switch {
	case a.N != b.N:
		return a.N < b.N
	case a.Entries != b.Entries:
		return a.Entries < b.Entries
	case a.Steps != b.Steps:
		return a.Steps < b.Steps
	}
	return a.Faults < b.Faults
}

// procs tries the violation without each process in turn, the highest
// first: its steps go, and the processes above it are renumbered.
func (sh *shrinker) procs() (bool, error) {
	changed := false
	for p := sh.best.Plan.N - 1; p >= 0 && sh.best.Plan.N > 1 && sh.budget > 0; p-- {
		if p >= sh.best.Plan.N {
			continue
		}
		cand := sh.best.Plan
		cand.N--
		cand.Schedule = nil
		if len(cand.Workload.Procs) > 0 {
			continue // per-process workloads would need renumbering too
		}
		for _, st := range sh.best.Plan.Schedule {
			channel := st.Kind == runner.StepDeliver || st.Kind == runner.StepLose
			if st.Proc == p || (channel && st.From == p) {
				continue
			}
			if st.Proc > p {
				st.Proc--
			}
			if channel && st.From > p {
				st.From--
			}
			cand.Schedule = append(cand.Schedule, st)
		}
		v, err := sh.try(cand)
		if err != nil {
			return changed, err
		}
		if sh.accept(v) {
			changed = true
		}
	}
	return changed, nil
}

// entries tries one entry fewer per process, as long as that violates.
func (sh *shrinker) entries() (bool, error) {
	changed := false
	for sh.best.Plan.Workload.Entries > 1 && sh.budget > 0 {
		cand := sh.best.Plan
		cand.Workload.Entries--
		v, err := sh.try(cand)
		if err != nil {
			return changed, err
		}
		if !sh.accept(v) {
			break
		}
		changed = true
	}
	return changed, nil
}

// steps removes chunks of steps, halving the chunks down to single steps
// (delta debugging), as long as what is left violates.
func (sh *shrinker) steps() (bool, error) {
	changed := false
	n := 2
	for sh.budget > 0 {
		sched := sh.best.Plan.Schedule
		if len(sched) < 2 {
			break
		}
		chunk := (len(sched) + n - 1) / n
		cut := false
		for start := 0; start < len(sched) && sh.budget > 0; start += chunk {
			cand := sh.best.Plan
			cand.Schedule = slices.Concat(sched[:start], sched[min(start+chunk, len(sched)):])
			v, err := sh.try(cand)
			if err != nil {
				return changed, err
			}
			if sh.accept(v) {
				changed, cut = true, true
				n = max(n-1, 2)
				break
			}
		}
		if !cut {
			if n >= len(sched) {
				break
			}
			n = min(2*n, len(sched))
		}
	}
	return changed, nil
}

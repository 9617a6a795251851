package explore

import (
	"slices"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/deep"
)

// DefaultShortestBudget bounds the states Shortest visits when given 0.
const DefaultShortestBudget = 200_000

// Proof says what Shortest established about a violation's length.
type Proof struct {
	States int64 // states visited
	// Shortest says the search went through every schedule of the
	// violation's run (processes, entries, faults) shorter than the one
	// returned: none violates its check.
	Shortest bool
}

// Shortest searches the schedules of v's run (its processes, entries,
// reordering, and as many faults as v has) breadth first for the shortest
// one that violates v's check, up to one step fewer than v has, with state
// hashing. It returns the shortest violation found (v itself if there is
// none shorter) and whether the search went through every shorter
// schedule, within budget states (0: DefaultShortestBudget).
func Shortest(v *Violation, opt Options, budget int64) (*Violation, Proof, error) {
	if Opaque(v.Plan) {
		// No state to hash: the violation found is the one reported.
		return v, Proof{}, nil
	}
	if budget <= 0 {
		budget = DefaultShortestBudget
	}
	size := v.Size()
	opt.Plan = v.Plan
	opt.Plan.Schedule = nil
	if size.Faults > 0 {
		opt.MaxFaults = size.Faults
		for _, st := range v.Plan.Schedule {
			switch st.Kind {
			case runner.StepCrash:
				opt.Crash = true
			case runner.StepRecover:
				opt.Restart = true
			case runner.StepLose:
				opt.Lose = true
			}
		}
	} else {
		opt.Crash, opt.Restart, opt.Lose = false, false, false
	}
	s, err := newSearch(opt)
	if err != nil {
		return nil, Proof{}, err
	}
	type node struct {
		w    *runner.World
		m    *monitor
		path []runner.Step
	}
	w, err := s.world(nil)
	if err != nil {
		return nil, Proof{}, err
	}
	visited := map[deep.Fingerprint]bool{}
	m := s.newMonitor()
	visited[s.fingerprint(w, m)] = true
	level := []node{{w, m, nil}}
	var proof Proof
	var buf []runner.Step
	for depth := 1; depth < size.Steps && len(level) > 0; depth++ {
		var next []node
		for _, n := range level {
			buf = s.steps(n.w, n.m, buf[:0])
			for _, st := range buf {
				if proof.States >= budget || proof.States%1024 == 0 && opt.over() {
					return v, proof, nil
				}
				cw, err := n.w.Clone()
				if err != nil {
					return nil, proof, err
				}
				cm := n.m.clone()
				cm.attach(cw)
				if err := cw.Apply(st); err != nil {
					return nil, proof, err
				}
				if isFault(st) {
					cm.faults++
				}
				fp := s.fingerprint(cw, cm)
				if visited[fp] {
					continue
				}
				visited[fp] = true
				proof.States++
				path := append(slices.Clip(n.path), st)
				watched := cm.suspect
				if watched == "" && cw.Quiescent() && len(cw.Waiting()) > 0 {
					watched = waitText(cw.Waiting())
				}
				if watched != "" {
					found, err := s.check(opt.Plan, path, watched)
					if err != nil {
						return nil, proof, err
					}
					if found != nil && violates(found, v.Check) {
						// Breadth first: no shorter schedule violates.
						found.Check = v.Check
						found.Original = v.Original
						proof.Shortest = true
						return found, proof, nil
					}
				}
				cm.suspect = ""
				cw.Observe = nil
				next = append(next, node{cw, cm, path})
			}
		}
		level = next
	}
	proof.Shortest = true
	return v, proof, nil
}

// violates reports whether check is among v's violated checks.
func violates(v *Violation, check string) bool {
	for _, r := range v.Results {
		if r.Check == check && r.Verdict == "violated" {
			return true
		}
	}
	return false
}

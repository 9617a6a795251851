package tally

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/trace"
)

// Run is one checked run: its row, where it is, and its checks' results.
type Run struct {
	Run     trace.Run
	File    string // the trace that holds it
	Events  int64  // its events: the smallest failing run has the fewest
	Rerun   string // the command line that records it again ("dmx sim ...")
	Results []analyze.Result
}

// Failing names one run that violated a check, and how to see it again.
type Failing struct {
	File    string `json:"file"`
	Run     int64  `json:"run"`
	Seed    uint64 `json:"seed"`
	Events  int64  `json:"events"`
	Rerun   string `json:"rerun"`
	Finding string `json:"finding"` // the first finding's text
}

// Check is the tally of one check over the runs it was run on.
type Check struct {
	Check         string `json:"check"`
	OK            int    `json:"ok"`
	Violated      int    `json:"violated"`
	Unknown       int    `json:"unknown"`        // inconclusive, the check's error included
	NotApplicable int    `json:"not_applicable"` // nothing to judge
	Skipped       int    `json:"skipped"`        // no data to judge it with (wall times)
	// Rate is Violated over the runs the check judged (ok, violated or
	// unknown), with the bounds of its 95% Wilson interval: 0 of 300 is
	// still up to 1.3%.
	Rate float64 `json:"rate"`
	Low  float64 `json:"ci_low"`
	High float64 `json:"ci_high"`
	// First is the failing run of the lowest seed (then file, run id);
	// Smallest the one with the fewest events (then the lowest seed): the
	// easiest to look at.
	First    *Failing `json:"first,omitempty"`
	Smallest *Failing `json:"smallest,omitempty"`
}

// Judged is how many runs the check judged: the rate's denominator.
func (c Check) Judged() int { return c.OK + c.Violated + c.Unknown }

// KindCheck is how often the runs of one fault kind violated one check.
type KindCheck struct {
	Check    string  `json:"check"`
	Violated int     `json:"violated"`
	Judged   int     `json:"judged"`
	Rate     float64 `json:"rate"`
}

// Kind is the tally of the runs one fault kind was injected into (a run
// counts once per kind it has); kind None is the runs without faults.
type Kind struct {
	Kind   string      `json:"kind"`
	Runs   int         `json:"runs"`
	Checks []KindCheck `json:"checks"` // the checks violated in some run of the sweep, in check order
}

// None is the Kind of the runs without faults.
const None = "none"

// Tally is the sum of the verdicts of many runs.
type Tally struct {
	Runs       int             `json:"runs"`
	Incomplete int             `json:"incomplete"` // runs cut short, interrupted, abandoned
	Algorithms []string        `json:"algorithms"`
	Verdict    analyze.Verdict `json:"verdict"`
	Checks     []Check         `json:"checks"`      // in analyze.All's order, then by name
	Kinds      []Kind          `json:"fault_kinds"` // None first, then by name
}

// Of sums runs, in any order: the result depends on the set of runs
// alone.
func Of(runs []Run) Tally {
	t := Tally{Runs: len(runs), Verdict: analyze.NotApplicable}
	checks := map[string]*Check{}
	type kindAcc struct {
		runs     int
		violated map[string]int
		judged   map[string]int
	}
	kinds := map[string]*kindAcc{}
	algos := map[string]bool{}
	var results []analyze.Result
	for _, r := range runs {
		algos[r.Run.Algorithm] = true
		if !r.Run.Complete {
			t.Incomplete++
		}
		results = append(results, r.Results...)
		ks := r.Run.FaultKinds()
		if len(ks) == 0 {
			ks = []string{None}
		}
		for _, k := range ks {
			if kinds[k] == nil {
				kinds[k] = &kindAcc{violated: map[string]int{}, judged: map[string]int{}}
			}
			kinds[k].runs++
		}
		for _, res := range r.Results {
			c := checks[res.Check]
			if c == nil {
				c = &Check{Check: res.Check}
				checks[res.Check] = c
			}
			switch {
			case res.Err != nil || res.Verdict == analyze.Unknown:
				c.Unknown++
			case res.Verdict == analyze.OK:
				c.OK++
			case res.Verdict == analyze.Violated:
				c.Violated++
				f := &Failing{File: r.File, Run: r.Run.ID, Seed: r.Run.Seed, Events: r.Events, Rerun: r.Rerun}
				if len(res.Findings) > 0 {
					f.Finding = res.Findings[0].Text()
				}
				if c.First == nil || firstOrder(f, c.First) < 0 {
					c.First = f
				}
				if c.Smallest == nil || cmp.Or(cmp.Compare(f.Events, c.Smallest.Events), firstOrder(f, c.Smallest)) < 0 {
					c.Smallest = f
				}
			case res.Verdict == analyze.NotApplicable:
				c.NotApplicable++
			default:
				c.Skipped++
			}
			judged := res.Err != nil || res.Verdict.Judged()
			for _, k := range ks {
				if judged {
					kinds[k].judged[res.Check]++
				}
				if res.Verdict == analyze.Violated && res.Err == nil {
					kinds[k].violated[res.Check]++
				}
			}
		}
	}
	if len(runs) > 0 {
		t.Verdict = analyze.Summarize(results)
	}
	for a := range algos {
		t.Algorithms = append(t.Algorithms, a)
	}
	slices.Sort(t.Algorithms)
	for _, c := range checks {
		c.Rate, c.Low, c.High = Wilson(c.Violated, c.Judged())
		t.Checks = append(t.Checks, *c)
	}
	slices.SortFunc(t.Checks, func(a, b Check) int {
		return cmp.Or(cmp.Compare(checkIndex(a.Check), checkIndex(b.Check)), strings.Compare(a.Check, b.Check))
	})
	for name, k := range kinds {
		kd := Kind{Kind: name, Runs: k.runs, Checks: []KindCheck{}}
		for _, c := range t.Checks {
			if c.Violated == 0 {
				continue
			}
			kc := KindCheck{Check: c.Check, Violated: k.violated[c.Check], Judged: k.judged[c.Check]}
			if kc.Judged > 0 {
				kc.Rate = float64(kc.Violated) / float64(kc.Judged)
			}
			kd.Checks = append(kd.Checks, kc)
		}
		t.Kinds = append(t.Kinds, kd)
	}
	slices.SortFunc(t.Kinds, func(a, b Kind) int {
		rank := func(k Kind) int {
			if k.Kind == None {
				return 0
			}
			return 1
		}
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a.Kind, b.Kind))
	})
	if t.Checks == nil {
		t.Checks = []Check{}
	}
	if t.Kinds == nil {
		t.Kinds = []Kind{}
	}
	if t.Algorithms == nil {
		t.Algorithms = []string{}
	}
	return t
}

// firstOrder orders failing runs by seed, then trace and run id.
func firstOrder(a, b *Failing) int {
	return cmp.Or(cmp.Compare(a.Seed, b.Seed), strings.Compare(a.File, b.File), cmp.Compare(a.Run, b.Run))
}

func checkIndex(name string) int {
	for i, c := range analyze.All {
		if c.Name == name {
			return i
		}
	}
	return len(analyze.All)
}

// z95 is the normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Wilson returns the proportion k/n and the bounds of its 95% Wilson
// score interval, which, unlike the normal approximation, stays within
// [0, 1] and says something at k = 0 (0 of 300 runs: at most 1.3%). n = 0
// gives 0, 0, 1: nothing is known.
func Wilson(k, n int) (p, low, high float64) {
	if n == 0 {
		return 0, 0, 1
	}
	nf := float64(n)
	p = float64(k) / nf
	z2 := z95 * z95
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z95 / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return p, max(0, center-half), min(1, center+half)
}

package tally

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/trace"
)

// TestWilson against values computed by hand (and by R's prop.test
// without continuity correction).
func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n      int
		low, high float64
	}{
		{0, 300, 0, 0.01264},
		{5, 100, 0.02154, 0.11175},
		{50, 100, 0.40383, 0.59617},
		{10, 10, 0.72247, 1},
		{0, 0, 0, 1},
	} {
		_, lo, hi := Wilson(c.k, c.n)
		if math.Abs(lo-c.low) > 5e-5 || math.Abs(hi-c.high) > 5e-5 {
			t.Errorf("Wilson(%d, %d) = [%.5f, %.5f], want [%.5f, %.5f]", c.k, c.n, lo, hi, c.low, c.high)
		}
	}
}

func run(id int64, seed uint64, events int64, faults string, verdicts ...analyze.Verdict) Run {
	r := Run{Run: trace.Run{ID: id, Seed: seed, Algorithm: "bully", Complete: true, Faults: json.RawMessage(faults)}, File: "t.db", Events: events, Rerun: "dmx sim bully --seed x"}
	for i, v := range verdicts {
		res := analyze.Result{Check: []string{"agreement", "split-brain"}[i], Verdict: v}
		if v == analyze.Violated {
			res.Findings = []analyze.Finding{{Message: "two leaders"}}
		}
		r.Results = append(r.Results, res)
	}
	return r
}

// TestOf: counts, first and smallest failing runs, the kinds' rows; the
// same for the runs in any order.
func TestOf(t *testing.T) {
	ok, v, u, na := analyze.OK, analyze.Violated, analyze.Unknown, analyze.NotApplicable
	runs := []Run{
		run(1, 1, 100, `[]`, ok, ok),
		run(2, 2, 300, `["pause:4@1s-2s"]`, ok, v),
		run(3, 3, 200, `["pause:1@1s-2s","loss:20%@1s-2s"]`, ok, v),
		run(4, 4, 100, `["loss:20%@1s-2s"]`, u, ok),
		run(5, 5, 100, `[]`, na, ok),
	}
	got := Of(runs)
	if got.Runs != 5 || got.Verdict != analyze.Violated || len(got.Checks) != 2 {
		t.Fatalf("tally: %+v", got)
	}
	ag, sb := got.Checks[0], got.Checks[1]
	if ag.Check != "agreement" || ag.OK != 3 || ag.Unknown != 1 || ag.NotApplicable != 1 || ag.Violated != 0 || ag.First != nil {
		t.Errorf("agreement: %+v", ag)
	}
	if sb.Violated != 2 || sb.OK != 3 || sb.Rate != 0.4 || sb.First.Seed != 2 || sb.Smallest.Seed != 3 || sb.First.Finding != "two leaders" {
		t.Errorf("split-brain: %+v first %+v smallest %+v", sb, sb.First, sb.Smallest)
	}
	wantKinds := []Kind{
		{Kind: None, Runs: 2, Checks: []KindCheck{{Check: "split-brain", Violated: 0, Judged: 2}}},
		{Kind: "loss", Runs: 2, Checks: []KindCheck{{Check: "split-brain", Violated: 1, Judged: 2, Rate: 0.5}}},
		{Kind: "pause", Runs: 2, Checks: []KindCheck{{Check: "split-brain", Violated: 2, Judged: 2, Rate: 1}}},
	}
	if !reflect.DeepEqual(got.Kinds, wantKinds) {
		t.Errorf("kinds:\n%+v\nwant\n%+v", got.Kinds, wantKinds)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10 {
		r.Shuffle(len(runs), func(i, j int) { runs[i], runs[j] = runs[j], runs[i] })
		if again := Of(runs); !reflect.DeepEqual(again, got) {
			t.Fatalf("another order, another tally:\n%+v\n%+v", again, got)
		}
	}
	if e := Of(nil); e.Verdict != analyze.NotApplicable || e.Checks == nil || e.Kinds == nil {
		t.Errorf("empty tally: %+v", e)
	}
}

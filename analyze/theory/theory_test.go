package theory

import (
	"fmt"
	"testing"
)

func show(e Estimate) string {
	f := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("%s %s %s..%s", e.Formula, f(e.Value), f(e.Min), f(e.Max))
}

// TestEvaluate: a cost's value in a setting, its formula as the setting
// reads it, or the cost's own.
func TestEvaluate(t *testing.T) {
	n := Setting{N: 5}
	for _, tt := range []struct {
		cost Cost
		want string
	}{
		{Cost{Formula: "2(N-1)", Eval: InN(func(n float64) Estimate { return Exact(2 * (n - 1)) })}, "2(N-1) 8 -..-"},
		{Cost{Formula: "avg N/2, worst N-1", Eval: InN(func(n float64) Estimate { return Typical(n/2, 1, n-1) })}, "avg N/2, worst N-1 2.5 1..4"},
		{Cost{Formula: "N, or 0", Eval: InN(func(n float64) Estimate { return Between(0, n) })}, "N, or 0 - 0..5"},
		{Cost{Formula: "1..inf", Eval: Const(AtLeast(1))}, "1..inf - 1..-"},
		{Cost{Formula: "O(N^2)"}, "O(N^2) - -..-"},
		{Cost{Formula: "3(K-1)", Eval: func(s Setting) Estimate {
			e := Exact(float64(3 * (s.N - 1)))
			e.Formula = fmt.Sprintf("3(K-1), K = %d", s.N)
			return e
		}}, "3(K-1), K = 5 12 -..-"},
	} {
		if got := show(tt.cost.Evaluate(n)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.cost.Formula, got, tt.want)
		}
	}
}

// TestConstApart: two runs' values of a constant cost are apart, so that
// changing one (a caller's business) cannot change the other.
func TestConstApart(t *testing.T) {
	eval := Const(Typical(2, 1, 2))
	a, b := eval(Setting{}), eval(Setting{})
	if a.Value == b.Value || a.Min == b.Min || a.Max == b.Max {
		t.Fatal("two evaluations share their numbers")
	}
	*a.Value = 7
	if *b.Value != 2 || *eval(Setting{}).Value != 2 {
		t.Errorf("changing one evaluation changed another: %s", show(b))
	}
}

package algotest

import (
	"errors"
	"slices"
	"testing"

	"github.com/dmxlab/dmx/runner/algo"
)

// greedy enters as soon as it is asked: no mutual exclusion at all. The
// bench must catch it.
type greedy struct{}

func (greedy) Step(in algo.Input) []algo.Output {
	if in.Kind == algo.Request {
		return []algo.Output{algo.EnterCS()}
	}
	return nil
}

// sulky asks its right neighbour for permission and never grants any: every
// request blocks, and the wait-for graph is the ring.
type sulky struct{ id, n int }

func (s sulky) Step(in algo.Input) []algo.Output {
	if in.Kind == algo.Request {
		return []algo.Output{algo.SendTo((s.id+1)%s.n, algo.Msg{Type: "ask"}), algo.WaitFor([]int{(s.id + 1) % s.n})}
	}
	return nil
}

func spec(name string, f func(algo.Config) algo.Machine) algo.Spec {
	return algo.Spec{Name: name, New: func(c algo.Config) (algo.Machine, error) { return f(c), nil }}
}

func TestRunFindsSafetyViolation(t *testing.T) {
	_, err := Run(spec("greedy", func(algo.Config) algo.Machine { return greedy{} }),
		Options{N: 3, Seed: 1, Think: 1, Hold: 10_000_000})
	var f *Failure
	if !errors.As(err, &f) || f.Kind != Safety {
		t.Fatalf("err = %v, want a safety failure", err)
	}
}

func TestRunFindsDeadlockCycle(t *testing.T) {
	_, err := Run(spec("sulky", func(c algo.Config) algo.Machine { return sulky{c.ID, c.N} }),
		Options{N: 4, Seed: 1})
	var f *Failure
	if !errors.As(err, &f) || f.Kind != Liveness || !f.Stuck {
		t.Fatalf("err = %v, want a stuck liveness failure", err)
	}
	if len(f.Cycle) != 4 {
		t.Fatalf("cycle %v, want the 4-ring", f.Cycle)
	}
}

func TestRunOneNodeGreedyIsFine(t *testing.T) {
	res, err := Run(spec("greedy", func(algo.Config) algo.Machine { return greedy{} }), Options{N: 1, Seed: 7, Entries: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Entered[0] != 5 || res.Messages != 0 {
		t.Fatalf("entered %v, messages %d", res.Entered, res.Messages)
	}
}

func TestCycle(t *testing.T) {
	for _, tc := range []struct {
		waits [][]int
		want  []int
	}{
		{[][]int{{}, {}, {}}, nil},
		{[][]int{{1}, {2}, {}}, nil},
		{[][]int{{1}, {2}, {0}}, []int{0, 1, 2}},
		{[][]int{{}, {3}, {}, {1}}, []int{1, 3}},
		// seed 001 "Liveness": P1->P3, P3->P4, P4->P2, P2->P1 (ids 1..4, node 0 unused)
		{[][]int{{}, {3}, {1}, {4}, {2}}, []int{1, 3, 4, 2}},
	} {
		if got := Cycle(tc.waits); !slices.Equal(got, tc.want) {
			t.Errorf("Cycle(%v) = %v, want %v", tc.waits, got, tc.want)
		}
	}
}

func TestParseScript(t *testing.T) {
	blocks, trailer, err := parseScript("# c\n\nnew n=2\n----\nok\n\nstate\n----\n\n# end\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0].cmd != "new n=2" || !slices.Equal(blocks[0].want, []string{"ok"}) ||
		blocks[1].want != nil || !slices.Equal(trailer, []string{"", "# end"}) {
		t.Fatalf("blocks %+v trailer %q", blocks, trailer)
	}
	if _, _, err := parseScript("new n=2\nok\n"); err == nil {
		t.Fatal("a command without ---- parsed")
	}
}

package algotest

import (
	"errors"
	"slices"
	"testing"

	"github.com/dmxlab/dmx/runner/algo"
)

// crowned names a fixed leader at Start and Recover; on Recover it also
// reports (as a Note) the value it got back.
type crowned struct{ leader, id int }

func (c crowned) Step(in algo.Input) []algo.Output {
	switch in.Kind {
	case algo.Start:
		return []algo.Output{
			{Kind: algo.Leader, Leader: c.leader},
			{Kind: algo.Persist, Msg: algo.Msg{Type: "mark", ID: c.id + 100}},
			algo.SendTo((c.id+1)%3, algo.Msg{Type: "hello"}),
		}
	case algo.Recover:
		return []algo.Output{{Kind: algo.Leader, Leader: c.leader}, algo.NoteOut("got %s", FormatMsg(in.Msg))}
	}
	return nil
}

func crownedSpec(leader func(id, n int) int) algo.Spec {
	return algo.Spec{Name: "crowned", Kind: algo.Election, New: func(c algo.Config) (algo.Machine, error) {
		return crowned{leader(c.ID, c.N), c.ID}, nil
	}}
}

func TestRunElectionChecks(t *testing.T) {
	top := crownedSpec(func(_, n int) int { return n - 1 })
	if _, err := RunElection(top, ElectionOptions{N: 3, Seed: 1, Settle: 1e6}); err != nil {
		t.Fatalf("a fixed highest leader: %v", err)
	}
	var f *Failure
	_, err := RunElection(crownedSpec(func(id, _ int) int { return id }), ElectionOptions{N: 3, Seed: 1, Settle: 1e6})
	if !errors.As(err, &f) || f.Kind != SplitBrain {
		t.Fatalf("everyone leads itself: err = %v, want a split brain", err)
	}
	_, err = RunElection(crownedSpec(func(_, _ int) int { return 0 }), ElectionOptions{N: 3, Seed: 1, Settle: 1e6})
	if !errors.As(err, &f) || f.Kind != Validity {
		t.Fatalf("P0 leads: err = %v, want a validity failure", err)
	}
	if _, err = RunElection(crownedSpec(func(_, _ int) int { return 0 }), ElectionOptions{N: 3, Seed: 1, Settle: 1e6, Validity: AnyLive}); err != nil {
		t.Fatalf("P0 leads, any live leader will do: %v", err)
	}
	// The leader crashes and nobody elects another: the others still
	// follow it.
	_, err = RunElection(top, ElectionOptions{N: 3, Seed: 1, Settle: 1e6, Faults: []ElectionFault{{At: 5e6, Proc: ElectionLeader}}})
	if !errors.As(err, &f) || f.Kind != Validity {
		t.Fatalf("crashed leader: err = %v, want a validity failure", err)
	}
	_, err = RunElection(crownedSpec(func(id, _ int) int { return []int{2, 2, 1}[id] }), ElectionOptions{N: 3, Seed: 1, Settle: 1e6})
	if !errors.As(err, &f) || f.Kind != Agreement {
		t.Fatalf("P2 follows P1: err = %v, want an agreement failure", err)
	}
}

func TestRunElectionCrashRecover(t *testing.T) {
	res, err := RunElection(crownedSpec(func(_, n int) int { return n - 1 }), ElectionOptions{N: 3, Seed: 2, Settle: 1e6, Log: 100,
		Faults: []ElectionFault{{At: 0, Proc: 1}, {At: 2e6, Proc: 1, Recover: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost != 1 || !slices.Equal(res.Faults, []string{"crash:1@0s", "recover:1@2ms"}) {
		t.Fatalf("lost %d, faults %v: want P0's hello to P1 lost", res.Lost, res.Faults)
	}
	if !slices.ContainsFunc(res.Log, func(l string) bool { return l == "t=2ms        P1   note: got mark id=101" }) {
		t.Fatalf("P1 did not get back what it persisted:\n%v", res.Log)
	}
}

func TestElectionBench(t *testing.T) {
	b, err := NewElectionBench(crownedSpec(func(_, n int) int { return n - 1 }), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.Crash(1); err != nil {
		t.Fatal(err)
	}
	b.Output()
	if err := b.Stabilize(); err != nil {
		t.Fatal(err)
	}
	if got := b.Output(); !slices.Contains(got, "lost 0->1 hello (P1 is down)") {
		t.Fatalf("output %q: want the message to P1 lost", got)
	}
	if err := b.Recover(1); err != nil {
		t.Fatal(err)
	}
	if got := b.Output(); !slices.Equal(got, []string{"P1 recover stored=[mark id=101] @5", "  leader 2", "  note: got mark id=101"}) {
		t.Fatalf("recover: %q", got)
	}
	if l := b.Leaders(); !slices.Equal(l, []int{2, 2, 2}) {
		t.Fatalf("leaders %v", l)
	}
	if err := b.Fire(0, "nothing"); err == nil {
		t.Fatal("fired a timer that is not armed")
	}
}

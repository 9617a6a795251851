package algotest

import (
	"testing"

	"github.com/dmxlab/dmx/runner/algo"
)

// amnesiac enters whenever asked and persists a count of its entries; on
// Recover it reports the count it got back in its next entry's note.
type amnesiac struct {
	entries   uint64
	recovered []uint64
}

func (a *amnesiac) Step(in algo.Input) []algo.Output {
	switch in.Kind {
	case algo.Recover:
		a.entries = in.Msg.Stamp
		a.recovered = append(a.recovered, in.Msg.Stamp)
	case algo.Request:
		a.entries++
		return []algo.Output{{Kind: algo.Persist, Msg: algo.Msg{Type: "count", Stamp: a.entries}}, algo.EnterCS()}
	}
	return nil
}

func TestRunCrashesRecoversPersisted(t *testing.T) {
	var machines []*amnesiac
	s := spec("amnesiac", func(algo.Config) algo.Machine {
		m := &amnesiac{}
		machines = append(machines, m)
		return m
	})
	res, err := RunCrashes(s, Options{N: 1, Seed: 5, Entries: 6, Think: 10_000_000, Hold: 1},
		[]Crash{{Node: 0, At: 25_000_000, Recover: 26_000_000}})
	if err != nil {
		t.Fatal(err)
	}
	if len(machines) != 2 {
		t.Fatalf("%d machines built, want 2 (one fresh after the restart)", len(machines))
	}
	got := machines[1].recovered
	if len(got) != 1 || got[0] == 0 || got[0] != machines[0].entries {
		t.Fatalf("recovered %v, want the first machine's last persisted count %d", got, machines[0].entries)
	}
	if res.Entered[0] != 6 {
		t.Fatalf("entered %v, want 6 entries in all", res.Entered)
	}
}

// pinger sends a ping to P0 with each entry; P0 counts the pings it gets.
type pinger struct{ got *int }

func (p pinger) Step(in algo.Input) []algo.Output {
	switch in.Kind {
	case algo.Receive:
		*p.got++
	case algo.Request:
		return []algo.Output{algo.SendTo(0, algo.Msg{Type: "ping"}), algo.EnterCS()}
	}
	return nil
}

// TestRunCrashesLosesMessages: what is sent to a node that is down is lost,
// and a node that never recovers stops counting for liveness.
func TestRunCrashesLosesMessages(t *testing.T) {
	for _, tc := range []struct {
		crashes []Crash
		want    int
	}{
		{nil, 3},
		{[]Crash{{Node: 0, At: 0}}, 0},
		{[]Crash{{Node: 0, At: 0, Recover: 1_000_000_000}}, 0}, // back after the pings
	} {
		got := 0
		s := spec("pinger", func(algo.Config) algo.Machine { return pinger{&got} })
		if _, err := RunCrashes(s, Options{N: 2, Seed: 1, Requesters: []int{1}}, tc.crashes); err != nil {
			t.Fatalf("%v: %v", tc.crashes, err)
		}
		if got != tc.want {
			t.Errorf("%v: P0 got %d pings, want %d", tc.crashes, got, tc.want)
		}
	}
	s := spec("greedy", func(algo.Config) algo.Machine { return greedy{} })
	if _, err := RunCrashes(s, Options{N: 2, Seed: 1}, []Crash{{Node: 2, At: 5}}); err == nil {
		t.Fatal("a crash of a node that does not exist was accepted")
	}
}

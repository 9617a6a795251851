package algotest

import (
	"errors"
	"testing"

	"github.com/dmxlab/dmx/runner/algo"
)

// eager multicasts to everyone, itself included, and delivers each message
// the moment it arrives: no agreement on the order at all.
type eager struct{ id, n, seq int }

func (e *eager) Step(in algo.Input) []algo.Output {
	switch in.Kind {
	case algo.Request:
		e.seq++
		var out []algo.Output
		for j := 0; j < e.n; j++ {
			out = append(out, algo.SendTo(j, algo.Msg{Type: "m", Stamp: in.Clock, ID: e.seq}))
		}
		return out
	case algo.Receive:
		return []algo.Output{{Kind: algo.MulticastDelivered, From: in.From, Msg: in.Msg}}
	}
	return nil
}

// mute multicasts and never delivers.
type mute struct{ eager }

func (m *mute) Step(in algo.Input) []algo.Output {
	if in.Kind == algo.Receive {
		return nil
	}
	return m.eager.Step(in)
}

func TestRunMulticastFindsOrderViolation(t *testing.T) {
	s := spec("eager", func(c algo.Config) algo.Machine { return &eager{id: c.ID, n: c.N} })
	for seed := uint64(1); seed <= 20; seed++ {
		_, err := RunMulticast(s, Options{N: 3, Seed: seed, FIFO: true, Think: 1})
		var f *Failure
		if errors.As(err, &f) && f.Kind == Order {
			return
		}
	}
	t.Fatal("eager delivery never broke the order in 20 seeds")
}

func TestRunMulticastCountsAndLiveness(t *testing.T) {
	s := spec("eager", func(c algo.Config) algo.Machine { return &eager{id: c.ID, n: c.N} })
	res, err := RunMulticast(s, Options{N: 1, Seed: 3, Entries: 4})
	if err != nil {
		t.Fatal(err)
	}
	if res.Multicasts[0] != 4 || len(res.Delivered[0]) != 4 || res.Messages != 4 || res.SelfSends != 4 {
		t.Fatalf("result %+v", res)
	}
	s = spec("mute", func(c algo.Config) algo.Machine { return &mute{eager{id: c.ID, n: c.N}} })
	_, err = RunMulticast(s, Options{N: 2, Seed: 3})
	var f *Failure
	if !errors.As(err, &f) || f.Kind != Liveness {
		t.Fatalf("err = %v, want a liveness failure", err)
	}
}

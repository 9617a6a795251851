package lamport

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algotest"
	"github.com/dmxlab/dmx/runner/deep"
)

// TestScripts runs the interaction scripts in testdata; each block cites the
// note it exercises. Rewrite with go test -update.
func TestScripts(t *testing.T) {
	algotest.RunScripts(t, Spec, "testdata")
}

// TestSweepFIFO runs the algorithm on FIFO channels, the assumption it
// needs, for many seeds and group sizes: mutual exclusion, every request
// entered, and exactly 3(N-1) messages per entry.
func TestSweepFIFO(t *testing.T) {
	count := algotest.CountCheck(func(_, n int) int { return 3 * (n - 1) })
	algotest.Sweep(t, Spec, []int{1, 2, 3, 5, 8}, 300, algotest.Options{FIFO: true}, count)
	algotest.Sweep(t, Spec, []int{3, 5}, 100, algotest.Options{FIFO: true, Think: 1, Entries: 6}, count)
}

// TestNeedsFIFO shows the assumption is real: without FIFO channels some
// seed breaks mutual exclusion (see testdata/not_fifo.txt for the
// interleaving).
func TestNeedsFIFO(t *testing.T) {
	if algotest.FirstViolation(t, Spec, algotest.Options{N: 3, Think: 1}, 300, analyze.MutexCausal) == 0 {
		t.Fatal("no seed out of 300 broke mutual exclusion without FIFO channels")
	}
}

func TestNewValidates(t *testing.T) {
	algotest.CheckParams(t, Spec, 2, nil, []map[string]string{{"fifo": "1"}})
}

// TestAbstractExact: two machines whose histories differ only in the
// timestamps Abstract leaves out have equal Abstract values, and, fed the
// same inputs afterwards, give the same outputs and keep equal Abstract
// values (Abstract is exact, the condition of algo.Abstracter); states
// that differ in what counts differ in Abstract.
func TestAbstractExact(t *testing.T) {
	req := func(c uint64) algo.Input { return algo.Input{Kind: algo.Request, Clock: c, Resource: "cs"} }
	rel := func(c uint64) algo.Input { return algo.Input{Kind: algo.Release, Clock: c, Resource: "cs"} }
	recv := func(c uint64, from int, typ string, stamp uint64) algo.Input {
		return algo.Input{Kind: algo.Receive, Clock: c, From: from, Msg: algo.Msg{Type: typ, Stamp: stamp, ID: from}}
	}
	// Both Abstract and AbstractFrom from base 0 must tell the states
	// apart as the test says: fp hashes them side by side.
	type pair struct{ value, words deep.Fingerprint }
	fp := func(m *Machine, clock uint64) pair {
		var h, w deep.Hasher
		h.Value(m.Abstract(clock))
		m.AbstractFrom(&w, clock, 0)
		return pair{h.Sum(), w.Sum()}
	}
	same := func(a, b pair) bool {
		if (a.value == b.value) != (a.words == b.words) {
			t.Fatalf("Abstract and AbstractFrom disagree on whether two states are one")
		}
		return a.value == b.value
	}
	run := func(ins []algo.Input) (*Machine, [][]algo.Output) {
		m := algotest.Build[*Machine](t, Spec, algo.Config{ID: 0, N: 3})
		var outs [][]algo.Output
		for _, in := range ins {
			outs = append(outs, m.Step(in))
		}
		return m, outs
	}
	// Entered and left at other times, with other acks: t and heard
	// differ, at clock 12 both are stale.
	a, _ := run([]algo.Input{req(5), recv(6, 1, MsgAck, 6), recv(8, 2, MsgAck, 7), rel(10)})
	b, _ := run([]algo.Input{req(2), recv(4, 1, MsgAck, 3), recv(6, 2, MsgAck, 4), rel(7)})
	if !same(fp(a, 12), fp(b, 12)) {
		t.Fatalf("stale timestamps count: %v / %v", a, b)
	}
	// The same future: a request, an earlier one of P2's, P1's ack after
	// it, P2's release.
	future := []algo.Input{req(13), recv(14, 2, MsgRequest, 9), recv(17, 1, MsgAck, 15), recv(19, 2, MsgRelease, 16), rel(21), req(23), recv(25, 1, MsgAck, 24)}
	for _, in := range future {
		oa, ob := a.Step(in), b.Step(in)
		if !reflect.DeepEqual(oa, ob) {
			t.Fatalf("after %+v: outputs %v and %v", in, oa, ob)
		}
		if !same(fp(a, in.Clock), fp(b, in.Clock)) {
			t.Fatalf("after %+v: %v and %v abstract differently", in, a, b)
		}
	}
	// While a request waits, whether heard[j] > t counts.
	c, _ := run([]algo.Input{req(5), recv(6, 1, MsgAck, 4)})
	d, _ := run([]algo.Input{req(5), recv(6, 1, MsgAck, 6)})
	if same(fp(c, 7), fp(d, 7)) {
		t.Fatalf("an ack before and one after T_i abstract alike: %v / %v", c, d)
	}
	// So does t itself, and a heard[j] the clock has not passed.
	e, _ := run([]algo.Input{req(4)})
	f, _ := run([]algo.Input{req(5)})
	if same(fp(e, 6), fp(f, 6)) {
		t.Fatalf("requests of T_i 4 and 5 abstract alike")
	}
}

// TestAbstractFromShift: the condition of algo.Shifter. Two machines fed
// the same inputs except that every clock and stamp of the second is
// larger by d give the same outputs but for stamps larger by d, and the
// same AbstractFrom once each is lowered by its own base; so two states
// of a run that differ by a shift are one state to the search. Random
// histories, one printed seed.
func TestAbstractFromShift(t *testing.T) {
	const seed = 20261124
	r := rand.New(rand.NewPCG(seed, 0))
	fp := func(m *Machine, clock, base uint64) deep.Fingerprint {
		var h deep.Hasher
		m.AbstractFrom(&h, clock, base)
		return h.Sum()
	}
	types := []string{MsgRequest, MsgAck, MsgRelease}
	for run := 0; run < 200; run++ {
		d := 1 + r.Uint64N(50)
		a, b := algotest.Build[*Machine](t, Spec, algo.Config{ID: 0, N: 3}), algotest.Build[*Machine](t, Spec, algo.Config{ID: 0, N: 3})
		clock := uint64(0)
		for step := 0; step < 30; step++ {
			clock += 1 + r.Uint64N(3)
			var in algo.Input
			switch k := r.IntN(6); {
			case k == 0:
				in = algo.Input{Kind: algo.Request, Clock: clock, Resource: "cs"}
			case k == 1:
				in = algo.Input{Kind: algo.Release, Clock: clock, Resource: "cs"}
			default:
				from := 1 + r.IntN(2)
				in = algo.Input{Kind: algo.Receive, Clock: clock, From: from,
					Msg: algo.Msg{Type: types[r.IntN(3)], Stamp: clock - 1 - r.Uint64N(min(clock, 6)), ID: from}}
			}
			shifted := in
			shifted.Clock += d
			if in.Kind == algo.Receive {
				shifted.Msg.Stamp += d
			}
			oa, ob := a.Step(in), b.Step(shifted)
			for i := range ob {
				if ob[i].Kind == algo.Send {
					ob[i].Msg.Stamp -= d
				}
			}
			if !reflect.DeepEqual(oa, ob) {
				t.Fatalf("seed %d run %d: after %+v shifted by %d, outputs %v and %v", seed, run, in, d, oa, ob)
			}
			base := r.Uint64N(clock + 1)
			if fp(a, clock, base) != fp(b, clock+d, base+d) {
				t.Fatalf("seed %d run %d step %d: %v and %v (shifted by %d) abstract differently from base %d", seed, run, step, a, b, d, base)
			}
		}
	}
	// A shift is all AbstractFrom forgives: a request of T_i 4 and one of
	// 5, seen from the same base, still differ.
	e, f := &Machine{id: 0, n: 3, heard: make([]uint64, 3)}, &Machine{id: 0, n: 3, heard: make([]uint64, 3)}
	e.Step(algo.Input{Kind: algo.Request, Clock: 4, Resource: "cs"})
	f.Step(algo.Input{Kind: algo.Request, Clock: 5, Resource: "cs"})
	if fp(e, 6, 2) == fp(f, 6, 2) {
		t.Fatal("requests of T_i 4 and 5 abstract alike from one base")
	}
}

// TestClone: a clone equals its original and shares nothing with it: a
// step of one leaves the other as it was.
func TestClone(t *testing.T) {
	a := algotest.Build[*Machine](t, Spec, algo.Config{ID: 0, N: 3})
	a.Step(algo.Input{Kind: algo.Receive, Clock: 3, From: 1, Msg: algo.Msg{Type: MsgRequest, Stamp: 2, ID: 1}})
	a.Step(algo.Input{Kind: algo.Request, Clock: 4, Resource: "cs"})
	b := a.Clone().(*Machine)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("clone %v of %v", b, a)
	}
	before := b.String()
	a.Step(algo.Input{Kind: algo.Receive, Clock: 6, From: 2, Msg: algo.Msg{Type: MsgAck, Stamp: 5, ID: 2}})
	a.Step(algo.Input{Kind: algo.Receive, Clock: 7, From: 1, Msg: algo.Msg{Type: MsgRelease, Stamp: 6, ID: 1}})
	if b.String() != before || b.String() == a.String() {
		t.Fatalf("a step of the original changed the clone: %s, was %s", b, before)
	}
}

package algotest_test

// Robustness of every machine against inputs the runtime may hand it: the
// contract (runner/algo/doc.go) gives no guarantee that a delivered message
// is of a known type, from an id inside the group, not a duplicate, or not a
// leftover from before a crash. A machine must not panic on any of them,
// must not modify the Input's slices, and must give the same outputs for the
// same inputs (the simulator replays a seed).

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algotest"
	"github.com/dmxlab/dmx/runner/registry"
)

type robustCase struct {
	spec   *algo.Spec
	params map[string]string
}

// robustCases are every algorithm of the registry in every configuration
// it declares (algo.Spec.Configurations), flawed ones too: a deadlock is no
// excuse for a panic.
func robustCases() []robustCase {
	var out []robustCase
	for _, spec := range registry.All() {
		for _, v := range spec.Configurations() {
			out = append(out, robustCase{spec, v.Params})
		}
	}
	return out
}

// robustRun steps one machine (id of n) through steps random inputs drawn
// from seed and returns a transcript of its outputs.
func robustRun(t *testing.T, c robustCase, n, id int, seed uint64, steps int) (out string) {
	r := rand.New(rand.NewPCG(seed, 7))
	mk := func() algo.Machine {
		m, err := c.spec.New(algo.Config{ID: id, N: n, Resource: "cs", Params: c.params, Rand: rand.New(rand.NewPCG(seed, 11))})
		if err != nil {
			t.Fatalf("%s %v: New: %v", c.spec.Name, c.params, err)
		}
		return m
	}
	m := mk()
	var persisted algo.Msg
	timers := []string{"bogus"}
	types := append([]string{"bogus", ""}, c.spec.MsgTypes...)
	var b []byte
	var last algo.Input
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%s %v n=%d id=%d seed=%d: panic %v on input %+v", c.spec.Name, c.params, n, id, seed, p, last)
		}
	}()
	step := func(in algo.Input) {
		last = in
		before := append([]uint64(nil), in.Msg.Vals...)
		outs := m.Step(in)
		if !slices.Equal(before, in.Msg.Vals) {
			t.Fatalf("%s %v: Step modified the input's Vals: %v -> %v (input %+v)", c.spec.Name, c.params, before, in.Msg.Vals, in)
		}
		for _, o := range outs {
			if o.Kind == algo.SetTimer {
				timers = append(timers, o.TimerName)
			}
			if o.Kind == algo.Persist {
				persisted = o.Msg
				persisted.Vals = append([]uint64(nil), o.Msg.Vals...)
			}
			if slices.Contains(o.Msg.Vals, 0xdead) {
				t.Fatalf("%s %v: output %+v carries a value scribbled over an earlier input's Vals after its Step returned: the machine kept that slice", c.spec.Name, c.params, o)
			}
			b = fmt.Appendf(b, "%+v\n", o)
		}
		// Scribble over the input's slice: a machine that kept it would
		// show the scribble in a later output.
		for i := range in.Msg.Vals {
			in.Msg.Vals[i] = 0xdead
		}
	}
	now := int64(0)
	clock := uint64(0)
	step(algo.Input{Kind: algo.Start})
	for range steps {
		now += r.Int64N(5e6)
		clock++
		in := algo.Input{Now: now, Clock: clock}
		switch k := r.IntN(10); {
		case k < 5:
			in.Kind = algo.Receive
			in.From = r.IntN(n)
			if r.IntN(20) == 0 {
				in.From = []int{-1, n, n + 5}[r.IntN(3)]
			}
			in.Msg = algo.Msg{Type: types[r.IntN(len(types))], Resource: "cs"}
			if r.IntN(2) == 0 {
				in.Msg.Stamp = r.Uint64N(uint64(2 * (steps + 1)))
			} else if r.IntN(10) == 0 {
				in.Msg.Stamp = r.Uint64()
			}
			in.Msg.ID = r.IntN(n+2) - 1
			if r.IntN(10) == 0 {
				in.Msg.ID = int(r.Int32()) - 1<<30
			}
			in.Msg.Term = r.Uint64N(10)
			if r.IntN(20) == 0 {
				in.Msg.Term = r.Uint64()
			}
			switch r.IntN(4) {
			case 0:
			case 1:
				in.Msg.Vals = make([]uint64, n)
			default:
				in.Msg.Vals = make([]uint64, r.IntN(2*n+2))
			}
			for i := range in.Msg.Vals {
				switch r.IntN(3) {
				case 0:
					in.Msg.Vals[i] = r.Uint64N(uint64(n + 2))
				case 1:
					in.Msg.Vals[i] = r.Uint64N(uint64(steps + 1))
				default:
					in.Msg.Vals[i] = r.Uint64()
				}
			}
		case k < 7:
			in.Kind = algo.Timer
			in.TimerName = timers[r.IntN(len(timers))]
		case k < 8:
			in.Kind = algo.Request
			in.Resource = "cs"
		case k < 9:
			in.Kind = algo.Release
			in.Resource = "cs"
		default:
			if r.IntN(3) == 0 {
				m = mk()
				timers = timers[:1]
				in.Kind = algo.Recover
				in.Msg = persisted
				in.Msg.Vals = append([]uint64(nil), persisted.Vals...)
				b = append(b, "-- recover\n"...)
			} else {
				in.Kind = algo.InputKind(r.IntN(9)) // unknown kinds too
			}
		}
		step(in)
	}
	return string(b)
}

func TestMachinesRobust(t *testing.T) {
	steps := 400
	seeds := 15
	switch {
	case algotest.Long():
		seeds = 60
	case testing.Short():
		seeds = 10
	}
	for _, c := range robustCases() {
		t.Run(c.spec.Name+fmtParams(c.params), func(t *testing.T) {
			t.Parallel()
			for _, n := range []int{1, 2, 3, 5} {
				for s := range seeds {
					id := s % n
					a := robustRun(t, c, n, id, uint64(s), steps)
					if s < 3 {
						if b := robustRun(t, c, n, id, uint64(s), steps); a != b {
							t.Fatalf("%s %v n=%d seed=%d: two runs of the same inputs differ", c.spec.Name, c.params, n, s)
						}
					}
				}
			}
		})
	}
}

func fmtParams(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for _, k := range keys {
		s += "/" + k + "=" + p[k]
	}
	return s
}

package deep_test

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/deep"
	"github.com/dmxlab/dmx/runner/registry"
)

func fingerprint(v any) deep.Fingerprint {
	var h deep.Hasher
	h.Value(v)
	return h.Sum()
}

type node struct {
	id    int
	label string
	next  *node
	vals  []uint64
	seen  map[string]bool
	any   any
	fn    func()
}

// TestCopy: a copy is equal, shares nothing mutable with its original,
// keeps aliasing, and refuses funcs.
func TestCopy(t *testing.T) {
	shared := &node{id: 9}
	a := &node{id: 1, label: "a", next: shared, vals: []uint64{1, 2}, seen: map[string]bool{"x": true}, any: shared}
	c, err := deep.Copy(a)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, c) || c == a || c.next == a.next {
		t.Fatalf("copy %+v of %+v: want equal and distinct", c, a)
	}
	if c.any.(*node) != c.next {
		t.Fatal("two pointers to one value point to two copies")
	}
	c.vals[0], c.seen["y"], c.next.id = 7, true, 10
	if a.vals[0] != 1 || len(a.seen) != 1 || shared.id != 9 {
		t.Fatal("the copy shares mutable state with its original")
	}
	a.fn = func() {}
	if _, err := deep.Copy(a); err == nil || !strings.Contains(err.Error(), "fn") {
		t.Fatalf("copy of a func: %v, want an error naming the field", err)
	}
}

// TestHash: equal values hash equally whatever their addresses and map
// order; a change anywhere changes the fingerprint.
func TestHash(t *testing.T) {
	mk := func() *node {
		m := map[string]bool{}
		for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
			m[k] = len(k) > 0
		}
		return &node{id: 1, label: "a", next: &node{id: 2}, vals: []uint64{1, 2}, seen: m}
	}
	base := fingerprint(mk())
	for i := 0; i < 20; i++ {
		if fingerprint(mk()) != base {
			t.Fatal("equal values hash differently")
		}
	}
	for _, change := range []func(n *node){
		func(n *node) { n.id = 3 },
		func(n *node) { n.label = "b" },
		func(n *node) { n.next.id = 3 },
		func(n *node) { n.next = nil },
		func(n *node) { n.vals = append(n.vals, 0) },
		func(n *node) { n.vals = nil },
		func(n *node) { n.seen["a"] = false },
		func(n *node) { delete(n.seen, "h") },
		func(n *node) { n.any = 1 },
		func(n *node) { n.any = uint(1) },
	} {
		n := mk()
		change(n)
		if fingerprint(n) == base {
			t.Fatalf("a change to %+v leaves the fingerprint as it was", n)
		}
	}
}

// TestCopyMachines: every algorithm's machine, in every configuration,
// copies faithfully: the copy hashes as its original, answers the same
// inputs with the same outputs, and its original's later steps leave it
// unchanged.
func TestCopyMachines(t *testing.T) {
	for _, spec := range registry.All() {
		for _, v := range spec.Configurations() {
			const n = 3
			var ms []algo.Machine
			for id := 0; id < n; id++ {
				m, err := spec.New(algo.Config{ID: id, N: n, Resource: "cs", Params: v.Params, Rand: rand.New(rand.NewPCG(1, uint64(id)))})
				if err != nil {
					t.Fatal(err)
				}
				ms = append(ms, m)
			}
			// A few steps of a tiny network: start, everyone asks, the
			// messages delivered in order, timers fired.
			type msg struct {
				from, to int
				m        algo.Msg
			}
			var inflight []msg
			var clock uint64
			step := func(id int, in algo.Input) []algo.Output {
				clock++
				in.Clock, in.Now = clock, int64(clock)*1000
				outs := ms[id].Step(in)
				for _, o := range outs {
					if o.Kind == algo.Send {
						inflight = append(inflight, msg{id, o.To, o.Msg})
					}
				}
				return outs
			}
			for id := 0; id < n; id++ {
				step(id, algo.Input{Kind: algo.Start})
				step(id, algo.Input{Kind: algo.Request, Resource: "cs"})
			}
			for i := 0; i < 4 && len(inflight) > 0; i++ {
				m := inflight[0]
				inflight = inflight[1:]
				step(m.to, algo.Input{Kind: algo.Receive, From: m.from, Msg: m.m})
			}
			c, err := deep.Copy(ms[0])
			if err != nil {
				t.Fatalf("%s %v: %v", spec.Name, v.Params, err)
			}
			before := fingerprint(ms[0])
			if fingerprint(c) != before {
				t.Fatalf("%s %v: the copy hashes differently", spec.Name, v.Params)
			}
			in := algo.Input{Kind: algo.Receive, From: 1, Msg: algo.Msg{Type: "request", Stamp: 1, ID: 1}, Clock: 50, Now: 50000}
			if len(inflight) > 0 {
				in = algo.Input{Kind: algo.Receive, From: inflight[0].from, Msg: inflight[0].m, Clock: 50, Now: 50000}
				if inflight[0].to != 0 {
					in.Kind, in.Resource = algo.Release, "cs"
				}
			}
			got, want := c.Step(in), ms[0].Step(in)
			if !reflect.DeepEqual(got, want) || fingerprint(c) != fingerprint(ms[0]) {
				t.Fatalf("%s %v: the copy answers %v with %v, its original with %v", spec.Name, v.Params, in, got, want)
			}
			c2, _ := deep.Copy(ms[0])
			fp := fingerprint(c2)
			ms[0].Step(algo.Input{Kind: algo.Recover, Clock: 60, Now: 60000})
			if fingerprint(c2) != fp {
				t.Fatalf("%s %v: a step of the original changed its copy", spec.Name, v.Params)
			}
		}
	}
}

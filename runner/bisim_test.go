package runner_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/deep"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// TestFingerprintBisimulation proves, over every reachable state of small
// runs, that the schedule search's fingerprint (World.Fingerprint with
// Shift: the translation reduction, each machine's Abstract, the stamps
// in flight as their receiver's AbstractStamp keeps them, the clocks in
// flight that their receiver's clock already passed) counts as one state
// only states that behave alike. It walks the states themselves (told
// apart by everything in them: ExactFingerprint), keeps the first met of
// each fingerprint, and checks every other state of that fingerprint
// against it: the same steps enabled, and each step recording the same
// events (their timestamps and message stamps apart) and leading to states
// of one fingerprint again. As every reachable state is checked, the
// relation "same fingerprint" is a bisimulation on these runs: a search
// that skips a state met again under another's fingerprint misses
// nothing. Reordering channels are included (lamport's violations are
// found there, so the abstraction must not hide them).
func TestFingerprintBisimulation(t *testing.T) {
	for _, tc := range []struct {
		algo       string
		n, entries int
		reorder    bool
		long       bool // run only with DMX_LONG=1 (3 x 1: 978,688 states, about two minutes)
		large      bool // run only with DMX_BISIM_LARGE=1 (3 x 1 reordering: 49,209,375 states, about an hour and several GB)
	}{
		{"lamport", 2, 3, false, false, false},
		{"lamport", 2, 2, true, false, false},
		{"lamport", 3, 1, false, true, false},
		{"lamport", 2, 5, false, false, true},
		{"lamport", 3, 1, true, false, true},
	} {
		name := fmt.Sprintf("%s N=%d x%d reorder=%v", tc.algo, tc.n, tc.entries, tc.reorder)
		t.Run(name, func(t *testing.T) {
			if tc.long && os.Getenv("DMX_LONG") == "" {
				t.Skip("the state space takes minutes: only with DMX_LONG=1")
			}
			if tc.large && os.Getenv("DMX_BISIM_LARGE") == "" {
				t.Skip("a large state space: only with DMX_BISIM_LARGE=1")
			}
			p := runner.NewPlan(runner.DriverSim)
			p.Spec, p.N, p.Seed = registry.Lookup(tc.algo), tc.n, 1
			p.Workload.Entries = tc.entries
			p.Sim.Reorder = tc.reorder
			w0, err := runner.NewWorld(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			w0.Shift = true
			fp := func(w *runner.World) deep.Fingerprint {
				var h deep.Hasher
				w.Fingerprint(&h)
				return h.Sum()
			}
			exact := func(w *runner.World) deep.Fingerprint {
				var h deep.Hasher
				runner.ExactFingerprint(w, &h)
				return h.Sum()
			}
			reps := map[deep.Fingerprint]*runner.World{}
			seen := map[deep.Fingerprint]bool{}
			stack := []*runner.World{w0}
			compared := 0
			for len(stack) > 0 {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				x := exact(w)
				if seen[x] {
					continue
				}
				seen[x] = true
				f := fp(w)
				rep, ok := reps[f]
				if !ok {
					reps[f] = w
				} else {
					compared++
					if err := sameFuture(rep, w, fp); err != nil {
						t.Fatalf("two states of one fingerprint behave apart: %v\nfirst:\n%s\nthen:\n%s", err, describe(rep), describe(w))
					}
				}
				for _, st := range w.Enabled(nil) {
					c, err := w.Clone()
					if err != nil {
						t.Fatal(err)
					}
					if err := c.Apply(st); err != nil {
						t.Fatal(err)
					}
					stack = append(stack, c)
				}
			}
			t.Logf("%d states, %d fingerprints, %d states checked against the first of their fingerprint", len(seen), len(reps), compared)
			if compared == 0 {
				t.Fatalf("no two states share a fingerprint: nothing was checked")
			}
		})
	}
}

// sameFuture checks the states a and b one step ahead: the same steps,
// the same events, successors of one fingerprint.
func sameFuture(a, b *runner.World, fp func(*runner.World) deep.Fingerprint) error {
	sa, sb := a.Enabled(nil), b.Enabled(nil)
	if !slices.Equal(sa, sb) {
		return fmt.Errorf("steps %v against %v", sa, sb)
	}
	for _, st := range sa {
		ca, evA, err := stepOf(a, st)
		if err != nil {
			return err
		}
		cb, evB, err := stepOf(b, st)
		if err != nil {
			return err
		}
		if evA != evB {
			return fmt.Errorf("step %v records\n%s\nagainst\n%s", st, evA, evB)
		}
		if fp(ca) != fp(cb) {
			return fmt.Errorf("step %v leads to states of two fingerprints:\n%s\nand\n%s", st, describe(ca), describe(cb))
		}
	}
	return nil
}

// stepOf applies st to a copy of w and describes the events it records,
// without their clocks and message stamps.
func stepOf(w *runner.World, st runner.Step) (*runner.World, string, error) {
	c, err := w.Clone()
	if err != nil {
		return nil, "", err
	}
	var evs strings.Builder
	c.Observe = func(ev *trace.Event) {
		fmt.Fprintf(&evs, "P%d %s %s %s peer=%d", ev.Proc, ev.Kind, ev.Resource, ev.MsgType, ev.Peer)
		if ev.Kind == trace.KindWait || ev.Kind == trace.KindInternal || ev.Kind == trace.KindCSEnter || ev.Kind == trace.KindCSExit {
			fmt.Fprintf(&evs, " %s", ev.Detail)
		}
		evs.WriteByte('\n')
	}
	if err := c.Apply(st); err != nil {
		return nil, "", err
	}
	return c, evs.String(), nil
}

// describe shows a state: each node's clock and machine, the messages in
// flight.
func describe(w *runner.World) string {
	var b strings.Builder
	for p := 0; p < w.N(); p++ {
		nd := w.Node(p)
		fmt.Fprintf(&b, "  P%d clock %d: %v\n", p, nd.Lamport(), runner.MachinesOf(nd))
		for q := 0; q < w.N(); q++ {
			for _, e := range w.InFlight(p, q) {
				fmt.Fprintf(&b, "    P%d->P%d %s stamp %d clock %d\n", p, q, e.Msg.Type, e.Msg.Stamp, e.Lamport)
			}
		}
	}
	return b.String()
}

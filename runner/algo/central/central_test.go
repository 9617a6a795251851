package central

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algotest"
)

// TestScripts runs the interaction scripts in testdata; each block cites the
// note it exercises. Rewrite with go test -update.
func TestScripts(t *testing.T) {
	algotest.RunScripts(t, Spec, "testdata")
}

// TestSweep runs the algorithm in the simulator for many seeds and
// group sizes and checks mutual exclusion, that every request is granted
// (seed 004: "Safe: Yes, Liveness: Yes"), and the message count: exactly 3
// per entry of a client and 0 per entry of the coordinator (seed 003 slide 6
// "only three messages per use of a CS (request, OK, release)"; the
// coordinator's own use is local).
func TestSweep(t *testing.T) {
	for _, tc := range []struct {
		name  string
		coord int
		fifo  bool
	}{
		{"coordinator-0", 0, false},
		{"coordinator-0-fifo", 0, true},
		{"coordinator-last", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range []int{1, 2, 3, 5, 8} {
				coord := tc.coord
				if coord < 0 {
					coord = n - 1
				}
				opt := algotest.Options{FIFO: tc.fifo, Params: map[string]string{"coordinator": strconv.Itoa(coord)}}
				algotest.Sweep(t, Spec, []int{n}, 300, opt, algotest.CountCheck(func(id, _ int) int {
					if id == coord {
						return 0
					}
					return 3
				}))
			}
		})
	}
}

// TestFIFOUnderLoad checks, over many seeds, that the coordinator grants in
// the order requests arrive (seed 000 "Service requests in FIFO order"): it
// replays the coordinator's inputs and outputs and compares each grant with
// the head of a reference queue.
func TestFIFOUnderLoad(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		r := &recorder{}
		spec := Spec
		spec.New = func(c algo.Config) (algo.Machine, error) {
			m, err := New(c)
			if c.ID == 0 {
				r.inner = m
				return r, err
			}
			return m, err
		}
		if _, err := algotest.Run(spec, algotest.Options{N: 5, Seed: seed, Entries: 4, Hold: 5 * time.Millisecond, Think: time.Millisecond}); err != nil {
			t.Fatalf("seed: %d: %v", seed, err)
		}
		if r.err != "" {
			t.Fatalf("seed: %d: %s", seed, r.err)
		}
		if r.queued == 0 {
			t.Fatalf("seed: %d: no request was ever queued; the test exercises nothing", seed)
		}
	}
}

// recorder wraps the coordinator and checks its grants against a reference
// FIFO queue built from the requests it received.
type recorder struct {
	inner  algo.Machine
	ref    []int // requests not yet granted, in arrival order
	busy   bool
	queued int
	err    string
}

func (r *recorder) Step(in algo.Input) []algo.Output {
	out := r.inner.Step(in)
	switch {
	case in.Kind == algo.Receive && in.Msg.Type == MsgRequest:
		r.arrive(in.From)
	case in.Kind == algo.Request:
		r.arrive(0)
	case in.Kind == algo.Receive && in.Msg.Type == MsgRelease, in.Kind == algo.Release:
		r.busy = false
	}
	for _, o := range out {
		granted := -1
		if o.Kind == algo.Send && o.Msg.Type == MsgGrant {
			granted = o.To
		}
		if o.Kind == algo.Enter {
			granted = 0
		}
		if granted < 0 {
			continue
		}
		if len(r.ref) == 0 || r.ref[0] != granted {
			r.err = fmt.Sprintf("granted P%d but the FIFO queue is %v", granted, r.ref)
		}
		if len(r.ref) > 0 {
			r.ref = r.ref[1:]
		}
		r.busy = true
	}
	return out
}

func (r *recorder) arrive(j int) {
	if r.busy || len(r.ref) > 0 {
		r.queued++
	}
	r.ref = append(r.ref, j)
}

func TestNewValidates(t *testing.T) {
	algotest.CheckConfigs(t, Spec, []algo.Config{
		{ID: 0, N: 1},
		{ID: 2, N: 3, Params: map[string]string{"coordinator": "2"}},
	}, []algo.Config{
		{ID: 0, N: 3, Params: map[string]string{"coordinator": "3"}},
		{ID: 0, N: 3, Params: map[string]string{"coordinator": "x"}},
		{ID: 0, N: 3, Params: map[string]string{"coordinatr": "1"}},
		{ID: 3, N: 3},
		{ID: 0, N: 0},
	})
}

func TestSpec(t *testing.T) {
	if Spec.Name != "central" || Spec.Kind != algo.MutualExclusion || Spec.New == nil {
		t.Fatalf("Spec = %+v", Spec)
	}
}

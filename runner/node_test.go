package runner

import (
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

type drawMachine struct{ draws *[]uint64 }

func (m drawMachine) Step(algo.Input) []algo.Output { return nil }

type nopEnv struct{}

func (nopEnv) Now() int64                        { return 0 }
func (nopEnv) Wall() int64                       { return 0 }
func (nopEnv) After(time.Duration, func()) Timer { return TimerFunc(func() {}) }
func (nopEnv) Transmit(*Envelope)                {}
func (nopEnv) Record(*trace.Event)               {}

// TestResumedMachinesRandom: a process restarted under dmx run (NewNode with
// a Resume) builds its machines with the random streams the simulator's
// Recover gives them, not those of the first incarnation again.
func TestResumedMachinesRandom(t *testing.T) {
	var draws []uint64
	spec := &algo.Spec{Name: "draw", Kind: algo.MutualExclusion, New: func(c algo.Config) (algo.Machine, error) {
		draws = append(draws, c.Rand.Uint64())
		return drawMachine{&draws}, nil
	}}
	setup := NodeSetup{ID: 1, N: 3, Spec: spec, Seed: 9, Workload: Workload{Entries: 1}}
	sim, err := NewNode(setup, nopEnv{})
	if err != nil {
		t.Fatal(err)
	}
	sim.Start()
	sim.Crash(trace.Crash{Reason: "test"})
	sim.Recover() // the simulator: incarnation = the crash event's seq
	setup.Resume = &Resume{Seq: sim.Seq() - 1, VC: make(trace.VC, 3)}
	if _, err := NewNode(setup, nopEnv{}); err != nil {
		t.Fatal(err)
	}
	if len(draws) != 3 {
		t.Fatalf("%d machines built, want 3", len(draws))
	}
	if draws[2] != draws[1] || draws[2] == draws[0] {
		t.Fatalf("draws: first incarnation %d, recovered in the simulator %d, restarted process %d: want the last two equal, not the first", draws[0], draws[1], draws[2])
	}
}

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScenarioProcNamedTwice: "1" and "P1" are the same process; a file
// that overrides it under both names is refused, not resolved by map order.
func TestScenarioProcNamedTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dup.json")
	os.WriteFile(path, []byte(`{"nodes": 3, "procs": {"1": {"entries": 0}, "P1": {"entries": 5}}}`), 0o644)
	sc, err := LoadScenario(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		_, err := sc.procs()
		if err == nil || !strings.Contains(err.Error(), "process 1 is named twice") {
			t.Fatalf("procs: %v, want process 1 is named twice", err)
		}
	}
	if m, err := (&Scenario{Procs: map[string]ProcWorkload{"0": {}, "P1": {}, "p2": {}}}).procs(); err != nil || len(m) != 3 {
		t.Fatalf("distinct processes: %v, %v", m, err)
	}
}

// TestScenarioNetworkUnderRun: the simulator's delay and reorder of a
// scenario become faults of a dmx run plan, after its own faults; the
// simulator takes them as they are.
func TestScenarioNetworkUnderRun(t *testing.T) {
	for _, c := range []struct {
		sc   Scenario
		want string // the run plan's faults
	}{
		{Scenario{Delay: "1ms-5ms"}, "delay:1ms-5ms"},
		{Scenario{Reorder: true}, "reorder"},
		{Scenario{Reorder: true, Delay: "100us-5ms"}, "reorder:100µs-5ms"},
		{Scenario{Reorder: true, Faults: []string{"crash:1@1s"}}, "crash:1@1s,reorder"},
		{Scenario{Faults: []string{"crash:1@1s"}}, "crash:1@1s"},
	} {
		udp := NewPlan(DriverUDP)
		if err := c.sc.Apply(&udp, nil); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range udp.Faults {
			got = append(got, f.String())
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("%+v under run: faults %v, want %s", c.sc, got, c.want)
		}
		sim := NewPlan(DriverSim)
		if err := c.sc.Apply(&sim, nil); err != nil {
			t.Fatal(err)
		}
		if sim.Sim.Reorder != c.sc.Reorder || len(sim.Faults) != len(c.sc.Faults) {
			t.Errorf("%+v in the simulator: %+v", c.sc, sim)
		}
	}
}

// Package simtest makes the simulated runs that tests draw and serve: a
// plan by algorithm or scenario name, recorded into a trace file.
package simtest

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// Plan is a simulated run of algorithm name with seed, or of the scenario
// examples/NAME (with the scenario's seed) when name ends in .json, changed
// by edit when it is not nil, and validated.
func Plan(t testing.TB, name string, seed uint64, edit func(*runner.Plan)) runner.Plan {
	t.Helper()
	p := runner.NewPlan(runner.DriverSim)
	if strings.HasSuffix(name, ".json") {
		_, here, _, _ := runtime.Caller(0)
		sc, err := runner.LoadScenario(filepath.Join(filepath.Dir(here), "..", "..", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := sc.Apply(&p, func(string) bool { return false }); err != nil {
			t.Fatal(err)
		}
		name = sc.Algorithm
	} else {
		p.Seed = seed
	}
	if p.Spec = registry.Lookup(name); p.Spec == nil {
		t.Fatalf("no algorithm %s", name)
	}
	if edit != nil {
		edit(&p)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

// Record simulates p into a new trace file at path, as its one run (started
// at wall time 1, ended at 2), and returns the run's id.
func Record(t testing.TB, path string, p runner.Plan) int64 {
	t.Helper()
	id, _ := RecordSeeing(t, path, p, nil)
	return id
}

// RecordSeeing is Record that shows each event to see (when not nil) as
// it is recorded, and returns the simulation's result as well.
func RecordSeeing(t testing.TB, path string, p runner.Plan, see func(*trace.Event)) (int64, runner.SimResult) {
	t.Helper()
	st, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	row := p.RunRow()
	row.Started = 1
	id, err := st.BeginRun(row)
	if err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter(id)
	rec := runner.RecorderFunc(w.Add)
	if see != nil {
		rec = func(ev *trace.Event) error {
			see(ev)
			return w.Add(ev)
		}
	}
	res, err := runner.Simulate(p, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.EndRun(id, 2, res.Complete, res.Status); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return id, res
}

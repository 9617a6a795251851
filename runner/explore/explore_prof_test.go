package explore_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo/registry"
	"github.com/dmxlab/dmx/runner/explore"
)

func TestProf(t *testing.T) {
	p := runner.NewPlan(runner.DriverSim)
	p.Spec, p.N, p.Seed = registry.Lookup(os.Getenv("ALGO")), 3, 1
	p.Workload.Entries = 2
	max, _ := strconv.Atoi(os.Getenv("MAX"))
	res, err := explore.Search(explore.Options{Plan: p, MaxStates: int64(max), Progress: func(s explore.Stats) { t.Logf("%+v", s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res.Stats)
}

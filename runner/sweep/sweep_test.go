package sweep

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

func TestShard(t *testing.T) {
	s := Seeds{1, 10}
	var all []uint64
	for k := 1; k <= 3; k++ {
		part, ok := s.Shard(k, 3)
		if !ok {
			t.Fatalf("shard %d/3 of %v empty", k, s)
		}
		for x := part.From; x <= part.To; x++ {
			all = append(all, x)
		}
	}
	if want := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(all, want) {
		t.Errorf("shards cover %v", all)
	}
	if p, _ := s.Shard(1, 3); p != (Seeds{1, 4}) {
		t.Errorf("1/3 = %v, want 1..4 (the first parts one longer)", p)
	}
	if _, ok := (Seeds{1, 2}).Shard(3, 3); ok {
		t.Errorf("3 shards of 2 seeds: the third is empty")
	}
}

func options(t *testing.T, seeds Seeds) Options {
	p := runner.NewPlan(runner.DriverSim)
	p.Spec, p.N, p.Workload.Entries = registry.Lookup("ricart-agrawala"), 3, 2
	return Options{
		Plan: p, Seeds: seeds, Workers: 2,
		Drive: func(p runner.Plan, rec runner.Recorder, stop <-chan struct{}) (bool, string, error) {
			res, err := runner.SimulateWith(p, rec, runner.SimHooks{Stop: stop})
			return res.Complete, res.Status, err
		},
		Checks: func(trace.Run) ([]*analyze.Check, []analyze.Option, error) {
			return []*analyze.Check{analyze.MutexCausal, analyze.Liveness}, nil, nil
		},
	}
}

// TestRunInOrder: runs are written in seed order whatever the workers'
// pace, one run per seed, each with its seed.
func TestRunInOrder(t *testing.T) {
	st, err := trace.Create(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	res, err := Run(st, "s.db", options(t, Seeds{11, 30}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 20 || res.Stopped || len(res.NotRun) != 0 {
		t.Fatalf("%d runs, stopped %v, not run %v", len(res.Runs), res.Stopped, res.NotRun)
	}
	runs, err := st.Runs()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range runs {
		if r.ID != int64(i+1) || r.Seed != uint64(11+i) || !r.Complete || res.Runs[i].Run.ID != r.ID {
			t.Errorf("run %d: id %d seed %d complete %v", i, r.ID, r.Seed, r.Complete)
		}
	}
}

// TestStopKeepsWhatIsDone: an interrupt ends the sweep with every run
// that finished written, none cut short, and the seeds not run listed.
func TestStopKeepsWhatIsDone(t *testing.T) {
	st, err := trace.Create(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stop := make(chan struct{})
	o := options(t, Seeds{1, 500})
	o.Stop = stop
	o.Progress = func(written, _ int) {
		if written == 5 {
			close(stop)
		}
	}
	res, err := Run(st, "s.db", o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || len(res.Runs) < 5 || len(res.Runs)+len(res.NotRun) != 500 {
		t.Fatalf("stopped %v, %d runs written, %d not run", res.Stopped, len(res.Runs), len(res.NotRun))
	}
	runs, _ := st.Runs()
	if len(runs) != len(res.Runs) {
		t.Errorf("%d runs in the trace, %d reported", len(runs), len(res.Runs))
	}
	for _, r := range runs {
		if !r.Complete || slices.Contains(res.NotRun, r.Seed) {
			t.Errorf("run of seed %d: complete %v, listed not run %v", r.Seed, r.Complete, slices.Contains(res.NotRun, r.Seed))
		}
	}
}

package sweep

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/internal/cputime"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// cpuPerOp reports, when the returned func is called, the CPU time per
// op since cpuPerOp: on a shared machine a figure that waiting for a core
// does not inflate.
func cpuPerOp(b *testing.B) func() {
	cpu0 := cputime.Self()
	return func() {
		b.ReportMetric(float64((cputime.Self()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}

// raOptions is the sweep: ricart-agrawala, 5 processes, 10 entries
// each, checked as dmx check checks it.
func raOptions(b *testing.B) Options {
	spec := registry.Lookup("ricart-agrawala")
	checks, err := analyze.For(spec.Properties)
	if err != nil {
		b.Fatal(err)
	}
	p := runner.NewPlan(runner.DriverSim)
	p.Spec = spec
	return Options{
		Plan: p,
		Drive: func(p runner.Plan, rec runner.Recorder, stop <-chan struct{}) (bool, string, error) {
			res, err := runner.SimulateWith(p, rec, runner.SimHooks{Stop: stop})
			return res.Complete, res.Status, err
		},
		Checks: func(trace.Run) ([]*analyze.Check, []analyze.Option, error) { return checks, nil, nil },
	}
}

// BenchmarkSweep1000 sweeps 1,000 seeds of ricart-agrawala -n 5
// --entries 10 into a new trace, with one worker and with two: runs/s
// says the throughput (the ratio of the two is what two cores give),
// cpu-s/op the CPU of the whole sweep, the writer's and the time
// indexes' included.
func BenchmarkSweep1000(b *testing.B) {
	for _, workers := range []int{1, 2} {
		b.Run("workers="+string(rune('0'+workers)), func(b *testing.B) {
			o := raOptions(b)
			o.Seeds, o.Workers = Seeds{1, 1000}, workers
			cpu0, start := cputime.Self(), time.Now()
			for i := 0; i < b.N; i++ {
				st, err := trace.Create(filepath.Join(b.TempDir(), "s.db"))
				if err != nil {
					b.Fatal(err)
				}
				res, err := Run(st, "s.db", o)
				if err != nil || len(res.Runs) != 1000 {
					b.Fatalf("%d runs: %v", len(res.Runs), err)
				}
				if err := st.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(1000*b.N)/time.Since(start).Seconds(), "runs/s")
			b.ReportMetric((cputime.Self()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkRunParts times the parts of one seed's run in a sweep of
// ricart-agrawala -n 5 --entries 10 (1,210 events): simulate is the run
// itself; plan (its seed's plan, validated, its row and rerun line),
// check (every check of the algorithm, in memory) and write (one
// transaction of the RunWriter) are the overhead a sweep adds to it.
func BenchmarkRunParts(b *testing.B) {
	o := raOptions(b)
	p, _ := o.PlanOf(1)
	col := &runner.Collector{}
	if _, err := runner.Simulate(p, col, nil); err != nil {
		b.Fatal(err)
	}
	row := p.RunRow()
	row.Ended, row.Complete, row.Status = 1, true, "ok"
	checks, _, _ := o.Checks(row)
	b.Run("simulate", func(b *testing.B) {
		defer cpuPerOp(b)()
		for i := 0; i < b.N; i++ {
			if _, err := runner.Simulate(p, &runner.Collector{}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plan", func(b *testing.B) {
		defer cpuPerOp(b)()
		for i := 0; i < b.N; i++ {
			q, err := o.PlanOf(uint64(i + 1))
			if err != nil || q.Validate() != nil {
				b.Fatal(err)
			}
			_ = q.RunRow()
			_ = Rerun(q)
		}
	})
	b.Run("check", func(b *testing.B) {
		defer cpuPerOp(b)()
		for i := 0; i < b.N; i++ {
			if _, err := analyze.Evaluate(row, &trace.SliceReader{Events: col.Events}, checks); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write", func(b *testing.B) {
		st, err := trace.Create(filepath.Join(b.TempDir(), "s.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		restore, _ := st.DeferTimeIndexes()
		w, err := st.NewRunWriter()
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		done := cpuPerOp(b)
		for i := 0; i < b.N; i++ {
			if _, err := w.Write(row, col.Events); err != nil {
				b.Fatal(err)
			}
		}
		done()
		b.StopTimer()
		w.Close()
		restore()
	})
}

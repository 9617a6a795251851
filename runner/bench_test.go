package runner_test

import (
	"testing"
	"time"

	"github.com/dmxlab/dmx/internal/cputime"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// wireRecorder encodes every event as a node process does before writing
// it to its control pipe, and keeps nothing: what recording costs a node.
type wireRecorder struct {
	buf    []byte
	events int64
}

func (w *wireRecorder) Record(ev *trace.Event) error {
	w.buf = trace.AppendWire(w.buf[:0], ev)
	w.events++
	return nil
}

// BenchmarkSimulate measures the runtime's recording path: a simulated run
// whose events are encoded as a node encodes them, in events per second.
// It is the figure that says whether what the runtime records for replay
// slows recording down; events per cpu second (the process's user and
// system time) say it better than wall time on a busy machine.
func BenchmarkSimulate(b *testing.B) {
	for _, bc := range []struct {
		algo    string
		entries int
		faults  string
	}{
		{"ricart-agrawala", 100, ""},
		{"maekawa", 50, "crash:1@20ms,recover:1@40ms"},
		{"lease", 0, ""},
	} {
		b.Run(bc.algo, func(b *testing.B) {
			p := runner.NewPlan(runner.DriverSim)
			p.Spec, p.Seed, p.Workload.Entries = registry.Lookup(bc.algo), 1, bc.entries
			p.Duration = 2 * time.Second
			if bc.faults != "" {
				fs, err := runner.ParseFaults(bc.faults)
				if err != nil {
					b.Fatal(err)
				}
				p.Faults = fs
			}
			var events int64
			cpu0 := cputime.Self()
			for i := 0; i < b.N; i++ {
				w := &wireRecorder{}
				if _, err := runner.Simulate(p, w, nil); err != nil {
					b.Fatal(err)
				}
				events += w.events
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			if cpu := cputime.Self() - cpu0; cpu > 0 {
				b.ReportMetric(float64(events)/cpu.Seconds(), "events/cpu-s")
			}
		})
	}
}

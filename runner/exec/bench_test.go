package exec_test

import (
	"testing"
	"time"

	"github.com/dmxlab/dmx/internal/cputime"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/exec"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// sends counts a run's messages.
type sends struct{ n, events int64 }

func (s *sends) Record(ev *trace.Event) error {
	s.events++
	if ev.Kind == trace.KindSend {
		s.n++
	}
	return nil
}

// BenchmarkMessageCost: what a message costs a run in the simulator when
// the algorithm is a program speaking the node protocol, beside dmx's own
// machine of the same algorithm and workload (5 nodes, 40 entries each,
// seed 1: the same messages). ns/msg is the run's wall time over its
// messages: the runtime, the simulated network and the recording
// (in memory, counted) for the built-in machine; for a program, also its
// process's work and the two pipe round trips a message takes (the
// sender's send line, the receiver's message line, each answered by
// done), its start-up amortised over the run.
//
//	go test ./runner/exec -run '^$' -bench MessageCost -benchtime 5x
func BenchmarkMessageCost(b *testing.B) {
	plan := func(spec *algo.Spec, params map[string]string) runner.Plan {
		p := runner.NewPlan(runner.DriverSim)
		p.Spec, p.N, p.Seed, p.Workload.Entries, p.Params = spec, 5, 1, 40, params
		return p
	}
	program := func(cmd string) runner.Plan {
		return plan(exec.Spec("program", algo.MutualExclusion, exec.Options{OwnGroup: true}), map[string]string{exec.ParamExec: cmd})
	}
	goRicart := build(b, "examples/programs/ricart")
	py := pythonOrEmpty()
	cases := []struct {
		name string
		plan runner.Plan
	}{
		{"ricart-agrawala/built-in", plan(registry.Lookup("ricart-agrawala"), nil)},
		{"ricart-agrawala/program-go", program(goRicart)},
		{"central/built-in", plan(registry.Lookup("central"), nil)},
	}
	if py != "" {
		cases = append(cases, struct {
			name string
			plan runner.Plan
		}{"central/program-python", program(py + " ../../examples/programs/central.py")})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			// Start-up: the same run without entries (the programs
			// start, take their init, and stop), once, untimed.
			b.StopTimer()
			idle := c.plan
			idle.Workload.Entries = 0
			up0 := cputime.WithChildren()
			if _, err := runner.Simulate(idle, &sends{}, nil); err != nil {
				b.Fatal(err)
			}
			startup := cputime.WithChildren() - up0
			b.StartTimer()
			var msgs, events int64
			cpu0 := cputime.WithChildren()
			for i := 0; i < b.N; i++ {
				var s sends
				if _, err := runner.Simulate(c.plan, &s, nil); err != nil {
					b.Fatal(err)
				}
				msgs, events = msgs+s.n, events+s.events
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(msgs), "ns/msg")
			// CPU, of dmx and of the programs (reaped at the end of each
			// run): less at the mercy of a busy machine than wall time.
			cpu := cputime.WithChildren() - cpu0
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(msgs), "cpu-ns/msg")
			// What a message adds, the start-up taken off.
			b.ReportMetric(float64((cpu-time.Duration(b.N)*startup).Nanoseconds())/float64(msgs), "msg-cpu-ns/msg")
			b.ReportMetric(float64(startup.Microseconds())/1000, "startup-cpu-ms")
			b.ReportMetric(float64(msgs)/float64(b.N), "msgs/op")
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
		})
	}
}

package viewer

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dmxlab/dmx/internal/cputime"
	"github.com/dmxlab/dmx/internal/simtest"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// The benchmarks measure the server on a run of about 1,000,000 events
// (Lamport's algorithm without FIFO channels under high contention, 8
// processes: a run with findings), recorded once into the temporary
// directory and reused; -short uses about 100,000 events.
//
//	go test ./render/viewer -run XXX -bench . -benchtime 20x

func benchTrace(b *testing.B) string {
	b.Helper()
	entries := 2300
	if testing.Short() {
		entries = 230
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("dmx-serve-bench-v1-%d.db", entries))
	if runs, err := trace.ReadRuns(path); err == nil && len(runs) == 1 && runs[0].Complete {
		return path
	}
	os.Remove(path)
	p := runner.NewPlan(runner.DriverSim)
	p.Spec = registry.Lookup("lamport")
	p.Seed, p.N = 1, 8
	p.Workload.Entries = entries
	p.Sim.Reorder = true
	p.Workload.Contention = runner.ContentionHigh
	if err := p.Validate(); err != nil {
		b.Fatal(err)
	}
	simtest.Record(b, path, p)
	return path
}

// benchServer opens the benchmark trace (or $DMX_SERVE_TRACE) and makes a
// server over it.
func benchServer(b *testing.B) (*Server, *runView, *outline) {
	b.Helper()
	path := os.Getenv("DMX_SERVE_TRACE")
	if path == "" {
		path = benchTrace(b)
	}
	st := openTrace(b, path)
	s, err := New([]*trace.Store{st}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	v := s.runs[0]
	o, err := v.outline()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := v.overview(lamportAxis); err != nil {
		b.Fatal(err)
	}
	return s, v, o
}

// BenchmarkOutline reads what the page needs first (lanes, extent,
// message types, every critical section and crash).
func BenchmarkOutline(b *testing.B) {
	_, v, _ := benchServer(b)
	for b.Loop() {
		v.outlineOnce = sync.Once{}
		if _, err := v.outline(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOverview counts every process's events in 4096 slices of the
// run, on the Lamport axis.
func BenchmarkOverview(b *testing.B) {
	_, v, _ := benchServer(b)
	for b.Loop() {
		v.ov[lamportAxis] = nil
		if _, err := v.overview(lamportAxis); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWindow reads windows of about 2,000, 10,000 (the most the
// page asks for) and 20,000 events at places spread over the run (a pan),
// and encodes them as the server sends them.
func BenchmarkWindow(b *testing.B) {
	_, v, o := benchServer(b)
	span := o.Lamport[1] - o.Lamport[0]
	per := float64(o.Events) / float64(span+1) // events per Lamport unit
	for _, want := range []int{2000, 10000, 20000} {
		width := int64(float64(want) / per)
		b.Run(fmt.Sprintf("%devents", want), func(b *testing.B) {
			i, n := 0, 0
			cpu0 := cputime.Self()
			for b.Loop() {
				lo := o.Lamport[0] + int64(i*7919)%max(span-width, 1)
				i++
				w, err := v.window(lamportAxis, o, lo, lo+width, DefaultMaxEvents, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := w.MarshalJSON(); err != nil {
					b.Fatal(err)
				}
				n += len(w.Events)
			}
			b.ReportMetric(float64(n)/float64(i), "events/window")
			b.ReportMetric(float64((cputime.Self()-cpu0).Microseconds())/1000/float64(i), "cpu-ms/window")
		})
	}
}

// BenchmarkDensity draws the whole run zoomed out (from the run's
// slices) and a tenth of it (counted in the index).
func BenchmarkDensity(b *testing.B) {
	_, v, o := benchServer(b)
	span := o.Lamport[1] - o.Lamport[0]
	for _, part := range []int64{1, 10} {
		b.Run(fmt.Sprintf("1/%d", part), func(b *testing.B) {
			for b.Loop() {
				if _, err := v.density(lamportAxis, o, o.Lamport[0], o.Lamport[0]+span/part, 400, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEvent reads a clicked event's details and its causal future
// (a binary search per process over the clocks).
func BenchmarkEvent(b *testing.B) {
	_, v, o := benchServer(b)
	i := 0
	for b.Loop() {
		p := i % len(o.Lanes)
		seq := 1 + int64(i*7919)%o.Lanes[p].Events
		i++
		if _, err := v.event(o, trace.Ref{Proc: p, Seq: seq}); err != nil {
			b.Fatal(err)
		}
	}
}

package spacetime_test

import (
	"errors"
	"io"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dmxlab/dmx/internal/cputime"
	"github.com/dmxlab/dmx/internal/simtest"
	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/trace"
)

// benchRun records a Ricart-Agrawala run of five processes with about
// events events (some 120 per entry).
func benchRun(b testing.TB, events int) recorded {
	b.Helper()
	p := simtest.Plan(b, "ricart-agrawala", 1, func(p *runner.Plan) { p.Workload.Entries = events / 120 })
	return record(b, p)
}

// readAll reads every event of the run: the floor under drawing it.
func readAll(b *testing.B, r recorded) int {
	rd, err := r.st.Events(r.run.ID)
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	n := 0
	for {
		_, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

func benchSVG(b *testing.B, events int) {
	r := benchRun(b, events)
	src := func() (trace.Reader, error) { return r.st.Events(r.run.ID) }
	b.Run("read", func(b *testing.B) {
		cpu0 := cputime.Self()
		for b.Loop() {
			readAll(b, r)
		}
		b.ReportMetric((cputime.Self()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	})
	// Every page of the whole run: read, laid out, written; with the CPU
	// time (user and system, all threads: the garbage collector's too)
	// and the peak of the live heap, the two figures issue 23 bounds.
	b.Run("svg", func(b *testing.B) {
		b.ReportAllocs()
		peak := watchHeap(b)
		cpu0 := cputime.Self()
		for b.Loop() {
			d, err := spacetime.Build(r.run, src, spacetime.Options{MaxEvents: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			err = spacetime.EachPage(d, true, func(_, _ int, p *spacetime.Picture) error { return spacetime.WriteSVG(io.Discard, p) })
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric((cputime.Self()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
	})
}

// BenchmarkSVG10k draws a 10,000-event window as SVG (every page of it),
// beside the time of merely reading those events (docs/performance.md
// quotes both).
func BenchmarkSVG10k(b *testing.B) { benchSVG(b, 10000) }

// BenchmarkSVG100k draws 100,000 events as SVG: issue 23's bar is 2 s of
// CPU and 200 MB.
func BenchmarkSVG100k(b *testing.B) { benchSVG(b, 100000) }

// watchHeap samples the live heap (objects, after the last collection's
// marking) every millisecond until the benchmark ends; the returned func
// gives its peak.
func watchHeap(b *testing.B) func() uint64 {
	runtime.GC()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				metrics.Read(s)
				if v := s[0].Value.Uint64(); v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	}()
	b.Cleanup(func() { close(done) })
	return peak.Load
}

package spacetime_test

import (
	"errors"
	"io"
	"testing"

	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/trace"
)

// benchRun records a Ricart-Agrawala run of five processes with about
// events events (some 120 per entry).
func benchRun(b *testing.B, events int) recorded {
	b.Helper()
	p := plan(b, "ricart-agrawala", 1, func(p *runner.Plan) { p.Workload.Entries = events / 120 })
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
		for b.Loop() {
			readAll(b, r)
		}
	})
	b.Run("svg", func(b *testing.B) {
		for b.Loop() {
			d, err := spacetime.Build(r.run, src, spacetime.Options{MaxEvents: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			if err := spacetime.WriteSVG(io.Discard, spacetime.Layout(d, true)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSVG10k draws a 10,000-event window as SVG, beside the time of
// merely reading those events (the README's performance section quotes
// both).
func BenchmarkSVG10k(b *testing.B) { benchSVG(b, 10000) }

// BenchmarkSVG100k draws 100,000 events as SVG.
func BenchmarkSVG100k(b *testing.B) { benchSVG(b, 100000) }

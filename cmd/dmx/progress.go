package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// meter sits between a run and its trace writer and counts what the run
// records: for the progress line, and for the simulated time dmx sim
// reports. Record is called by one goroutine at a time (the simulator, or
// the launcher's watch loop); the progress line reads the counts from
// another, hence the atomics.
type meter struct {
	rec      runner.Recorder
	events   atomic.Int64
	exits    atomic.Int64 // cs_exit events: critical sections done
	delivers atomic.Int64 // deliver events of a multicast algorithm
	minWall  atomic.Int64 // earliest and latest wall_ns seen (simulated under sim)
	maxWall  atomic.Int64
}

// Record implements runner.Recorder.
func (m *meter) Record(ev *trace.Event) error {
	if m.events.Add(1) == 1 || ev.Wall < m.minWall.Load() {
		m.minWall.Store(ev.Wall)
	}
	if ev.Wall > m.maxWall.Load() {
		m.maxWall.Store(ev.Wall)
	}
	switch ev.Kind {
	case trace.KindCSExit:
		m.exits.Add(1)
	case trace.KindDeliver:
		m.delivers.Add(1)
	}
	return m.rec.Record(ev)
}

// span is the time from the first event recorded to the last: for a
// simulated run, the simulated time dmx stats reports for it.
func (m *meter) span() time.Duration {
	if m.events.Load() == 0 {
		return 0
	}
	return time.Duration(m.maxWall.Load() - m.minWall.Load())
}

// progressAfter is how long a run goes before its progress line shows:
// short runs print nothing more than their header and verdict.
var progressAfter = 2 * time.Second

// progressLine shows on w, every quarter of a second once the run has gone
// for progressAfter, how far the run of p has got: critical sections (or
// deliveries) done of the total, events, the size of the trace at path,
// and an estimate of the time left. The line is rewritten in place and
// erased by the function it returns, which stops it.
func progressLine(w io.Writer, m *meter, p runner.Plan, est runner.Size, path string) (stop func()) {
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	shown := false
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				if shown {
					fmt.Fprint(w, "\r\033[K")
				}
				return
			case now := <-tick.C:
				elapsed := now.Sub(start)
				if elapsed < progressAfter {
					continue
				}
				shown = true
				fmt.Fprintf(w, "\r%s\033[K", progressText(m, p, est, traceSize(path), elapsed))
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// progressText is the progress line: "12s: 340/1000 critical sections,
// 1.2M events, trace 450 MB, about 25s left".
func progressText(m *meter, p runner.Plan, est runner.Size, size int64, elapsed time.Duration) string {
	events := m.events.Load()
	parts := []string{elapsed.Round(time.Second).String() + ":"}
	frac := -1.0 // how much of the run is done; < 0: unknown
	switch p.Spec.Kind {
	case algo.MutualExclusion, algo.Multicast:
		total, done, what := int64(0), m.exits.Load(), "critical section"
		for i := 0; i < p.N; i++ {
			w := p.Workload.For(i)
			total += int64(w.Entries) * int64(max(1, len(w.Resources)))
		}
		if p.Spec.Kind == algo.Multicast {
			total, done, what = total*int64(p.N), m.delivers.Load(), "delivery"
		}
		parts = append(parts, fmt.Sprintf("%d/%s", done, plural.Count(total, what)+","))
		if total > 0 {
			frac = float64(done) / float64(total)
		}
		// Critical sections may come late (Ricart-Agrawala's requests
		// all go out first): the events recorded of those estimated say
		// more, as long as the estimate holds.
		if est.Events > 0 && events < est.Events {
			frac = max(frac, float64(events)/float64(est.Events))
		}
	case algo.Election:
		switch p.WithDefaults().Driver {
		case runner.DriverSim:
			frac = float64(m.span()) / float64(p.WithDefaults().Duration)
		default:
			frac = float64(elapsed) / float64(p.WithDefaults().Duration)
		}
	}
	parts = append(parts, humanCount(events)+" events,", "trace "+humanBytes(size))
	if frac >= 0.01 && frac < 1 {
		left := time.Duration(float64(elapsed) * (1 - frac) / frac).Round(time.Second)
		parts[len(parts)-1] += ","
		if left < time.Second {
			parts = append(parts, "nearly done")
		} else {
			parts = append(parts, "about "+left.String()+" left")
		}
	}
	return strings.Join(parts, " ")
}

// traceSize is the size of the trace at path so far, its write-ahead log
// included.
func traceSize(path string) int64 {
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// isTerminal reports whether f is a terminal: progress lines and
// questions are for people, not for pipes and CI logs.
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && (isatty.IsTerminal(fd.Fd()) || isatty.IsCygwinTerminal(fd.Fd()))
}

// humanCount writes n as "950", "12.3k" or "4.5M".
func humanCount(n int64) string {
	return scaled(n, fmt.Sprint(n), []scale{{1e9, 1e9, "%.1fG"}, {1e6, 1e6, "%.1fM"}, {1e4, 1e3, "%.1fk"}})
}

// humanBytes writes n bytes as "640 kB", "45 MB" or "14.2 GB" (decimal
// units, as disks are sold and df -H shows them).
func humanBytes(n int64) string {
	return scaled(n, plural.Count(n, "byte"),
		[]scale{{1e10, 1e9, "%.0f GB"}, {1e9, 1e9, "%.1f GB"}, {1e6, 1e6, "%.0f MB"}, {1e3, 1e3, "%.0f kB"}})
}

// scale is a unit of a number written short: from how large, what to
// divide by, and the format.
type scale struct {
	from, unit float64
	format     string
}

// scaled writes n in the first of scales it reaches, else as small.
func scaled(n int64, small string, scales []scale) string {
	for _, s := range scales {
		if float64(n) >= s.from {
			return fmt.Sprintf(s.format, float64(n)/s.unit)
		}
	}
	return small
}

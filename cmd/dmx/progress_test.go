package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/internal/syncbuf"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// TestProgressText: the progress line says how many critical sections are
// done of how many, the events, the trace's size and the time left; for an
// election, the time left of its duration.
func TestProgressText(t *testing.T) {
	p := runner.NewPlan(runner.DriverSim)
	p.Spec, p.N, p.Workload.Entries = registry.Lookup("ricart-agrawala"), 10, 10
	m := &meter{rec: runner.RecorderFunc(func(*trace.Event) error { return nil })}
	for i := 0; i < 1000; i++ {
		m.Record(&trace.Event{Kind: trace.KindSend, Wall: int64(i)})
	}
	for i := 0; i < 25; i++ {
		m.Record(&trace.Event{Kind: trace.KindCSExit})
	}
	got := progressText(m, p, runner.Size{Events: 4000}, 45e6, 3*time.Second)
	if want := "3s: 25/100 critical sections, 1025 events, trace 45 MB, about 9s left"; got != want {
		t.Errorf("mutual exclusion: %q, want %q", got, want)
	}
	p.Spec = registry.Lookup("bully")
	m = &meter{rec: m.rec}
	m.Record(&trace.Event{Kind: trace.KindStart, Wall: 0})
	m.Record(&trace.Event{Kind: trace.KindLeader, Wall: int64(500 * time.Millisecond)})
	if got, want := progressText(m, p, runner.Size{}, 2e9, 5*time.Second), "5s: 2 events, trace 2.0 GB, about 15s left"; got != want {
		t.Errorf("election: %q, want %q", got, want)
	}
}

// syncBuffer is a bytes.Buffer that the progress goroutine and the test
// can share.
type syncBuffer = syncbuf.Buffer

// TestProgressLine: nothing shows for a run shorter than progressAfter;
// after it the line is rewritten in place and erased at the end.
func TestProgressLine(t *testing.T) {
	defer func(d time.Duration) { progressAfter = d }(progressAfter)
	p := runner.NewPlan(runner.DriverSim)
	p.Spec = registry.Lookup("central")
	m := &meter{rec: runner.RecorderFunc(func(*trace.Event) error { return nil })}

	var w syncBuffer
	stop := progressLine(&w, m, p, runner.Size{}, "none.db")
	time.Sleep(600 * time.Millisecond)
	stop()
	if w.String() != "" {
		t.Errorf("a short run shows progress: %q", w.String())
	}

	progressAfter = 0
	stop = progressLine(&w, m, p, runner.Size{}, "none.db")
	// Until the line shows (a tick every 250ms), bounded by a minute no
	// load reaches: after a fixed sleep a starved ticker could lose the
	// race to the stop, which its select may take first.
	for end := time.Now().Add(time.Minute); w.String() == "" && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	out := w.String()
	if !regexp.MustCompile(`^(\r[^\r\n]*critical sections[^\r\n]*\x1b\[K)+\r\x1b\[K$`).MatchString(out) {
		t.Errorf("progress line: %q", out)
	}
}

// TestQuietWhenNotATerminal: with output to a pipe or a file, a run of
// several seconds prints no progress line.
func TestQuietWhenNotATerminal(t *testing.T) {
	defer func(d time.Duration) { progressAfter = d }(progressAfter)
	progressAfter = 0
	code, out, errs := dmx(t, "sim", "ricart-agrawala", "-n", "30", "--seed", "2", "-o", filepath.Join(t.TempDir(), "q.db"))
	if code != 0 || strings.ContainsAny(out+errs, "\r\x1b") {
		t.Errorf("exit %d, output with a progress line:\n%q\n%q", code, out, errs)
	}
}

func TestHuman(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{humanCount(950), "950"}, {humanCount(12_345), "12.3k"}, {humanCount(4_500_000), "4.5M"},
		{humanBytes(1), "1 byte"}, {humanBytes(640_000), "640 kB"}, {humanBytes(45e6), "45 MB"},
		{humanBytes(1.42e9), "1.4 GB"}, {humanBytes(25.6e9), "26 GB"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

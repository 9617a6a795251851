package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVeryLargeRun: `dmx sim ricart-agrawala -n 1000 --entries 1` wrote
// 13.9 GB without a word. Now a run estimated at over 1 GB of trace does
// not start unless the user agrees: a script (no terminal) gets exit code
// 2 and the reason at once, and no trace file.
func TestVeryLargeRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.db")
	start := time.Now()
	code, out, errs := dmx(t, "sim", "ricart-agrawala", "-n", "1000", "--entries", "1", "-o", path)
	if code != exitUsage || out != "" || !strings.Contains(errs, "a very large run: about 5.0M events and a") ||
		!strings.Contains(errs, "give --yes to record it anyway") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if d := time.Since(start); d > time.Minute { // recording the run would take hours: a bound far beyond any load
		t.Errorf("refusing took %v", d)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a refused run left a trace: %v", err)
	}
	// The same for an election run, where heartbeats make most of it.
	if code, _, errs := dmx(t, "run", "bully", "-n", "1000", "-o", path); code != exitUsage || !strings.Contains(errs, "--duration") {
		t.Errorf("run bully -n 1000: exit %d\n%s", code, errs)
	}
}

// TestLargeRunAgreed: with the thresholds lowered to what a small run
// records, a run says what to expect, and runs with --yes or after "y" at
// a terminal; "n", or no answer, starts nothing.
func TestLargeRunAgreed(t *testing.T) {
	defer func(l, v int64, i func(io.Reader, io.Writer) bool) { largeRun, veryLargeRun, interactive = l, v, i }(largeRun, veryLargeRun, interactive)
	largeRun, veryLargeRun = 1000, 100_000
	dir := t.TempDir()
	args := func(name string) []string {
		return []string{"sim", "ricart-agrawala", "-n", "8", "--seed", "3", "-o", filepath.Join(dir, name)}
	}
	code, _, errs := dmx(t, append(args("yes.db"), "--yes")...)
	if code != 0 || !strings.Contains(errs, "expect about") {
		t.Errorf("--yes: exit %d\n%s", code, errs)
	}
	if code, _, errs := dmx(t, args("no.db")...); code != exitUsage || !strings.Contains(errs, "--yes") {
		t.Errorf("no --yes, no terminal: exit %d\n%s", code, errs)
	}
	interactive = func(io.Reader, io.Writer) bool { return true }
	for _, c := range []struct {
		answer string
		code   int
	}{{"y\n", 0}, {"yes\n", 0}, {"n\n", exitUsage}, {"", exitUsage}} {
		var out, errb bytes.Buffer
		name := strings.TrimSpace(c.answer) + "answer.db"
		code := Do(args(name), strings.NewReader(c.answer), &out, &errb)
		_, statErr := os.Stat(filepath.Join(dir, name))
		if code != c.code || !strings.Contains(errb.String(), "Record it? [y/N]") || (c.code == 0) != (statErr == nil) {
			t.Errorf("answer %q: exit %d, trace %v\n%s", c.answer, code, statErr, errb.String())
		}
	}
}

// TestSimGrowthStops: a simulation that grows far past its estimate is
// cut short and says so, exit 3, instead of running to the simulated
// time limit (issue 22: majority -n 4 --entries 3 --seed 4 --faults
// crash:2@enter#3 livelocks: 3 to 7 million events and up to 1.2 GB,
// where about 300 were expected). The automatic bound's floor is lowered
// here from a million events so that the test takes a fraction of a
// second.
func TestSimGrowthStops(t *testing.T) {
	defer func(m int64) { minMaxEvents = m }(minMaxEvents)
	minMaxEvents = 20_000
	livelock := []string{"sim", "majority", "-n", "4", "--entries", "3", "--seed", "4", "--faults", "crash:2@enter#3", "--no-diagram"}
	dir := t.TempDir()
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{nil, "cut short: it grew to 20.0k events where about 316 were expected: a livelock?"},
		{[]string{"--max-events", "5000"}, "cut short: the most events allowed (5000) reached"},
		{[]string{"--no-check"}, "cut short: it grew to 20.0k events"},
	} {
		path := filepath.Join(dir, strings.Join(c.extra, "")+"t.db")
		code, out, errs := dmx(t, append(append(livelock, c.extra...), "-o", path)...)
		if code != exitInconclusive || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, want 3 and %q\n%s%s", c.extra, code, c.want, out, errs)
		}
		if r := runRow(t, path); r.Complete || !strings.HasPrefix(r.Status, "cut short") {
			t.Errorf("%v: run complete %v, status %q", c.extra, r.Complete, r.Status)
		}
	}
	// --max-events -1: only --limit bounds it.
	path := filepath.Join(dir, "nobound.db")
	code, _, errs := dmx(t, append(livelock, "--max-events", "-1", "--limit", "5s", "-o", path)...)
	if code != exitInconclusive || !strings.Contains(errs, "simulated time limit 5s reached") {
		t.Errorf("--max-events -1: exit %d\n%s", code, errs)
	}
}

// TestNoCheckCutIsInconclusive: a run cut short by a limit exits 3 under
// --no-check too, as its check would (issue 22: exit 0).
func TestNoCheckCutIsInconclusive(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"sim", "central", "-n", "3", "--entries", "1000", "--limit", "50ms"},
		{"run", "central", "-n", "2", "--entries", "100000", "--duration", "300ms", "--yes"},
	} {
		path := filepath.Join(dir, args[0]+".db")
		code, out, errs := dmx(t, append(args, "--no-check", "--no-diagram", "-o", path)...)
		if code != exitInconclusive || !strings.Contains(errs, "is incomplete (cut short") || !strings.Contains(out, "trace: "+path) {
			t.Errorf("%v: exit %d, want 3\n%s%s", args, code, out, errs)
		}
	}
	// A complete run is still exit 0.
	if code, _, errs := dmx(t, "sim", "central", "-n", "2", "--entries", "1", "--no-check", "--no-diagram", "-o", filepath.Join(dir, "ok.db")); code != 0 {
		t.Errorf("a complete run, unchecked: exit %d\n%s", code, errs)
	}
}

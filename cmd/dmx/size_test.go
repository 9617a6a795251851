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

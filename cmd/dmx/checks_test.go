package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/analyze"
)

// TestUnknownCheck: a misspelled check is a usage error that names every
// known check, not a run that silently checks nothing.
func TestUnknownCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	if code, _, errs := dmx(t, "sim", "central", "-n", "2", "--entries", "1", "--seed", "1", "-o", path, "--no-check"); code != 0 {
		t.Fatalf("sim: %s", errs)
	}
	for _, only := range []string{"mutex-casual", "clocks,mutex-casual", "clocks, liveness ,nope"} {
		code, out, errs := dmx(t, "check", "--checks", only, path)
		if code != exitUsage {
			t.Fatalf("--checks %s: exit %d, want %d\n%s%s", only, code, exitUsage, out, errs)
		}
		if !strings.Contains(errs, "no check named") {
			t.Errorf("--checks %s: stderr does not say which check is unknown:\n%s", only, errs)
		}
		for _, name := range analyze.Names() {
			if !strings.Contains(errs, name) {
				t.Errorf("--checks %s: stderr does not name the check %s:\n%s", only, name, errs)
			}
		}
	}
	if code, out, errs := dmx(t, "check", "--checks", "clocks, mutex-causal", path); code != 0 || !strings.Contains(out, "mutex-causal") {
		t.Fatalf("--checks clocks, mutex-causal: exit %d\n%s%s", code, out, errs)
	}
}

// TestChecksRepeated: --checks given twice runs the checks of both, as a
// comma-separated list would.
func TestChecksRepeated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	if code, _, errs := dmx(t, "sim", "central", "-n", "2", "--entries", "1", "--seed", "1", "-o", path, "--no-check"); code != 0 {
		t.Fatalf("sim: %s", errs)
	}
	code, out, errs := dmx(t, "check", "--checks", "clocks", "--checks", "liveness,mutex-causal", path)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, name := range []string{"clocks", "liveness", "mutex-causal"} {
		if !strings.Contains(out, name) {
			t.Errorf("the report lacks %s:\n%s", name, out)
		}
	}
	if strings.Contains(out, "deadlock") {
		t.Errorf("the report has a check not asked for:\n%s", out)
	}
}

// TestRequire: a trace without wall times is checked without
// mutex-realtime (skipped, exit 0) unless --require asks for it (exit 3).
func TestRequire(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	if code, _, errs := dmx(t, "sim", "central", "-n", "3", "--entries", "2", "--seed", "1", "-o", path, "--no-check"); code != 0 {
		t.Fatalf("sim: %s", errs)
	}
	craftOn(t, path, "UPDATE events SET wall_ns = 0")
	code, out, errs := dmx(t, "check", path)
	if code != exitOK || !strings.Contains(out, "skipped") {
		t.Fatalf("check: exit %d, want %d with mutex-realtime skipped\n%s%s", code, exitOK, out, errs)
	}
	code, out, errs = dmx(t, "check", "--require", "mutex-realtime", path)
	if code != exitInconclusive || !strings.Contains(out, "required, but skipped") {
		t.Fatalf("check --require mutex-realtime: exit %d, want %d\n%s%s", code, exitInconclusive, out, errs)
	}
	// A required check is run even if the run's algorithm does not claim it.
	code, out, errs = dmx(t, "check", "--checks", "clocks", "--require", "mutex-realtime", path)
	if code != exitInconclusive || !strings.Contains(out, "mutex-realtime") {
		t.Fatalf("check --checks clocks --require mutex-realtime: exit %d, want %d\n%s%s", code, exitInconclusive, out, errs)
	}
	if code, _, errs := dmx(t, "check", "--require", "mutex-real", path); code != exitUsage || !strings.Contains(errs, "--require") {
		t.Fatalf("--require of an unknown check: exit %d\n%s", code, errs)
	}
}

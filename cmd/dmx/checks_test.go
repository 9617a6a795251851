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

package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDurationsSaySimulated: dmx sim printed the milliseconds it took to
// compute a run and dmx stats the simulated time the run lasted, both as
// "in Xms". Now each says which time it counts, and the simulated time is
// the same number in both.
func TestDurationsSaySimulated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.db")
	code, _, errs := dmx(t, "sim", "central", "--seed", "5", "-o", path)
	if code != 0 {
		t.Fatalf("sim: exit %d\n%s", code, errs)
	}
	m := regexp.MustCompile(`recorded run 1: \d+ events in \S+ of real time, (\S+) of simulated time \(`).FindStringSubmatch(errs)
	if m == nil {
		t.Fatalf("sim does not say which time is which:\n%s", errs)
	}
	code, out, errs := dmx(t, "stats", path)
	if code != 0 || !strings.Contains(out, " events in "+m[1]+" of simulated time (first to last event)\n") {
		t.Errorf("stats: exit %d, want %s of simulated time\n%s%s", code, m[1], out, errs)
	}
}

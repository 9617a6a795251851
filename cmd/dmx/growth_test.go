package main

import (
	"path/filepath"
	"strings"
	"testing"
)

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

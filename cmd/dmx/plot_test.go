package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlot: dmx plot writes SVG and PNG, and refuses other formats.
func TestPlot(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "failover.db")
	if code, _, errs := dmx(t, "sim", "--scenario", "../../examples/central-failover.json", "--no-diagram", "-o", db); code != 0 {
		t.Fatalf("sim: %s", errs)
	}
	for _, ext := range []string{"svg", "png"} {
		out := filepath.Join(dir, "plot."+ext)
		code, stdout, errs := dmx(t, "plot", db, "-o", out)
		if code != 0 || !strings.Contains(stdout, "critical sections") || !strings.Contains(stdout, "2 faults shaded") {
			t.Fatalf("plot -o plot.%s: exit %d\n%s%s", ext, code, stdout, errs)
		}
		b, err := os.ReadFile(out)
		want := map[string]string{"svg": "<svg", "png": "\x89PNG"}[ext]
		if err != nil || !bytes.HasPrefix(b, []byte(want)) {
			t.Errorf("plot.%s: %v, starts %q", ext, err, b[:min(len(b), 20)])
		}
	}
	for _, c := range []struct{ args []string }{
		{[]string{"plot", db, "-o", filepath.Join(dir, "p.dot")}},
		{[]string{"plot", db}},
		{[]string{"plot", filepath.Join(dir, "none.db"), "-o", filepath.Join(dir, "p.svg")}},
	} {
		if code, _, errs := dmx(t, c.args...); code != exitUsage || errs == "" {
			t.Errorf("dmx %s: exit %d, stderr %q; want 2 and why", strings.Join(c.args, " "), code, errs)
		}
	}
}

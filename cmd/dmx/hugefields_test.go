package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHugeNames: names a trace holds (resources, message types,
// processes) are handed to the analyses and pictures shortened beyond
// trace.MaxName, so that memory and pictures stay bounded while different
// names stay different (issue 22: 5 MB resource names made dmx check take
// 5.7 GB, dmx render more than 12 GB). Two resources of 1 MB that differ
// in their last byte, on a run that violates mutual exclusion.
func TestHugeNames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "huge.db")
	if code, _, errs := dmx(t, "sim", "lamport", "--reorder", "--contention", "high", "--seed", "1", "-n", "3", "--entries", "2", "-o", path, "--no-diagram", "--no-check"); code != 0 {
		t.Fatalf("sim: %s", errs)
	}
	craftSQL(t, path,
		`UPDATE events SET resource = printf('%.*c', 1000000, 'r') || (proc % 2) WHERE resource IS NOT NULL AND resource <> ''`,
		`UPDATE events SET msg_type = printf('%.*c', 1000000, 'm') WHERE msg_type IS NOT NULL`,
		`INSERT INTO procs (run, proc, name) VALUES (1, 0, printf('%.*c', 1000000, 'p'))`)
	_, _, base := bounded(t, time.Minute, "sql", path, "SELECT 1")
	svg := filepath.Join(dir, "huge.svg")
	for _, args := range [][]string{
		{"check", path}, {"stats", path}, {"render", path, "-o", svg}, {"replay", path},
	} {
		code, out, mb := bounded(t, 2*time.Minute, args...)
		if code == exitUsage || strings.Contains(out, "goroutine") {
			t.Errorf("dmx %s: exit %d\n%.2000s", args[0], code, out)
		}
		if mb > base+200 {
			t.Errorf("dmx %s: %d MB resident (dmx alone: %d MB)", args[0], mb, base)
		}
		if len(out) > 1<<20 {
			t.Errorf("dmx %s wrote %d bytes", args[0], len(out))
		}
		t.Logf("dmx %s: exit %d, %d MB (dmx alone: %d MB)", args[0], code, mb, base)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 4<<20 || !strings.Contains(string(b), "(1000001 bytes)") {
		t.Errorf("the picture: %d bytes, names shortened: %v", len(b), strings.Contains(string(b), "(1000001 bytes)"))
	}
	// A kind of 2 MB (found by the adversarial pass: dmx render and dmx
	// report ran for more than 10 minutes) is shortened as the names are.
	kinds := craft(t, dir, "kinds.db", `UPDATE events SET kind = printf('%.*c', 2000000, 'k') WHERE id IN (4, 9, 20)`)
	for _, args := range [][]string{{"render", kinds, "-o", filepath.Join(dir, "kinds.svg")}, {"report", kinds, "-o", filepath.Join(dir, "rep")}} {
		code, out, mb := bounded(t, time.Minute, args...)
		if code < 0 || code > 3 || mb > base+200 || len(out) > 1<<20 {
			t.Errorf("dmx %s of 2 MB kinds: exit %d, %d MB\n%.2000s", args[0], code, mb, out)
		}
	}
	// The two resources are still two: each process's sections are on its own.
	code, out, _ := dmx(t, "sql", path, "SELECT count(DISTINCT resource) AS n FROM events WHERE resource <> ''", "--format", "csv", "--max-value", "2000000")
	if code != 0 || out != "n\n2\n" {
		t.Fatalf("sql: %d %q", code, out)
	}
}

// craftSQL changes the trace at path with SQL statements.
func craftSQL(t *testing.T, path string, stmts ...string) {
	t.Helper()
	craftOn(t, path, stmts...)
}

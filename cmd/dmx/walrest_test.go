package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// walTrace records a small run into dir/name and leaves the file in WAL
// mode with nothing beside it, as a trace copied without its -wal is.
func walTrace(t *testing.T, dir, name string) string {
	t.Helper()
	path := simTrace(t, dir, name)
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode=wal").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode: %q %v", mode, err)
	}
	db.Close()
	if side := sideFiles(t, path); len(side) > 0 {
		t.Fatalf("files beside the WAL-mode trace: %v", side)
	}
	return path
}

// TestWALAtRest: a trace left in WAL mode is read without making -wal
// and -shm files beside it, and on read-only media too (issue 22: readers
// made them and left them; on read-only media "unable to open database
// file"). A trace whose -wal holds part of it cannot be read there, and
// the error says why and what to do.
func TestWALAtRest(t *testing.T) {
	dir := t.TempDir()
	path := walTrace(t, dir, "wal.db")
	for _, args := range [][]string{
		{"check", path}, {"stats", path}, {"sql", path, "SELECT count(*) FROM events"},
		{"render", path, "-o", filepath.Join(dir, "x.svg")}, {"export", "shiviz", path}, {"replay", path},
	} {
		if code, _, errs := dmx(t, args...); code != 0 {
			t.Errorf("dmx %v: exit %d\n%s", args, code, errs)
		}
		if side := sideFiles(t, path); len(side) > 0 {
			t.Fatalf("dmx %s left %v beside the trace", args[0], side)
		}
	}

	// Read-only media: a bind mount of the directory, read-only.
	src := t.TempDir()
	walTrace(t, src, "wal.db")
	// A trace whose recorder did not close it: its -wal holds a run.
	st, err := trace.Create(filepath.Join(src, "open.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.BeginRun(trace.Run{Algorithm: "central", Nodes: 2, Mode: "sim"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"", "-wal"} {
		b, err := os.ReadFile(filepath.Join(src, "open.db") + s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, "copied.db")+s, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	out := inMountNS(t, `mount --bind -o ro "$SRC" "$DIR"`,
		`"$DMX" check wal.db >/dev/null; echo "wal=$?"; "$DMX" check copied.db; echo "copied=$?"; ls`, "SRC="+src)
	for _, want := range []string{"wal=0", "copied=2", "part of the trace is in copied.db-wal", "copy both files to a directory that can be written"} {
		if !strings.Contains(out, want) {
			t.Errorf("on read-only media: output lacks %q:\n%s", want, out)
		}
	}
}

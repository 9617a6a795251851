package main

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// craft records a small run into dir/name and changes it with SQL
// statements, as a hand-edited or hostile trace is.
func craft(t *testing.T, dir, name string, stmts ...string) string {
	t.Helper()
	path := simTrace(t, dir, name)
	craftOn(t, path, stmts...)
	return path
}

// craftOn runs SQL statements on the trace at path.
func craftOn(t *testing.T, path string, stmts ...string) {
	t.Helper()
	onSQL(t, path, stmts, func(s string, err error) { t.Fatalf("%s: %v", s, err) })
}

// onSQL runs the statements on the SQLite file at path, handing refused
// to each one SQLite refuses and its error.
func onSQL(t *testing.T, path string, stmts []string, refused func(stmt string, err error)) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			refused(s, err)
		}
	}
}

// bounded runs dmx with args as a process of its own, for at most d, and
// returns its exit code, output and peak resident memory in MB.
func bounded(t *testing.T, d time.Duration, args ...string) (int, string, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	out, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("dmx %v still running after %v:\n%s", args, d, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return cmd.ProcessState.ExitCode(), string(out), ru.Maxrss / 1024
}

// TestClaimedSizes: a run's claimed number of processes is believed only
// as far as its events go (beyond 1,024), by every reader: a claim of
// 2,000,000,000 made dmx replay take 14.8 GB in 100 s, one of 65,536 with
// 5 real processes made dmx render take 58 s and 1.38 GB (issue 22).
func TestClaimedSizes(t *testing.T) {
	dir := t.TempDir()
	huge := craft(t, dir, "huge.db", "UPDATE runs SET nodes = 2000000000")
	sparse := craft(t, dir, "sparse.db", "UPDATE runs SET nodes = 65536", "UPDATE events SET proc = 65535 WHERE proc = 1")
	names := craft(t, dir, "names.db", "INSERT INTO procs (run, proc, name) VALUES (1, 1000000, 'far')")
	for _, path := range []string{huge, sparse, names} {
		for _, args := range [][]string{
			{"check", path}, {"stats", path}, {"replay", path}, {"render", path, "-o", filepath.Join(dir, "x.svg")},
			{"export", "shiviz", path}, {"export", "perfetto", path}, {"serve", path, "--addr", "127.0.0.1:0"},
		} {
			code, out, mb := bounded(t, 30*time.Second, args...)
			if code != exitUsage || !strings.Contains(out, "broken trace") || !strings.Contains(out, filepath.Base(path)) {
				t.Errorf("dmx %s %s: exit %d, want 2 and a broken trace named:\n%s", args[0], filepath.Base(path), code, out)
			}
			if mb > 400 { // dmx starts in 50 to 150 MB; the claims took gigabytes
				t.Errorf("dmx %s %s: %d MB resident", args[0], filepath.Base(path), mb)
			}
		}
	}
	// A run of dmx's own size with no events at all (interrupted before
	// its nodes started) is read as before.
	empty := craft(t, dir, "empty.db", "UPDATE runs SET nodes = 1000, complete = 0, status = 'interrupted'", "DELETE FROM messages", "DELETE FROM events")
	if code, out, errs := dmx(t, "check", empty); code != exitInconclusive && code != exitOK {
		t.Errorf("check of an empty run of 1000 processes: exit %d\n%s%s", code, out, errs)
	}
}

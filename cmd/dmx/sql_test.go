package main

import (
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sqlTrace records a small simulated run for the sql tests.
func sqlTrace(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "v.db")
	if code, _, errs := dmx(t, "sim", "ricart-agrawala", "-n", "3", "--entries", "3", "--seed", "1", "-o", path, "--no-check"); code != 0 {
		t.Fatalf("sim: exit %d: %s", code, errs)
	}
	return path
}

// TestSQLCannotWrite: dmx sql refuses what would change the trace or
// write another file, says that the trace is read-only, and the trace
// still holds its run afterwards.
func TestSQLCannotWrite(t *testing.T) {
	path := sqlTrace(t)
	dir := filepath.Dir(path)
	for _, q := range []string{
		"DELETE FROM events",
		"ATTACH '" + path + "' AS w; DELETE FROM w.events",
		"ATTACH '" + path + "' AS w; DROP TABLE w.events",
		"PRAGMA user_version = 99",
		"ATTACH '" + filepath.Join(dir, "other.db") + "' AS o",
		"VACUUM INTO '" + filepath.Join(dir, "copy.db") + "'",
	} {
		code, _, errs := dmx(t, "sql", path, q)
		if code != 2 || !strings.Contains(errs, "read-only") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 saying the trace is read-only", q, code, errs)
		}
	}
	if code, out, errs := dmx(t, "sql", path, "SELECT count(*) > 100, (SELECT count(*) FROM runs) FROM events", "--format", "csv"); code != 0 || !strings.HasSuffix(out, "\n1,1\n") {
		t.Fatalf("the trace changed: exit %d, %q %s", code, out, errs)
	}
	if code, _, _ := dmx(t, "check", path); code != 0 {
		t.Fatalf("check after the refused queries: exit %d", code)
	}
	for _, f := range []string{"other.db", "copy.db"} {
		if _, err := filepath.Glob(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, f)); len(m) > 0 {
			t.Errorf("dmx sql created %s", f)
		}
	}
}

// endless is a query without end: a recursive CTE counting up.
const endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i, 'row ' || i AS text FROM n"

// TestSQLLimit: --limit stops after so many rows, even of a query without
// end, and says that it did; table output says how many rows it showed.
func TestSQLLimit(t *testing.T) {
	path := sqlTrace(t)
	for _, format := range []string{"table", "csv", "json"} {
		code, out, errs := dmx(t, "sql", path, endless, "--limit", "5", "--format", format)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, errs)
		}
		if !strings.Contains(out, "row 5") || strings.Contains(out, "row 6") {
			t.Errorf("%s: want rows 1-5:\n%s", format, out)
		}
		if !strings.Contains(errs, "--limit 5") {
			t.Errorf("%s: stderr does not say the limit cut the result: %q", format, errs)
		}
	}
	// A result within the limit is not said to be cut.
	code, _, errs := dmx(t, "sql", path, "SELECT 1", "--limit", "1")
	if code != 0 || strings.Contains(errs, "limit") || !strings.Contains(errs, "(1 row)") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestSQLTimeout: --timeout stops a query that runs too long, with exit 2
// and a message that names the flag.
func TestSQLTimeout(t *testing.T) {
	path := sqlTrace(t)
	start := time.Now()
	code, _, errs := dmx(t, "sql", path, "SELECT count(*) FROM ("+endless+")", "--timeout", "300ms")
	if code != 2 || !strings.Contains(errs, "--timeout 300ms") {
		t.Fatalf("exit %d, stderr %q; want exit 2 naming --timeout", code, errs)
	}
	if d := time.Since(start); d > time.Minute { // the query never ends: a bound far beyond any load
		t.Fatalf("stopped after %v", d)
	}
}

// countingWriter counts what is written and measures the live heap (after
// a GC) every 2 MiB.
type countingWriter struct {
	n    atomic.Int64
	peak atomic.Uint64
}

func (w *countingWriter) Write(b []byte) (int, error) {
	const every = 2 << 20
	before := w.n.Load()
	if w.n.Add(int64(len(b)))/every != before/every {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > w.peak.Load() {
			w.peak.Store(ms.HeapAlloc)
		}
	}
	return len(b), nil
}

// TestSQLStreams: a result bigger than what dmx may hold in memory is
// written as it is read, in every format: the live heap stays small while
// tens of megabytes of rows go by (holding them all, dmx sql reached a
// max RSS of 500 MB on the json of this query). Table
// output goes in pages.
func TestSQLStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a big result")
	}
	path := sqlTrace(t)
	const rows = 300_000
	q := "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " + strconv.Itoa(rows) +
		") SELECT i, printf('%0100d', i) AS pad FROM n"
	for _, format := range []string{"csv", "json", "table"} {
		runtime.GC()
		var out countingWriter
		var errb strings.Builder
		code := Do([]string{"sql", path, q, "--format", format, "--timeout", "0"}, strings.NewReader(""), &out, &errb)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, errb.String())
		}
		if out.n.Load() < rows*100 {
			t.Fatalf("%s: only %d bytes written", format, out.n.Load())
		}
		const budget = 32 << 20
		if p := out.peak.Load(); p > budget {
			t.Errorf("%s: live heap reached %d MiB while writing %d MiB of rows; want under %d MiB", format, p>>20, out.n.Load()>>20, budget>>20)
		}
		t.Logf("%s: %d MiB written, live heap peak %d MiB", format, out.n.Load()>>20, out.peak.Load()>>20)
	}
}

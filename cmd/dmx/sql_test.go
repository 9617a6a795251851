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
	dmxOK(t, "sim", "ricart-agrawala", "-n", "3", "--entries", "3", "--seed", "1", "-o", path, "--no-check")
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

// TestSQLBytesCapped: dmx sql is bounded in bytes as well as in rows: a
// value read or made past --max-value stops the query with a message that
// says what to do, a table shows the start of a long value and pages by
// bytes (issue 22: one 300 MB value in a table took 7.6 GB and 79 s past
// a 1m timeout; three zeroblob columns 8.8 GB; under a memory limit, Go's
// "fatal error: out of memory"). Each command is a process of its own,
// bounded in time, whose peak memory is measured.
func TestSQLBytesCapped(t *testing.T) {
	dir := t.TempDir()
	// A trace holding a 3 MB value, as a hostile or imported one may.
	big := craft(t, dir, "big.db", "UPDATE events SET detail = json_object('x', printf('%.*c', 3000000, 'x')) WHERE id = 1")
	for _, c := range []struct {
		args []string
		code int
		want string
		mb   int64 // above what dmx takes to start and print a row
	}{
		{[]string{"sql", big, "SELECT zeroblob(300000000)"}, exitUsage, "query stopped: a value of more than 1048576 bytes", 60},
		{[]string{"sql", big, "SELECT zeroblob(300000000), zeroblob(300000000), zeroblob(300000000)", "--format", "csv"}, exitUsage, "query stopped: a value of more than 1048576 bytes", 60},
		{[]string{"sql", big, "SELECT detail FROM events"}, exitUsage, "read from the trace or made by the query (the most a query may hold: dmx sql --max-value allows more)", 60},
		{[]string{"sql", big, "SELECT length(detail) AS n FROM events WHERE id = 1", "--format", "csv", "--max-value", "4000000"}, exitOK, "n\n3000008\n", 60},
		{[]string{"sql", big, "SELECT detail FROM events WHERE id = 1", "--max-value", "4000000", "--format", "csv"}, exitOK, "xxxxxxxxxx", 60},
		// Two 1 MB values a row, 2,000 rows: 4 GB of table before.
		{[]string{"sql", big, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) SELECT printf('%.*c', 1000000, 'x') AS a, printf('%.*c', 1000000, 'y') AS b FROM n", "--timeout", "0"}, exitOK, "… (1000000 bytes: --format csv or json shows it whole)", 150},
		{[]string{"sql", big, "SELECT " + strings.Repeat("1,", 300) + "1"}, exitUsage, "too many columns", 60},
	} {
		code, out, mb := bounded(t, time.Minute, c.args...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("dmx %.80q: exit %d, want %d and %q:\n%.2000s", c.args[2], code, c.code, c.want, out)
		}
		// What starting takes varies (go-graphviz compiles its module,
		// 50 to 150 MB): measured alike just before.
		_, _, base := bounded(t, time.Minute, "sql", big, "SELECT 1")
		if mb > base+c.mb {
			t.Errorf("dmx %.80q: %d MB resident, want at most %d more than %d", c.args[2], mb, c.mb, base)
		}
		t.Logf("%.60q: exit %d, %d MB (SELECT 1: %d MB)", c.args[2], code, mb, base)
	}
	// The analyses read every value whole after a capped query on the same
	// connection pool.
	if code, _, errs := dmx(t, "stats", big); code != 0 {
		t.Errorf("stats of a trace with a 3 MB value: exit %d\n%s", code, errs)
	}
}

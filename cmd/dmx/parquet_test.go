package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// TestExportParquetCommand: dmx export parquet writes the files of
// several traces and says what it wrote; what it cannot do is refused.
func TestExportParquetCommand(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	dmx(t, "sweep", "ricart-agrawala", "-n", "3", "--entries", "2", "--seeds", "1..3", "-o", a)
	dmx(t, "sim", "bully", "--seed", "2", "--no-diagram", "-o", b)
	out := filepath.Join(dir, "pq")
	code, stdout, errs := dmx(t, "export", "parquet", a, b, "-o", out)
	if code != 0 || !strings.Contains(stdout, "4 runs") {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	for _, f := range []string{"runs.parquet", "verdicts.parquet", "events/run=4/events.parquet", "messages/run=1/messages.parquet"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "parquet", a}, "-o DIR is required"},
		{[]string{"export", "parquet", a, "-o", out}, "is not empty"},
		{[]string{"export", "parquet", a, b, "--run", "1", "-o", filepath.Join(dir, "x")}, "name one trace"},
		{[]string{"export", "shiviz", a, b}, "one trace at a time"},
	} {
		if code, _, errs := dmx(t, c.args...); code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("dmx %v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, errs)
		}
	}
}

// duckDB returns a function that runs a query in DuckDB (through node
// and @duckdb/node-api in the node_modules that DMX_DUCKDB names, which
// .ci/run installs) and returns its rows, or skips the test when DuckDB
// is not at hand (fails under CI=true, where it must be).
func duckDB(t *testing.T) func(query string) []map[string]any {
	t.Helper()
	mods := os.Getenv("DMX_DUCKDB")
	node, err := exec.LookPath("node")
	if mods == "" || err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("DuckDB is not at hand (DMX_DUCKDB=%q, node: %v): .ci/run installs it", mods, err)
		}
		t.Skip("DuckDB is not at hand: set DMX_DUCKDB to a node_modules directory holding @duckdb/node-api (npm install @duckdb/node-api)")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "duckdb.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	return func(query string) []map[string]any {
		t.Helper()
		cmd := exec.Command(node, script, query)
		cmd.Env = append(os.Environ(), "NODE_PATH="+mods)
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("duckdb: %v\n%s\n%s", err, query, stderr)
		}
		var rows []map[string]any
		if err := json.Unmarshal(out, &rows); err != nil {
			t.Fatalf("duckdb: %v: %s", err, out)
		}
		return rows
	}
}

// TestParquetDuckDB: a second reader, DuckDB, reads the export with the
// trace's rows (every event of a run, as SQLite holds it), the counts of
// every table, and runs each query docs/sweep.md shows.
func TestParquetDuckDB(t *testing.T) {
	duck := duckDB(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	dmx(t, "sweep", "ricart-agrawala", "-n", "3", "--entries", "3", "--faults", "random", "--seeds", "1..12", "-o", a)
	dmx(t, "sweep", "bully", "--nemesis", "pause:who=leader", "--seeds", "1..3", "-o", b)
	out := filepath.Join(dir, "warehouse")
	if code, stdout, errs := dmx(t, "export", "parquet", a, b, "-o", out); code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, stdout, errs)
	}
	events := "read_parquet('" + out + "/events/*/*.parquet', hive_partitioning = true)"
	var sqlEvents, sqlMessages, sqlRuns, noFaults int64
	for _, p := range []string{a, b} {
		st, err := trace.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var e, m, r, n int64
		st.DB().QueryRow(`SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM messages), (SELECT count(*) FROM runs), (SELECT count(*) FROM runs WHERE faults = '[]')`).Scan(&e, &m, &r, &n)
		sqlEvents, sqlMessages, sqlRuns, noFaults = sqlEvents+e, sqlMessages+m, sqlRuns+r, noFaults+n
		st.Close()
	}
	got := duck(fmt.Sprintf(`SELECT (SELECT count(*) FROM %s) AS events,
		(SELECT count(*) FROM read_parquet('%s/messages/*/*.parquet', hive_partitioning = true)) AS messages,
		(SELECT count(*) FROM read_parquet('%s/runs.parquet')) AS runs`, events, out, out))
	if fmt.Sprintf("%v %v %v", got[0]["events"], got[0]["messages"], got[0]["runs"]) != fmt.Sprintf("%d %d %d", sqlEvents, sqlMessages, sqlRuns) {
		t.Errorf("DuckDB counts %v; the traces hold %d events, %d messages, %d runs", got, sqlEvents, sqlMessages, sqlRuns)
	}
	// Run 13 is b's first: every event as SQLite holds it.
	cols := `concat_ws('|', id, proc, seq, kind, lamport, coalesce(vc, 'NULL'), wall_ns, coalesce(msg::VARCHAR, 'NULL'),
		coalesce(msg_type, 'NULL'), coalesce(peer::VARCHAR, 'NULL'), coalesce(resource, 'NULL'), coalesce(detail, 'NULL')) AS row`
	var duckRows []string
	for _, r := range duck(fmt.Sprintf(`SELECT %s FROM %s WHERE run = 13 ORDER BY id`, cols, events)) {
		duckRows = append(duckRows, fmt.Sprint(r["row"]))
	}
	st, err := trace.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.DB().Query(`SELECT ` + strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(cols, "concat_ws('|', ", ""), ") AS row", ""), "::VARCHAR", "") + ` FROM events WHERE run = 1 ORDER BY id`)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	var sqlRows []string
	for rows.Next() {
		v := make([]any, 12)
		p := make([]any, 12)
		for i := range v {
			p[i] = &v[i]
		}
		rows.Scan(p...)
		var f []string
		for _, x := range v {
			if bs, ok := x.([]byte); ok {
				x = string(bs)
			}
			f = append(f, fmt.Sprint(x))
		}
		sqlRows = append(sqlRows, strings.Join(f, "|"))
	}
	rows.Close()
	st.Close()
	if len(sqlRows) == 0 || strings.Join(duckRows, "\n") != strings.Join(sqlRows, "\n") {
		t.Errorf("DuckDB reads run 13's events as\n%s\nSQLite holds\n%s", strings.Join(duckRows[:min(5, len(duckRows))], "\n"), strings.Join(sqlRows[:min(5, len(sqlRows))], "\n"))
	}
	// The documented queries.
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "sweep.md"))
	if err != nil {
		t.Fatal(err)
	}
	queries := regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	if len(queries) < 3 {
		t.Fatalf("docs/sweep.md shows %d SQL queries", len(queries))
	}
	for i, q := range queries {
		res := duck(strings.ReplaceAll(q[1], "'warehouse/", "'"+out+"/"))
		if len(res) == 0 {
			t.Errorf("query %d gives no rows:\n%s", i+1, q[1])
		}
		if i == 0 {
			var none int64
			for _, r := range res {
				if r["kind"] == "none" {
					n, _ := strconv.ParseInt(fmt.Sprint(r["runs"]), 10, 64)
					none += n
				}
			}
			if none != noFaults {
				t.Errorf("query 1 counts %v runs without faults; the traces hold %d", none, noFaults)
			}
		}
	}
}

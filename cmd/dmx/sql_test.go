package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestSQLJSONDuplicateColumns: columns of the same name (a self-join's
// a.proc and b.proc) each keep their value in --format json.
func TestSQLJSONDuplicateColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	if code, _, errs := dmx(t, "sim", "central", "-n", "2", "--entries", "1", "--seed", "1", "--no-check", "-o", path); code != 0 {
		t.Fatalf("sim: %s", errs)
	}
	code, out, errs := dmx(t, "sql", "--format", "json", path, "SELECT 1 AS x, 2 AS x, 3 AS x_2")
	if code != 0 {
		t.Fatalf("sql: exit %d: %s", code, errs)
	}
	var rows []map[string]int
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(rows) != 1 || len(rows[0]) != 3 || rows[0]["x"] != 1 || rows[0]["x_2"] != 3 || rows[0]["x_3"] != 2 {
		t.Fatalf("rows %v: want x 1, x_2 3 and the second x as x_3 2", rows)
	}
}

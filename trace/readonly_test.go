package trace

import (
	"context"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// dirState is the names and contents of the files in dir, to show that
// nothing was written or created.
func dirState(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][32]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = sha256.Sum256(b)
	}
	return m
}

// TestOpenIsReadOnly: nothing can be written through a trace opened with
// Open, neither into the trace (directly, through an ATTACH of the same
// file, by a PRAGMA) nor into another file (ATTACH and VACUUM INTO create
// files), and the refusal says the trace is read-only. Reading, the
// reading PRAGMAs included, still works.
func TestOpenIsReadOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v.db")
	smallTrace(t, path, 5)
	before := dirState(t, dir)
	s := open(t, path)
	defer s.Close()

	q := func(stmt string) error {
		rows, err := s.Query(context.Background(), stmt)
		if err != nil {
			return err
		}
		defer rows.Close()
		for {
			if _, err := rows.Next(); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		}
	}
	for _, stmt := range []string{
		`DELETE FROM events`,
		`INSERT INTO runs (algorithm, nodes, seed, mode, started_ns) VALUES ('x', 1, '1', 'sim', 0)`,
		`UPDATE runs SET status = 'forged'`,
		`DROP TABLE events`,
		`CREATE TABLE x (a)`,
		`CREATE TEMP TABLE x (a)`,
		`CREATE INDEX i ON events(kind)`,
		`ALTER TABLE runs ADD COLUMN x`,
		`ATTACH '` + path + `' AS w; DELETE FROM w.events`,
		`ATTACH '` + path + `' AS w; DROP TABLE w.events`,
		`ATTACH '` + path + `' AS w; PRAGMA w.user_version = 99`,
		`ATTACH '` + filepath.Join(dir, "new.db") + `' AS n`,
		`ATTACH 'file:` + filepath.Join(dir, "uri.db") + `?mode=rwc' AS n`,
		`VACUUM INTO '` + filepath.Join(dir, "copy.db") + `'`,
		`VACUUM`,
		`REINDEX`,
		`ANALYZE`,
		`PRAGMA user_version = 99`,
		`PRAGMA main.user_version = 99`,
		`PRAGMA query_only = 0; DELETE FROM events`,
		`PRAGMA journal_mode = DELETE`,
		`PRAGMA wal_checkpoint(TRUNCATE)`,
		`PRAGMA optimize`,
		`BEGIN IMMEDIATE`,
		`BEGIN EXCLUSIVE`,
		`SAVEPOINT a`,
	} {
		err := q(stmt)
		if err == nil {
			t.Errorf("%s: allowed on a trace opened read-only", stmt)
			continue
		}
		if !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %q does not say that %s is read-only", stmt, err, path)
		}
	}
	// Not a write, but a way to run code: refused too.
	if err := q(`SELECT load_extension('x')`); err == nil || !strings.Contains(err.Error(), "not authorized") {
		t.Errorf("load_extension: got %v, want a refusal", err)
	}
	for _, stmt := range []string{
		`SELECT count(*) FROM events`,
		`SELECT * FROM cs_intervals`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) SELECT sum(i) FROM n`,
		`PRAGMA user_version`,
		`PRAGMA table_info(events)`,
		`SELECT name FROM pragma_table_info('events')`,
		`PRAGMA quick_check`,
		`PRAGMA integrity_check(5)`,
		`PRAGMA index_list(events)`,
		`SELECT json_extract(detail, '$.leader') FROM events`,
	} {
		if err := q(stmt); err != nil {
			t.Errorf("%s: %v", stmt, err)
		}
	}
	s.Close()
	after := dirState(t, dir)
	if len(after) != len(before) {
		var names []string
		for n := range after {
			names = append(names, n)
		}
		sort.Strings(names)
		t.Errorf("files in the directory changed: %v", names)
	}
	for n, h := range before {
		if after[n] != h {
			t.Errorf("%s changed", n)
		}
	}
}

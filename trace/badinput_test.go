package trace

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/internal/sqltest"
)

// sqliteFile makes an SQLite file at path with the given statements.
func sqliteFile(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", dsn(path, "_journal_mode=DELETE"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// smallTrace records a run of n chatter events per process at path.
func smallTrace(t *testing.T, path string, k int) int64 {
	t.Helper()
	var evs []Event
	for p := 0; p < 3; p++ {
		evs = append(evs, chatter(p, 3, k)...)
	}
	return record(t, path, Run{Algorithm: "ring", Nodes: 3, Mode: "sim"}, evs)
}

func TestOpenBadInput(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }

	os.WriteFile(at("x.txt"), []byte("hello, this is not a database at all\n"), 0o644)
	os.WriteFile(at("short.db"), []byte("SQLite"), 0o644)
	os.WriteFile(at("empty.db"), nil, 0o644)
	sqliteFile(t, at("other.db"), `CREATE TABLE t (x)`)
	smallTrace(t, at("newer.db"), 5)
	sqliteFile(t, at("newer.db"), `PRAGMA user_version = 7`)
	smallTrace(t, at("norun.db"), 5)
	sqliteFile(t, at("norun.db"), `DROP VIEW cs_intervals`, `ALTER TABLE runs RENAME TO runs_old`)
	smallTrace(t, at("half.db"), 2000)
	full, _ := os.ReadFile(at("half.db"))
	os.WriteFile(at("half.db"), full[:len(full)/2], 0o644)
	// Garbage over the pages after the first few: a file of the right size
	// whose tables are damaged.
	smallTrace(t, at("corrupt.db"), 2000)
	bad, _ := os.ReadFile(at("corrupt.db"))
	for i := 8 * 4096; i < len(bad); i++ {
		bad[i] = byte(i * 7)
	}
	os.WriteFile(at("corrupt.db"), bad, 0o644)

	for _, tc := range []struct {
		file string
		want []string // substrings of the error
	}{
		{"missing.db", []string{"missing.db: no such trace file"}},
		{"x.txt", []string{"x.txt: not a dmx trace (not an SQLite file)"}},
		{"short.db", []string{"short.db: not a dmx trace (not an SQLite file)"}},
		{"empty.db", []string{"empty.db: not a dmx trace (empty file)"}},
		{"other.db", []string{"other.db: not a dmx trace (no runs table)"}},
		{"norun.db", []string{"norun.db: not a dmx trace (no runs table)"}},
		{"newer.db", []string{"newer.db: trace schema version 7 is newer than this dmx supports (1); upgrade dmx"}},
		{"half.db", []string{"half.db: trace is damaged (truncated: ", "malformed"}},
		{"corrupt.db", []string{"corrupt.db: trace is damaged", "malformed"}},
	} {
		s, err := Open(at(tc.file))
		if err == nil {
			s.Close()
			t.Errorf("Open(%s): no error", tc.file)
			continue
		}
		msg := err.Error()
		t.Logf("Open(%s): %s", tc.file, msg)
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("Open(%s) = %q, want it to say %q", tc.file, msg, w)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("Open(%s): error of several lines: %q", tc.file, msg)
		}
	}
}

// TestCreateRefuses: Create must not write to a file that is not a trace.
func TestCreateRefuses(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	os.WriteFile(at("notes.txt"), []byte("my precious notes\n"), 0o644)
	sqliteFile(t, at("other.db"), `CREATE TABLE t (x)`, `INSERT INTO t VALUES (1)`)
	smallTrace(t, at("newer.db"), 5)
	sqliteFile(t, at("newer.db"), `PRAGMA user_version = 7`)
	for _, tc := range []struct{ file, want string }{
		{"notes.txt", "not a dmx trace (not an SQLite file)"},
		{"other.db", "not a dmx trace (no runs table); refusing to write to it"},
		{"newer.db", "trace schema version 7 is newer"},
	} {
		before, _ := os.ReadFile(at(tc.file))
		s, err := Create(at(tc.file))
		if err == nil {
			s.Close()
			t.Errorf("Create(%s): no error", tc.file)
		} else if t.Logf("Create(%s): %s", tc.file, err); !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Create(%s) = %q, want %q", tc.file, err, tc.want)
		}
		after, _ := os.ReadFile(at(tc.file))
		if !bytes.Equal(before, after) {
			t.Errorf("Create(%s) changed the file", tc.file)
		}
		for _, suffix := range []string{"-wal", "-shm", "-journal"} {
			if _, err := os.Stat(at(tc.file) + suffix); err == nil {
				t.Errorf("Create(%s) left %s", tc.file, suffix)
			}
		}
	}
	// An empty file (from mktemp, say) is a new trace.
	os.WriteFile(at("empty.db"), nil, 0o644)
	s, err := Create(at("empty.db"))
	if err != nil {
		t.Fatalf("Create(empty file) = %v", err)
	}
	s.Close()
}

// TestBadVectorClock: a row whose vc is not a vector clock is reported
// with the file, the event id and its reference.
func TestBadVectorClock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	run := smallTrace(t, path, 5)
	sqliteFile(t, path, `UPDATE events SET vc = '[1,x,2]' WHERE proc = 2 AND seq = 4`)
	s := open(t, path)
	var id int64
	s.DB().QueryRow(`SELECT id FROM events WHERE proc = 2 AND seq = 4`).Scan(&id)
	_, err := s.AllEvents(run)
	want := path + ": event " + strconv.FormatInt(id, 10) + " (P2#4): vector clock \"[1,x,2]\""
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("AllEvents = %v\nwant an error starting %q", err, want)
	}
}

// TestDamageFoundWhileReading: in a file opened without its integrity
// check, damage inside a table shows up while reading, as a damaged trace.
func TestDamageFoundWhileReading(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	var evs []Event
	for p := 0; p < 3; p++ {
		evs = append(evs, chatter(p, 3, 2000)...)
	}
	// A marker in an event in the middle, to find a leaf page of the
	// events table in the file.
	evs[len(evs)/2].Detail = []byte(`{"marker":"XYZZY-MIDDLE"}`)
	run := record(t, path, Run{Algorithm: "ring", Nodes: 3, Mode: "sim"}, evs)
	b, _ := os.ReadFile(path)
	at := bytes.Index(b, []byte("XYZZY-MIDDLE"))
	if at < 0 {
		t.Fatal("marker not found in the file")
	}
	page := at / 4096 * 4096
	for i := page; i < page+4096; i++ {
		b[i] = byte(i * 7)
	}
	os.WriteFile(path, b, 0o644)
	s, err := OpenWith(path, OpenOptions{NoIntegrityCheck: true})
	if err != nil {
		t.Logf("Open: %v", err)
	} else {
		defer s.Close()
		_, err = s.AllEvents(run)
		t.Logf("AllEvents: %v", err)
	}
	if err == nil || !strings.HasPrefix(err.Error(), path+": trace is damaged") {
		t.Errorf("got %v, want a damaged trace", err)
	}
}

// damageIndex records a run whose critical sections are on resource
// "XYZZY" at path, then changes one entry of the events_cs index, leaving
// the table and the structure of the file intact: PRAGMA quick_check finds
// nothing wrong, while cs_intervals loses that section's enter.
func damageIndex(t *testing.T, path string) {
	t.Helper()
	var evs []Event
	for p := 0; p < 3; p++ {
		for k := 0; k < 20; k++ {
			seq := int64(3*k + 1)
			evs = append(evs, cs(p, seq, KindCSRequest, "XYZZY", seq), cs(p, seq+1, KindCSEnter, "XYZZY", seq+1), cs(p, seq+2, KindCSExit, "XYZZY", seq+2))
		}
	}
	record(t, path, Run{Algorithm: "central", Nodes: 3, Mode: "sim"}, evs)
	// An index entry that holds the resource's name: "XYZZZ", an entry
	// for a row that has "XYZZY".
	sqltest.DamageIndexEntry(t, path, "XYZZY", 'Z')
	db, err := sql.Open("sqlite3", dsn(path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var qc string
	var events int
	db.QueryRow(`PRAGMA quick_check`).Scan(&qc)
	db.QueryRow(`SELECT count(request_event) + count(enter_event) + count(exit_event) FROM cs_intervals`).Scan(&events)
	if qc != "ok" || events != 179 {
		t.Fatalf("the damage is not confined to the index: quick_check %q, cs_intervals shows %d events of 180", qc, events)
	}
}

// TestIndexDamageFound: Open finds damage confined to an index (which
// PRAGMA quick_check does not look for) whatever the file's size, unless
// told not to check.
func TestIndexDamageFound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	damageIndex(t, path)
	s, err := Open(path)
	if err == nil {
		s.Close()
		t.Fatal("Open: no error on a trace with a damaged index")
	}
	if !strings.Contains(err.Error(), "trace is damaged") || !strings.Contains(err.Error(), "events_cs") {
		t.Errorf("Open: %v; want it damaged, naming the index", err)
	}
	s, err = OpenWith(path, OpenOptions{NoIntegrityCheck: true})
	if err != nil {
		t.Fatalf("OpenWith(NoIntegrityCheck): %v", err)
	}
	s.Close()
}

// TestNullEventKeys: a file whose schema lets an event's id, run or
// process be NULL, and that has such an event, is refused when opened,
// with the row named; read on, its run would have held no events and every
// check said ok.
func TestNullEventKeys(t *testing.T) {
	dir := t.TempDir()
	loose := strings.NewReplacer("id       INTEGER PRIMARY KEY", "id       INTEGER",
		"run      INTEGER NOT NULL REFERENCES runs(id)", "run      INTEGER",
		"proc     INTEGER NOT NULL", "proc     INTEGER").Replace(Schema)
	for _, tc := range []struct {
		name, insert, want string
	}{
		{"null-id.db", `INSERT INTO events (id, run, proc, seq, kind, lamport, wall_ns) VALUES (NULL, 1, 0, 1, 'internal', 1, 5)`,
			"the event in row 1 of the events table has no id (NULL)"},
		{"null-run.db", `INSERT INTO events (id, run, proc, seq, kind, lamport, wall_ns) VALUES (1, NULL, NULL, 1, 'internal', 1, 5)`,
			"has no run and no proc (NULL)"},
		{"fine.db", `INSERT INTO events (id, run, proc, seq, kind, lamport, wall_ns) VALUES (1, 1, 0, 1, 'internal', 1, 5)`, ""},
	} {
		path := filepath.Join(dir, tc.name)
		sqliteFile(t, path, loose,
			`INSERT INTO runs (id, algorithm, nodes, seed, mode, started_ns, complete, status) VALUES (1, 'x', 1, '1', 'sim', 0, 1, 'ok')`,
			tc.insert)
		s, err := Open(path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "":
			s.Close()
		case err == nil:
			s.Close()
			t.Errorf("%s: opened, want an error", tc.name)
		case !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: %v\nwant it to say %q", tc.name, err, tc.want)
		}
	}
}

package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dmxlab/dmx/internal/sqltest"
)

// ev makes an event; the helpers below fill in the message fields.
func ev(proc int, seq int64, kind Kind, wall int64) Event {
	return Event{Proc: proc, Seq: seq, Kind: kind, Lamport: uint64(seq), Wall: wall, Peer: NoPeer}
}

func send(proc int, seq int64, to int, msg int64, typ string, wall int64) Event {
	e := ev(proc, seq, KindSend, wall)
	e.Peer, e.Msg, e.MsgType = to, msg, typ
	return e
}

func recv(proc int, seq int64, from int, msg int64, typ string, wall int64) Event {
	e := ev(proc, seq, KindReceive, wall)
	e.Peer, e.Msg, e.MsgType = from, msg, typ
	return e
}

func drop(proc int, seq int64, peer int, msg int64, typ string, wall int64) Event {
	e := ev(proc, seq, KindDrop, wall)
	e.Peer, e.Msg, e.MsgType = peer, msg, typ
	return e
}

func cs(proc int, seq int64, kind Kind, res string, wall int64) Event {
	e := ev(proc, seq, kind, wall)
	e.Resource = res
	return e
}

func withDetail(e Event, detail string) Event {
	e.Detail = json.RawMessage(detail)
	return e
}

// begin creates the trace at path and begins run r in it.
func begin(t testing.TB, path string, r Run) (*Store, int64) {
	t.Helper()
	s, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.BeginRun(r)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	return s, id
}

// record writes a run of events to the trace at path and returns its id.
func record(t testing.TB, path string, r Run, evs []Event) int64 {
	t.Helper()
	s, id := begin(t, path, r)
	defer func() {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	w := s.NewWriter(id)
	for i := range evs {
		if err := w.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.EndRun(id, r.Started+1000, true, "ok"); err != nil {
		t.Fatal(err)
	}
	return id
}

func open(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// query runs q on s's database and returns its rows as strings (see
// sqltest.Rows).
func query(t testing.TB, s *Store, q string, args ...any) []string {
	t.Helper()
	return sqltest.Rows(t, s.DB(), q, args...)
}

// wantRows checks the rows q gives for run id against want; table names
// them in the error.
func wantRows(t *testing.T, s *Store, table, q string, id int64, want []string) {
	t.Helper()
	if got := query(t, s, q, id); !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", table, got, want)
	}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	run := Run{
		Algorithm: "ricart-agrawala", Nodes: 3, Seed: 1<<64 - 5, Mode: "sim",
		Params: json.RawMessage(`{"entries":2}`), Faults: json.RawMessage(`["drop 0.1"]`),
		ToolVersion: "v0.1.0", Started: 1000, Names: []string{"alpha", "beta", "gamma"},
	}
	e1 := cs(0, 1, KindCSRequest, "cs", 10)
	e1.VC = VC{1, 0, 0}
	e2 := withDetail(send(0, 2, 1, MsgID(0, 1), "request", 11), `{"ts":1}`)
	e2.VC = VC{2, 0, 0}
	e3 := withDetail(recv(1, 1, 0, MsgID(0, 1), "request", 12), `{"ts":1}`)
	e3.VC = VC{2, 1, 0}
	e4 := ev(2, 1, Kind("custom_kind"), 13) // unknown kind, no clocks
	e4.Lamport = 0
	e5 := withDetail(ev(1, 2, KindInternal, 14), `not json`)
	evs := []Event{e1, e2, e3, e4, e5}
	id := record(t, path, run, evs)

	s := open(t, path)
	runs, err := s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	want := run
	want.ID, want.Ended, want.Complete, want.Status = id, 2000, true, "ok"
	if len(runs) != 1 || !reflect.DeepEqual(runs[0], want) {
		t.Fatalf("Runs() = %+v\nwant %+v", runs, want)
	}
	got, err := s.AllEvents(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(evs) {
		t.Fatalf("got %d events, want %d", len(got), len(evs))
	}
	for i := range evs {
		w := evs[i]
		w.Run = id
		w.ID = got[i].ID
		if i > 0 && got[i].ID <= got[i-1].ID {
			t.Errorf("event ids not increasing: %d after %d", got[i].ID, got[i-1].ID)
		}
		if i == 4 {
			w.Detail = json.RawMessage(`"not json"`) // kept, as a JSON string
		}
		if !reflect.DeepEqual(got[i], w) {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got[i], w)
		}
	}
	msgs := query(t, s, `SELECT id, type, sender, receiver, send_event, recv_event, fate FROM messages`)
	wantMsg := []string{fmt.Sprintf("%d|request|0|1|%d|%d|delivered", MsgID(0, 1), got[1].ID, got[2].ID)}
	if !reflect.DeepEqual(msgs, wantMsg) {
		t.Errorf("messages = %q, want %q", msgs, wantMsg)
	}
	// NULLs where the schema promises them.
	nulls := query(t, s, `SELECT vc IS NULL, msg IS NULL, msg_type IS NULL, peer IS NULL, resource IS NULL, detail IS NULL
		FROM events WHERE kind = 'custom_kind'`)
	if !reflect.DeepEqual(nulls, []string{"1|1|1|1|1|1"}) {
		t.Errorf("NULL columns of an event without them: %q", nulls)
	}
	if seed := query(t, s, `SELECT seed FROM runs WHERE seed = '18446744073709551611'`); len(seed) != 1 {
		t.Errorf("seed as text: %q", seed)
	}
}

func TestAppendRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	a := record(t, path, Run{Algorithm: "bully", Nodes: 2, Mode: "sim"}, []Event{ev(0, 1, KindStart, 1)})
	b := record(t, path, Run{Algorithm: "ring", Nodes: 2, Mode: "sim"}, []Event{ev(1, 1, KindStart, 1), ev(0, 1, KindStart, 2)})
	s := open(t, path)
	runs, err := s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != a || runs[1].ID != b || runs[1].Algorithm != "ring" {
		t.Fatalf("runs = %+v", runs)
	}
	for id, n := range map[int64]int{a: 1, b: 2} {
		evs, err := s.AllEvents(id)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != n {
			t.Errorf("run %d: %d events, want %d", id, len(evs), n)
		}
	}
	if got := query(t, s, `SELECT algorithm FROM runs WHERE seed = 0 ORDER BY id`); len(got) != 2 {
		t.Errorf("runs with seed = 0 (an integer literal): %q", got)
	}
	if _, err := s.Events(99); err == nil || !strings.Contains(err.Error(), "no run 99") {
		t.Errorf("Events(99) = %v, want no run 99", err)
	}
}

func TestNoSideFilesAfterClose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.db")
	s, id := begin(t, path, Run{Algorithm: "central", Nodes: 2, Mode: "sim"})
	w := s.NewWriter(id)
	for i := int64(1); i <= 10000; i++ {
		e := ev(int(i%2), (i+1)/2, KindInternal, i)
		w.Add(&e)
	}
	// Not closing w: Store.Close closes the Writers left open.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Count() != 10000 {
		t.Errorf("stored %d events, want 10000", w.Count())
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Errorf("%s remains after Close", path+suffix)
		}
	}
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("no sqlite3 command to check read-only opening")
	}
	out, err := exec.Command(sqlite, "-readonly", path,
		"PRAGMA journal_mode; SELECT count(*) FROM events; PRAGMA quick_check;").CombinedOutput()
	if err != nil || string(out) != "delete\n10000\nok\n" {
		t.Errorf("sqlite3 -readonly: %v\n%s", err, out)
	}
}

func TestViews(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	evs := []Event{
		cs(0, 1, KindCSRequest, "cs", 100),
		cs(1, 1, KindCSRequest, "cs", 110),
		cs(0, 2, KindCSEnter, "cs", 150),
		cs(0, 3, KindCSExit, "cs", 170),
		cs(1, 2, KindCSEnter, "cs", 180),
		cs(0, 4, KindCSRequest, "cs", 200), // never entered
		cs(1, 3, KindCSExit, "cs", 190),
		cs(1, 4, KindCSRequest, "other", 195),
		withDetail(ev(2, 1, KindElectionStart, 300), `{"election":7}`),
		withDetail(ev(2, 2, KindLeader, 310), `{"leader":2,"term":7}`),
		func() Event { e := ev(3, 1, KindLeader, 320); e.Peer = 2; return e }(),
	}
	id := record(t, path, Run{Algorithm: "bully", Nodes: 4, Mode: "sim"}, evs)
	s := open(t, path)
	wantRows(t, s, "cs_intervals", `SELECT proc, resource, entry, wait_ns, hold_ns, request_lamport, enter_lamport, exit_lamport,
		enter_event IS NULL, exit_event IS NULL FROM cs_intervals WHERE run = ? ORDER BY proc, resource, entry`, id, []string{
		"0|cs|1|50|20|1|2|3|0|0",
		"0|cs|2|NULL|NULL|4|NULL|NULL|1|1",
		"1|cs|1|70|10|1|2|3|0|0",
		"1|other|1|NULL|NULL|4|NULL|NULL|1|1",
	})
	wantRows(t, s, "elections", `SELECT proc, kind, leader, term, wall_ns FROM elections WHERE run = ? ORDER BY wall_ns`, id,
		[]string{"2|start|NULL|7|300", "2|decide|2|7|310", "3|decide|2|NULL|320"})
}

func TestSetProcNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	s, id := begin(t, path, Run{Algorithm: "imported", Nodes: 3, Mode: "import"})
	defer s.Close()
	if err := s.SetProcNames(id, []string{"a", "b", "c"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetProcNames(id, []string{"a", "B"}); err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Names, []string{"a", "B", "c"}) {
		t.Errorf("names = %q", r.Names)
	}
	if err := s.EndRun(id+1, 0, true, "ok"); err == nil {
		t.Errorf("EndRun of a run that does not exist: no error")
	}
}

// TestKilledWriter: a process killed while recording leaves a trace that
// opens and holds every event it committed, in a run marked incomplete,
// which readers tell abandoned (while the recorder lived, running); the
// next Create and Close of the file settle it.
func TestKilledWriter(t *testing.T) {
	if path := os.Getenv("DMX_TRACE_KILLED_WRITER"); path != "" {
		s, err := Create(path)
		if err != nil {
			fmt.Println("error", err)
			return
		}
		id, _ := s.BeginRun(Run{Algorithm: "ring", Nodes: 3, Mode: "udp"})
		w := s.NewWriter(id)
		for p := 0; p < 3; p++ {
			for _, e := range chatter(p, 3, 1000) {
				w.Add(&e)
			}
		}
		if err := w.Flush(); err != nil {
			fmt.Println("error", err)
			return
		}
		fmt.Println("flushed", id)
		time.Sleep(time.Minute)
		return
	}
	path := filepath.Join(t.TempDir(), "t.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriter$")
	cmd.Env = append(os.Environ(), "DMX_TRACE_KILLED_WRITER="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id int64
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "flushed %d", &id); err == nil {
			break
		}
		t.Log(sc.Text())
	}
	if id == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the recording process did not flush")
	}
	// While its recorder lives, the run is running.
	if s, err := Open(path); err != nil {
		t.Error(err)
	} else {
		if r, err := s.Run(id); err != nil || r.Status != StatusRunning {
			t.Errorf("run being recorded: %+v, %v", r, err)
		}
		s.Close()
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Logf("no WAL left by the killed process (%v)", err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	checkChatter(t, s, id, 3, 1000)
	r, err := s.Run(id)
	if err != nil || r.Complete || r.Status != StatusAbandoned || r.Ended != 0 {
		t.Errorf("run of the killed process: %+v, %v", r, err)
	}
	s.Close()
	s, err = Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Errorf("%s remains after Create and Close", path+suffix)
		}
	}
}

// TestCSIntervalsAfterCrash: a crash abandons the process's pending request
// and the section it holds; after recovery the entry is made again. The
// rows of the view pair each request with the enter and exit that answered
// it, not with the k-th ones of the whole run.
func TestCSIntervalsAfterCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	evs := []Event{
		cs(0, 1, KindCSRequest, "cs", 100),
		cs(0, 2, KindCSEnter, "cs", 110),
		ev(0, 3, KindCrash, 120), // holding cs: the section is abandoned
		ev(0, 4, KindRecover, 200),
		cs(0, 5, KindCSRequest, "cs", 210),
		ev(0, 6, KindCrash, 220), // waiting: the request is abandoned
		ev(0, 7, KindRecover, 300),
		cs(0, 8, KindCSRequest, "cs", 310),
		cs(0, 9, KindCSEnter, "cs", 330),
		cs(0, 10, KindCSExit, "cs", 340),
		cs(1, 1, KindCSRequest, "cs", 150),
		cs(1, 2, KindCSEnter, "cs", 160),
		cs(1, 3, KindCSExit, "cs", 170),
	}
	id := record(t, path, Run{Algorithm: "central", Nodes: 2, Mode: "sim"}, evs)
	s := open(t, path)
	wantRows(t, s, "cs_intervals", `SELECT proc, entry, request_ns, enter_ns, exit_ns, wait_ns, hold_ns
		FROM cs_intervals WHERE run = ? ORDER BY proc, entry`, id, []string{
		"0|1|100|110|NULL|10|NULL",
		"0|2|210|NULL|NULL|NULL|NULL",
		"0|3|310|330|340|20|10",
		"1|1|150|160|170|10|10",
	})
}

// TestShortName: long names are shortened, distinct ones stay distinct,
// the same one gives the same short name.
func TestShortName(t *testing.T) {
	a, b := strings.Repeat("r", 5_000_000), strings.Repeat("r", 4_999_999)+"x"
	if ShortName("cs") != "cs" || ShortName(strings.Repeat("é", MaxName/2)) != strings.Repeat("é", MaxName/2) {
		t.Error("a short name was changed")
	}
	sa, sb := ShortName(a), ShortName(b)
	if sa == sb || sa != ShortName(strings.Clone(a)) || len(sa) > MaxName || !strings.HasSuffix(sa, "(5000000 bytes)") {
		t.Errorf("ShortName: %q and %q", sa, sb)
	}
	if s := ShortName(strings.Repeat("é", 1000)); !utf8.ValidString(s) {
		t.Errorf("not UTF-8: %q", s)
	}
}

func TestFaultKinds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`[]`, nil},
		{``, nil},
		{`not json`, nil},
		{`["pause:2@10ms-20ms","crash:1@5ms","recover:1@+5ms","pause:leader@1s-2s","heal@3s"]`, []string{"crash", "heal", "pause", "recover"}},
	} {
		if got := (Run{Faults: json.RawMessage(c.in)}).FaultKinds(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("FaultKinds of %s = %v, want %v", c.in, got, c.want)
		}
	}
}

package trace

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mergeInputs makes two traces: a with two runs (one with a crash that
// loses a message, one with a drop) and sparse run ids, b with one run
// whose processes have names.
func mergeInputs(t *testing.T, dir string) (a, b string) {
	a, b = filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	record(t, a, Run{Algorithm: "central", Nodes: 2, Seed: 7, Mode: "sim", Started: 1, Faults: []byte(`["crash:1@5ms"]`)}, []Event{
		ev(0, 1, KindStart, 1), send(0, 2, 1, MsgID(0, 1), "request", 2), ev(1, 1, KindStart, 1),
		recv(1, 2, 0, MsgID(0, 1), "request", 3), send(1, 3, 0, MsgID(1, 1), "grant", 4), ev(1, 4, KindCrash, 5),
	})
	record(t, a, Run{Algorithm: "central", Nodes: 2, Seed: 8, Mode: "sim", Started: 2}, []Event{
		send(0, 1, 1, MsgID(0, 1), "request", 2), drop(0, 2, 1, MsgID(0, 1), "request", 2),
		withDetail(cs(1, 1, KindCSRequest, "cs", 3), `{"n":1}`),
	})
	// A hole in a's run ids: runs renumbered densely all the same.
	s, err := Create(a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec(`UPDATE runs SET id = 5 WHERE id = 2; UPDATE events SET run = 5 WHERE run = 2; UPDATE messages SET run = 5 WHERE run = 2`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	id := record(t, b, Run{Algorithm: "shiviz", Nodes: 2, NoSeed: true, Mode: "import", Started: 3}, []Event{
		send(0, 1, 1, MsgID(0, 1), "m", 1), recv(1, 1, 0, MsgID(0, 1), "m", 2),
	})
	s, err = Create(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetProcNames(id, []string{"alpha", "beta"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return a, b
}

// runRows returns every row of the runs of s, each table's rows keyed by
// the run's position (1st, 2nd, ...), without ids that a merge changes.
func runRows(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	for i, id := range query(t, s, `SELECT id FROM runs ORDER BY id`) {
		k := string(rune('A' + i))
		for _, r := range query(t, s, `SELECT algorithm, nodes, seed, mode, params, faults, tool_version, started_ns, ended_ns, complete, status FROM runs WHERE id = ?`, id) {
			out = append(out, k+" run "+r)
		}
		for _, r := range query(t, s, `SELECT proc, name FROM procs WHERE run = ? ORDER BY proc`, id) {
			out = append(out, k+" proc "+r)
		}
		for _, r := range query(t, s, `SELECT proc, seq, kind, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail FROM events WHERE run = ? ORDER BY id`, id) {
			out = append(out, k+" event "+r)
		}
		for _, r := range query(t, s, `SELECT m.id, type, sender, receiver, s.proc || '#' || s.seq, r.proc || '#' || r.seq, fate FROM messages m
			LEFT JOIN events s ON s.id = m.send_event LEFT JOIN events r ON r.id = m.recv_event WHERE m.run = ? ORDER BY m.id`, id) {
			out = append(out, k+" message "+r)
		}
	}
	return out
}

// TestMergeKeepsEverything: merged, two traces' runs come in order,
// renumbered 1..3, with every row as it was (the messages pointing at
// the same events, fates and process names kept), and counted.
func TestMergeKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	a, b := mergeInputs(t, dir)
	out := filepath.Join(dir, "out.db")
	s, err := Create(out)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := s.Merge([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if counts[0] != (MergeCounts{Runs: 2, Events: 9, Messages: 3}) || counts[1] != (MergeCounts{Runs: 1, Procs: 2, Events: 2, Messages: 1}) {
		t.Errorf("counts: %+v", counts)
	}
	want := append(runRows(t, open(t, a)), runRows(t, open(t, b))...)
	// b's run is the third of the merged trace.
	for i, r := range want {
		if i >= len(runRows(t, open(t, a))) {
			want[i] = "C" + r[1:]
		}
	}
	m := open(t, out)
	if got := runRows(t, m); !slices.Equal(got, want) {
		t.Errorf("merged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ids := query(t, m, `SELECT id FROM runs ORDER BY id`); !slices.Equal(ids, []string{"1", "2", "3"}) {
		t.Errorf("run ids %v, want 1 2 3", ids)
	}
	if fates := query(t, m, `SELECT fate FROM messages ORDER BY run, id`); !slices.Equal(fates, []string{"delivered", "lost_to_crash", "dropped", "delivered"}) {
		t.Errorf("fates %v", fates)
	}
}

// TestMergeRefuses: an input of another schema, and one with a run
// being recorded, are refused before anything is copied.
func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	a, b := mergeInputs(t, dir)
	odd := filepath.Join(dir, "odd.db")
	record(t, odd, Run{Algorithm: "x", Nodes: 1, Mode: "sim"}, []Event{ev(0, 1, KindStart, 1)})
	s, _ := Create(odd)
	if _, err := s.DB().Exec(`ALTER TABLE events ADD COLUMN colour TEXT`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	newer := filepath.Join(dir, "newer.db")
	record(t, newer, Run{Algorithm: "x", Nodes: 1, Mode: "sim"}, []Event{ev(0, 1, KindStart, 1)})
	s, _ = Create(newer)
	s.DB().Exec(`PRAGMA user_version = 9`)
	s.Close()
	live := filepath.Join(dir, "live.db")
	ls, err := Create(live)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ls.BeginRun(Run{Algorithm: "x", Nodes: 1, Mode: "sim"}); err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	for _, c := range []struct {
		in   string
		want string
	}{
		{odd, "table events has a column this dmx does not know: colour TEXT"},
		{newer, "trace schema version 9, not 1"},
		{live, "run 1 is still being recorded"},
	} {
		out := filepath.Join(dir, "out-"+filepath.Base(c.in))
		s, err := Create(out)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Merge([]string{a, b, c.in})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("merge with %s: %v, want %q", c.in, err, c.want)
		}
		if n := query(t, s, `SELECT count(*) FROM runs`); n[0] != "0" {
			t.Errorf("merge with %s copied %s runs before refusing", c.in, n[0])
		}
		s.Close()
	}
}

package trace

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunWriterAsWriter: a run written whole by a RunWriter has the rows
// a Writer and EndRun give it: events, messages and their fates (a
// crash's lost message settled), the runs row.
func TestRunWriterAsWriter(t *testing.T) {
	dir := t.TempDir()
	r := Run{Algorithm: "central", Nodes: 2, Seed: 7, Mode: "sim", Started: 1, Faults: []byte(`["crash:1@5ms"]`)}
	evs := []Event{
		ev(0, 1, KindStart, 1), send(0, 2, 1, MsgID(0, 1), "request", 2), ev(1, 1, KindStart, 1),
		recv(1, 2, 0, MsgID(0, 1), "request", 3), send(1, 3, 0, MsgID(1, 1), "grant", 4), ev(1, 4, KindCrash, 5),
		withDetail(cs(0, 3, KindCSRequest, "cs", 6), `not json`),
	}
	a := filepath.Join(dir, "a.db")
	record(t, a, r, evs)
	b := filepath.Join(dir, "b.db")
	s, err := Create(b)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.NewRunWriter()
	if err != nil {
		t.Fatal(err)
	}
	r.Ended, r.Complete, r.Status = r.Started+1000, true, "ok"
	for range 2 {
		if _, err := w.Write(r, evs); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write(Run{Algorithm: "x", Mode: "sim"}, nil); err == nil || !strings.Contains(err.Error(), "give its status") {
		t.Errorf("a run without status: %v", err)
	}
	w.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := runRows(t, open(t, a))
	got := runRows(t, open(t, b))
	if len(got) != 2*len(want) {
		t.Fatalf("RunWriter:\n%s\nWriter:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	second := make([]string, len(want))
	for i, g := range got[len(want):] {
		second[i] = "A" + g[1:] // the second run, as the first
	}
	if !slices.Equal(got[:len(want)], want) || !slices.Equal(second, want) {
		t.Errorf("RunWriter:\n%s\nWriter:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

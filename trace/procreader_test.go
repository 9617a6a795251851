package trace

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"
)

// TestProcEvents: the readers of one process's events (from a sequence
// number on, or of one kind) and the lookup of sends, in a file of two
// runs, read that run's events only.
func TestProcEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	record(t, path, Run{Algorithm: "central", Nodes: 2, Mode: "sim"}, []Event{ev(0, 1, KindStart, 1), send(0, 2, 1, 7, "x", 2)})
	id := record(t, path, Run{Algorithm: "central", Nodes: 2, Mode: "sim"}, []Event{
		ev(0, 1, KindStart, 1), ev(1, 1, KindStart, 1), send(0, 2, 1, 7, "request", 2), drop(0, 3, 1, 7, "request", 3),
		send(0, 4, 1, 8, "request", 4), recv(1, 2, 0, 8, "request", 5), send(1, 3, 0, 9, "grant", 6), recv(0, 5, 1, 9, "grant", 7),
	})
	s := open(t, path)
	refs := func(r *EventReader, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out []string
		for {
			e, err := r.Next()
			if err == io.EOF {
				return fmt.Sprint(out)
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Run != id {
				t.Fatalf("%v of run %d, want %d", e, e.Run, id)
			}
			out = append(out, e.Ref().String())
		}
	}
	for _, c := range []struct {
		name, got, want string
	}{
		{"P0 from 1", refs(s.ProcEvents(id, 0, 1)), "[P0#1 P0#2 P0#3 P0#4 P0#5]"},
		{"P0 from 4", refs(s.ProcEvents(id, 0, 4)), "[P0#4 P0#5]"},
		{"P1 from 9", refs(s.ProcEvents(id, 1, 9)), "[]"},
		{"P0's drops", refs(s.ProcEventsOfKind(id, 0, KindDrop)), "[P0#3]"},
		{"P1's sends", refs(s.ProcEventsOfKind(id, 1, KindSend)), "[P1#3]"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %s, want %s", c.name, c.got, c.want)
		}
	}
	l, err := s.Sends(id)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for msg, want := range map[int64]string{7: "P0#2", 8: "P0#4", 9: "P1#3", 10: ""} {
		e, err := l.Send(msg)
		got := ""
		if e != nil {
			got = e.Ref().String()
			if e.Kind != KindSend || e.Msg != msg || e.Run != id {
				t.Errorf("send of %d: %+v", msg, e)
			}
		}
		if err != nil || got != want {
			t.Errorf("send of message %d: %q, %v; want %q", msg, got, err, want)
		}
	}
}

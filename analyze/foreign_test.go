package analyze

import (
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// The tests of this file come from traces shaped like other systems' (rows
// stored in another order, several election instances, multicasts to a
// subgroup, logs without wall times): each failed before the fix it names.

// TestRowsOutOfSeqOrder: the schema says id is only insertion order; the
// walk orders each process's events by seq. A trace whose rows of one
// process come out of seq order is the same trace.
func TestRowsOutOfSeqOrder(t *testing.T) {
	b := newBuilder(3)
	raRun(b)
	want, err := Evaluate(b.Run(true), b.Reader(), All)
	if err != nil {
		t.Fatal(err)
	}
	for name, reorder := range map[string]func([]trace.Event) []trace.Event{
		"two rows of one process swapped": func(ev []trace.Event) []trace.Event {
			i := slices.IndexFunc(ev, func(e trace.Event) bool { return e.Proc == 0 && e.Seq == 2 })
			j := slices.IndexFunc(ev, func(e trace.Event) bool { return e.Proc == 0 && e.Seq == 3 })
			ev[i], ev[j] = ev[j], ev[i]
			return ev
		},
		"every process's rows reversed": func(ev []trace.Event) []trace.Event {
			slices.Reverse(ev)
			return ev
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := b.Reader()
			r.Events = reorder(r.Events)
			got, err := Evaluate(b.Run(true), r, All)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			for i := range want {
				if got[i].Verdict != want[i].Verdict || got[i].Note != want[i].Note {
					t.Errorf("%s: %s %q, want %s %q", got[i].Check, got[i].Verdict, got[i].Note, want[i].Verdict, want[i].Note)
				}
			}
		})
	}
}

// brokenErr runs every check over the builder's events as edit leaves
// them and returns the error.
func brokenErr(t *testing.T, b *builder, edit func([]trace.Event) []trace.Event) string {
	t.Helper()
	r := b.Reader()
	if edit != nil {
		r.Events = edit(r.Events)
	}
	_, err := Evaluate(b.Run(true), r, All)
	if err == nil {
		t.Fatal("Evaluate: no error")
	}
	return err.Error()
}

// TestNeverSentReportedOnce: a receive of a message never sent parks its
// process; the others that wait for its later messages are not causal
// cycles, and the cause is reported once.
func TestNeverSentReportedOnce(t *testing.T) {
	b := newBuilder(4)
	lost := b.Send(0, 1, "x")
	b.Recv(1, lost)
	for p := 2; p < 4; p++ {
		b.Recv(p, b.Send(1, p, "y"))
	}
	got := brokenErr(t, b, func(ev []trace.Event) []trace.Event { return ev[1:] }) // the send is gone
	want := "broken trace: P1#1 receive(x from P0) receives message 1, which was never sent (2 receives wait behind it: P2#1, P3#1)"
	if got != want {
		t.Errorf("error\n\t%s\nwant\n\t%s", got, want)
	}
}

// TestReceivedByAnother: a message received by a process it was not
// addressed to, after its addressee received it, is no duplicated
// delivery: the trace is broken, and the error names the event.
func TestReceivedByAnother(t *testing.T) {
	b := newBuilder(3)
	m := b.Send(0, 1, "x")
	b.Recv(1, m)
	b.Recv(1, m) // a duplicated delivery: fine
	b.Recv(2, m)
	got := brokenErr(t, b, nil)
	want := "broken trace: P2#1 receive(x from P0) receives message 1, which P1 received before: a message reaches one process (a second receive there is a duplicated delivery)"
	if got != want {
		t.Errorf("error\n\t%s\nwant\n\t%s", got, want)
	}
	if !strings.Contains(got, "P2#1") {
		t.Error("the error does not name the event")
	}
}

// noWall removes the wall times of the builder's events: logs without
// timestamps.
func noWall(b *builder) {
	for i := range b.events {
		b.events[i].Wall = 0
	}
}

// TestNoWallTimes: a check that lacks the data it needs is skipped, and a
// skipped check does not make the verdict inconclusive; one with nothing to
// check is ok.
func TestNoWallTimes(t *testing.T) {
	verdicts := func(results []Result) map[string]Verdict {
		m := map[string]Verdict{}
		for _, r := range results {
			m[r.Check] = r.Verdict
		}
		return m
	}
	t.Run("no critical sections", func(t *testing.T) {
		b := newBuilder(2)
		b.Recv(1, b.Send(0, 1, "x"))
		noWall(b)
		results, err := Evaluate(b.Run(true), b.Reader(), All)
		if err != nil {
			t.Fatal(err)
		}
		if v := verdicts(results)["mutex-realtime"]; v != OK {
			t.Errorf("mutex-realtime: %s, want ok", v)
		}
		if v := Summarize(results); v != OK {
			t.Errorf("verdict %s, want ok: %v", v, results)
		}
	})
	t.Run("a clean lock log", func(t *testing.T) {
		b := newBuilder(3)
		raRun(b)
		noWall(b)
		results, err := Evaluate(b.Run(true), b.Reader(), All)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if r.Check == "mutex-realtime" && (r.Verdict != Skipped || r.Note != "no wall times: 2 critical sections on 1 resource not checked in wall time") {
				t.Errorf("mutex-realtime: %s %q, want skipped", r.Verdict, r.Note)
			}
		}
		if v := Summarize(results); v != OK {
			t.Errorf("verdict %s, want ok: %v", v, results)
		}
	})
	t.Run("required", func(t *testing.T) {
		b := newBuilder(3)
		raRun(b)
		noWall(b)
		results, err := Evaluate(b.Run(true), b.Reader(), All, WithRequire("mutex-realtime"))
		if err != nil {
			t.Fatal(err)
		}
		if v := verdicts(results)["mutex-realtime"]; v != Unknown {
			t.Errorf("mutex-realtime: %s, want unknown", v)
		}
		if v := Summarize(results); v != Unknown {
			t.Errorf("verdict %s, want unknown", v)
		}
	})
}

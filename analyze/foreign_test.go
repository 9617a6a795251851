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

package analyze

import (
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// Wait records a wait event: p now waits for set on res (empty: no longer).
func (b *builder) Wait(p int, res string, set ...int) trace.Ref {
	return b.emit(p, trace.KindWait, func(ev *trace.Event) {
		ev.Resource = res
		ev.Detail = trace.EncodeDetail(trace.Wait{WaitingFor: set})
	})
}

func (b *builder) Recover(p int) trace.Ref { return b.emit(p, trace.KindRecover, nil) }

// nestedDeadlock is seed 001's resource deadlock: P0 holds printer and asks
// for scanner, P1 holds scanner and asks for printer (no wait events: the
// holders alone make the cycle).
func nestedDeadlock(b *builder) { crossedHolds(b, 0, 1, "printer", "scanner") }

// crossedHolds: p holds r and q holds s; then p asks for s and q for r.
func crossedHolds(b *builder, p, q int, r, s string) {
	b.Request(p, r)
	b.Enter(p, r)
	b.Request(q, s)
	b.Enter(q, s)
	b.Request(p, s)
	b.Request(q, r)
}

// waitForEachOther: P0 and P1 ask for cs, and each waits for the other.
func waitForEachOther(b *builder) {
	b.Request(0, "cs")
	b.Request(1, "cs")
	b.Wait(0, "cs", 1)
	b.Wait(1, "cs", 0)
}

func TestDeadlock(t *testing.T) {
	tests := []struct {
		name       string
		n          int
		build      func(b *builder)
		incomplete bool
		want       Verdict
		finding    []string // substrings of the first finding (or of the note if unknown)
	}{
		{name: "ricart-agrawala without contention", n: 3, build: raRun, want: OK},
		{
			name: "resource deadlock from holders", n: 2, build: nestedDeadlock, want: Violated,
			finding: []string{"deadlock on printer, scanner among P0, P1 since P1#3",
				"P0 (P0#3 cs_request(scanner)) waits for P1 (holds scanner since P1#2 cs_enter(scanner))",
				"P1 (P1#3 cs_request(printer)) waits for P0 (holds printer since P0#2 cs_enter(printer))"},
		},
		{
			name: "resource deadlock in an incomplete run is unknown", n: 2, build: nestedDeadlock, incomplete: true, want: Unknown,
			finding: []string{"the run is incomplete", "deadlock on printer, scanner among P0, P1"},
		},
		{
			// Seed 001's Maekawa example: P1 waits for P3, P3 for P4, P4
			// for P2, P2 for P1 (numbered from 0 here), through wait sets.
			name: "voting deadlock from wait sets", n: 4, want: Violated,
			build: func(b *builder) {
				for p := range 4 {
					b.Request(p, "cs")
				}
				b.Wait(0, "cs", 2)
				b.Wait(2, "cs", 3)
				b.Wait(3, "cs", 1)
				b.Wait(1, "cs", 0)
			},
			finding: []string{"among P0, P1, P2, P3 since P1#2", "P0 (P0#1 cs_request(cs)) waits for P2 (P0#2 wait(cs) [2])"},
		},
		{
			// While P1's reply is in flight P0 and P1 wait for each other;
			// the reply arrives and P0 enters: transient, no deadlock.
			name: "transient cycle resolved", n: 2, want: OK,
			build: func(b *builder) {
				waitForEachOther(b)
				ok := b.Send(1, 0, "ok")
				b.Recv(0, ok)
				b.Wait(0, "cs")
				b.Enter(0, "cs")
				b.Exit(0, "cs")
				ok2 := b.Send(0, 1, "ok")
				b.Recv(1, ok2)
				b.Wait(1, "cs")
				b.Enter(1, "cs")
				b.Exit(1, "cs")
			},
		},
		{
			// A cycle P0 <-> P1 and P2 waiting on it: P2 is stuck but not
			// on the cycle.
			name: "waiting on a cycle is not on it", n: 3, want: Violated,
			build: func(b *builder) {
				nestedDeadlock(b)
				b.Request(2, "printer")
			},
			finding: []string{"among P0, P1 since"},
		},
		{
			// A crash cancels the requests and ends the holdings: the
			// others wait for a dead process, which liveness reports, not
			// a cycle.
			name: "crash breaks the cycle", n: 2, want: OK,
			build: func(b *builder) {
				nestedDeadlock(b)
				b.Crash(1)
			},
		},
		{
			name: "withdrawn wait edge", n: 2, want: OK,
			build: func(b *builder) {
				waitForEachOther(b)
				b.Wait(1, "cs")
			},
		},
		{
			// A Maekawa voter names whom it voted for while it wants
			// nothing itself: its queued requesters wait, through it, for
			// that holder. A process that records that it waits is
			// blocked (it used not to be, and a cycle through a voter
			// that wanted nothing went unseen).
			name: "a voter's wait is an edge", n: 2, want: Violated,
			build: func(b *builder) {
				b.Wait(0, "cs", 1)
				b.Request(1, "cs")
				b.Wait(1, "cs", 0)
			},
			finding: []string{"deadlock on cs among P0, P1 since P1#2: P0 waits for P1 (P0#1 wait(cs) [1]); P1 (P1#1 cs_request(cs)) waits for P0 (P1#2 wait(cs) [0])"},
		},
		{
			name: "two deadlocks", n: 4, want: Violated,
			build:   twoDeadlocks,
			finding: []string{"deadlock on printer, scanner among P0, P1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder(tt.n)
			tt.build(b)
			res := runOne(t, b, !tt.incomplete, Deadlock)
			if res.Verdict != tt.want {
				t.Fatalf("verdict %s, want %s: %+v", res.Verdict, tt.want, res)
			}
			text := said(res)
			for _, s := range tt.finding {
				if !strings.Contains(text, s) {
					t.Errorf("%q\ndoes not contain %q", text, s)
				}
			}
		})
	}
}

func TestDeadlockTwoFindings(t *testing.T) {
	b := newBuilder(4)
	twoDeadlocks(b)
	res := runOne(t, b, true, Deadlock)
	if len(res.Findings) != 2 || !strings.Contains(res.Findings[1].Message, "deadlock on a, b among P2, P3") {
		t.Fatalf("want two deadlocks, the second on a, b: %+v", res.Findings)
	}
	// The events: each process's request, then the events of its edges.
	want := []trace.Ref{{Proc: 2, Seq: 3}, {Proc: 3, Seq: 2}, {Proc: 3, Seq: 3}, {Proc: 2, Seq: 2}}
	if got := res.Findings[1].Events; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("events %v, want %v", got, want)
	}
}

// WaitAny records a wait event under the OR model: p now waits for any
// one of set on res.
func (b *builder) WaitAny(p int, res string, set ...int) trace.Ref {
	return b.emit(p, trace.KindWait, func(ev *trace.Event) {
		ev.Resource = res
		ev.Detail = trace.EncodeDetail(trace.Wait{WaitingFor: set, Model: trace.WaitAny})
	})
}

// Reference: seed 001, "Modeling Deadlocks": deadlocked iff there is a
// directed cycle (AND model) or a knot (OR model) in the WFG.
func TestDeadlockOR(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		build   func(b *builder)
		and, or Verdict
		finding string // of deadlock-or
	}{
		{
			// P0 waits for the first reply of P1 or P2, P1 for P0 or P2,
			// P2 for P0 or P1: every process any of them waits for is
			// in the group, and blocked.
			name: "knot", n: 3, and: OK, or: Violated,
			build: func(b *builder) {
				b.WaitAny(0, "q", 1, 2)
				b.WaitAny(1, "q", 0, 2)
				b.WaitAny(2, "q", 0, 1)
			},
			finding: "deadlock (a knot: each waits for any one of a set, all of it blocked) on q among P0, P1, P2 since P2#1: P0 waits for P1, P2 (P0#1 wait(q) any of [1 2]); P1 waits for P0, P2 (P1#1 wait(q) any of [0 2]); P2 waits for P0, P1 (P2#1 wait(q) any of [0 1])",
		},
		{
			// A cycle, but P1 may go on with P2's answer, and P2 waits
			// for nobody: no knot.
			name: "cycle that is no knot", n: 3, and: OK, or: OK,
			build: func(b *builder) {
				b.WaitAny(0, "q", 1)
				b.WaitAny(1, "q", 0, 2)
				b.Internal(2)
			},
		},
		{
			// The same cycle under the AND model is a deadlock, and not
			// deadlock-or's.
			name: "AND cycle", n: 3, and: Violated, or: NotApplicable,
			build: func(b *builder) {
				b.Wait(0, "q", 1)
				b.Wait(1, "q", 0, 2)
				b.Internal(2)
			},
		},
		{
			// Mixed: P0 needs P1 (AND), P1 needs P0 or P2 (OR), P2 needs
			// P1 (AND): P1 cannot go on, nor can the others.
			name: "knot with AND waits", n: 3, and: OK, or: Violated,
			build: func(b *builder) {
				b.Request(0, "q")
				b.Wait(0, "q", 1)
				b.WaitAny(1, "q", 0, 2)
				b.Wait(2, "q", 1)
			},
			finding: "among P0, P1, P2 since P2#1",
		},
		{
			name: "knot in an incomplete run", n: 2, and: Unknown, or: Unknown,
			build: func(b *builder) {
				b.WaitAny(0, "q", 1)
				b.WaitAny(1, "q", 0)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder(tt.n)
			tt.build(b)
			complete := tt.or != Unknown
			and, or := runOne(t, b, complete, Deadlock), runOne(t, b, complete, DeadlockOR)
			if and.Verdict != tt.and {
				t.Errorf("deadlock: %s, want %s: %v %s", and.Verdict, tt.and, and.Findings, and.Note)
			}
			if or.Verdict != tt.or {
				t.Errorf("deadlock-or: %s, want %s: %v %s", or.Verdict, tt.or, or.Findings, or.Note)
			}
			if tt.finding != "" && (len(or.Findings) == 0 || !strings.Contains(or.Findings[0].Message, tt.finding)) {
				t.Errorf("deadlock-or: %v\nwant %s", or.Findings, tt.finding)
			}
		})
	}
}

// twoDeadlocks is nestedDeadlock's among P0 and P1 and another among P2
// and P3, on resources a and b.
func twoDeadlocks(b *builder) {
	nestedDeadlock(b)
	crossedHolds(b, 2, 3, "a", "b")
}

package analyze

import (
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

func (b *builder) ElectionStart(p int, term uint64) trace.Ref {
	return b.emit(p, trace.KindElectionStart, func(ev *trace.Event) {
		ev.Detail = trace.EncodeDetail(trace.ElectionStart{Term: term})
	})
}

// Leader records p's decision that leader leads (as dmx's runtime does:
// Peer and detail).
func (b *builder) Leader(p, leader int, term uint64) trace.Ref {
	return b.emit(p, trace.KindLeader, func(ev *trace.Event) {
		ev.Peer = leader
		ev.Detail = trace.EncodeDetail(trace.Leader{Leader: leader, Term: term})
	})
}

// coordinator is the coordinator broadcast of the bully algorithm: from
// declares itself and tells to; each decides at once.
func coordinator(b *builder, from int, term uint64, to ...int) {
	b.Leader(from, from, term)
	ids := b.Multicast(from, "coordinator", to...)
	for i, id := range ids {
		b.Recv(to[i], id)
		b.Leader(to[i], from, term)
	}
}

// bully3 is seed 001's bully election among 3 processes, started by the
// lowest: [RE1] P0 sends election to P1 and P2; [RH1] they answer, [RH2]
// each starts its own election; P2 hears no answer and is the coordinator.
func bully3(b *builder) {
	b.ElectionStart(0, 1)
	e0 := b.Multicast(0, "election", 1, 2)
	b.Recv(1, e0[0])
	a10 := b.Send(1, 0, "answer")
	b.ElectionStart(1, 2)
	e1 := b.Send(1, 2, "election")
	b.Recv(2, e0[1])
	a20 := b.Send(2, 0, "answer")
	b.ElectionStart(2, 2)
	b.Recv(2, e1)
	a21 := b.Send(2, 1, "answer")
	b.Recv(0, a10)
	b.Recv(0, a20)
	b.Recv(1, a21)
	b.emit(2, trace.KindTimeout, nil)
	coordinator(b, 2, 2, 0, 1)
}

// failover: after bully3, P2 crashes; P1's detector notices, P1 starts an
// election, hears nothing, and tells P0.
func failover(b *builder) {
	leaderCrashes(b)
	b.At(200).emit(1, trace.KindTimeout, nil)
	coordinator(b, 1, 3, 0)
}

// leaderCrashes: after bully3, the leader P2 crashes at 100ms and P1 starts
// an election at 150ms.
func leaderCrashes(b *builder) {
	bully3(b)
	b.At(100).Crash(2)
	b.At(150).ElectionStart(1, 3)
}

// tooTightTimeout: after bully3, P1 starts an election and declares itself
// to P0 while P2 is up and still leads (seed 004: a time-out too tight).
func tooTightTimeout(b *builder) {
	bully3(b)
	b.At(150).ElectionStart(1, 3)
	coordinator(b, 1, 3, 0)
}

// leaseHandover: the master P2 leads from 10ms and steps down at stepDown
// (its lease ran out, on its own clock); P1, voted for by P0, leads from
// 350ms; P2 hears P1's renew at heard (after its step-down) and follows it.
func leaseHandover(b *builder, stepDown, heard int64) {
	b.At(10).Leader(2, 2, 1)
	b.Leader(0, 2, 1)
	b.Leader(1, 2, 1)
	if stepDown < 340 {
		b.At(stepDown).Leader(2, -1, 1)
	}
	b.At(340).ElectionStart(1, 2)
	v := b.Send(0, 1, "vote")
	b.At(350).Recv(1, v)
	b.Leader(1, 1, 2)
	b.Leader(0, 1, 2)
	r := b.Send(1, 2, "renew")
	if stepDown >= 340 {
		b.At(stepDown).Leader(2, -1, 1)
	}
	b.At(heard).Recv(2, r)
	b.Leader(2, 1, 2)
}

func TestElectionChecks(t *testing.T) {
	checks := []*Check{Agreement, Validity, SplitBrain, Termination, MutexCausal, MutexRealtime, Liveness, Deadlock}
	// These are bully's traces: seed 001's highest-id rule.
	runCases(t, []checkCase{
		{
			name: "bully without failures", n: 3, build: bully3,
			finding: map[string]string{"agreement": "at the end P0, P1 and P2 follow P2", "termination": "3 election starts, 3 decisions"},
		},
		{
			name: "mutual exclusion trace", n: 3, build: raRun,
			finding: map[string]string{"agreement": "no election events", "validity": "no election events", "split-brain": "no election events", "termination": "no election events"},
		},
		{name: "fail-over", n: 3, build: failover, finding: map[string]string{"agreement": "at the end P0 and P1 follow P1"}},
		{
			// A time-out too tight for the round trip: P1 declares itself
			// while P2 leads (seed 004: "Safety is broken if too tight
			// deadline").
			name: "false suspicion", n: 3,
			build: func(b *builder) {
				bully3(b)
				b.At(150).ElectionStart(1, 3)
				b.At(200).emit(1, trace.KindTimeout, nil)
				coordinator(b, 1, 3, 0)
			},
			want: want{"agreement": Violated, "validity": Violated, "split-brain": Violated, "termination": Violated},
			finding: map[string]string{
				"agreement":   "live processes disagree at the end of the run: P0 and P1 follow P1 (P0#",
				"validity":    "leader(1) at +200ms names P1, but P2 was alive and has a higher id (it never crashed); so does 1 more decision",
				"split-brain": "split brain: P2 and P1 both believed they led: P2 from P2#",
			},
		},
		{
			// After the fail-over P0 never hears of the new coordinator.
			name: "election that does not end", n: 3,
			build: func(b *builder) {
				leaderCrashes(b)
				b.At(200).Leader(1, 1, 3)
				m := b.Send(1, 0, "coordinator") // lost
				b.emit(1, trace.KindDrop, func(ev *trace.Event) { ev.Msg, ev.Peer, ev.MsgType = m, 0, "coordinator" })
			},
			want: want{"termination": Violated},
			finding: map[string]string{
				"termination": "the election started at P1#8 election_start at +149ms did not end: P0's last decision P0#7 leader(2) came before: the coordinator from P1 to P0 (P1#10) was dropped at P1#11 and never delivered",
				"agreement":   "at the end P1 follows P1; 1 live process still followed a crashed leader",
			},
		},
		{
			name: "election that does not end, incomplete run", n: 3, incomplete: true,
			build:   leaderCrashes,
			want:    want{"termination": Unknown},
			finding: map[string]string{"termination": "the run is incomplete: the election started at P1#"},
		},
		{
			name: "a start that never left its process", n: 3,
			build: func(b *builder) {
				bully3(b)
				b.ElectionStart(0, 5)
				b.Crash(0)
			},
		},
		{
			name: "recovered process knows no leader", n: 3,
			build: func(b *builder) {
				bully3(b)
				b.Crash(0)
				b.Recover(0)
				b.At(500).Internal(1) // long after: the election should have ended
			},
			want:    want{"termination": Violated},
			finding: map[string]string{"termination": "P0 decided nothing since it recovered from P0#"},
		},
		{
			name: "two leaders in one term", n: 3,
			build: func(b *builder) {
				b.Leader(0, 2, 7)
				b.Leader(1, 1, 7)
			},
			want:    want{"agreement": Violated, "validity": Violated},
			finding: map[string]string{"agreement": "term 7 has two leaders: P0#1 leader(2) and P1#1 leader(1)"},
		},
		{
			// A foreign trace numbers its elections in "election": the
			// checks read the term as the elections view does, "election"
			// before "term".
			name: "two leaders in one election of a foreign trace", n: 3,
			build: func(b *builder) {
				lead := func(p, l int, detail string) {
					b.emit(p, trace.KindLeader, func(ev *trace.Event) { ev.Peer, ev.Detail = l, []byte(detail) })
				}
				lead(0, 2, `{"leader":2,"election":4,"term":1}`)
				lead(1, 1, `{"leader":1.0,"election":"4","term":2}`)
			},
			want:    want{"agreement": Violated, "validity": Violated},
			finding: map[string]string{"agreement": "term 4 has two leaders: P0#1 leader(2) and P1#1 leader(1)"},
		},
		{
			// P2 broadcasts and crashes; P0 gets the message afterwards.
			name: "decision for a crashed leader", n: 3,
			build: func(b *builder) {
				b.At(10).Leader(2, 2, 1)
				m := b.Send(2, 0, "coordinator")
				b.At(20).Crash(2)
				b.At(30).Recv(0, m)
				b.Leader(0, 2, 1)
			},
			want:    want{"validity": Violated},
			finding: map[string]string{"validity": "P0#2 leader(2) at +21ms names P2, which had crashed at P2#3 at +10ms and not recovered"},
		},
		{
			// Seed 000: a recovered process holds an election and bullies
			// its way in; until its coordinator message arrives it and the
			// old leader both lead, and the old leader's decisions made
			// after the recovery are invalid.
			name: "recovered higher process", n: 3,
			build: func(b *builder) {
				failover(b)
				b.At(300).Recover(2)
				b.At(310).ElectionStart(2, 1)
				b.At(320).Leader(1, 1, 3) // P1 re-declares (a repeated broadcast)
				b.At(400).Leader(2, 2, 1)
				m := b.Multicast(2, "coordinator", 0, 1)
				b.Recv(0, m[0])
				b.Leader(0, 2, 1)
				b.Recv(1, m[1])
				b.Leader(1, 2, 1)
			},
			want: want{"validity": Violated, "split-brain": Violated},
			finding: map[string]string{
				"validity":    "names P1, but P2 was alive and has a higher id (it had recovered at P2#",
				"split-brain": "causally: P1#14 did not happen before P2#13, so a consistent global state has both leading; in wall time: for 6ms from +399ms",
			},
		},
		{
			// Chubby-style leases (seed 001): the master P2 steps down when
			// its lease runs out, on its own clock, and P1 is elected after
			// the voters' promises ran out on theirs. Nothing tells P1 of
			// P2's step-down (a master stalled on a loaded machine renews
			// nothing): they lead one after the other in wall time.
			name: "lease ran out", n: 3,
			build: func(b *builder) { leaseHandover(b, 300, 360) },
			// Chubby elects whoever wins the votes (lease claims no
			// validity).
			want: want{"validity": Violated},
		},
		{
			// The same, but P2's step-down comes late (its timer fired
			// late): both lead from 350ms to 400ms.
			name: "lease ran out late", n: 3,
			build:   func(b *builder) { leaseHandover(b, 400, 410) },
			want:    want{"validity": Violated, "split-brain": Violated},
			finding: map[string]string{"split-brain": "P2 from P2#1 leader(2) until P2#2 no leader and P1 from P1#4 leader(1) to the end of the run; in wall time: for 49ms"},
		},
	}, checks, WithValidity(ValidityHighestID))
}

// checkCase is a run a test builds and the verdicts the checks must give it.
type checkCase struct {
	name       string
	n          int
	build      func(b *builder)
	incomplete bool              // the run did not end normally
	opts       []Option          // the case's own, after the test's
	want       want              // checks not named must be ok
	finding    map[string]string // check -> substring of its first finding (or note)
}

// runCases evaluates checks on each case's run, with opts and the case's
// own, and compares the results with what the case wants (expect).
func runCases(t *testing.T, cases []checkCase, checks []*Check, opts ...Option) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder(tt.n)
			tt.build(b)
			results, err := Evaluate(b.Run(!tt.incomplete), b.Reader(), checks, append(slices.Clip(opts), tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			expect(t, results, tt.want, tt.finding)
		})
	}
}

// expect compares results with the verdicts a test wants (a check not
// named must be ok, or not applicable: the run has nothing it judges; in
// an incomplete run, where no check says ok, unknown) and, for the checks finding names, with a substring of
// the first finding, or of the note if there is none.
func expect(t *testing.T, results []Result, want want, finding map[string]string) {
	t.Helper()
	for _, r := range results {
		w, ok := want[r.Check]
		if !ok {
			w = OK
			if r.Verdict == NotApplicable {
				w = NotApplicable
			}
		}
		if w == OK && r.Verdict == Unknown && strings.HasSuffix(r.Note, "but the run is incomplete") {
			w = Unknown // ok on what the trace holds of an incomplete run
		}
		if r.Verdict != w {
			t.Errorf("%s: %s, want %s: %v %s", r.Check, r.Verdict, w, r.Findings, r.Note)
		}
		sub, ok := finding[r.Check]
		if !ok {
			continue
		}
		if text := said(r); !strings.Contains(text, sub) {
			t.Errorf("%s: %q\ndoes not contain %q", r.Check, text, sub)
		}
	}
}

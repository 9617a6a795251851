package analyze

import (
	"fmt"
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
	want := runChecks(t, b, All)
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
	want := "broken trace: P1#1 receive(x from P0) receives P0's message 1, which was never sent (2 receives wait behind it: P2#1, P3#1)"
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
	want := "broken trace: P2#1 receive(x from P0) receives P0's message 1, which P1 received before: a message reaches one process (a second receive there is a duplicated delivery)"
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

// withoutWall builds build's run as a log without wall times records it.
func withoutWall(build func(b *builder)) func(b *builder) {
	return func(b *builder) {
		build(b)
		noWall(b)
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
		results := runChecks(t, b, All)
		if v := verdicts(results)["mutex-realtime"]; v != NotApplicable {
			t.Errorf("mutex-realtime: %s, want not applicable", v)
		}
		if v := Summarize(results); v != OK {
			t.Errorf("verdict %s, want ok: %v", v, results)
		}
	})
	t.Run("a clean lock log", func(t *testing.T) {
		b := newBuilder(3)
		raRun(b)
		noWall(b)
		results := runChecks(t, b, All)
		for _, r := range results {
			if r.Check == "mutex-realtime" && (r.Verdict != Skipped || r.Note != "no wall times: 2 critical sections on 1 resource not checked") {
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
		results := runChecks(t, b, All, WithRequire("mutex-realtime"))
		if v := verdicts(results)["mutex-realtime"]; v != Unknown {
			t.Errorf("mutex-realtime: %s, want unknown", v)
		}
		if v := Summarize(results); v != Unknown {
			t.Errorf("verdict %s, want unknown", v)
		}
	})
}

// on sets the resource of the builder's last event: the election
// instance, or the lock, it belongs to.
func (b *builder) on(res string) *builder {
	b.events[len(b.events)-1].Resource = res
	return b
}

// shards is a run with one election per shard: P2 leads shard a, P1 leads
// shard b, and everybody knows both.
func shards(b *builder) {
	b.ElectionStart(0, 1)
	b.on("a")
	b.Leader(2, 2, 1)
	b.on("a")
	for _, p := range []int{0, 1} {
		b.Recv(p, b.Send(2, p, "coordinator"))
		b.Leader(p, 2, 1)
		b.on("a")
	}
	b.ElectionStart(1, 1)
	b.on("b")
	b.Leader(1, 1, 1)
	b.on("b")
	for _, p := range []int{0, 2} {
		b.Recv(p, b.Send(1, p, "coordinator"))
		b.Leader(p, 1, 1)
		b.on("b")
	}
}

// TestElectionsPerResource: the election checks judge each resource's
// election on its own; two elections on different resources are not a
// disagreement, and a split brain within one is found and named.
func TestElectionsPerResource(t *testing.T) {
	checks := []*Check{Agreement, Validity, SplitBrain, Termination}
	b := newBuilder(3)
	shards(b)
	results := runChecks(t, b, checks)
	for _, r := range results {
		if r.Verdict != OK {
			t.Errorf("%s: %s, want ok: %v %s", r.Check, r.Verdict, r.Findings, r.Note)
		}
	}

	// On shard a, P0 declares itself too while P2 leads.
	b = newBuilder(3)
	shards(b)
	b.Leader(0, 0, 2)
	b.on("a")
	results = runChecks(t, b, checks)
	for _, r := range results {
		want := OK
		if r.Check == "split-brain" || r.Check == "agreement" {
			want = Violated
		}
		if r.Verdict != want {
			t.Errorf("%s: %s, want %s: %v %s", r.Check, r.Verdict, want, r.Findings, r.Note)
		}
		if r.Check == "split-brain" && len(r.Findings) > 0 {
			if msg := r.Findings[0].Message; !strings.HasPrefix(msg, "on a: split brain: P2 and P0 both believed they led") {
				t.Errorf("split-brain: %s", msg)
			}
		}
	}
}

// TestElectionNumberedElection: a trace that numbers its elections with
// "election" and no "term": two leaders of election 1 are caught.
func TestElectionNumberedElection(t *testing.T) {
	b := newBuilder(3)
	for _, d := range []struct {
		p, leader int
	}{{0, 2}, {1, 1}} {
		b.emit(d.p, trace.KindLeader, func(ev *trace.Event) {
			ev.Peer, ev.Detail = d.leader, fmt.Appendf(nil, `{"leader":%d,"election":1}`, d.leader)
		})
	}
	r := runOne(t, b, true, Agreement)
	if r.Verdict != Violated || len(r.Findings) == 0 || r.Findings[0].Message != "term 1 has two leaders: P0#1 leader(2) and P1#1 leader(1)" {
		t.Errorf("agreement: %s %v", r.Verdict, r.Findings)
	}
}

// TestValidityRules: the weak rule, which a trace of another program gets,
// lets any process that took part lead unless the decider knew it down;
// the highest-id rule is bully's and ring's; a trace may declare its rule.
func TestValidityRules(t *testing.T) {
	lowLeader := func(b *builder) { // P1 leads though P2 is up: fine for lease
		b.Internal(2)
		b.Leader(1, 1, 1)
		b.Recv(0, b.Send(1, 0, "coordinator"))
		b.Leader(0, 1, 1)
	}
	tests := []struct {
		name    string
		build   func(b *builder)
		rule    string  // WithValidity; "" none
		params  string  // the run's params
		verdict Verdict // of validity
		finding string  // its first finding, or its note
	}{
		{name: "lower id, weak rule", build: lowLeader, verdict: OK, finding: "2 decisions checked; rule participant"},
		{name: "lower id, highest-id rule", build: lowLeader, rule: ValidityHighestID, verdict: Violated,
			finding: "P1#1 leader(1) at +1ms names P1, but P2 was alive and has a higher id (it never crashed); so does 1 more decision (P0#2)"},
		{name: "lower id, rule declared by the trace", build: lowLeader, params: `{"validity":"highest-id"}`, verdict: Violated},
		{name: "a rule dmx does not know", build: lowLeader, rule: "oldest", verdict: Unknown},
		{
			name: "leader that took no part", verdict: Violated,
			build:   func(b *builder) { b.Leader(0, 2, 1) },
			finding: "P0#1 leader(2) names P2, which took no part in the run (it recorded no event)",
		},
		{
			// What P0 last heard of P1 is a recovery: P1's later crash
			// reached P0 by no message.
			name: "leader recovered as far as the decider knows", verdict: OK,
			build: func(b *builder) {
				b.Crash(1)
				b.Recover(1)
				b.Recv(2, b.Send(1, 2, "bye"))
				b.Crash(1)
				b.Recv(0, b.Send(2, 0, "news"))
				b.Leader(0, 1, 2)
			},
			finding: "1 decision checked; rule participant",
		},
		{
			// A log that records a crash and goes on: the decider heard
			// of P1 after its crash, and of no recovery.
			name: "leader known to be down", verdict: Violated,
			build: func(b *builder) {
				b.Crash(1)
				b.Recv(0, b.Send(1, 0, "last words"))
				b.Leader(0, 1, 1)
			},
			finding: "P0#2 leader(1) at +3ms names P1, which P0 knew to be down: its crash P1#1 happened before the decision",
		},
		{
			name: "leader the decider suspects", verdict: Violated,
			build: func(b *builder) {
				b.Internal(1)
				b.emit(0, trace.KindSuspect, func(ev *trace.Event) { ev.Peer = 1 })
				b.Leader(0, 1, 1)
				b.emit(0, trace.KindTrust, func(ev *trace.Event) { ev.Peer = 1 })
				b.Leader(0, 1, 1)
			},
			finding: "P0#2 leader(1) at +2ms names P1, which P0's failure detector suspected then",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder(3)
			tt.build(b)
			run := b.Run(true)
			run.Params = []byte(tt.params)
			var opts []Option
			if tt.rule != "" {
				opts = append(opts, WithValidity(tt.rule))
			}
			r := checkOne(t, run, b.Reader(), Validity, opts...)
			if r.Verdict != tt.verdict {
				t.Fatalf("%s, want %s: %v %q %v", r.Verdict, tt.verdict, r.Findings, r.Note, r.Err)
			}
			if text := said(r); tt.finding != "" && text != tt.finding {
				t.Errorf("finding\n\t%s\nwant\n\t%s", text, tt.finding)
			}
		})
	}
}

// multicastTo records from's multicast (stamp, id) to the processes of
// group, each of which receives and delivers it; from delivers it too.
func (b *builder) multicastTo(from int, stamp uint64, group ...int) {
	detail := trace.EncodeDetail(trace.Message{Stamp: stamp, ID: int(stamp)})
	for _, p := range group {
		if p == from {
			continue
		}
		id := b.Send(from, p, "mcast")
		b.Event(trace.Ref{Proc: from, Seq: b.seq[from]}).Detail = detail
		b.Recv(p, id)
	}
	for _, p := range group {
		b.deliver(p, from, stamp)
	}
}

// TestTotalOrderGroups: the group of a multicast is who it was sent to; a
// process outside it did not miss it.
func TestTotalOrderGroups(t *testing.T) {
	b := newBuilder(5)
	b.multicastTo(0, 1, 0, 1, 2)
	b.multicastTo(3, 2, 3, 4)
	if r := runOne(t, b, true, TotalOrder); r.Verdict != OK {
		t.Errorf("subgroups: %s %v %s", r.Verdict, r.Findings, r.Note)
	}
	// A member of the group that does not deliver is still missing.
	b = newBuilder(5)
	b.multicastTo(0, 1, 0, 1)
	b.Recv(2, b.Send(0, 2, "mcast"))
	b.Event(trace.Ref{Proc: 0, Seq: b.seq[0]}).Detail = trace.EncodeDetail(trace.Message{Stamp: 1, ID: 1})
	r := runOne(t, b, true, TotalOrder)
	if r.Verdict != Violated || len(r.Findings) != 1 || !strings.HasPrefix(r.Findings[0].Message, "P2 never delivered P0's multicast (stamp 1, id 1)") {
		t.Errorf("a member missing: %s %v", r.Verdict, r.Findings)
	}
}

// TestDeadlockFromWaitsAlone: a process that records that it waits is
// blocked, whether or not the trace records a cs_request; a wait-for cycle
// recorded with wait events alone is a deadlock.
func TestDeadlockFromWaitsAlone(t *testing.T) {
	b := newBuilder(3)
	b.Wait(0, "", 1)
	b.Wait(1, "", 2)
	b.Wait(2, "", 0)
	r := runOne(t, b, true, Deadlock)
	want := "deadlock on (no resource) among P0, P1, P2 since P2#1: P0 waits for P1 (P0#1 wait [1]); P1 waits for P2 (P1#1 wait [2]); P2 waits for P0 (P2#1 wait [0])"
	if r.Verdict != Violated || len(r.Findings) != 1 || r.Findings[0].Message != want {
		t.Errorf("%s %v %s\nwant %s", r.Verdict, r.Findings, r.Note, want)
	}
	// A process that no longer waits breaks the cycle.
	b.Wait(2, "")
	if r := runOne(t, b, true, Deadlock); r.Verdict != OK {
		t.Errorf("after P2 stops waiting: %s %v", r.Verdict, r.Findings)
	}
}

// TestElectionFindingsKeepParts: a finding about one of several elections
// keeps the structure a diagram draws.
func TestElectionFindingsKeepParts(t *testing.T) {
	b := newBuilder(3)
	shards(b)
	b.Leader(0, 0, 2)
	b.on("a")
	r := runOne(t, b, true, SplitBrain)
	if r.Verdict != Violated || len(r.Findings) == 0 || len(r.Findings[0].Parts) == 0 {
		t.Fatalf("%s %+v", r.Verdict, r.Findings)
	}
}

package analyze

import (
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// Verdicts on evidence only (issue 29): a section or reign that a crash
// ended is judged by what shows that it overlapped another, with and
// without wall times; a check with nothing to judge is not applicable; a
// run the trace does not hold whole gives no ok.

// crashInside: P0 enters and tells P1, which enters; P1 tells P0, and P0
// crashes inside. P1's entry happened before P0's crash: they overlapped.
func crashInside(b *builder) {
	b.Enter(0, "cs")
	b.Recv(1, b.Send(0, 1, "hello"))
	b.Enter(1, "cs")
	b.Recv(0, b.Send(1, 0, "hello"))
	b.Crash(0)
	b.Exit(1, "cs")
}

// crashThenEnter: P0 enters and tells P1, then crashes; P1 enters without
// another word from P0: nothing but the clocks orders the crash and the
// entry.
func crashThenEnter(b *builder) {
	b.At(10).Enter(0, "cs")
	b.Recv(1, b.Send(0, 1, "hello"))
	b.At(20).Crash(0)
	b.At(30).Enter(1, "cs")
	b.Exit(1, "cs")
}

// crashRecoverTell: P0 crashes inside, recovers and tells P1, which then
// enters: the crash happened before the entry.
func crashRecoverTell(b *builder) {
	b.Enter(0, "cs")
	b.Crash(0)
	b.Recover(0)
	b.Recv(1, b.Send(0, 1, "back"))
	b.Enter(1, "cs")
	b.Exit(1, "cs")
}

// leaderHearsNextTerm: P2 leads term 1; P1 is elected in term 2 and P0
// follows it; P0 tells P2, which then crashes still leading.
func leaderHearsNextTerm(b *builder) {
	b.At(10).Leader(2, 2, 1)
	b.Leader(0, 2, 1)
	b.Leader(1, 2, 1)
	b.At(20).ElectionStart(1, 2)
	b.Leader(1, 1, 2)
	b.Recv(0, b.Send(1, 0, "coordinator"))
	b.Leader(0, 1, 2)
	b.Recv(2, b.Send(0, 2, "append"))
	b.At(40).Crash(2)
}

// leaderCrashThenElected: P2 leads and crashes; P1 is elected after, and
// no message orders P2's crash and P1's election.
func leaderCrashThenElected(b *builder) {
	b.At(10).Leader(2, 2, 1)
	b.Leader(1, 2, 1)
	b.At(20).Crash(2)
	b.At(30).ElectionStart(1, 2)
	b.Leader(1, 1, 2)
}

func TestCrashEndedEvidence(t *testing.T) {
	for _, tc := range []struct {
		name   string
		check  *Check
		build  func(*builder)
		wall   bool
		want   Verdict
		saying string // in the finding, or the note
	}{
		{"crash inside, no wall times", MutexCausal, crashInside, false, Violated,
			"both were inside at once: P0#1 happened before P1's exit P1#4, and P1#2 happened before P0's crash P0#4"},
		{"crash inside, wall times", MutexCausal, crashInside, true, Violated, "both were inside at once"},
		{"crash then entry, no wall times", MutexCausal, crashThenEnter, false, Unknown,
			"whether P0's crash P0#3 came before P1 entered at P1#2"},
		{"crash then entry, wall times apart", MutexCausal, crashThenEnter, true, OK, ""},
		{"crash told by the recovered process", MutexCausal, crashRecoverTell, false, OK, ""},
		{"leader hears the next term, then crashes, no wall times", SplitBrain, leaderHearsNextTerm, false, Violated,
			"in fact: P1#3 happened before P2's crash P2#3 and P1 still led at the end of the run, so both led at once"},
		{"leader hears the next term, then crashes, wall times", SplitBrain, leaderHearsNextTerm, true, Violated, "in fact"},
		{"fail-over, no wall times", SplitBrain, leaderCrashThenElected, false, Unknown,
			"P2 from P2#1 leader(2) until its crash P2#2 and P1 from P1#3 leader(1) to the end of the run"},
		{"fail-over, wall times", SplitBrain, leaderCrashThenElected, true, OK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder(3)
			tc.build(b)
			if !tc.wall {
				noWall(b)
			}
			r := runOne(t, b, true, tc.check)
			if r.Verdict != tc.want {
				t.Fatalf("%s: %s, want %s: %v; %s", r.Check, r.Verdict, tc.want, r.Findings, r.Note)
			}
			if text := said(r); !strings.Contains(text, tc.saying) {
				t.Errorf("%s says\n\t%s\nwant it to say\n\t%s", r.Check, text, tc.saying)
			}
		})
	}
}

// TestNothingToJudge: a check with nothing of what it judges says not
// applicable, which is not ok: a run on which every check is not
// applicable has the verdict not applicable (exit 3 for dmx check).
func TestNothingToJudge(t *testing.T) {
	b := newBuilder(2)
	b.Recv(1, b.Send(0, 1, "x"))
	b.Enter(0, "lock")
	b.Exit(0, "lock")
	res := runChecks(t, b, All)
	for _, r := range res {
		switch r.Check {
		case "agreement", "validity", "split-brain", "termination":
			if r.Verdict != NotApplicable || r.Note != "no election events" {
				t.Errorf("%s: %s (%s), want not applicable (no election events)", r.Check, r.Verdict, r.Note)
			}
		case "total-order", "deadlock-or", "liveness":
			if r.Verdict != NotApplicable {
				t.Errorf("%s: %s (%s), want not applicable", r.Check, r.Verdict, r.Note)
			}
		}
	}
	if v := Summarize(res); v != OK {
		t.Errorf("run verdict %s, want ok (mutex-causal and clocks judged)", v)
	}
	res = runChecks(t, b, []*Check{Agreement, TotalOrder})
	if v := Summarize(res); v != NotApplicable {
		t.Errorf("verdict of checks with nothing to judge: %s, want not applicable", v)
	}
	res = runChecks(t, b, []*Check{Agreement}, WithRequire("agreement"))
	if res[0].Verdict != Unknown || !strings.HasPrefix(res[0].Note, "required, but not applicable") {
		t.Errorf("required agreement: %s (%s), want unknown", res[0].Verdict, res[0].Note)
	}
}

// TestNoEvidenceNoOK: a run that the trace does not hold whole (no events,
// interrupted, abandoned, still recording) gets no ok; a violation found
// in what it holds stands.
func TestNoEvidenceNoOK(t *testing.T) {
	clean := func(b *builder) {
		b.Request(0, "cs")
		b.Enter(0, "cs")
		b.Exit(0, "cs")
	}
	broken := func(b *builder) {
		b.Enter(0, "cs")
		b.Enter(1, "cs")
	}
	for _, tc := range []struct {
		name   string
		build  func(*builder)
		run    func(*trace.Run)
		want   Verdict
		saying string
	}{
		{"no events", func(*builder) {}, func(r *trace.Run) {}, Unknown, "the trace holds no events of this run"},
		{"interrupted before it started", func(*builder) {}, func(r *trace.Run) { r.Complete, r.Status = false, "interrupted before the run started" }, Unknown, "interrupted before the run started"},
		{"interrupted", clean, func(r *trace.Run) { r.Complete, r.Status = false, "interrupted" }, Unknown, "the run is incomplete (interrupted)"},
		{"abandoned", clean, func(r *trace.Run) { r.Complete, r.Status = false, trace.StatusAbandoned }, Unknown, "its recorder died before ending it"},
		{"still recording", clean, func(r *trace.Run) { r.Complete, r.Status = false, trace.StatusRunning }, Unknown, "it is still being recorded"},
		{"disk full", clean, func(r *trace.Run) {
			r.Complete, r.Status = false, "failed: database or disk is full; 2 of 6010 events stored"
		}, Unknown, "2 of 6010 events stored"},
		{"violated all the same", broken, func(r *trace.Run) { r.Complete, r.Status = false, "interrupted" }, Violated, "concurrent critical sections"},
		{"complete", clean, func(r *trace.Run) {}, OK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder(2)
			tc.build(b)
			run := b.Run(true)
			run.Status = "every workload finished"
			tc.run(&run)
			res, err := Evaluate(run, b.Reader(), All)
			if err != nil {
				t.Fatal(err)
			}
			if v := Summarize(res); v != tc.want {
				t.Fatalf("verdict %s, want %s: %+v", v, tc.want, res)
			}
			for _, r := range res {
				if r.Verdict == OK && tc.want != OK {
					t.Errorf("%s: ok on a run the trace does not hold whole: %s", r.Check, r.Note)
				}
			}
			all := ""
			for _, r := range res {
				all += r.Note + "\n"
				for _, f := range r.Findings {
					all += f.Message + "\n"
				}
			}
			if !strings.Contains(all, tc.saying) {
				t.Errorf("no result says %q:\n%s", tc.saying, all)
			}
		})
	}
}

// TestUnreadableDetailIsBadInput: a wait event whose detail cannot be
// read is a broken trace, named, not a wait the deadlock check ignores.
func TestUnreadableDetailIsBadInput(t *testing.T) {
	for _, kind := range []trace.Kind{trace.KindWait, trace.KindLeader, trace.KindElectionStart, trace.KindDeliver} {
		b := newBuilder(2)
		b.Internal(0)
		b.emit(1, kind, func(ev *trace.Event) { ev.Detail = []byte(`{"waiting_for": [0,`) })
		_, err := Evaluate(b.Run(true), b.Reader(), All)
		if err == nil || !strings.Contains(err.Error(), "P1#1 "+string(kind)) || !strings.Contains(err.Error(), "the checks cannot read it") {
			t.Errorf("%s with an unreadable detail: %v, want a broken trace naming P1#1", kind, err)
		}
	}
}

// TestHostNamesInFindings: a run whose processes have names (an imported
// log's hosts) is reported in them.
func TestHostNamesInFindings(t *testing.T) {
	b := newBuilder(3)
	b.Enter(0, "cs")
	b.Enter(2, "cs")
	run := b.Run(true)
	run.Names = []string{"n3", "n2", "n1"}
	run.Mode = "import"
	r := checkOne(t, run, b.Reader(), MutexCausal)
	want := "concurrent critical sections on cs: n3 [n3#1..no exit] and n1 [n1#1..no exit]"
	if len(r.Findings) == 0 || !strings.HasPrefix(r.Findings[0].Message, want) {
		t.Fatalf("findings %v, want %q", r.Findings, want)
	}
	if got := r.Findings[0].Events; got[0] != (trace.Ref{Proc: 0, Seq: 1}) {
		t.Errorf("the finding's events are %v: they stay process numbers", got)
	}
}

// TestElectionCutByDuration: a run that ran for its time (dmx run bully
// --duration 200ms) ends while elections are under way; with no decision
// yet to say how long they take, the run's declared time-out does.
func TestElectionCutByDuration(t *testing.T) {
	for _, tc := range []struct {
		params string
		want   Verdict
		saying string
	}{
		{`{"algorithm":{"timeout":"250ms","fd-period":"50ms"}}`, Unknown, "P0#1 began 200ms before the run ended, less than twice the run's time-out (250ms)"},
		{`{"algorithm":{"timeout":"50ms"}}`, Violated, "nothing sent after it was in flight when the run ended"},
		{``, Violated, "P0 decided nothing; P1 decided nothing"},
	} {
		b := newBuilder(2)
		b.At(0).ElectionStart(0, 1)
		b.Recv(1, b.Send(0, 1, "election"))
		b.At(200).Internal(1)
		run := b.Run(true)
		run.Params = []byte(tc.params)
		r := checkOne(t, run, b.Reader(), Termination)
		text := said(r)
		if r.Verdict != tc.want || !strings.Contains(text, tc.saying) {
			t.Errorf("params %s: %s: %s\nwant %s saying %q", tc.params, r.Verdict, text, tc.want, tc.saying)
		}
	}
}

// TestValidityWithoutWallTimes: under the highest-id rule, a crash that
// no message orders against a decision leaves the decision unknown in a
// trace without wall times, instead of being ordered by the walk.
func TestValidityWithoutWallTimes(t *testing.T) {
	toldOfRecovery := func(b *builder) { // P2 crashes, recovers and tells P1
		b.Crash(2)
		b.Recover(2)
		b.Recv(1, b.Send(2, 1, "back"))
	}
	for _, tc := range []struct {
		name  string
		build func(*builder)
		want  Verdict
	}{
		{"crash concurrent with the decision", func(b *builder) {
			b.Leader(1, 2, 1)
			b.Crash(2)
			b.Leader(1, 1, 2)
		}, Unknown},
		{"crash told before the decision", func(b *builder) {
			toldOfRecovery(b)
			b.Crash(2)
			b.Leader(1, 2, 2)
		}, Unknown},
		{"recovered and told", func(b *builder) {
			toldOfRecovery(b)
			b.Leader(1, 1, 2)
		}, Violated},
	} {
		b := newBuilder(3)
		tc.build(b)
		noWall(b)
		if r := runOne(t, b, true, Validity, WithValidity(ValidityHighestID)); r.Verdict != tc.want {
			t.Errorf("%s: %s, want %s: %v %s", tc.name, r.Verdict, tc.want, r.Findings, r.Note)
		}
	}
}

// TestDeadlockSaysWhomTheyWaitFor: blocked processes in no cycle are not
// a deadlock, and the note says whom each waits for and in what state.
func TestDeadlockSaysWhomTheyWaitFor(t *testing.T) {
	b := newBuilder(3)
	blockedBehindCrash(b, 1)
	r := runOne(t, b, true, Deadlock)
	want := "2 processes blocked at the end of the run, in no cycle: P1 waits for P0 (crashed at P0#3); P2 waits for P1 (blocked) (not a deadlock; liveness judges whether requests were granted)"
	if r.Verdict != OK || r.Note != want {
		t.Errorf("deadlock: %s: %q\nwant ok: %q", r.Verdict, r.Note, want)
	}
}

// blockedBehindCrash: P0 holds cs; P1 asks and waits for P0, P2 asks and
// waits for p2WaitsFor; then P0 crashes.
func blockedBehindCrash(b *builder, p2WaitsFor int) {
	b.Request(0, "cs")
	b.Enter(0, "cs")
	b.Request(1, "cs")
	b.Wait(1, "cs", 0)
	b.Request(2, "cs")
	b.Wait(2, "cs", p2WaitsFor)
	b.Crash(0)
}

package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// Issue 29: verdicts on anybody's run, each case as a user meets it, with
// the exit code that must come out.

// checkSays runs dmx check with args and wants exit code want and each of
// says in its output (stdout and stderr).
func checkSays(t *testing.T, want int, says []string, args ...string) string {
	t.Helper()
	code, out, errs := dmx(t, append([]string{"check"}, args...)...)
	if code != want {
		t.Errorf("check %v: exit %d, want %d\n%s%s", args, code, want, out, errs)
	}
	for _, s := range says {
		if !strings.Contains(out+errs, s) {
			t.Errorf("check %v: no %q in:\n%s%s", args, s, out, errs)
		}
	}
	return out
}

// importLogs imports the GoVector logs files (name -> text) with rules
// into a new trace and returns its path.
func importLogs(t *testing.T, files map[string]string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	var names []string
	for n := range files {
		names = append(names, n)
	}
	paths := writeFiles(t, dir, sortedStrings(names), files)
	db := filepath.Join(dir, "t.db")
	all := append(append([]string{"import", "govector"}, paths...), "-o", db)
	if code, out, errs := dmx(t, append(all, args...)...); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errs)
	}
	return db
}

func sortedStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

var crashRules = append(append([]string(nil), lockRules...), "--rule", `crash=^crashed`)

// TestCrashInsideWithoutWallTimes: b enters after hearing from a, which is
// inside; a hears from b and crashes without leaving. Without wall times
// happens-before shows that both were inside (exit 1); when a crashes
// without another word from b, nothing orders its crash and b's entry
// (exit 3, not ok); with GoVector's timestamps the wall times decide.
func TestCrashInsideWithoutWallTimes(t *testing.T) {
	heard := importLogs(t, map[string]string{
		"a-Log.txt": "a {\"a\":1}\nInitialization Complete\na {\"a\":2}\ngot lock printer\na {\"a\":3}\nsend hello\na {\"a\":4, \"b\":4}\nrecv ack\na {\"a\":5, \"b\":4}\ncrashed\n",
		"b-Log.txt": "b {\"b\":1}\nInitialization Complete\nb {\"b\":2, \"a\":3}\nrecv hello\nb {\"b\":3, \"a\":3}\ngot lock printer\nb {\"b\":4, \"a\":3}\nsend ack\nb {\"b\":5, \"a\":3}\nreleased lock printer\n",
	}, crashRules...)
	checkSays(t, exitViolated, []string{"mutex-causal: overlapping critical sections on printer: a [a#2..a#5 crash] and b [b#3..b#5]: both were inside at once"}, heard)

	silent := importLogs(t, map[string]string{
		"a-Log.txt": "a {\"a\":1}\nInitialization Complete\na {\"a\":2}\ngot lock printer\na {\"a\":3}\nsend hello\na {\"a\":4}\ncrashed\n",
		"b-Log.txt": "b {\"b\":1}\nInitialization Complete\nb {\"b\":2, \"a\":3}\nrecv hello\nb {\"b\":3, \"a\":3}\ngot lock printer\nb {\"b\":4, \"a\":3}\nreleased lock printer\n",
	}, crashRules...)
	checkSays(t, exitInconclusive, []string{"mutex-causal", "unknown", "whether a's crash a#4 came before b entered at b#3"}, silent)

	for _, tc := range []struct {
		crash, enter string
		want         int
	}{{"5000", "4000", exitViolated}, {"3500", "4000", exitOK}} {
		timed := importLogs(t, map[string]string{
			"a-Log.txt": "1000 a {\"a\":1}\nInitialization Complete\n2000 a {\"a\":2}\ngot lock printer\n3000 a {\"a\":3}\nsend hello\n" + tc.crash + " a {\"a\":4}\ncrashed\n",
			"b-Log.txt": "1000 b {\"b\":1}\nInitialization Complete\n3200 b {\"b\":2, \"a\":3}\nrecv hello\n" + tc.enter + " b {\"b\":3, \"a\":3}\ngot lock printer\n6000 b {\"b\":4, \"a\":3}\nreleased lock printer\n",
		}, crashRules...)
		checkSays(t, tc.want, nil, "--checks", "mutex-causal", timed)
	}
}

// leaderRules read the election logs below: Raft-like, with terms in the
// leaders' lines and in the messages.
var leaderRules = []string{
	"--rule", `leader=^leader (?<leader>\S+) term (?<term>\d+)`,
	"--rule", `election_start=^campaign term (?<term>\d+)`,
	"--rule", `step_down=^follower term (?<term>\d+)`,
	"--rule", `receive=^recv (?<type>\w+) term (?<term>\d+)`,
	"--rule", `send=^send (?<type>\w+) term (?<term>\d+)`,
	"--rule", `crash=^crashed`,
}

// TestLeaderHearsTheNextTerm: n1 leads term 1; n2 is elected in term 2
// and n3 follows it; n3 writes to n1, which crashes still leading. Both
// led at once, and happens-before shows it without wall times.
func TestLeaderHearsTheNextTerm(t *testing.T) {
	db := importLogs(t, map[string]string{
		"n1-Log.txt": "n1 {\"n1\":1}\nInitialization Complete\nn1 {\"n1\":2}\nleader n1 term 1\nn1 {\"n1\":3, \"n2\":4, \"n3\":3}\nrecv append term 2\nn1 {\"n1\":4, \"n2\":4, \"n3\":3}\ncrashed\n",
		"n2-Log.txt": "n2 {\"n2\":1}\nInitialization Complete\nn2 {\"n2\":2}\ncampaign term 2\nn2 {\"n2\":3}\nleader n2 term 2\nn2 {\"n2\":4}\nsend append term 2\n",
		"n3-Log.txt": "n3 {\"n3\":1}\nInitialization Complete\nn3 {\"n3\":2, \"n2\":4}\nleader n2 term 2\nn3 {\"n3\":3, \"n2\":4}\nsend append term 2\n",
	}, leaderRules...)
	checkSays(t, exitViolated, []string{"split-brain: split brain: n1 and n2 both believed they led", "in fact:"}, "--checks", "split-brain", db)
}

// TestRaftStepDown: n1 leads term 1 and hears n2's vote request of term 2;
// it grants it, and n2 leads term 2 knowing that. The log never says n1
// stepped down: with step_down=<higher-term> (Raft's rule) its reign ends
// at that request, and the two are ordered (exit 0); without it n1 leads
// to the end of the log, beside n2 (exit 1). A step_down line in the log
// does the same as the rule.
func TestRaftStepDown(t *testing.T) {
	logs := func(stepDownLine string) map[string]string {
		return map[string]string{
			"n1-Log.txt": "n1 {\"n1\":1}\nInitialization Complete\nn1 {\"n1\":2}\nleader n1 term 1\nn1 {\"n1\":3, \"n2\":3}\nrecv vote term 2\n" + stepDownLine + "n1 {\"n1\":5, \"n2\":3}\nsend granted term 2\n",
			"n2-Log.txt": "n2 {\"n2\":1}\nInitialization Complete\nn2 {\"n2\":2}\ncampaign term 2\nn2 {\"n2\":3}\nsend vote term 2\nn2 {\"n2\":4, \"n1\":5}\nrecv granted term 2\nn2 {\"n2\":5, \"n1\":5}\nleader n2 term 2\n",
		}
	}
	withRule := importLogs(t, logs("n1 {\"n1\":4, \"n2\":3}\nnothing\n"), append(leaderRules, "--rule", "step_down=<higher-term>")...)
	checkSays(t, exitOK, []string{"split-brain"}, "--checks", "split-brain,agreement", withRule)
	without := importLogs(t, logs("n1 {\"n1\":4, \"n2\":3}\nnothing\n"), leaderRules...)
	checkSays(t, exitViolated, []string{"n1 from n1#2 leader(0) to the end of the run"}, "--checks", "split-brain", without)
	said := importLogs(t, logs("n1 {\"n1\":4, \"n2\":3}\nfollower term 2\n"), leaderRules...)
	checkSays(t, exitOK, nil, "--checks", "split-brain", said)
}

// TestExcerptIsCut: a lock log that ends with a process waiting, imported
// as an excerpt (--cut), is inconclusive, not violated: what came after
// it is not in it.
func TestExcerptIsCut(t *testing.T) {
	files := map[string]string{
		"a-Log.txt": "a {\"a\":1}\nInitialization Complete\na {\"a\":2}\nwant lock printer\na {\"a\":3}\ngot lock printer\n",
		"b-Log.txt": "b {\"b\":1}\nInitialization Complete\nb {\"b\":2}\nwant lock printer\n",
	}
	whole := importLogs(t, files, lockRules...)
	checkSays(t, exitViolated, []string{"b#2 cs_request(printer) was never granted"}, whole)
	cut := importLogs(t, files, append(lockRules, "--cut")...)
	checkSays(t, exitInconclusive, []string{"an excerpt of a longer log (--cut)"}, cut)
}

// TestNothingJudged: agreement on a lock log has nothing to judge: not
// applicable, not ok; a trace whose run judged nothing at all is exit 3.
func TestNothingJudged(t *testing.T) {
	lock := importLogs(t, map[string]string{
		"a-Log.txt": "a {\"a\":1}\nInitialization Complete\na {\"a\":2}\nwant lock printer\na {\"a\":3}\ngot lock printer\na {\"a\":4}\nreleased lock printer\n",
	}, lockRules...)
	out := checkSays(t, exitOK, []string{"agreement      │ not applicable │", "no election events"}, lock)
	if strings.Contains(out, "agreement      │ ok") {
		t.Errorf("agreement says ok:\n%s", out)
	}
	checkSays(t, exitInconclusive, []string{"verdict: not applicable"}, "--checks", "agreement,termination", lock)
}

// makeTrace records a run with the given events into a new trace and ends
// it with complete and status (not at all if status is "").
func makeTrace(t *testing.T, events []trace.Event, complete bool, status string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	st, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.BeginRun(trace.Run{Algorithm: "central", Nodes: 2, Seed: 1, Mode: "sim", Started: 1})
	if err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter(id)
	for i := range events {
		if err := w.Add(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if status != "" {
		if err := st.EndRun(id, 2, complete, status); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNoEvidenceIsInconclusive: no events, an interrupted run, a run whose
// trace refused its events, a run abandoned by its recorder: none is ok.
func TestNoEvidenceIsInconclusive(t *testing.T) {
	section := []trace.Event{
		{Proc: 0, Seq: 1, Kind: trace.KindCSRequest, Resource: "cs", Wall: 10, Peer: trace.NoPeer},
		{Proc: 0, Seq: 2, Kind: trace.KindCSEnter, Resource: "cs", Wall: 11, Peer: trace.NoPeer},
		{Proc: 0, Seq: 3, Kind: trace.KindCSExit, Resource: "cs", Wall: 12, Peer: trace.NoPeer},
	}
	for _, tc := range []struct {
		name     string
		events   []trace.Event
		complete bool
		status   string
		says     string
	}{
		{"no events", nil, true, "every workload finished", "the trace holds no events of this run"},
		{"interrupted", section, false, "interrupted", "the run is incomplete (interrupted)"},
		{"disk full", section, false, "failed: database or disk is full; 3 of 6010 events stored", "3 of 6010 events stored"},
		{"abandoned", section, false, "", "its recorder died before ending it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkSays(t, exitInconclusive, []string{tc.says}, makeTrace(t, tc.events, tc.complete, tc.status))
		})
	}
	checkSays(t, exitOK, nil, makeTrace(t, section, true, "every workload finished"))
}

// TestBadDetailsAndNullKeys: a wait event whose detail cannot be read, and
// a crafted file whose events have no ids, are bad input (exit 2) naming
// the event, not a run that is ok.
func TestBadDetailsAndNullKeys(t *testing.T) {
	bad := makeTrace(t, []trace.Event{
		{Proc: 0, Seq: 1, Kind: trace.KindCSRequest, Resource: "cs", Peer: trace.NoPeer},
		{Proc: 1, Seq: 1, Kind: trace.KindWait, Resource: "cs", Peer: trace.NoPeer, Detail: []byte(`{"waiting_for":"P0"}`)},
	}, true, "every workload finished")
	code, out, errs := dmx(t, "check", bad)
	if code != exitUsage || !strings.Contains(errs, "P1#1 wait(cs)") || !strings.Contains(errs, "the checks cannot read it") {
		t.Errorf("check of an unreadable wait: exit %d\n%s%s", code, out, errs)
	}

	crafted := filepath.Join(t.TempDir(), "crafted.db")
	db, err := sql.Open("sqlite3", crafted)
	if err != nil {
		t.Fatal(err)
	}
	schema := strings.Replace(trace.Schema, "id       INTEGER PRIMARY KEY", "id       INTEGER", 1)
	for _, s := range []string{schema,
		`INSERT INTO runs (id, algorithm, nodes, seed, mode, started_ns, complete, status) VALUES (1, 'central', 2, '1', 'sim', 0, 1, 'ok')`,
		`INSERT INTO events (id, run, proc, seq, kind, lamport, wall_ns) VALUES (NULL, 1, 0, 1, 'internal', 1, 5)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	code, out, errs = dmx(t, "check", crafted)
	if code != exitUsage || !strings.Contains(errs, "the event in row 1 of the events table has no id (NULL)") {
		t.Errorf("check of events without ids: exit %d\n%s%s", code, out, errs)
	}
	os.Remove(crafted)
}

// TestHostNamesInFindings: a log whose hosts are n3 and n1 (numbered P0
// and P1 in the order they first appear) is reported in their names.
func TestHostNamesInFindings(t *testing.T) {
	db := importLogs(t, map[string]string{
		"x-Log.txt": "n3 {\"n3\":1}\nInitialization Complete\nn3 {\"n3\":2}\ngot lock printer\n",
		"y-Log.txt": "n1 {\"n1\":1}\nInitialization Complete\nn1 {\"n1\":2}\ngot lock printer\n",
	}, lockRules...)
	checkSays(t, exitViolated, []string{"concurrent critical sections on printer: n3 [n3#2..no exit] and n1 [n1#2..no exit]"}, db)
}

// TestValidityOfANamedAlgorithm: an imported election log that names its
// algorithm (--algorithm bully) is held to bully's rule, the highest live
// id; without the name, to the weak rule every election keeps.
func TestValidityOfANamedAlgorithm(t *testing.T) {
	files := map[string]string{
		"a-Log.txt": "a {\"a\":1}\nInitialization Complete\na {\"a\":2}\nleader a term 1\n",
		"b-Log.txt": "b {\"b\":1}\nInitialization Complete\nb {\"b\":2, \"a\":2}\nleader a term 1\n",
	}
	weak := importLogs(t, files, leaderRules...)
	checkSays(t, exitOK, []string{"rule participant"}, "--checks", "validity", weak)
	bully := importLogs(t, files, append(leaderRules, "--algorithm", "bully")...)
	checkSays(t, exitViolated, []string{"names a, but b was alive and has a higher id", "rule highest-id"}, "--checks", "validity", bully)
}

// TestBOMAndDates: a GoVector log saved with a byte-order mark imports as
// one without; a ShiViz log with a date field gets wall times, and the
// import says how it read them.
func TestBOMAndDates(t *testing.T) {
	db := importLogs(t, map[string]string{
		"a-Log.txt": "\ufeffa {\"a\":1}\nInitialization Complete\na {\"a\":2}\nwant lock printer\n",
	}, lockRules...)
	checkSays(t, exitViolated, []string{"a#2 cs_request(printer) was never granted"}, db)

	out := filepath.Join(t.TempDir(), "b.db")
	code, stdout, errs := dmx(t, "import", "shiviz", "../../trace/format/testdata/corpus/shiviz/simple-reliable-broadcast.log",
		"--regex", `\[\w+\] \[(?<date>([^ ]+ [^ ]+))\] [^ ]+ \[akka://Broadcast/user/(?<host>\w+)\] (?<clock>.*\}) (?<event>.*)`, "-o", out)
	if code != 0 || !strings.Contains(errs, `wall times of 39 events from their date field, read as "1/2/2006 15:04:05.999999999" (inferred, UTC`) {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, errs)
	}
	checkSays(t, exitOK, []string{"clock-skew     │ ok", "39 wall times compared"}, out)
}

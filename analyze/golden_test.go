package analyze

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// Golden traces: testdata/golden/CHECK.pass-WHAT.txtar and
// CHECK.fail-WHAT.txtar, one trace each that the check must pass or fail
// with the finding written there; CHECK.unknown-WHAT.txtar, a trace that
// cannot decide (its note says why), and CHECK.na-WHAT.txtar, one with
// nothing the check judges. Each file is made by a generator below
// (goldenCases) whose doc heads the file; go test ./analyze -update
// rewrites them. The test reads the files, not the generators, so that a
// change to the builder cannot change what is tested without showing in
// the files.
//
// A file: comment lines (#), "check: NAME", optionally "run: JSON" (a
// trace.Run's Nodes, Complete, Params), then "-- trace --" with one event
// per line as JSON, and "-- expect --" with "verdict: V", "note: NOTE"
// for a verdict of unknown or not applicable and, for each finding,
// "finding: MESSAGE" and "events: P0#1 P1#2...".

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden/*.txtar from their generators")

type goldenCase struct {
	check      *Check
	name       string // what it shows, for the file name
	doc        string
	n          int
	incomplete bool
	params     string // the run's params
	build      func(b *builder)
}

var goldenCases = []goldenCase{
	{Clocks, "pass-ricart-agrawala", "Ricart-Agrawala among 3, stamped by the builder as dmx's runtime stamps.", 3, false, "", raRun},
	{Clocks, "fail-vector-clock", "A receive whose recorded vector clock misses its send.", 2, false, "", func(b *builder) {
		r := b.Recv(1, b.Send(0, 1, "x"))
		b.Event(r).VC = trace.VC{0, 1}
	}},
	{ClockSkew, "pass-ricart-agrawala", "Wall times that grow along every causal chain.", 3, false, "", raRun},
	{ClockSkew, "fail-sections", "P1's clock behind P0's: the token P0 passes on reaches P1 stamped before P0 left.", 2, false, "", skewedSections},
	{ClockSkew, "fail-sections-apart-in-wall-time", "P1's clock is 10ms behind: the section it enters after P0's is stamped wholly before P0's, so the two do not overlap in wall time either: the finding is the clocks' alone.", 2, false, "", func(b *builder) { tokenToSkewed(b, 3, 5) }},
	{MutexCausal, "pass-ricart-agrawala", "Ricart-Agrawala: P0's deferred reply orders P1's entry after P0's exit ([RA3]).", 3, false, "", raRun},
	{MutexCausal, "fail-concurrent", "Two sections that no message orders.", 2, false, "", concurrentSections},
	{MutexRealtime, "pass-ricart-agrawala", "Sections one after the other in wall time.", 3, false, "", raRun},
	{MutexRealtime, "fail-overlap", "Two sections that overlap for 1ms.", 2, false, "", overlapInWallTime},
	{Liveness, "pass-ricart-agrawala", "Every request granted.", 3, false, "", raRun},
	{Liveness, "fail-never-granted", "P1's request is still waiting when the run ends.", 2, false, "", func(b *builder) {
		b.Request(0, "cs")
		b.Enter(0, "cs")
		b.Exit(0, "cs")
		b.Request(1, "cs")
	}},
	{Fairness, "pass-ricart-agrawala", "Ricart-Agrawala grants the older request first (seed 004: 'Ordering: Yes').", 3, false, "", raRun},
	{Fairness, "fail-overtake", "Seed 004's 'Ordering: No' of a central coordinator: P0 asks and tells P1, whose request is granted first.", 2, false, "", overtake},
	{Starvation, "pass-ricart-agrawala", "No request overtaken more than N-1 times.", 3, false, "", raRun},
	{Starvation, "fail-overtaken-four-times", "P0 waits while P1 and P2 take turns twice each: 4 overtakes, bound N-1 = 2.", 3, false, "", starve},
	{Deadlock, "pass-ricart-agrawala", "Nobody blocked at the end.", 3, false, "", raRun},
	{Deadlock, "fail-nested", "Seed 001's resource deadlock: P0 holds printer and wants scanner, P1 the other way round.", 2, false, "", nestedDeadlock},
	{DeadlockOR, "pass-not-a-knot", "P1 waits for any of P0 and P2, and P2 waits for nobody: no knot.", 3, false, "", func(b *builder) {
		b.WaitAny(0, "q", 1)
		b.WaitAny(1, "q", 0, 2)
		b.Internal(2)
	}},
	{DeadlockOR, "fail-knot", "Seed 001's knot: each waits for any one of the two others.", 3, false, "", func(b *builder) {
		b.WaitAny(0, "q", 1, 2)
		b.WaitAny(1, "q", 0, 2)
		b.WaitAny(2, "q", 0, 1)
	}},
	{Agreement, "pass-bully", "Seed 001's bully election among 3: everyone follows P2.", 3, false, "", bully3},
	{Agreement, "fail-two-leaders", "Two leaders of election 1, numbered as another tool numbers them.", 3, false, "", func(b *builder) {
		for _, d := range [][2]int{{0, 2}, {1, 1}} {
			b.emit(d[0], trace.KindLeader, func(ev *trace.Event) {
				ev.Peer, ev.Detail = d[1], fmt.Appendf(nil, `{"leader":%d,"election":1}`, d[1])
			})
		}
	}},
	{Validity, "pass-shards", "One election per shard, each won by a process that took part (the weak rule of a foreign trace).", 3, false, "", shards},
	{Validity, "fail-lower-id", "Bully with a time-out too tight (seed 004): P1 declares itself while P2 is up; the run declares the highest-id rule.", 3, false, `{"validity":"highest-id"}`, tooTightTimeout},
	{SplitBrain, "pass-shards", "Two leaders, of two shards.", 3, false, "", shards},
	{SplitBrain, "fail-two-leaders", "P1 declares itself while P2 still leads.", 3, false, "", tooTightTimeout},
	{Termination, "pass-bully", "Every process decided after every start.", 3, false, "", bully3},
	{Termination, "fail-unanswered", "After P2's crash P1 starts an election; P0 gets its message and does nothing, and nothing decides until the run ends 850ms later.", 3, false, "", func(b *builder) {
		leaderCrashes(b)
		b.Recv(0, b.Send(1, 0, "election"))
		b.At(1000).Internal(0)
	}},
	{Termination, "fail-lost-to-the-crash", "After P2's crash P1 starts an election and sends it to P2 only, which never gets it; nothing decides until the run ends.", 3, false, "", func(b *builder) {
		leaderCrashes(b)
		b.Send(1, 2, "election")
		b.At(1000).Internal(0)
	}},
	{Termination, "unknown-ended-by-duration", "A run that ran for its time ends 2ms after P1 started an election, its message to P0 on its way: elections in this run took 22ms.", 3, false, "", func(b *builder) {
		leaderCrashes(b)
		b.Send(1, 0, "election")
		b.At(152).Internal(0)
	}},
	{Liveness, "fail-waited-for-a-crashed-process", "P1 waits for P0's reply; P0 crashed: the finding names the crash it waited for.", 3, false, "", func(b *builder) {
		b.At(10).Request(1, "cs")
		b.Wait(1, "cs", 0, 2)
		b.Recv(2, b.Send(1, 2, "request"))
		b.Recv(1, b.Send(2, 1, "ok"))
		b.Wait(1, "cs", 0)
		b.At(20).Crash(0)
		b.At(900).Internal(2)
	}},
	{Liveness, "unknown-reply-on-its-way", "The run ends while P0's reply to P1's request is on its way.", 2, false, "", func(b *builder) {
		b.Request(1, "cs")
		b.Recv(0, b.Send(1, 0, "request"))
		b.Send(0, 1, "ok")
	}},
	// Issue 29: crash-ended sections and reigns, with and without wall
	// times; checks with nothing to judge.
	{MutexCausal, "fail-crash-inside-no-wall", "A GoVector-like log without wall times: P1 enters after hearing from P0, which is inside; P0 hears from P1 and crashes inside. P1's entry happened before P0's crash: both were inside at once.", 2, false, "", withoutWall(crashInside)},
	{MutexCausal, "unknown-crash-then-entry-no-wall", "P0 crashes inside after telling P1, which then enters; without wall times nothing orders the crash and the entry.", 2, false, "", withoutWall(crashThenEnter)},
	{MutexCausal, "pass-crash-then-entry-apart-in-wall-time", "The same with wall times: P0 crashed 10ms before P1 entered.", 2, false, "", crashThenEnter},
	{MutexCausal, "pass-crash-told-by-recovery", "P0 crashes inside, recovers and tells P1, which then enters: ordered, without wall times.", 2, false, "", withoutWall(crashRecoverTell)},
	{MutexCausal, "na-no-sections", "Messages only: nothing to judge.", 2, false, "", func(b *builder) { b.Recv(1, b.Send(0, 1, "x")) }},
	{SplitBrain, "fail-hears-next-term-then-crashes-no-wall", "A log without wall times: P2 leads term 1, hears from P0, which follows P1 in term 2, and crashes still leading.", 3, false, "", withoutWall(leaderHearsNextTerm)},
	{SplitBrain, "unknown-fail-over-no-wall", "P2 leads and crashes; P1 is elected; without wall times nothing orders the crash and the election.", 3, false, "", withoutWall(leaderCrashThenElected)},
	{SplitBrain, "pass-fail-over", "The same fail-over with wall times: P2 crashed 10ms before P1 was elected.", 3, false, "", leaderCrashThenElected},
	{Deadlock, "pass-blocked-waiting-for-a-crash", "P1 and P2 wait for P0, which crashed: blocked, but in no cycle; the note says whom each waits for and in what state.", 3, false, "", func(b *builder) { blockedBehindCrash(b, 0) }},
	{Validity, "unknown-crash-concurrent-no-wall", "Bully's rule without wall times: P1 declares itself; P2's crash is concurrent with it, so whether P2 was alive then is not known.", 3, false, `{"validity":"highest-id"}`, func(b *builder) {
		b.Leader(1, 2, 1)
		b.Crash(2)
		b.Leader(1, 1, 2)
		noWall(b)
	}},
	{Agreement, "na-lock-only", "A lock log: no election events.", 2, false, "", func(b *builder) {
		b.Request(0, "cs")
		b.Enter(0, "cs")
		b.Exit(0, "cs")
	}},
	{TotalOrder, "pass-subgroups", "Two multicasts to two groups; nobody outside a group misses anything.", 5, false, "", func(b *builder) {
		b.multicastTo(0, 1, 0, 1, 2)
		b.multicastTo(3, 2, 3, 4)
	}},
	{TotalOrder, "fail-opposite-order", "P0 and P1 deliver two multicasts in opposite orders.", 2, false, "", func(b *builder) {
		b.deliver(0, 0, 1)
		b.deliver(0, 1, 2)
		b.deliver(1, 1, 2)
		b.deliver(1, 0, 1)
	}},
}

// goldenEvent is an event as a golden file writes it.
type goldenEvent struct {
	Proc     int             `json:"proc"`
	Seq      int64           `json:"seq"`
	Kind     trace.Kind      `json:"kind"`
	Lamport  uint64          `json:"lamport,omitempty"`
	VC       trace.VC        `json:"vc,omitempty"`
	Wall     int64           `json:"wall,omitempty"`
	Msg      int64           `json:"msg,omitempty"`
	MsgType  string          `json:"msg_type,omitempty"`
	Peer     *int            `json:"peer,omitempty"`
	Resource string          `json:"resource,omitempty"`
	Detail   json.RawMessage `json:"detail,omitempty"`
}

type goldenRun struct {
	Nodes    int             `json:"nodes"`
	Complete bool            `json:"complete"`
	Params   json.RawMessage `json:"params,omitempty"`
}

func (c goldenCase) file() string {
	return filepath.Join("testdata", "golden", c.check.Name+"."+c.name+".txtar")
}

// write renders the case as a golden file.
func (c goldenCase) write() ([]byte, error) {
	b := newBuilder(c.n)
	c.build(b)
	run := b.Run(!c.incomplete)
	run.Params = []byte(c.params)
	var out bytes.Buffer
	for _, line := range strings.Split(c.doc, "\n") {
		fmt.Fprintf(&out, "# %s\n", line)
	}
	fmt.Fprintf(&out, "check: %s\n", c.check.Name)
	gr := goldenRun{Nodes: run.Nodes, Complete: run.Complete}
	if c.params != "" {
		gr.Params = run.Params
	}
	j, err := json.Marshal(gr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&out, "run: %s\n-- trace --\n", j)
	for _, ev := range b.events {
		ge := goldenEvent{ev.Proc, ev.Seq, ev.Kind, ev.Lamport, ev.VC, ev.Wall - startWall + 1, ev.Msg, ev.MsgType, nil, ev.Resource, ev.Detail}
		if ev.Wall == 0 {
			ge.Wall = 0
		}
		if ev.Peer != trace.NoPeer {
			ge.Peer = &ev.Peer
		}
		j, err := json.Marshal(ge)
		if err != nil {
			return nil, err
		}
		out.Write(j)
		out.WriteByte('\n')
	}
	res, err := Evaluate(run, b.Reader(), []*Check{c.check})
	if err != nil {
		return nil, err
	}
	out.WriteString("-- expect --\n")
	out.WriteString(expectation(res[0]))
	return out.Bytes(), nil
}

// expectation is what a golden file says of a result.
func expectation(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict: %s\n", r.Verdict)
	if r.Verdict == Unknown || r.Verdict == NotApplicable {
		fmt.Fprintf(&b, "note: %s\n", r.Note) // what it could not decide, or did not find
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "finding: %s\nevents:", f.Message)
		for _, e := range f.Events {
			fmt.Fprintf(&b, " %v", e)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// readGolden parses a golden file: the check, the run, the events and the
// expectation.
func readGolden(data []byte) (check *Check, run trace.Run, events []trace.Event, expect string, err error) {
	head, rest, ok := bytes.Cut(data, []byte("-- trace --\n"))
	if !ok {
		return nil, run, nil, "", fmt.Errorf("no -- trace -- section")
	}
	body, exp, ok := bytes.Cut(rest, []byte("-- expect --\n"))
	if !ok {
		return nil, run, nil, "", fmt.Errorf("no -- expect -- section")
	}
	run = trace.Run{ID: 1, Started: 1}
	for _, line := range strings.Split(string(head), "\n") {
		switch k, v, _ := strings.Cut(line, ": "); k {
		case "check":
			if check = Lookup(v); check == nil {
				return nil, run, nil, "", fmt.Errorf("no check %q", v)
			}
		case "run":
			var gr goldenRun
			if err := json.Unmarshal([]byte(v), &gr); err != nil {
				return nil, run, nil, "", fmt.Errorf("run: %w", err)
			}
			run.Nodes, run.Complete, run.Params = gr.Nodes, gr.Complete, gr.Params
		}
	}
	for i, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var ge goldenEvent
		if err := json.Unmarshal([]byte(line), &ge); err != nil {
			return nil, run, nil, "", fmt.Errorf("trace line %d: %w", i+1, err)
		}
		ev := trace.Event{Proc: ge.Proc, Seq: ge.Seq, Kind: ge.Kind, Lamport: ge.Lamport, VC: ge.VC, Wall: ge.Wall,
			Msg: ge.Msg, MsgType: ge.MsgType, Peer: trace.NoPeer, Resource: ge.Resource, Detail: ge.Detail}
		if ge.Peer != nil {
			ev.Peer = *ge.Peer
		}
		events = append(events, ev)
	}
	return check, run, events, string(exp), nil
}

func TestGolden(t *testing.T) {
	if *updateGolden {
		// Only the generated files are rewritten: some golden traces are
		// written by hand (protocol.*, a program's lines), and -update
		// once wiped them with the directory. A file no generator makes
		// any more is named, for its author to remove.
		made := map[string]bool{}
		for _, c := range goldenCases {
			made[c.file()] = true
		}
		old, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
		for _, f := range old {
			if !made[f] {
				t.Logf("%s: no generator in goldenCases (kept: written by hand, or stale)", f)
			}
		}
		for _, c := range goldenCases {
			data, err := c.write()
			if err != nil {
				t.Fatalf("%s: %v", c.file(), err)
			}
			if err := os.WriteFile(c.file(), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	has := map[string]bool{}
	ran := 0
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			ran++
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			check, run, events, want, err := readGolden(data)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			res, err := Evaluate(run, &trace.SliceReader{Events: events}, []*Check{check})
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if got := expectation(res[0]); got != want {
				t.Errorf("%s (go test ./analyze -update rewrites it):\ngot:\n%swant:\n%s", path, got, want)
			}
			verdict := map[Verdict]string{OK: "pass", Violated: "fail", Unknown: "unknown", NotApplicable: "na", Skipped: "skipped"}[res[0].Verdict]
			if !strings.HasPrefix(strings.TrimPrefix(name, check.Name+"."), verdict+"-") {
				t.Errorf("%s: the check's verdict is %s", name, res[0].Verdict)
			}
			has[check.Name+"."+verdict] = true
		})
	}
	if ran < len(files) {
		return // -run chose some
	}
	for _, c := range All {
		for _, v := range []string{"pass", "fail"} {
			if !has[c.Name+"."+v] {
				t.Errorf("no golden trace that %s must %s", c.Name, v)
			}
		}
	}
}

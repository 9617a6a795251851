package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner"
)

// TestExploreCLI: dmx explore finds basic Maekawa's deadlock, writes it as
// a trace that check, render and replay take and a scenario that sim
// records again; exhausts a clean run (exit 0); says when it could not
// (exit 3).
func TestExploreCLI(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "m.db")
	code, out, errs := dmx(t, "explore", "maekawa", "-n", "3", "--entries", "1", "-o", tr)
	if code != 1 {
		t.Fatalf("explore maekawa: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"violation found after", "shrunk from 3 processes", "shortest:", "deadlock", "request P0 cs", "scenario: " + filepath.Join(dir, "m.json")} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code, out, _ := dmx(t, "check", tr); code != 1 || !strings.Contains(out, "deadlock on cs") {
		t.Fatalf("check of the violation: exit %d\n%s", code, out)
	}
	if code, out, _ := dmx(t, "replay", tr); code != 0 {
		t.Fatalf("replay of the violation: exit %d\n%s", code, out)
	}
	if code, out, errs := dmx(t, "render", tr, "-o", filepath.Join(dir, "m.svg")); code != 0 {
		t.Fatalf("render of the violation: exit %d\n%s%s", code, out, errs)
	}
	sc, err := runner.LoadScenario(filepath.Join(dir, "m.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Schedule) == 0 || sc.Expect == nil || sc.Expect.Verdict != "violated" {
		t.Fatalf("scenario %+v: want a schedule and the expected verdict", sc)
	}
	const q = "SELECT proc, seq, kind, lamport, vc, msg, msg_type, peer, resource, detail FROM events ORDER BY proc, seq"
	a, b := recordAgain(t, tr, filepath.Join(dir, "m.json"), "deadlock", q)
	if a != b || a == "" {
		t.Fatal("the scenario records another trace than explore wrote")
	}

	code, out, _ = dmx(t, "explore", "central", "-n", "3", "--entries", "1", "-o", filepath.Join(dir, "c.db"))
	if code != 0 || !strings.Contains(out, "the space is exhausted") {
		t.Fatalf("explore central: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.db")); err == nil {
		t.Fatal("a trace was written without a violation")
	}
	code, out, _ = dmx(t, "explore", "ricart-agrawala", "-n", "3", "--entries", "2", "--max-states", "500", "--format", "json", "-o", filepath.Join(dir, "r.db"))
	var rep struct {
		Verdict   string
		States    int64
		Exhausted bool
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 3 || rep.Verdict != "inconclusive" || rep.Exhausted || rep.States == 0 {
		t.Fatalf("explore with a budget: exit %d %+v (%v)\n%s", code, rep, err, out)
	}
}

// TestExploreFaultsCLI: with --faults the search crashes and restarts
// processes: majority coordinators that forget their vote let two in; and
// it loses messages: on raw channels a lost request leaves central's
// client waiting, which the scenario (channels raw) records again and
// replay reproduces, drop event included.
func TestExploreFaultsCLI(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := dmx(t, "explore", "majority", "-n", "2", "--entries", "1", "--param", "forget=true", "--param", "coordinators=1",
		"--faults", "crash,restart", "--checks", "mutex-causal", "-o", filepath.Join(dir, "f.db"))
	if code != 1 || !strings.Contains(out, "in the critical section of cs at once") || !strings.Contains(out, "crash P0") || !strings.Contains(out, "recover P0") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	lost := filepath.Join(dir, "l.db")
	code, out, errs = dmx(t, "explore", "central", "-n", "2", "--entries", "1", "--faults", "loss", "-o", lost)
	if code != 1 || !strings.Contains(out, "raw FIFO channels, faults loss (at most 1)") || !strings.Contains(out, "lose P1>P0") || !strings.Contains(out, "P1 waits for the critical section") {
		t.Fatalf("explore --faults loss: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := dmx(t, "replay", lost); code != 0 {
		t.Fatalf("replay of the loss: exit %d\n%s", code, out)
	}
	const q = "SELECT proc, seq, kind, lamport, msg, peer, detail FROM events WHERE kind = 'drop'"
	a, b := recordAgain(t, lost, filepath.Join(dir, "l.json"), "liveness", q)
	if a != b || !strings.Contains(a, `"fault"":""loss""`) {
		t.Fatalf("the drop explore wrote %q, the scenario recorded %q", a, b)
	}
}

// TestExploreBadInput: what explore cannot do is a usage error naming why.
func TestExploreBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explore", "paxos"}, `unknown algorithm "paxos"`},
		{[]string{"explore", "bully"}, "elections run on time-outs"},
		{[]string{"explore", "central", "--faults", "delay"}, `--faults "delay"`},
		{[]string{"explore", "central", "-n", "0"}, "nodes 0"},
		{[]string{"explore", "central", "--format", "xml"}, `--format "xml"`},
		{[]string{"explore", "central", "--faults", "crash", "--max-faults", "0"}, "--max-faults 0"},
	} {
		code, _, errs := dmx(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", c.args, code, c.want, errs)
		}
	}
}

// TestExploreInterrupt: Ctrl-C ends a long search as --timeout would: it
// reports how far it went, inconclusive (exit 3), and writes nothing.
func TestExploreInterrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	p := start(t, "explore", "ricart-agrawala", "-n", "3", "--entries", "2", "--format", "json", "-o", path)
	// The search of this run takes minutes; give dmx time to start it.
	time.Sleep(3 * time.Second)
	p.cmd.Process.Signal(syscall.SIGINT)
	code, sig := p.wait(t, 30*time.Second)
	if code != exitInconclusive {
		t.Fatalf("exit %d (signal %v), want 3\nstderr:\n%s", code, sig, p.stderr.String())
	}
	var rep struct {
		Verdict   string
		States    int64
		Exhausted bool
	}
	if err := json.Unmarshal([]byte(p.stdout.String()), &rep); err != nil || rep.Verdict != "inconclusive" || rep.Exhausted || rep.States == 0 {
		t.Fatalf("report %+v (%v):\n%s", rep, err, p.stdout.String())
	}
	if !strings.Contains(p.stderr.String(), "ending the search") {
		t.Errorf("dmx did not say what the interrupt does:\n%s", p.stderr.String())
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("a trace was written without a violation")
	}
}

// recordAgain records the scenario explore wrote beside trace with dmx sim
// (its check must find violated) and returns what query q reads, as CSV,
// from explore's trace and from the one sim recorded.
func recordAgain(t *testing.T, trace, scenario, violated, q string) (string, string) {
	t.Helper()
	again := strings.TrimSuffix(trace, ".db") + "-again.db"
	if code, out, errs := dmx(t, "sim", "--scenario", scenario, "-o", again); code != 1 || !strings.Contains(out, violated) {
		t.Fatalf("sim --scenario %s: exit %d\n%s%s", scenario, code, out, errs)
	}
	_, a, _ := dmx(t, "sql", trace, q, "--format", "csv")
	_, b, _ := dmx(t, "sql", again, q, "--format", "csv")
	return a, b
}

// TestExploreNotShrunk: a violation no smaller run shows is said to be
// so, not "shrunk from X to X" (majority whose coordinators forget their
// vote: three processes, a crash and a restart are all needed).
func TestExploreNotShrunk(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := dmx(t, "explore", "majority", "--param", "forget=true", "--faults", "crash,restart", "-n", "3", "--entries", "1",
		"-o", filepath.Join(dir, "m.db"))
	if code != exitViolated {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "not shrunk: no smaller run (fewer processes, entries, steps or faults) violates it; 3 processes, 1 entry, 8 steps, 1 fault\n") ||
		strings.Contains(out, "shrunk from") {
		t.Errorf("output:\n%s", out)
	}
}

// TestExploreHelpExamples: what explore's help says its examples do, they
// do: the one that "exhausts the space" exits 0 having visited every state
// within the default budget (ricart-agrawala 3 x 2 stopped at 5,000,000
// of its 22.9M states and exited 3), each that finds something exits 1.
func TestExploreHelpExamples(t *testing.T) {
	cmd := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	c, _, err := cmd.Find([]string{"explore"})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, line := range strings.Split(c.Example, "\n") {
		command, comment, _ := strings.Cut(strings.TrimSpace(line), "#")
		var want int
		switch {
		case strings.Contains(comment, "exhausts the space"):
			want = exitOK
		case strings.Contains(comment, "deadlocks"), strings.Contains(comment, "needs FIFO"), strings.Contains(comment, "waits for ever"):
			want = exitViolated
		default:
			continue
		}
		args := append(shellWords(command)[1:], "-o", filepath.Join(t.TempDir(), "x.db"))
		code, out, errs := dmx(t, args...)
		if code != want {
			t.Errorf("%s: exit %d, want %d\n%s%s", command, code, want, out, errs)
		}
		if want == exitOK && !strings.Contains(out, "every reachable state was visited") {
			t.Errorf("%s: %s", command, out)
		}
		ran++
	}
	if ran < 3 {
		t.Errorf("ran %d of explore's examples", ran)
	}
}

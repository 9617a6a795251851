package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze/tally"
	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/trace"
)

// sweepJSON runs dmx with args (a sweep or a check --summary with
// --format json) and returns its table.
func sweepJSON(t *testing.T, want int, args ...string) render.Sweep {
	t.Helper()
	code, out, errs := dmx(t, append(args, "--format", "json")...)
	if code != want {
		t.Fatalf("dmx %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), code, want, out, errs)
	}
	var s render.Sweep
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("dmx %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return s
}

func checkOf(t *testing.T, s render.Sweep, name string) tally.Check {
	t.Helper()
	for _, c := range s.Checks {
		if c.Check == name {
			return c
		}
	}
	t.Fatalf("no check %s in the table: %+v", name, s.Checks)
	return tally.Check{}
}

// rerun carries out a table's rerun line ("dmx sim ...") into a trace of
// its own and returns the exit code and what it printed.
func rerun(t *testing.T, line, out string) (int, string) {
	t.Helper()
	args, ok := strings.CutPrefix(line, "dmx ")
	if !ok {
		t.Fatalf("rerun line %q does not start with dmx", line)
	}
	if strings.ContainsAny(args, `'"`) {
		t.Fatalf("rerun line %q needs a shell: the test splits on blanks", line)
	}
	code, stdout, errs := dmx(t, append(strings.Fields(args), "-o", out, "--no-diagram")...)
	return code, stdout + errs
}

// TestSweepFindsLamportReorder: without FIFO channels Lamport's algorithm
// lets two processes in at once on some seeds (seed 002): a sweep finds
// it at a rate between none and all, and the first failing seed's rerun
// line records the same violation again.
func TestSweepFindsLamportReorder(t *testing.T) {
	dir := t.TempDir()
	s := sweepJSON(t, exitViolated, "sweep", "lamport", "--reorder", "--seeds", "1..8", "-o", filepath.Join(dir, "l.db"))
	if s.Runs != 8 || s.Verdict != "violated" {
		t.Fatalf("8 runs, violated: %+v", s)
	}
	c := checkOf(t, s, "mutex-causal")
	if c.Violated == 0 || c.Violated == 8 || c.First == nil || c.Smallest == nil {
		t.Fatalf("mutex-causal: violated in %d of 8 runs, want some but not all: %+v", c.Violated, c)
	}
	if c.Low > c.Rate || c.High < c.Rate || c.Low <= 0 || c.High >= 1 {
		t.Errorf("rate %v outside its interval [%v, %v]", c.Rate, c.Low, c.High)
	}
	if !strings.Contains(c.First.Rerun, "--reorder") || !strings.Contains(c.First.Rerun, "--seed ") {
		t.Errorf("rerun line %q lacks the seed or --reorder", c.First.Rerun)
	}
	code, out := rerun(t, c.First.Rerun, filepath.Join(dir, "again.db"))
	if code != exitViolated || !strings.Contains(out, c.First.Finding) {
		t.Errorf("%s: exit %d, want the same violation (%s):\n%s", c.First.Rerun, code, c.First.Finding, out)
	}
}

// TestSweepFindsBullySplitUnderPauses: bully's safety rests on time-outs
// (seed 004): pausing the leader elects another while it lives. A sweep
// with a nemesis of leader pauses finds the split at a rate, names the
// failing seed with the schedule it drew, and its rerun line reproduces
// it; the fault kind's row says pauses did it.
func TestSweepFindsBullySplitUnderPauses(t *testing.T) {
	dir := t.TempDir()
	s := sweepJSON(t, exitViolated, "sweep", "bully", "--nemesis", "pause:who=leader:for=100ms-400ms", "--seeds", "1..6", "-o", filepath.Join(dir, "b.db"))
	c := checkOf(t, s, "split-brain")
	if c.Violated == 0 || c.First == nil {
		t.Fatalf("split-brain never violated in 6 runs under leader pauses: %+v", s.Checks)
	}
	if !strings.Contains(c.First.Rerun, "--faults pause:leader@") {
		t.Errorf("rerun line %q does not name the pauses drawn", c.First.Rerun)
	}
	code, out := rerun(t, c.First.Rerun, filepath.Join(dir, "again.db"))
	if code != exitViolated || !strings.Contains(out, c.First.Finding) {
		t.Errorf("%s: exit %d, want the same split (%s):\n%s", c.First.Rerun, code, c.First.Finding, out)
	}
	var pause *tally.Kind
	for i, k := range s.Kinds {
		if k.Kind == "pause" {
			pause = &s.Kinds[i]
		}
		if k.Kind == tally.None {
			for _, kc := range k.Checks {
				if kc.Check == "split-brain" && kc.Violated > 0 {
					t.Errorf("runs without faults split: %+v", k)
				}
			}
		}
	}
	if pause == nil || pause.Runs == 0 {
		t.Fatalf("no row for the pause kind: %+v", s.Kinds)
	}
}

// TestSweepSchedulesBySeed: a seed draws the same schedule in every
// sweep (recorded in runs.faults), whatever the other seeds and workers.
func TestSweepSchedulesBySeed(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	dmx(t, "sweep", "ricart-agrawala", "-n", "3", "--entries", "3", "--faults", "random", "--seeds", "1..6", "--workers", "2", "-o", a)
	dmx(t, "sweep", "ricart-agrawala", "-n", "3", "--entries", "3", "--faults", "random", "--seeds", "4..6", "--workers", "1", "-o", b)
	faults := func(path string) map[uint64]string {
		runs, err := trace.ReadRuns(path)
		if err != nil {
			t.Fatal(err)
		}
		out := map[uint64]string{}
		for _, r := range runs {
			out[r.Seed] = string(r.Faults)
		}
		return out
	}
	fa, fb := faults(a), faults(b)
	if len(fa) != 6 || len(fb) != 3 {
		t.Fatalf("runs: %v, %v", fa, fb)
	}
	some := false
	for seed, f := range fb {
		if fa[seed] != f {
			t.Errorf("seed %d: %s in one sweep, %s in the other", seed, fa[seed], f)
		}
		some = some || f != "[]"
	}
	for seed := uint64(1); seed <= 6; seed++ {
		some = some || fa[seed] != "[]"
	}
	if !some {
		t.Errorf("no seed of 6 drew a fault: %v", fa)
	}
}

// TestSweepShardsMerged: the shards of a sweep, merged in order, give
// the table of the whole sweep (run ids included), and dmx check
// --summary of the whole sweep's trace gives the table the sweep printed
// (its verdicts, made in memory, are those of the trace).
func TestSweepShardsMerged(t *testing.T) {
	dir := t.TempDir()
	base := []string{"sweep", "bully", "--nemesis", "pause,crash", "--seeds", "1..7"}
	code, whole, errs := dmx(t, append(base, "-o", filepath.Join(dir, "whole.db"))...)
	if code == exitUsage {
		t.Fatalf("whole sweep: exit %d\n%s", code, errs)
	}
	var shards []string
	for k := 1; k <= 3; k++ {
		path := filepath.Join(dir, "shard-"+string(rune('0'+k))+".db")
		if c, _, errs := dmx(t, append(base, "--shard", string(rune('0'+k))+"/3", "-o", path)...); c == exitUsage {
			t.Fatalf("shard %d: exit %d\n%s", k, c, errs)
		}
		shards = append(shards, path)
	}
	all := filepath.Join(dir, "all.db")
	if c, out, errs := dmx(t, append(append([]string{"merge"}, shards...), "-o", all)...); c != 0 || !strings.Contains(out, "merged 3 traces") {
		t.Fatalf("merge: exit %d\n%s%s", c, out, errs)
	}
	table := func(out, path string) string {
		out = strings.ReplaceAll(out, path, "TRACE")
		_, rest, _ := strings.Cut(out, "\n") // the title names the sweep or the files
		return rest
	}
	c2, merged, _ := dmx(t, "check", "--summary", all)
	c3, again, _ := dmx(t, "check", "--summary", filepath.Join(dir, "whole.db"))
	if c2 != code || c3 != code {
		t.Errorf("exit codes: sweep %d, merged %d, whole rechecked %d", code, c2, c3)
	}
	if w, m := table(whole, filepath.Join(dir, "whole.db")), table(merged, all); w != m {
		t.Errorf("merged shards:\n%s\nwhole sweep:\n%s", m, w)
	}
	if w, a := table(whole, filepath.Join(dir, "whole.db")), table(again, filepath.Join(dir, "whole.db")); w != a {
		t.Errorf("dmx check --summary of the sweep's trace:\n%s\nthe sweep:\n%s", a, w)
	}
	if !regexp.MustCompile(`seed \d+ \(TRACE run \d+, \d+ events\): first [a-z-]+.*\n    dmx sim bully --seed \d+`).MatchString(table(whole, filepath.Join(dir, "whole.db"))) {
		t.Errorf("no failing seed in 7 runs under pauses and crashes:\n%s", whole)
	}
	junit := filepath.Join(dir, "s.xml")
	c4, x, _ := dmx(t, "check", "--summary", "--format", "junit", all)
	os.WriteFile(junit, []byte(x), 0o644)
	if c4 != code || !strings.Contains(x, `<testcase name="split-brain"`) || !strings.Contains(x, "<failure message=\"violated in") {
		t.Errorf("junit: exit %d\n%s", c4, x)
	}
}

// TestSweepBadInput: what a sweep cannot run is refused before it
// starts, exit 2, naming the flag.
func TestSweepBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ricart-agrawala", "--seeds", "5..1"}, "--seeds \"5..1\": want A..B"},
		{[]string{"ricart-agrawala", "--seeds", "1..5", "--runs", "3"}, "give one"},
		{[]string{"ricart-agrawala", "--runs", "0"}, "--runs 0"},
		{[]string{"ricart-agrawala", "--runs", "2", "--shard", "3/3"}, "part 3 is empty"},
		{[]string{"ricart-agrawala", "--shard", "0/3"}, "--shard \"0/3\""},
		{[]string{"ricart-agrawala", "--nemesis", "flood"}, "unknown kind \"flood\""},
		{[]string{"ricart-agrawala", "--nemesis", "pause:who=leader"}, "elects no leader"},
		{[]string{"ricart-agrawala", "--faults", "random,bogus"}, "unknown fault \"bogus\""},
		{[]string{"ricart-agrawala", "--real", "--delay", "1ms"}, "--delay is the simulator's"},
		{[]string{"ricart-agrawala", "--format", "csv"}, "--format \"csv\""},
		{[]string{"nosuch"}, "unknown algorithm"},
	} {
		code, _, errs := dmx(t, append(append([]string{"sweep"}, c.args...), "-o", out)...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("sweep %v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, errs)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused sweep made %s", out)
	}
}

// TestSweepExec: a sweep of a program of one's own (--exec, the node
// protocol): each seed runs the program under its random faults, the
// table names the failing seeds with rerun lines that start the program
// again, and dmx check --summary of the trace gives the same table.
func TestSweepExec(t *testing.T) {
	prog := awk(t, "lock.awk")
	dir := t.TempDir()
	tr := filepath.Join(dir, "x.db")
	code, out, errs := dmx(t, "sweep", "--exec", prog, "-n", "3", "--entries", "3", "--faults", "random", "--seeds", "1..6", "-o", tr)
	if code == exitUsage || !strings.Contains(out, "sweep: awk, seeds 1..6") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if code == exitViolated && !strings.Contains(out, "dmx sim --exec '"+prog+"' --seed ") {
		t.Errorf("the rerun lines do not start the program:\n%s", out)
	}
	_, again, _ := dmx(t, "check", "--summary", tr)
	_, a, _ := strings.Cut(out, "\n")
	_, b, _ := strings.Cut(again, "\n")
	if a != b {
		t.Errorf("dmx check --summary:\n%s\nthe sweep:\n%s", b, a)
	}
}

// TestSweepReal: --real runs each seed as real processes over UDP, one
// run at a time: every seed is recorded as a run of mode udp, each with
// its seed, and the table covers them. Over UDP only what load cannot
// break is asserted: the runs, not their verdicts.
func TestSweepReal(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "real.db")
	code, out, errs := dmx(t, "sweep", "ricart-agrawala", "--real", "-n", "3", "--entries", "2", "--seeds", "1..2", "-o", tr)
	if code == exitUsage || !strings.Contains(out, "real processes: 2 runs") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "1 worker into") {
		t.Errorf("--real should run one run at a time:\n%s", errs)
	}
	runs, err := trace.ReadRuns(tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Mode != "udp" || runs[0].Seed != 1 || runs[1].Seed != 2 {
		t.Errorf("runs: %+v", runs)
	}
	if !strings.Contains(out, "dmx run ricart-agrawala --seed") && strings.Contains(out, "failing seeds") {
		t.Errorf("a failing real run's rerun line is not dmx run:\n%s", out)
	}
}

// TestSweepInterrupt: Ctrl-C ends a sweep with what is done: exit 3,
// the seeds not run named, every run in the trace whole (none cut
// short), and the trace closed whole.
func TestSweepInterrupt(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "s.db")
	p := start(t, "sweep", "ricart-agrawala", "-n", "3", "--entries", "2", "--runs", "1000000", "-o", tr)
	waitFor(t, 60*time.Second, "runs recorded", func() bool {
		st, err := trace.OpenWith(tr, trace.OpenOptions{NoIntegrityCheck: true})
		if err != nil {
			return false
		}
		defer st.Close()
		runs, err := st.Runs()
		return err == nil && len(runs) >= 5
	})
	p.cmd.Process.Signal(syscall.SIGINT)
	code, _ := p.wait(t, 60*time.Second)
	errs := p.stderr.String()
	if code != exitInconclusive || !strings.Contains(errs, "sweep interrupted:") || !strings.Contains(errs, "not run: seeds") {
		t.Fatalf("exit %d, want 3 naming the seeds not run\n%s", code, errs)
	}
	st, err := trace.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if !r.Complete {
			t.Errorf("run %d (seed %d) is in the trace cut short: %s", r.ID, r.Seed, r.Status)
		}
	}
	if !strings.Contains(errs, fmt.Sprintf("%d runs of 1000000 done", len(runs))) {
		t.Errorf("the trace holds %d runs; dmx said:\n%s", len(runs), errs)
	}
}

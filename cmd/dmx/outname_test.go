package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// dmxIn runs dmx (this test binary) in dir, for what it writes there by
// default; it returns the exit code and stdout and stderr together.
func dmxIn(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// runsIn returns how many runs the trace at path holds.
func runsIn(t *testing.T, path string) string {
	t.Helper()
	code, out, errs := dmx(t, "sql", path, "SELECT count(*) FROM runs", "--format", "csv")
	if code != 0 {
		t.Fatalf("sql %s: %s", path, errs)
	}
	return strings.TrimSpace(strings.TrimPrefix(out, "count(*)\n"))
}

// TestDefaultNamesNeverMerge: the traces dmx names by itself never take
// a run of another command line. Two scenarios of one algorithm and seed
// wrote dmx-bully-1.db both, and dmx check of it checked the two runs; a
// command run twice added run 2; -o naming an existing trace added a run
// without a word. Now a scenario names its trace, a name in use gets -2,
// and an existing trace takes a run only with --append.
func TestDefaultNamesNeverMerge(t *testing.T) {
	dir := t.TempDir()
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	tight, suspicion := filepath.Join(examples, "bully-tight-timeout.json"), filepath.Join(examples, "bully-false-suspicion.json")
	for _, c := range []struct {
		args []string
		want string // the trace it writes
	}{
		{[]string{"sim", "--scenario", tight, "--no-diagram"}, "dmx-bully-tight-timeout-1.db"},
		{[]string{"sim", "--scenario", suspicion, "--no-diagram"}, "dmx-bully-false-suspicion-1.db"},
		{[]string{"sim", "--scenario", tight, "--no-diagram"}, "dmx-bully-tight-timeout-1-2.db"}, // the same again
		{[]string{"sim", "central", "-n", "2", "--entries", "1", "--seed", "7", "--no-diagram"}, "dmx-central-7.db"},
		{[]string{"sim", "central", "-n", "2", "--entries", "1", "--seed", "7", "--no-diagram"}, "dmx-central-7-2.db"},
	} {
		code, out := dmxIn(t, dir, c.args...)
		if code > 1 || !strings.Contains(out, "trace: "+c.want+" (run 1)") {
			t.Fatalf("dmx %v: exit %d, want the trace %s:\n%s", c.args, code, c.want, out)
		}
		if n := runsIn(t, filepath.Join(dir, c.want)); n != "1" {
			t.Errorf("%s holds %s runs, want 1", c.want, n)
		}
	}

	// -o naming an existing trace: refused, or with --append run 2.
	existing := filepath.Join(dir, "dmx-central-7.db")
	code, out := dmxIn(t, dir, "sim", "central", "-n", "2", "--entries", "1", "--no-diagram", "-o", existing)
	if code != exitUsage || !strings.Contains(out, "the trace (-o) "+existing+" exists: --append adds this run to it, or -o names a new trace") {
		t.Errorf("-o an existing trace: exit %d\n%s", code, out)
	}
	if code, out := dmxIn(t, dir, "sim", "central", "-n", "2", "--entries", "1", "--no-diagram", "--append", "-o", existing); code != 0 || !strings.Contains(out, "(run 2)") {
		t.Errorf("--append: exit %d\n%s", code, out)
	}
	if n := runsIn(t, existing); n != "2" {
		t.Errorf("%s holds %s runs after --append, want 2", existing, n)
	}
}

// TestExploreOneScenarioPerRun: a second dmx explore of the same
// algorithm writes a trace and a scenario of its own, and a run added to
// a trace with --append gets its own scenario beside the first's, which
// stays as it was (it was overwritten by the second run's).
func TestExploreOneScenarioPerRun(t *testing.T) {
	dir := t.TempDir()
	args := []string{"explore", "maekawa", "-n", "3", "--entries", "1"}
	for _, want := range []string{"dmx-explore-maekawa", "dmx-explore-maekawa-2"} {
		code, out := dmxIn(t, dir, args...)
		if code != exitViolated || !strings.Contains(out, "trace: "+want+".db (run 1)") || !strings.Contains(out, "scenario: "+want+".json") {
			t.Fatalf("exit %d, want %s.db and %s.json:\n%s", code, want, want, out)
		}
	}
	first := filepath.Join(dir, "dmx-explore-maekawa.json")
	before := readFile(t, first)
	code, out := dmxIn(t, dir, append(args, "--reorder", "-o", "dmx-explore-maekawa.db")...)
	if code != exitUsage || !strings.Contains(out, "--append") {
		t.Errorf("-o an existing trace without --append: exit %d\n%s", code, out)
	}
	code, out = dmxIn(t, dir, append(args, "--reorder", "--append", "-o", "dmx-explore-maekawa.db")...)
	if code != exitViolated || !strings.Contains(out, "trace: dmx-explore-maekawa.db (run 2)") || !strings.Contains(out, "scenario: dmx-explore-maekawa-3.json") {
		t.Fatalf("--append: exit %d\n%s", code, out)
	}
	if after, err := os.ReadFile(first); err != nil || string(after) != string(before) {
		t.Errorf("run 1's scenario changed when run 2 was added (%v)", err)
	}
}

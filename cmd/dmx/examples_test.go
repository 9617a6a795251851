package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner"
)

// TestExamples replays every scenario in examples/ in the simulator and
// checks the verdict it expects, and the checks that must find it.
func TestExamples(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.json")
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			sc, err := runner.LoadScenario(file)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Expect == nil {
				t.Fatalf("%s says nothing of what to expect", file)
			}
			out := filepath.Join(t.TempDir(), "x.db")
			code, stdout, stderr := dmx(t, "sim", "--scenario", file, "-o", out, "--format", "json")
			want := map[string]int{"ok": 0, "violated": 1, "unknown": 3}[sc.Expect.Verdict]
			if code != want {
				t.Fatalf("exit %d, want %d (%s)\n%s%s", code, want, sc.Expect.Verdict, stdout, stderr)
			}
			var rep struct {
				Runs []struct {
					Results []struct {
						Check   string `json:"check"`
						Verdict string `json:"verdict"`
					} `json:"results"`
				} `json:"runs"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("json: %v\n%s", err, stdout)
			}
			for _, c := range sc.Expect.Checks {
				found := false
				for _, r := range rep.Runs[0].Results {
					found = found || (r.Check == c && r.Verdict == "violated")
				}
				if !found {
					t.Errorf("check %s did not report the violation:\n%s", c, stdout)
				}
			}
		})
	}
}

// TestScenarioErrors: a bad scenario file is a clear error naming the file
// and line.
func TestScenarioErrors(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ text, want string }{
		"syntax":  {"{\n  \"nodes\": 3,\n  \"seed\": ,\n}", "bad.json:3"},
		"type":    {"{\n  \"nodes\": \"five\"\n}", "bad.json:2"},
		"unknown": {"{\"nodez\": 3}", "nodez"},
		"procs":   {"{\"algorithm\": \"central\", \"nodes\": 2, \"procs\": {\"P7\": {}}}", "P7"},
		"noalgo":  {"{\"nodes\": 2}", "no algorithm"},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.json")
			os.WriteFile(p, []byte(c.text), 0o644)
			code, _, errs := dmx(t, "sim", "--scenario", p, "-o", filepath.Join(dir, "x.db"))
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, stderr %q, want 2 and %q", code, errs, c.want)
			}
		})
	}
}

// TestScenarioUnderRun: dmx run honours the simulator's network fields of
// a scenario: its reorder and delay become faults (shown, and stored in
// runs.faults), never dropped silently.
func TestScenarioUnderRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.db")
	code, _, errs := dmx(t, "run", "--scenario", "../../examples/tomcast-without-fifo.json", "-o", out, "--no-check", "--entries", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "faults reorder:100µs-5ms") {
		t.Errorf("the header does not show the reorder:\n%s", errs)
	}
	code, stdout, _ := dmx(t, "sql", out, "SELECT faults FROM runs", "--format", "csv")
	if code != 0 || !strings.Contains(stdout, "reorder:100µs-5ms") {
		t.Errorf("runs.faults: %s", stdout)
	}
}

// TestCrashedBeforeAnything: a process crashed before it did anything is
// not a finished workload: the status says it did not finish, in both
// drivers.
func TestCrashedBeforeAnything(t *testing.T) {
	for _, cmd := range []string{"sim", "run"} {
		out := filepath.Join(t.TempDir(), "x.db")
		code, _, errs := dmx(t, cmd, "central", "-n", "3", "--entries", "3", "--seed", "4", "--faults", "crash:2@0s", "-o", out)
		if code != 0 || !strings.Contains(errs, "the live nodes finished their workloads; P2 did not: crashed") {
			t.Errorf("%s: exit %d\n%s", cmd, code, errs)
		}
	}
}

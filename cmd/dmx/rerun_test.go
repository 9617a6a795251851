package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// rerunArgs returns the arguments of the "rerun: dmx ..." line a run
// printed on stderr, unquoting what the shell would.
func rerunArgs(t *testing.T, stderr string) []string {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		cmd, ok := strings.CutPrefix(line, "rerun: dmx ")
		if !ok {
			continue
		}
		return shellWords(cmd)
	}
	t.Fatalf("no rerun line in:\n%s", stderr)
	return nil
}

// recordedPlan reads the plan of the only run of the trace at path back
// from its runs row, and checks that it makes the same row.
func recordedPlan(t *testing.T, path string) runner.Plan {
	t.Helper()
	runs, err := trace.ReadRuns(path)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	p, err := runner.PlanFromRun(runs[0], registry.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	row := p.RunRow()
	if string(row.Params) != string(runs[0].Params) || string(row.Faults) != string(runs[0].Faults) ||
		row.Algorithm != runs[0].Algorithm || row.Nodes != runs[0].Nodes || row.Seed != runs[0].Seed || row.Mode != runs[0].Mode {
		t.Fatalf("the plan read back makes another row:\n got %s %s\nwant %s %s", row.Params, row.Faults, runs[0].Params, runs[0].Faults)
	}
	return p
}

// TestRerun: the command line a simulated run prints after "rerun:"
// records the same trace, row for row; and the run's row reads back into
// a plan that makes the same row.
func TestRerun(t *testing.T) {
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"faults":   {"sim", "central", "--seed", "42", "-n", "4", "--faults", "crash:1@20ms", "--faults", "recover:1@40ms"},
		"random":   {"sim", "ricart-agrawala", "--entries", "3", "--hold", "2ms", "--delay", "1ms-4ms"},
		"params":   {"sim", "maekawa", "--param", "variant=inquire", "--contention", "high", "--reorder", "-n", "9", "--entries", "2"},
		"nested":   {"sim", "central", "--seed", "5", "--resources", "a,b", "--nested", "--order", "reverse-odd", "--entries", "3"},
		"election": {"sim", "bully", "--seed", "3", "--duration", "700ms", "--faults", "crash:leader@300ms"},
		"scenario": {"sim", "--scenario", "../../examples/per-process-locks.json", "--entries", "2"},
		"override": {"sim", "--scenario", "../../examples/majority-forget.json", "--seed", "11", "--param", "backoff=2ms"},
		"network":  {"sim", "bully", "--seed", "4", "--duration", "1s", "--faults", "loss:10%:type=heartbeat,partition:0+1@200ms-500ms,pause:leader@600ms+100ms,skew:2:+3ms", "--channels", "raw"},
		"triggers": {"sim", "central", "--seed", "6", "--faults", "crash:cs@30ms,recover:cs:amnesia@+10ms,crash:2@send:request#2"},
	} {
		t.Run(name, func(t *testing.T) {
			first := filepath.Join(dir, name+"-1.db")
			code, _, errs := dmx(t, append(args, "-o", first, "--no-check", "--no-diagram")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			again := rerunArgs(t, errs)
			second := filepath.Join(dir, name+"-2.db")
			code, _, errs2 := dmx(t, append(again, "-o", second, "--no-check", "--no-diagram")...)
			if code != 0 {
				t.Fatalf("rerun %q: exit %d: %s", again, code, errs2)
			}
			if a, b := simSum(t, first), simSum(t, second); a != b {
				t.Fatalf("dmx %s records another trace than dmx %s", strings.Join(again, " "), strings.Join(args, " "))
			}
			if got := rerunArgs(t, errs2); strings.Join(got, " ") != strings.Join(again, " ") {
				t.Errorf("the rerun prints another rerun line: %q, then %q", again, got)
			}
			recordedPlan(t, first)
		})
	}
}

// TestRerunUDP: a real run's row reads back into its plan, and its rerun
// line is dmx run with what the flags said.
func TestRerunUDP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "u.db")
	code, _, errs := dmx(t, "run", "central", "-n", "2", "--entries", "2", "--seed", "5", "--stall", "3s", "-o", path, "--no-check")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if got, want := strings.Join(rerunArgs(t, errs), " "), "run central --seed 5 -n 2 --entries 2 --stall 3s"; got != want {
		t.Errorf("rerun %q, want %q", got, want)
	}
	p := recordedPlan(t, path)
	if p.Driver != runner.DriverUDP || p.N != 2 || p.Workload.Entries != 2 {
		t.Errorf("plan read back: %+v", p)
	}
}

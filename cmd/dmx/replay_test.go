package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/sweep"
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
			// The line check, report and sweep print for the plan read
			// back: the same words (--duration included), one quoting rule
			// (loss:10% unquoted). A row does not name a scenario file.
			p := recordedPlan(t, first)
			if line := "rerun: " + sweep.Rerun(p); !slices.Contains(args, "--scenario") && !strings.Contains(errs, line+"\n") {
				t.Errorf("sweep would print %q; dmx %s printed\n%s", line, args[0], errs)
			}
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

// TestReplayRealRuns: runs recorded over UDP by dmx run, as real OS
// processes, replay event for event: Ricart-Agrawala; lease, whose machines
// read Input.Now; majority with a coordinator SIGKILLed and restarted (its
// persisted vote, its new random stream); bully with its leader killed.
func TestReplayRealRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"ricart-agrawala", []string{"ricart-agrawala", "-n", "3", "--entries", "3"}},
		{"lease", []string{"lease", "-n", "3", "--duration", "600ms"}},
		{"majority restarted", []string{"majority", "-n", "3", "--entries", "3", "--faults", "crash:0@5ms,recover:0@60ms"}},
		{"bully", []string{"bully", "-n", "3", "--duration", "900ms", "--faults", "crash:leader@300ms,recover:leader@+300ms"}},
		{"ricart-agrawala under network faults", []string{"ricart-agrawala", "-n", "3", "--entries", "4",
			"--faults", "loss:20%,duplicate:10%,pause:0@20ms-60ms,skew:1:+5ms@10ms"}},
		{"majority restarted with amnesia", []string{"majority", "-n", "3", "--entries", "3", "--faults", "crash:0@5ms,recover:0:amnesia@60ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run.db")
			args := append([]string{"run"}, tc.args...)
			args = append(args, "--seed", "5", "--no-check", "-o", path)
			if !slices.Contains(args, "--duration") {
				// A majority run can starve on a loaded machine (with
				// amnesia, for ever): cut it short, and replay it up to
				// the cut.
				args = append(args, "--duration", "20s")
			}
			// Exit 3: the run was cut short (--duration), unchecked.
			if code, out, errs := dmx(t, args...); code != 0 && !(code == 3 && strings.Contains(errs, "is incomplete (cut short")) {
				t.Fatalf("run: exit %d\n%s%s", code, out, errs)
			}
			code, out, errs := dmx(t, "replay", path)
			whole := code == 0 && strings.Contains(out, "matches: every event reproduced")
			cut := code == 3 && strings.Contains(out, "matches up to the cut")
			if !whole && !cut {
				t.Fatalf("replay: exit %d\n%s%s", code, out, errs)
			}
			if cut {
				t.Logf("the run was cut short; its replay matches up to the cut:\n%s", out)
			}
			if strings.Contains(tc.name, "restarted") || tc.name == "bully" {
				_, q, _ := dmx(t, "sql", path, "SELECT sum(kind = 'crash'), sum(kind = 'recover') FROM events", "--format", "csv")
				switch strings.TrimSpace(q) {
				case "sum(kind = 'crash'),sum(kind = 'recover')\n0,0":
					// crash:leader found no leader yet: on a loaded machine
					// the election can take longer than the fault waits.
					t.Logf("the fault found nobody to crash (a loaded machine): no recovery to replay")
				case "sum(kind = 'crash'),sum(kind = 'recover')\n1,0":
					t.Fatalf("a crash but no recovery in the run: the test replays none")
				}
			}
		})
	}
}

// TestReplayStepCLI: --step prints every event, inputs with their state;
// --at and --until bound what is printed; --format json gives one object
// a line.
func TestReplayStepCLI(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.db")
	if code, _, errs := dmx(t, "sim", "maekawa", "-n", "4", "--entries", "2", "--seed", "3", "-o", path); code > 1 {
		t.Fatalf("sim: %s", errs)
	}
	code, out, errs := dmx(t, "replay", path, "--step")
	if code != 0 {
		t.Fatalf("replay --step: exit %d\n%s", code, errs)
	}
	for _, want := range []string{"#1 P", "voting_set", "changed cs: votes:", "(output of P", "matches"} {
		if !strings.Contains(out, want) {
			t.Errorf("--step output lacks %q", want)
		}
	}
	code, out, _ = dmx(t, "replay", path, "--at", "P2#4", "--until", "P2#4", "--format", "json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("--at P2#4 --until P2#4: exit %d, %d lines, want the step and the result:\n%s", code, len(lines), out)
	}
	var step struct {
		Step struct {
			Event struct{ Ref string }
			State struct {
				Machines []struct{ State map[string]any }
			}
		}
	}
	var result struct{ Result struct{ Verdict string } }
	if err := json.Unmarshal([]byte(lines[0]), &step); err != nil || step.Step.Event.Ref != "P2#4" || len(step.Step.State.Machines) != 1 {
		t.Fatalf("step line %s (%v)", lines[0], err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &result); err != nil || result.Result.Verdict != "stopped" {
		t.Fatalf("result line %s (%v)", lines[1], err)
	}
	if code, _, errs := dmx(t, "replay", path, "--at", "P2-4"); code != 2 || !strings.Contains(errs, "P3#40") {
		t.Fatalf("--at P2-4: exit %d %s, want a usage error", code, errs)
	}
}

// TestReplayAnswers: every kind of trace gets a clear answer and its exit
// code: a divergence (1), one on a run another dmx recorded (2), a run cut
// short or abandoned by its recorder (3), an imported run and a file that
// is no trace (2).
func TestReplayAnswers(t *testing.T) {
	dir := t.TempDir()
	sim := func(name string, args ...string) string {
		p := filepath.Join(dir, name)
		// Exit 3: a run cut short, unchecked.
		if code, _, errs := dmx(t, append(append([]string{"sim"}, args...), "--no-check", "-o", p)...); code != 0 && !(code == 3 && strings.Contains(errs, "is incomplete")) {
			t.Fatalf("sim %v: %s", args, errs)
		}
		return p
	}
	sqlite := func(path, q string) { craftOn(t, path, q) }
	changed := sim("changed.db", "ricart-agrawala", "-n", "3", "--entries", "2", "--seed", "1")
	sqlite(changed, "UPDATE events SET detail = '{\"stamp\":99,\"id\":0}' WHERE proc = 0 AND kind = 'send' AND seq = (SELECT min(seq) FROM events WHERE proc = 0 AND kind = 'send')")
	older := sim("older.db", "ricart-agrawala", "-n", "3", "--entries", "2", "--seed", "1")
	sqlite(older, "UPDATE events SET lamport = lamport + 1 WHERE proc = 1 AND kind = 'cs_enter'")
	sqlite(older, "UPDATE runs SET tool_version = 'v0.0.1'")
	cut := sim("cut.db", "lamport", "-n", "3", "--entries", "50", "--seed", "2", "--limit", "30ms")
	// A run whose recorder died: still "running", with nobody holding it.
	abandoned := sim("abandoned.db", "ricart-agrawala", "-n", "3", "--entries", "2", "--seed", "3")
	sqlite(abandoned, "UPDATE runs SET complete = 0, status = 'running', ended_ns = NULL")
	imported := sim("imported.db", "central", "-n", "2", "--entries", "1", "--seed", "1")
	sqlite(imported, "UPDATE runs SET mode = 'import'")
	notTrace := filepath.Join(dir, "notes.txt")
	os.WriteFile(notTrace, []byte("hello\n"), 0o644)

	for _, tc := range []struct {
		name, path string
		code       int
		want       string
	}{
		{"divergence", changed, 1, "diverges at P0"},
		{"another version", older, 2, "recorded by dmx v0.0.1"},
		{"cut short", cut, 3, "matches up to the cut"},
		{"abandoned", abandoned, 3, "cut short (abandoned: its recorder died"},
		{"imported", imported, 2, "imported from another tool"},
		{"not a trace", notTrace, 2, "notes.txt"},
		{"no such file", filepath.Join(dir, "none.db"), 2, "none.db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := dmx(t, "replay", tc.path)
			if code != tc.code || !strings.Contains(out+errs, tc.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s%s", code, tc.code, tc.want, out, errs)
			}
		})
	}
}

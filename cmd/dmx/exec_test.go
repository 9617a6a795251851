package main

import (
	"bytes"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/internal/gobuild"
)

// The tests of dmx run/sim/replay/explore/check with --exec: the programs
// of examples/programs (Go and Python) and two the tests write in a
// second language, awk (testdata/lock.awk, testdata/elect.awk).

// goProgram builds the Go program in dir (relative to the module's root)
// once per test binary and returns its path.
func goProgram(t *testing.T, dir string) string {
	t.Helper()
	return gobuild.Program(t, "../..", dir, filepath.Join(os.TempDir(), fmt.Sprintf("dmx-test-%d-%s", os.Getpid(), filepath.Base(dir))))
}

// removePrograms removes what goProgram built (TestMain, at the end).
func removePrograms() {
	for _, p := range gobuild.Built() {
		os.Remove(p)
	}
}

// python returns the command that runs the Python example file (under
// examples/programs), skipping the test without python3 (failing it under
// CI, whose script installs it).
func python(t *testing.T, file string) string {
	t.Helper()
	py, err := osexec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 not found (.ci/run installs it)")
		}
		t.Skip("python3 not found")
	}
	// The interpreter itself, not a launcher in front of it (a pyenv
	// shim takes most of a second to start).
	if b, err := osexec.Command(py, "-c", "import sys; print(sys.executable)").Output(); err == nil && len(bytes.TrimSpace(b)) > 0 {
		py = string(bytes.TrimSpace(b))
	}
	return py + " " + filepath.Join("..", "..", "examples", "programs", file)
}

// awk returns the command that runs the awk program testdata/file (after
// testdata/protocol.awk, the functions they share), with
// mawk told not to read its input a block at a time (it would wait for a
// block of input lines that never comes).
func awk(t *testing.T, file string, args ...string) string {
	t.Helper()
	if _, err := osexec.LookPath("awk"); err != nil {
		t.Skip("no awk")
	}
	a := "awk"
	if out, _ := osexec.Command("awk", "-W", "version").CombinedOutput(); bytes.Contains(out, []byte("mawk")) {
		a = "awk -W interactive"
	}
	for _, x := range args {
		a += " " + x
	}
	return a + " -f " + filepath.Join("testdata", "protocol.awk") + " -f " + filepath.Join("testdata", file)
}

// TestExecExamples: each example program, under sim and run: the correct
// ones pass every check, the buggy ones are found (exit 1, mutual
// exclusion violated, the diagram drawn), by one command each.
func TestExecExamples(t *testing.T) {
	type example struct {
		name, cmd string
		buggy     bool
	}
	examples := []example{
		{"ricart", goProgram(t, "examples/programs/ricart"), false},
		{"ricart-buggy", goProgram(t, "examples/programs/ricart-buggy"), true},
		{"central", python(t, "central.py"), false},
		{"central-buggy", python(t, "central-buggy.py"), true},
		{"lock.awk", awk(t, "lock.awk"), false},
	}
	for _, e := range examples {
		for _, mode := range []string{"sim", "run"} {
			t.Run(e.name+"/"+mode, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "x.db")
				args := []string{mode, "--exec", e.cmd, "--seed", "1", "-o", out}
				if mode == "run" {
					args = append(args, "-n", "3", "--entries", "4")
				}
				code, stdout, stderr := dmx(t, args...)
				switch {
				case mode == "sim" && e.buggy:
					if code != 1 || !strings.Contains(stdout, "mutex-causal   │ violated") {
						t.Fatalf("exit %d, want 1 with mutex-causal violated\n%s%s", code, stdout, stderr)
					}
					if !strings.Contains(stdout, "diagram: "+strings.TrimSuffix(out, ".db")+".svg") {
						t.Errorf("no diagram drawn:\n%s", stdout)
					}
				case !e.buggy:
					if code != 0 {
						t.Fatalf("exit %d, want 0\n%s%s", code, stdout, stderr)
					}
				default:
					// A buggy program over UDP: whether two overlap
					// depends on the timing; the run is recorded whole
					// and the protocol kept.
					if code != 0 && code != 1 {
						t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
					}
				}
				if !strings.Contains(stdout, "protocol       │ ok") {
					t.Errorf("the protocol was not kept:\n%s", stdout)
				}
				if !strings.Contains(stderr, "rerun: dmx "+mode+" --exec ") {
					t.Errorf("no rerun line with --exec:\n%s", stderr)
				}
			})
		}
	}
}

// TestExecSimTwice: under sim a seed gives the same trace twice, for
// each language; dmx replay re-executes the programs and matches, for a
// simulated and a real run.
func TestExecSimTwice(t *testing.T) {
	for _, c := range []struct{ name, cmd string }{
		{"go", goProgram(t, "examples/programs/ricart")},
		{"python", python(t, "central.py")},
		{"awk", awk(t, "lock.awk")},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var sums []string
			for i := range 2 {
				out := filepath.Join(dir, fmt.Sprintf("%d.db", i))
				if code, stdout, stderr := dmx(t, "sim", "--exec", c.cmd, "-n", "4", "--entries", "3", "--seed", "7", "-o", out, "--no-check", "--no-diagram"); code != 0 {
					t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
				}
				_, csv, _ := dmx(t, "sql", out, "SELECT proc, seq, kind, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail FROM events ORDER BY proc, seq", "--format", "csv")
				sums = append(sums, csv)
			}
			if sums[0] != sums[1] || len(sums[0]) < 1000 {
				t.Fatalf("seed 7 twice: traces differ (%d and %d bytes)", len(sums[0]), len(sums[1]))
			}
			code, stdout, stderr := dmx(t, "replay", filepath.Join(dir, "0.db"))
			if code != 0 || !strings.Contains(stdout, "matches: every event reproduced") {
				t.Fatalf("replay: exit %d\n%s%s", code, stdout, stderr)
			}
			real := filepath.Join(dir, "real.db")
			if code, stdout, stderr := dmx(t, "run", "--exec", c.cmd, "-n", "3", "--entries", "3", "-o", real, "--no-check", "--no-diagram"); code != 0 {
				t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
			}
			code, stdout, stderr = dmx(t, "replay", real)
			if code != 0 || !strings.Contains(stdout, "matches: every event reproduced") {
				t.Fatalf("replay of a real run: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}
}

// TestExecReplayDiverges: a program that behaves otherwise than when it
// was recorded (here: it reads a file that changed) is caught by replay,
// which names the first step where it diverges.
func TestExecReplayDiverges(t *testing.T) {
	dir := t.TempDir()
	mode := filepath.Join(dir, "mode")
	os.WriteFile(mode, []byte("first"), 0o644)
	prog := fmt.Sprintf(`while read -r l; do printf '{"type":"note","text":"%%s"}\n{"type":"done"}\n' "$(cat %s)"; done`, mode)
	out := filepath.Join(dir, "t.db")
	if code, stdout, stderr := dmx(t, "sim", "--exec", prog, "--name", "moody", "-n", "2", "--entries", "1", "-o", out, "--no-check", "--no-diagram"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	os.WriteFile(mode, []byte("second"), 0o644)
	code, stdout, stderr := dmx(t, "replay", out)
	if code != 1 {
		t.Fatalf("replay: exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"diverges at P0", "input:    P0#1 start", `recorded: P0#2 internal(cs) lamport 2 vc [2,0] {"note":"first"}`, `replayed: P0#2 internal(cs) lamport 2 vc [2,0] {"note":"second"}`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("replay output lacks %q:\n%s", want, stdout)
		}
	}
}

// TestExecExplore: random walks find the buggy examples' violation and
// shrink it; a scenario file records it again.
func TestExecExplore(t *testing.T) {
	for _, c := range []struct{ name, cmd string }{
		{"ricart-buggy", goProgram(t, "examples/programs/ricart-buggy")},
		{"central-buggy", python(t, "central-buggy.py")},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "v.db")
			code, stdout, stderr := dmx(t, "explore", "--exec", c.cmd, "--walks", "50", "-o", out)
			if code != 1 || !strings.Contains(stdout, "in the critical section of cs at once") {
				t.Fatalf("exit %d, want 1\n%s%s", code, stdout, stderr)
			}
			scen := strings.TrimSuffix(out, ".db") + ".json"
			if code, stdout, stderr := dmx(t, "sim", "--scenario", scen, "-o", filepath.Join(t.TempDir(), "again.db")); code != 1 {
				t.Fatalf("the scenario again: exit %d, want 1\n%s%s", code, stdout, stderr)
			}
		})
	}
	code, stdout, stderr := dmx(t, "explore", "--exec", awk(t, "lock.awk"), "--walks", "20", "-o", filepath.Join(t.TempDir(), "none.db"))
	if code != 3 || !strings.Contains(stdout, "random walks do not visit every state") {
		t.Errorf("a correct program: exit %d, want 3 (none found, not exhausted)\n%s%s", code, stdout, stderr)
	}
}

// TestExecElection: a program of kind election; check validity holds it to
// the rule its run names.
func TestExecElection(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
	}{
		{nil, 0},
		{[]string{"-v", "lowest=1"}, 1},
	} {
		for _, mode := range []string{"sim", "run"} {
			out := filepath.Join(t.TempDir(), "e.db")
			code, stdout, stderr := dmx(t, mode, "--exec", awk(t, "elect.awk", c.args...), "--name", "elect", "-n", "4",
				"--param", "kind=election", "--param", "validity=highest-id", "--duration", "1s", "-o", out)
			if code != c.code || !strings.Contains(stdout, "rule highest-id") {
				t.Errorf("%s %v: exit %d, want %d, with the highest-id rule\n%s%s", mode, c.args, code, c.code, stdout, stderr)
			}
		}
	}
}

// TestExecMisbehaves: under dmx run, a program that dies is recorded (its
// node's crash, once, with why; a finding of check protocol naming the
// node and the line), and the run goes on to a verdict.
func TestExecMisbehaves(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.db")
	// Node 1 answers its init, then dies; the others write garbage once.
	prog := `read -r l; case "$l" in *'"node":1,'*) echo '{"type":"done"}'; exit 4;; esac; echo 'oops'; echo '{"type":"done"}'; while read -r l; do echo '{"type":"done"}'; done`
	code, stdout, stderr := dmx(t, "run", "--exec", prog, "--name", "bad", "-n", "3", "--entries", "1", "--stall", "1s", "-o", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"protocol       │ violated", "P0: output line 1 oops: not a JSON object", "P1: its program ended (exit status 4) before it answered input line 2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	_, csv, _ := dmx(t, "sql", out, "SELECT proc, json_extract(detail, '$.reason') FROM events WHERE kind = 'crash'", "--format", "csv")
	if got := strings.TrimSpace(csv); !strings.HasSuffix(got, "\n1,its program ended: exit status 4") || strings.Count(got, "\n") != 1 {
		t.Errorf("crash events:\n%s\nwant one of P1's saying why", got)
	}
}

// TestExecUsage: what --exec refuses, and where help is.
func TestExecUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "ricart-agrawala", "--exec", "true"}, "name no algorithm"},
		{[]string{"sim", "--exec", "  "}, "--exec: no command"},
		{[]string{"sim", "--exec", "true", "--name", "central"}, "that is one of dmx's algorithms"},
		{[]string{"sim", "--name", "x"}, "give its command with --exec"},
		{[]string{"sim", "--exec", "true", "--param", "kind=gossip"}, `kind="gossip": want mutual-exclusion or election`},
		{[]string{"sim", "--exec", "true", "--param", "timeout=soon"}, `timeout="soon"`},
		{[]string{"explore", "--exec", "true", "--walks", "0"}, "search it with random walks"},
	} {
		code, stdout, stderr := dmx(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s%s", c.args, code, c.want, stdout, stderr)
		}
	}
	for _, cmd := range []string{"run", "sim", "explore"} {
		code, stdout, _ := dmx(t, cmd, "--exec", "--help")
		if code != 0 || !strings.Contains(stdout, "--exec 'python3 examples/programs/central") {
			t.Errorf("dmx %s --exec --help: exit %d, no example of --exec:\n%s", cmd, code, stdout)
		}
	}
	if _, stdout, _ := dmx(t, "list"); !strings.Contains(stdout, "node protocol, version 1") {
		t.Errorf("dmx list does not give the protocol's version:\n%s", stdout)
	}
}

// TestExecConform: dmx check --conform compares each example with dmx's
// machine of its vocabulary: the correct ones conform, the buggy ones
// differ at the input where the bug acts, with the rule named.
func TestExecConform(t *testing.T) {
	for _, c := range []struct {
		name, cmd, algo string
		rule            string // "" conforms
	}{
		{"ricart", goProgram(t, "examples/programs/ricart"), "ricart-agrawala", ""},
		{"ricart-buggy", goProgram(t, "examples/programs/ricart-buggy"), "ricart-agrawala", "[RH1]"},
		{"central", python(t, "central.py"), "central", ""},
		{"central-buggy", python(t, "central-buggy.py"), "central", "seed 000: the coordinator grants if nobody holds the resource, else queues"},
		{"lock.awk", awk(t, "lock.awk"), "central", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "c.db")
			if code, stdout, stderr := dmx(t, "sim", "--exec", c.cmd, "--seed", "1", "-o", out, "--no-check", "--no-diagram"); code != 0 {
				t.Fatalf("sim: exit %d\n%s%s", code, stdout, stderr)
			}
			code, stdout, stderr := dmx(t, "check", "--conform", c.algo, out)
			switch {
			case c.rule == "" && (code != 0 || !strings.Contains(stdout, "verdict: conforms")):
				t.Errorf("exit %d, want 0 (conforms)\n%s%s", code, stdout, stderr)
			case c.rule != "" && (code != 1 || !strings.Contains(stdout, "rule: "+c.rule) || !strings.Contains(stdout, "receive(request from P")):
				t.Errorf("exit %d, want 1 naming %q at a received request\n%s%s", code, c.rule, stdout, stderr)
			}
		})
	}
	// JSON, and a trace against another algorithm.
	out := filepath.Join(t.TempDir(), "r.db")
	dmx(t, "sim", "--exec", goProgram(t, "examples/programs/ricart"), "-n", "3", "--entries", "1", "-o", out, "--no-check", "--no-diagram")
	code, stdout, _ := dmx(t, "check", "--conform", "lamport", "--format", "json", out)
	if code != 1 || !strings.Contains(stdout, `"conforms": false`) || !strings.Contains(stdout, `"rule": "seed 002: queue the request and send a timestamped acknowledgement"`) {
		t.Errorf("ricart against lamport: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := dmx(t, "check", "--conform", "paxos", out); code != 2 || !strings.Contains(stderr, "not one of dmx's algorithms") {
		t.Errorf("--conform paxos: exit %d\n%s", code, stderr)
	}
}

// TestExecScenario: a scenario of the catalogue runs against a program as
// against dmx's algorithm: its workload and faults, the program's name.
func TestExecScenario(t *testing.T) {
	for _, c := range []struct{ file, cmd string }{
		{"crash-idle-client.json", python(t, "central.py")},
		{"lossy-network.json", goProgram(t, "examples/programs/ricart")},
	} {
		out := filepath.Join(t.TempDir(), "s.db")
		code, stdout, stderr := dmx(t, "sim", "--scenario", filepath.Join("..", "..", "examples", c.file), "--exec", c.cmd, "-o", out)
		if code != 0 || !strings.Contains(stderr, "rerun: dmx sim --exec ") {
			t.Errorf("%s: exit %d, want 0\n%s%s", c.file, code, stdout, stderr)
		}
	}
}

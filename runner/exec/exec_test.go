package exec_test

import (
	"bytes"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/internal/gobuild"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/exec"
	"github.com/dmxlab/dmx/trace"
)

// needPython returns the python3 to run, skipping the test without one
// (failing it under CI, whose script installs it).
func needPython(t *testing.T) string {
	t.Helper()
	py := pythonOrEmpty()
	if py == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 not found (.ci/run installs it)")
		}
		t.Skip("python3 not found")
	}
	return py
}

// pythonOrEmpty returns the python3 interpreter itself, not a launcher
// script in front of it (a pyenv shim takes most of a second to start
// each program); "" if there is none.
func pythonOrEmpty() string {
	py, err := osexec.LookPath("python3")
	if err != nil {
		return ""
	}
	if b, err := osexec.Command(py, "-c", "import sys; print(sys.executable)").Output(); err == nil && len(bytes.TrimSpace(b)) > 0 {
		py = string(bytes.TrimSpace(b))
	}
	return py
}

// build builds the Go program in dir (relative to the module's root) and
// returns its path.
func build(t testing.TB, dir string) string {
	t.Helper()
	return gobuild.Program(t, "../..", dir, filepath.Join(buildDir, filepath.Base(dir)))
}

var buildDir string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "dmx-exec-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	buildDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// plan is a simulated run of cmdline on n nodes, entries each.
func plan(cmdline string, kind algo.Kind, n, entries int, seed uint64, opt exec.Options) runner.Plan {
	p := runner.NewPlan(runner.DriverSim)
	p.N, p.Seed, p.Workload.Entries = n, seed, entries
	p.Params = map[string]string{exec.ParamExec: cmdline}
	if kind != algo.MutualExclusion {
		p.Params[exec.ParamKind] = string(kind)
	}
	opt.OwnGroup = true
	p.Spec = exec.Spec("prog", kind, opt)
	return p
}

// simulate runs p and returns its events and the results of every check
// that holds of any trace.
func simulate(t *testing.T, p runner.Plan) ([]trace.Event, map[string]analyze.Result, runner.SimResult) {
	t.Helper()
	var c runner.Collector
	res, err := runner.Simulate(p, &c, nil)
	if err != nil {
		t.Fatalf("simulate: %v", err)
	}
	run := p.RunRow()
	run.ID, run.Complete, run.Status = 1, res.Complete, res.Status
	results, err := analyze.Evaluate(run, &trace.SliceReader{Events: c.Events}, analyze.General())
	if err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	byName := map[string]analyze.Result{}
	for _, r := range results {
		byName[r.Check] = r
	}
	return c.Events, byName, res
}

// verdicts says every check's verdict, for failure messages.
func verdicts(rs map[string]analyze.Result) string {
	var b strings.Builder
	for _, c := range analyze.General() {
		r := rs[c.Name]
		fmt.Fprintf(&b, "  %s: %s %s\n", c.Name, r.Verdict, r.Note)
		for _, f := range r.Findings {
			fmt.Fprintf(&b, "    %s\n", f.Message)
		}
	}
	return b.String()
}

// TestRicartGo: the Go example, under the simulator, passes every check,
// and a seed gives the same trace twice, event for event.
func TestRicartGo(t *testing.T) {
	bin := build(t, "examples/programs/ricart")
	p := plan(bin, algo.MutualExclusion, 4, 3, 11, exec.Options{})
	evs, rs, res := simulate(t, p)
	if analyze.Summarize(mapValues(rs)) != analyze.OK || !res.Complete {
		t.Fatalf("%s; checks:\n%s", res.Status, verdicts(rs))
	}
	if rs["mutex-causal"].Note != "12 critical sections on 1 resource" {
		t.Errorf("mutex-causal: %s", rs["mutex-causal"].Note)
	}
	again, _, _ := simulate(t, p)
	if !reflect.DeepEqual(evs, again) {
		t.Fatalf("seed 11 twice: %d and %d events, not the same", len(evs), len(again))
	}
	other := p
	other.Seed = 12
	if evs2, _, _ := simulate(t, other); reflect.DeepEqual(evs, evs2) {
		t.Errorf("seeds 11 and 12 gave the same trace")
	}
}

func mapValues(m map[string]analyze.Result) []analyze.Result {
	var out []analyze.Result
	for _, r := range m {
		out = append(out, r)
	}
	return out
}

// TestBuggyExamples: each example with a student bug breaks mutual
// exclusion under the simulator, and the checks name it.
func TestBuggyExamples(t *testing.T) {
	py := needPython(t)
	for _, c := range []struct{ name, cmd string }{
		{"ricart-buggy", build(t, "examples/programs/ricart-buggy")},
		{"central-buggy", py + " ../../examples/programs/central-buggy.py"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, rs, _ := simulate(t, plan(c.cmd, algo.MutualExclusion, 5, 10, 1, exec.Options{}))
			for _, check := range []string{"mutex-causal", "mutex-realtime"} {
				if rs[check].Verdict != analyze.Violated {
					t.Errorf("%s: %s, want violated; checks:\n%s", check, rs[check].Verdict, verdicts(rs))
				}
			}
			if rs["protocol"].Verdict != analyze.OK {
				t.Errorf("protocol: %s: the bug is the algorithm's, not the protocol's", rs["protocol"].Verdict)
			}
		})
	}
}

// TestCentralPython: the Python example passes every check with as many
// entries as there are, and the same seed reproduces it.
func TestCentralPython(t *testing.T) {
	py := needPython(t)
	p := plan(py+" ../../examples/programs/central.py", algo.MutualExclusion, 4, 3, 5, exec.Options{})
	evs, rs, res := simulate(t, p)
	if analyze.Summarize(mapValues(rs)) != analyze.OK || !res.Complete {
		t.Fatalf("%s; checks:\n%s", res.Status, verdicts(rs))
	}
	again, _, _ := simulate(t, p)
	if !reflect.DeepEqual(evs, again) {
		t.Fatalf("seed 5 twice: not the same trace")
	}
}

// TestStderr: what a program writes on stderr before its done is in the
// trace (note events) and on the terminal, each line with its node.
func TestStderr(t *testing.T) {
	var errb bytes.Buffer
	prog := `while read -r l; do echo "got $l" | cut -c1-30 >&2; echo '{"type":"done"}'; done`
	evs, _, _ := simulate(t, plan(prog, algo.MutualExclusion, 2, 0, 1, exec.Options{Stderr: &errb, Prefix: true}))
	var notes []string
	for _, ev := range evs {
		if d, err := ev.Details(); err == nil {
			if n, ok := d.(trace.Note); ok {
				notes = append(notes, fmt.Sprintf("P%d %s", ev.Proc, n.Text))
			}
		}
	}
	want := []string{`P0 stderr: got {"type":"init","node":0,"n`, `P1 stderr: got {"type":"init","node":1,"n`}
	if !reflect.DeepEqual(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
	if got := errb.String(); got != "P0: got {\"type\":\"init\",\"node\":0,\"n\nP1: got {\"type\":\"init\",\"node\":1,\"n\n" {
		t.Errorf("terminal:\n%s", got)
	}
}

// TestBadLines: a line that is not valid protocol is a finding of check
// protocol that names the node, the line and the input it answered; the
// line is ignored and the run goes on.
func TestBadLines(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`hello`, "not a JSON object"},
		{`{"type":"send","to":0`, "not valid JSON"},
		{`{"to":1}`, `no "type"`},
		{`{"type":"sned","to":1,"body":{"type":"x"}}`, `unknown type "sned"`},
		{`{"type":"send","body":{"type":"x"}}`, `a send line needs "to"`},
		{`{"type":"send","to":"one","body":{"type":"x"}}`, `"to": want a number, got string`},
		{`{"type":"send","to":7,"body":{"type":"x"}}`, `"to": 7 is not a node of this run (0..1)`},
		{`{"type":"send","to":1,"body":[1]}`, `"body" is not a JSON object`},
		{`{"type":"send","to":1,"body":{"id":1}}`, `"body" has no "type"`},
		{`{"type":"enter","resource":"cs"}`, "which the workload had not asked for"},
		{`{"type":"enter","resource":"db"}`, `"resource": "db", but this program guards "cs"`},
		{`{"type":"exit","resource":"cs"}`, "which it was not inside"},
		{`{"type":"leader","leader":9}`, `"leader": 9 is not a node of this run`},
		{`{"type":"waiting","for":[0,5]}`, `"for": 5 is not a node`},
		{`{"type":"timer","name":"t"}`, `a timer line needs "after_ms"`},
		{`{"type":"timer","name":"t","after_ms":-4}`, `"after_ms": -4, want 0 up to a day`},
		{`{"type":"note"}`, `a note line needs "text"`},
	} {
		t.Run(c.want, func(t *testing.T) {
			prog := fmt.Sprintf(`read -r l; printf '%%s\n' '%s' '{"type":"done"}'; cat >/dev/null`, c.line)
			evs, rs, res := simulate(t, plan(prog, algo.MutualExclusion, 2, 0, 1, exec.Options{}))
			r := rs["protocol"]
			if r.Verdict != analyze.Violated || len(r.Findings) != 2 {
				t.Fatalf("protocol: %s, %d findings, want violated, 2 (one per node)\n%s", r.Verdict, len(r.Findings), verdicts(rs))
			}
			f := r.Findings[0].Message
			for _, w := range []string{c.want, "P0: output line 1 " + strings.TrimSpace(c.line), "answering input line 1 {\"type\":\"init\""} {
				if !strings.Contains(f, w) {
					t.Errorf("finding %q lacks %q", f, w)
				}
			}
			if !res.Complete || kinds(evs)[trace.KindStop] != 2 {
				t.Errorf("the run did not go on to its end: %s, %v", res.Status, kinds(evs))
			}
		})
	}
}

func kinds(evs []trace.Event) map[trace.Kind]int {
	m := map[trace.Kind]int{}
	for _, ev := range evs {
		m[ev.Kind]++
	}
	return m
}

// TestDeaths: a program that exits, hangs or floods is recorded so (a
// finding naming the node and the input), killed, and its node is down
// (a crash event saying why); the others run on.
func TestDeaths(t *testing.T) {
	for _, c := range []struct {
		name, prog, want, crash string
	}{
		{"exit", `read -r l; echo '{"type":"done"}'; echo 'Traceback: oops' >&2; exit 3`,
			"its program ended (exit status 3) before it answered input line 2", "its program ended: exit status 3"},
		{"hang", `read -r l; echo '{"type":"done"}'; sleep 60`,
			"its program did not answer input line 2", "its program hung"},
		{"flood", `read -r l; echo '{"type":"done"}'; read -r l; yes '{"type":"note","text":"x"}'`,
			"more than 10000 output lines answering one input: a flood", "its program flooded its output"},
		{"long-line", `read -r l; echo '{"type":"done"}'; read -r l; head -c 2000000 /dev/zero | tr '\0' x`,
			"an output line longer than 1048576 bytes", "its program flooded its output"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Every node runs the program: each misbehaves at its first request.
			p := plan(c.prog, algo.MutualExclusion, 2, 1, 1, exec.Options{})
			// A short wait for the hang alone: the others are told by
			// what the program does, which a loaded machine can slow
			// down past 300ms (yes writing its 10,001st line).
			p.Params[exec.ParamTimeout] = "30s"
			if c.name == "hang" {
				p.Params[exec.ParamTimeout] = "300ms"
			}
			evs, rs, res := simulate(t, p)
			r := rs["protocol"]
			if r.Verdict != analyze.Violated {
				t.Fatalf("protocol %s\n%s", r.Verdict, verdicts(rs))
			}
			if !strings.Contains(r.Findings[0].Message, c.want) {
				t.Errorf("finding %q lacks %q", r.Findings[0].Message, c.want)
			}
			var crashes []string
			for _, ev := range evs {
				if ev.Kind == trace.KindCrash {
					d, _ := ev.Crash()
					crashes = append(crashes, d.Reason)
				}
			}
			if len(crashes) != 2 || crashes[0] != c.crash {
				t.Errorf("crashes %q, want two of %q", crashes, c.crash)
			}
			if !res.Complete {
				t.Errorf("run not complete: %s", res.Status)
			}
			if c.name == "exit" && !strings.Contains(fmt.Sprint(notesOf(evs)), "stderr: Traceback: oops") {
				t.Errorf("its last words are not in the trace: %q", notesOf(evs))
			}
		})
	}
}

func notesOf(evs []trace.Event) []string {
	var out []string
	for _, ev := range evs {
		if d, err := ev.Details(); err == nil {
			if n, ok := d.(trace.Note); ok {
				out = append(out, n.Text)
			}
		}
	}
	return out
}

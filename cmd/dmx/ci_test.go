package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner/sweep"
)

// TestREADMECIFailsOnViolation: the CI lines of docs/ci.md that pipe dmx's JSON
// report into jq fail the job when a property is violated. Without
// pipefail the pipe's status is jq's, 0, and the violation passed: the
// test shows that too. It runs the lines under bash, dmx being this test
// binary, on a trace of the nested-lock deadlock.
func TestREADMECIFailsOnViolation(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed: the README's jq lines cannot run here")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	readme := readFile(t, filepath.Join("..", "..", "docs", "ci.md"))
	var pipe, saved string
	lines := strings.Split(string(readme), "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "dmx check --format json run.db | jq"):
			if i == 0 || !strings.HasPrefix(strings.TrimSpace(lines[i-1]), "set -o pipefail") {
				t.Errorf("docs/ci.md's jq pipe is not preceded by set -o pipefail: %s", l)
			}
			pipe = l
		case strings.HasPrefix(l, "jq -e "):
			saved, _, _ = strings.Cut(l, " #")
		}
	}
	if pipe == "" || saved == "" {
		t.Fatalf("docs/ci.md has no jq pipe or jq -e line")
	}

	dir, bin := t.TempDir(), dmxBin(t)
	if code, _, errs := dmx(t, "sim", "--scenario", filepath.Join("..", "..", "examples", "nested-deadlock.json"), "--no-diagram",
		"-o", filepath.Join(dir, "run.db")); code != exitViolated {
		t.Fatalf("sim: exit %d, want a violation\n%s", code, errs)
	}
	if code, out, errs := dmx(t, "check", "--format", "json", filepath.Join(dir, "run.db")); code != exitViolated {
		t.Fatalf("check: exit %d\n%s", code, errs)
	} else if err := os.WriteFile(filepath.Join(dir, "report.json"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(script string) (int, string) { return runScript(t, bash, dir, bin, script) }
	if code, out := run(pipe); code != 0 || !strings.Contains(out, `"violated"`) {
		t.Errorf("without pipefail the pipe was expected to pass (exit %d): the test does not show the README's point\n%s", code, out)
	}
	for _, script := range []string{"set -o pipefail\n" + pipe, saved} {
		if code, out := run(script); code == 0 {
			t.Errorf("the README's CI line passes a violated trace:\n%s\n%s", script, out)
		}
	}
}

// TestCIExamples runs the dmx command lines of the CI examples
// (examples/ci/*.yml) with their traces in a temporary directory: the runs
// they record must pass the checks they run, so that the jobs are green
// until something breaks.
func TestCIExamples(t *testing.T) {
	all, _ := filepath.Glob("../../examples/ci/*.yml")
	var files []string
	for _, f := range all {
		// The sweeps' jobs run in parts and merge: TestSweepCIExamples.
		if !strings.HasPrefix(filepath.Base(f), "sweep-") {
			files = append(files, f)
		}
	}
	if len(files) < 2 {
		t.Fatalf("CI examples: %v", files)
	}
	line := regexp.MustCompile(`(?m)^\s*(?:- )?(dmx (?:sim|check) [^|>\n]*)`)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data := readFile(t, file)
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "traces"), 0o755)
			ran := 0
			for _, m := range line.FindAllStringSubmatch(string(data), -1) {
				cmd := strings.TrimSpace(m[1])
				var args []string
				for _, a := range strings.Fields(cmd)[1:] {
					switch {
					case a == "traces/*.db":
						found, _ := filepath.Glob(filepath.Join(dir, "traces", "*.db"))
						args = append(args, found...)
					case strings.HasPrefix(a, "traces/"), a == "diagrams":
						args = append(args, filepath.Join(dir, a))
					default:
						args = append(args, strings.Trim(a, `'"`))
					}
				}
				if code, out, errs := dmx(t, args...); code != exitOK {
					t.Fatalf("%s: exit %d\n%s%s", cmd, code, out, errs)
				}
				ran++
			}
			if ran < 3 {
				t.Errorf("%s: %d dmx commands found", file, ran)
			}
		})
	}
}

// dmxBin makes a directory with a command dmx in it that runs this test
// binary (dmx, as TestMain lets it be), for a script's PATH.
func dmxBin(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "dmx"), []byte("#!/bin/sh\nexec "+sweep.Quote(self)+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// runScript runs script with bash in dir, bin (dmxBin) first on its PATH
// and env added to its environment, and returns its exit code and what it
// printed.
func runScript(t *testing.T, bash, dir, bin, script string, env ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bash, "-c", script)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "DMX_TEST_MAIN=1"), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return 0, string(out)
}

// exampleLines returns the shell lines of a CI or Kubernetes example
// that the test carries out: those that run dmx (not those that install
// it), and the lines of the shell around them (set -o pipefail, exit), in
// file order, each without its YAML list dash or run: key.
func exampleLines(t *testing.T, path string) []string {
	t.Helper()
	data := readFile(t, path)
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") {
			continue
		}
		l = strings.TrimPrefix(l, "- ")
		l = strings.TrimPrefix(l, "run: ")
		switch {
		case strings.Contains(l, "go install"):
		case strings.HasPrefix(l, "dmx "), l == "set -o pipefail", strings.HasPrefix(l, "exit ${code"):
			out = append(out, l)
		}
	}
	return out
}

// exampleVar returns the value an example gives a variable (NAME: "v" or
// value: "v" after name: NAME).
func exampleVar(t *testing.T, path, name string) string {
	t.Helper()
	data, _ := os.ReadFile(path)
	m := regexp.MustCompile(`(?m)^\s*` + name + `:\s*"([^"]*)"`).FindSubmatch(data)
	if m == nil {
		m = regexp.MustCompile(`(?m)name: ` + name + `\s*\n\s*value:\s*"([^"]*)"`).FindSubmatch(data)
	}
	if m == nil {
		t.Fatalf("%s sets no %s", path, name)
	}
	return string(m[1])
}

// TestSweepCIExamples runs the commands of examples/ci's sweep jobs
// (GitHub Actions matrix, GitLab parallel) and examples/k8s's Indexed
// Job, as their runners would, with dmx this test binary and fewer
// seeds: every shard, then the merge and its table. The merged sweep's
// table is the table of the same sweep unsharded, and the merge step's
// exit code its verdict.
func TestSweepCIExamples(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	root := filepath.Join("..", "..", "examples")
	for _, c := range []struct {
		name  string
		files []string
		env   func(k int) []string // the runner's variables of shard k (1..4)
		subst func(s string, k int, dir string) string
	}{
		{"github", []string{"ci/sweep-github-actions.yml"}, func(int) []string { return nil },
			func(s string, k int, _ string) string {
				return strings.ReplaceAll(s, "${{ matrix.shard }}", strconv.Itoa(k))
			}},
		{"gitlab", []string{"ci/sweep-gitlab-ci.yml"}, func(k int) []string {
			return []string{"CI_NODE_INDEX=" + strconv.Itoa(k), "CI_NODE_TOTAL=4"}
		}, func(s string, _ int, _ string) string { return s }},
		{"k8s", []string{"k8s/sweep-job.yaml", "k8s/sweep-merge-job.yaml"}, func(k int) []string {
			return []string{"JOB_COMPLETION_INDEX=" + strconv.Itoa(k-1)}
		}, func(s string, _ int, dir string) string { return strings.ReplaceAll(s, "/sweep/", dir+"/") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, bin := t.TempDir(), dmxBin(t)
			first := filepath.Join(root, c.files[0])
			sweepArgs := exampleVar(t, first, "SWEEP")
			if !strings.Contains(exampleVar(t, first, "SEEDS"), "..") {
				t.Fatalf("%s: SEEDS is not a range", first)
			}
			const seeds = "1..8" // the example's range is for CI's time, not a test's
			var shardLines, mergeLines []string
			for _, f := range c.files {
				for _, l := range exampleLines(t, filepath.Join(root, f)) {
					if strings.Contains(l, "dmx sweep") {
						shardLines = append(shardLines, l)
					} else {
						mergeLines = append(mergeLines, l)
					}
				}
			}
			if len(shardLines) != 1 || len(mergeLines) == 0 {
				t.Fatalf("want one sweep line and the merge's: %q, %q", shardLines, mergeLines)
			}
			run := func(script string, env []string) (int, string) {
				return runScript(t, bash, dir, bin, script, append(env, "SEEDS="+seeds, "SWEEP="+sweepArgs)...)
			}
			for k := 1; k <= 4; k++ {
				line := c.subst(shardLines[0], k, dir)
				if code, out := run(line, c.env(k)); code != 0 {
					t.Fatalf("shard %d: %s: exit %d\n%s", k, line, code, out)
				}
			}
			var script []string
			for _, l := range mergeLines {
				script = append(script, c.subst(l, 0, dir))
			}
			code, out := run(strings.Join(script, "\n"), nil)
			if !strings.Contains(out, "merged 4 traces") || code == exitUsage {
				t.Fatalf("merge: %s: exit %d\n%s", strings.Join(script, "; "), code, out)
			}
			want, wantOut, errs := dmx(t, append(append([]string{"sweep"}, strings.Fields(sweepArgs)...), "--seeds", seeds, "-o", filepath.Join(dir, "whole.db"))...)
			if want == exitUsage {
				t.Fatalf("the whole sweep: %s", errs)
			}
			if code != want {
				t.Errorf("the merge step exits %d, the whole sweep %d", code, want)
			}
			_, merged, _ := dmx(t, "check", "--summary", filepath.Join(dir, "sweep.db"))
			strip := func(s, trace string) string {
				_, rest, _ := strings.Cut(strings.ReplaceAll(s, trace, "TRACE"), "\n")
				return rest
			}
			if a, b := strip(merged, filepath.Join(dir, "sweep.db")), strip(wantOut, filepath.Join(dir, "whole.db")); a != b {
				t.Errorf("the merged shards' table:\n%s\nthe whole sweep's:\n%s", a, b)
			}
		})
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
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
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
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
	if err := os.WriteFile(filepath.Join(bin, "dmx"), []byte("#!/bin/sh\nexec "+shellQuote(self)+" \"$@\"\n"), 0o755); err != nil {
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

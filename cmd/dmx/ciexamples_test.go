package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// exampleLines returns the shell lines of a CI or Kubernetes example
// that the test carries out: those that run dmx (not those that install
// it), and the lines of the shell around them (set -o pipefail, exit), in
// file order, each without its YAML list dash or run: key.
func exampleLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
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

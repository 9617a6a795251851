package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryClean: no binary is committed (a 12 MB analyze.test once
// was, issue 28), and .gitignore covers what dmx writes by default in the
// directory it runs in and what go build and go test -c leave there, so
// that trying dmx in a clone leaves `git status` clean.
func TestRepositoryClean(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(git, "-C", root, "rev-parse", "--is-inside-work-tree").Output(); err != nil || strings.TrimSpace(string(out)) != "true" {
		t.Skip("not a git checkout")
	}

	// Committed files: no executable or archive of a build, no trace.
	out, err := exec.Command(git, "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if strings.HasSuffix(name, ".test") || strings.HasSuffix(name, ".db") {
			t.Errorf("%s is committed: a build or a trace, not a source", name)
			continue
		}
		head := make([]byte, 8)
		f, err := os.Open(filepath.Join(root, name))
		if err != nil {
			continue // deleted in the work tree
		}
		n, _ := f.Read(head)
		f.Close()
		head = head[:n]
		for _, magic := range [][]byte{[]byte("\x7fELF"), []byte("!<arch>\n"), {0xcf, 0xfa, 0xed, 0xfe}, []byte("MZ")} {
			if bytes.HasPrefix(head, magic) {
				t.Errorf("%s is committed, and it is a binary (it starts %q)", name, magic)
			}
		}
	}

	// What dmx writes by default: run where the repository is, these
	// files must be ignored.
	dir := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for _, args := range [][]string{
		{"sim", "ricart-agrawala", "-n", "2", "--entries", "1", "--seed", "1"},          // dmx-ricart-agrawala-1.db and .svg
		{"sim", "ricart-agrawala", "-n", "2", "--entries", "1", "--seed", "1"},          // -2 beside it
		{"sim", "--scenario", filepath.Join(root, "examples", "maekawa-deadlock.json")}, // dmx-maekawa-deadlock-SEED.db
		{"explore", "maekawa", "-n", "3", "--entries", "1"},                             // dmx-explore-maekawa.db and .json
	} {
		dmx(t, args...) // the exit code is the verdict: any is fine here
	}
	made, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"dmx", "dmx-node", "cmd/dmx/dmx", "cmd/dmx-node/dmx-node", "analyze.test", "cmd/dmx/dmx.test"} // go build, go test -c
	for _, e := range made {
		names = append(names, e.Name())
	}
	if len(made) < 6 {
		t.Errorf("dmx wrote %d files by default, want 6 or more (traces, diagrams, a scenario)", len(made))
	}
	for _, name := range names {
		err := exec.Command(git, "-C", root, "check-ignore", "-q", "--no-index", name).Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitCode() == 1:
			t.Errorf("%s (what dmx or go writes by default) is not in .gitignore", name)
		case err != nil:
			t.Fatalf("git check-ignore %s: %v", name, err)
		}
	}
}

// TestLayers: imports point down the layers that docs/architecture.md
// draws: trace at the bottom, analyze above it, runner above analyze,
// render above runner, cmd at the top. A package that imports one of a
// layer above its own makes the layers a tangle (trace importing analyze
// to rebuild happens-before, analyze importing runner for a cost type:
// both were so once). Nothing of runner, and so no node process
// (cmd/dmx-node), links go-graphviz: its initialisation costs every
// process that links it. dmx itself links neither html/template nor
// protobuf (which parquet-go brought): both call methods by reflection
// with names the linker cannot know, and then it keeps every exported
// method of every type, which made the binary 50 MB instead of 33 and
// every dmx process 13 MB larger (docs/performance.md).
func TestLayers(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the imports with")
	}
	const dmx = "github.com/dmxlab/dmx/"
	for _, c := range []struct {
		pkgs      string
		forbidden []string
		except    []string // below a forbidden prefix but allowed
	}{
		{"./trace/...", []string{dmx + "analyze", dmx + "render", dmx + "runner", dmx + "cmd"}, nil},
		{"./analyze/...", []string{dmx + "runner", dmx + "render", dmx + "cmd"}, nil},
		{"./runner/...", []string{dmx + "render", dmx + "cmd", "github.com/goccy/go-graphviz"}, nil},
		// The algorithms sit below the runtime that runs them: the
		// contract (runner/algo) and each machine know nothing of
		// runner's nodes, drivers or registry.
		{"./runner/algo/...", []string{dmx + "runner", dmx + "render", dmx + "cmd"}, []string{dmx + "runner/algo", dmx + "runner/deep"}},
		{"./render/...", []string{dmx + "cmd"}, nil},
		{"./cmd/dmx-node", []string{dmx + "render", "github.com/goccy/go-graphviz"}, nil},
		{"./cmd/dmx", []string{"html/template", "google.golang.org/protobuf", "github.com/parquet-go/parquet-go"}, nil},
	} {
		cmd := exec.Command(goTool, "list", "-deps", c.pkgs)
		cmd.Dir = "../.."
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", c.pkgs, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if below(dep, c.except) {
				continue
			}
			for _, f := range c.forbidden {
				if below(dep, []string{f}) {
					t.Errorf("%s imports %s (directly or not)", c.pkgs, dep)
				}
			}
		}
	}
}

// below says whether pkg is one of roots or a package under one of them.
func below(pkg string, roots []string) bool {
	for _, r := range roots {
		if pkg == r || strings.HasPrefix(pkg, r+"/") {
			return true
		}
	}
	return false
}

package main

import (
	"os/exec"
	"strings"
	"testing"
)

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

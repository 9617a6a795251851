package udp

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/internal/syncbuf"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// TestMain lets the test binary play `dmx node` when it is started as
// dmx would start itself (os.Args[1] == "node"), with DMX_UDP_TEST_NODE
// set by the test that wants it.
func TestMain(m *testing.M) {
	if os.Getenv("DMX_UDP_TEST_NODE") == "1" && len(os.Args) > 1 && os.Args[1] == "node" {
		os.Exit(NodeProcess(registry.Lookup, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// identityScript writes an executable dmx-node into dir that answers
// IdentityArg with the lines id (as a dmx-node of some build would) or,
// with id nil, refuses the argument as a dmx-node older than IdentityArg
// does.
func identityScript(t *testing.T, dir string, id []string) {
	t.Helper()
	body := "echo 'unknown argument' >&2; exit 2\n"
	if id != nil {
		body = "[ \"$1\" = " + IdentityArg + " ] || exit 2\ncat <<'END'\n" + strings.Join(id, "\n") + "\nEND\n"
	}
	if err := os.WriteFile(filepath.Join(dir, NodeBinary), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestNodeCommandBeside: dmx starts dmx-node when it is beside it, can be
// run and says it comes from the same build; it plays the node itself
// (dmx node) otherwise, and says why when a dmx-node is there but not
// used.
func TestNodeCommandBeside(t *testing.T) {
	own := []string{"go go1.26.8", "module github.com/dmxlab/dmx (devel)", "setting GOOS=linux", "source sha256:aaaa",
		"dep github.com/mattn/go-sqlite3 v1.14.53 h1:x=", "dep github.com/goccy/go-graphviz v0.2.10 h1:y="}
	swap := func(old, new string) []string {
		i := slices.Index(own, old)
		return slices.Concat(own[:i], []string{new}, own[i+1:])
	}
	for _, c := range []struct {
		name    string
		own     []string // dmx's identity, if not own
		node    []string // nil: a dmx-node that refuses IdentityArg
		write   bool     // write a dmx-node at all
		mode    os.FileMode
		useNode bool
		notice  string
	}{
		{name: "no dmx-node", write: false},
		{name: "a dmx-node that cannot be run", node: own, write: true, mode: 0o644},
		{name: "same build", node: own, write: true, mode: 0o755, useNode: true},
		{name: "same build, fewer dependencies", node: own[:5], write: true, mode: 0o755, useNode: true},
		{name: "dmx lists no dependencies (a test binary)", own: own[:4], node: own, write: true, mode: 0o755, useNode: true},
		{name: "older than --identity", write: true, mode: 0o755, notice: "does not say which build it is"},
		{name: "other source", node: swap("source sha256:aaaa", "source sha256:bbbb"), write: true, mode: 0o755,
			notice: `it has "source sha256:bbbb" where dmx has "source sha256:aaaa"`},
		{name: "other toolchain", node: swap("go go1.26.8", "go go1.25.0"), write: true, mode: 0o755,
			notice: `it has "go go1.25.0" where dmx has "go go1.26.8"`},
		{name: "other dependency", node: swap("dep github.com/mattn/go-sqlite3 v1.14.53 h1:x=", "dep github.com/mattn/go-sqlite3 v1.14.22 h1:z="),
			write: true, mode: 0o755, notice: "it links github.com/mattn/go-sqlite3 v1.14.22 h1:z=, dmx does not"},
		{name: "a setting fewer", node: own[1:], write: true, mode: 0o755, notice: `it has "module github.com/dmxlab/dmx (devel)" where dmx has "go go1.26.8"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "dmx")
			node := filepath.Join(dir, NodeBinary)
			if c.write {
				identityScript(t, dir, c.node)
				if err := os.Chmod(node, c.mode); err != nil {
					t.Fatal(err)
				}
			}
			ownID := own
			if c.own != nil {
				ownID = c.own
			}
			start, notice := nodeCommandBeside(exe, func() []string { return ownID })
			cmd := start()
			got := append([]string{cmd.Path}, cmd.Args[1:]...)
			want := []string{exe, "node"}
			if c.useNode {
				want = []string{node}
			}
			if !slices.Equal(got, want) {
				t.Errorf("starts %q, want %q", got, want)
			}
			if c.notice == "" && notice != "" || !strings.Contains(notice, c.notice) {
				t.Errorf("notice %q, want one that says %q", notice, c.notice)
			}
			if c.notice != "" && (strings.Count(notice, "\n") > 0 || !strings.Contains(notice, node) || !strings.Contains(notice, "dmx node")) {
				t.Errorf("notice %q: want one line naming %s and saying that nodes run as dmx node", notice, node)
			}
		})
	}
}

// buildNode builds cmd/dmx-node into dir with the flags this test binary
// was built with (go test never stamps version control, so neither does
// this build) and, if overlay is set, the source it names changed.
func buildNode(t *testing.T, dir, overlay string) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	args := []string{"build", "-buildvcs=false", "-o", filepath.Join(dir, NodeBinary)}
	for _, l := range BuildIdentity() {
		switch l {
		case "setting -race=true":
			args = append(args, "-race")
		case "setting -trimpath=true":
			args = append(args, "-trimpath")
		}
		if tags, ok := strings.CutPrefix(l, "setting -tags="); ok {
			args = append(args, "-tags="+tags)
		}
	}
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	cmd := exec.Command(goBin, append(args, "../../cmd/dmx-node")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return filepath.Join(dir, NodeBinary)
}

// TestNodeBinaryOfAnotherBuild builds the real dmx-node twice: from this
// tree, and from this tree with one line of the runtime's source changed
// (go build -overlay), as a dmx-node left from before a change is. The
// first says it is the build this test is; the second does not, and a run
// started beside it plays its nodes with the executable itself, after one
// line of notice. Both runs complete.
func TestNodeBinaryOfAnotherBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dmx-node twice")
	}
	same, other := t.TempDir(), t.TempDir()
	buildNode(t, same, "")
	doc, err := filepath.Abs("../doc.go")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(t.TempDir(), "doc.go")
	overlay := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(changed, append(src, "\n// A line dmx-node's build has and this test's does not.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(overlay, []byte(`{"Replace":{"`+doc+`":"`+changed+`"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	buildNode(t, other, overlay)

	// The test binary plays dmx: the executable beside dmx-node.
	t.Setenv("DMX_UDP_TEST_NODE", "1")
	for _, c := range []struct {
		dir     string
		useNode bool
		notice  string
	}{
		{dir: same, useNode: true},
		{dir: other, notice: `it has "source sha256:`},
	} {
		exe := filepath.Join(c.dir, "dmx")
		if err := os.Symlink(os.Args[0], exe); err != nil {
			t.Fatal(err)
		}
		start, notice := nodeCommandBeside(exe, BuildIdentity)
		if got := start().Path == filepath.Join(c.dir, NodeBinary); got != c.useNode {
			t.Fatalf("%s: dmx-node used: %v, want %v (notice %q)", c.dir, got, c.useNode, notice)
		}
		if c.notice == "" && notice != "" || !strings.Contains(notice, c.notice) {
			t.Fatalf("%s: notice %q, want one that says %q", c.dir, notice, c.notice)
		}
		p := runner.NewPlan(runner.DriverUDP)
		p.Spec, p.N, p.Seed = registry.Lookup("central"), 3, 1
		p.Workload.Entries = 2
		var col runner.Collector
		lb := &syncbuf.Buffer{}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		res, err := Launch(ctx, p, &col, LaunchHooks{Command: start, Stderr: lb})
		cancel()
		if err != nil || !res.Complete || res.Events == 0 {
			t.Fatalf("run beside %s: %v, complete %v, %d events\n%s", c.dir, err, res.Complete, res.Events, lb.String())
		}
	}
}

// TestSourceCoversTree: the source BuildIdentity hashes is every Go file
// under runner/, trace/ and analyze/: a file a directory deeper than the
// embed patterns reach would be code two builds could differ in unseen.
func TestSourceCoversTree(t *testing.T) {
	for _, src := range []struct {
		dir  string
		fsys fs.FS
	}{{"../../runner", runner.Source}, {"../../trace", trace.Source}, {"../../analyze", analyze.Source}} {
		err := filepath.WalkDir(src.dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			rel, err := filepath.Rel(src.dir, path)
			if err != nil {
				return err
			}
			if _, err := fs.Stat(src.fsys, filepath.ToSlash(rel)); err != nil {
				t.Errorf("%s is not in the embedded source (add a pattern to the go:embed line of %s/source.go)", path, src.dir)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

package udp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/trace"
)

// IdentityArg is the argument that makes a node program print its
// BuildIdentity and exit, instead of playing a node: dmx asks dmx-node
// so before a run starts it.
const IdentityArg = "--identity"

// identityProbeTimeout bounds how long dmx waits for a node program to
// say who it is: a program that does not answer is not used.
const identityProbeTimeout = 10 * time.Second

// BuildIdentity is what this executable's code is made of, one fact per
// line: the Go toolchain, the module, the build's settings (version
// control stamps included, when the build has them), a hash of the
// source of the runtime, the trace model and the analysis it links (the
// embedded runner.Source, trace.Source and analyze.Source), and the
// modules it depends on. dmx and dmx-node built from the same tree with
// the same toolchain and flags say the same, but for the dependencies
// that only dmx links (see SameBuild).
//
// The source hash is what tells a stale dmx-node apart where nothing
// else can: a build without version control stamps (go build
// -buildvcs=false, go run, go test) or from a modified tree names no
// revision, and the Go build IDs of two different programs (dmx and
// dmx-node) never match even when they share every package.
func BuildIdentity() []string {
	identityOnce.Do(func() { identity = buildIdentity() })
	return identity
}

var (
	identityOnce sync.Once
	identity     []string
)

func buildIdentity() []string {
	var id []string
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		// A build without module information: nothing but the source
		// to go by, and a line that never matches another build.
		return append(id, "build without module information", "source "+sourceHash())
	}
	id = append(id, "go "+bi.GoVersion, "module "+modLine(&bi.Main))
	for _, s := range bi.Settings {
		id = append(id, "setting "+s.Key+"="+s.Value)
	}
	id = append(id, "source "+sourceHash())
	for _, d := range bi.Deps {
		id = append(id, "dep "+modLine(d))
	}
	return id
}

// modLine is a module as a line: path, version, sum, and what replaces it.
func modLine(m *debug.Module) string {
	s := strings.TrimSpace(m.Path + " " + m.Version + " " + m.Sum)
	if m.Replace != nil {
		s += " => " + modLine(m.Replace)
	}
	return s
}

// sourceHash hashes the embedded source, file by file in path order.
func sourceHash() string {
	h := sha256.New()
	for _, src := range []struct {
		name string
		fsys fs.FS
	}{{"runner", runner.Source}, {"trace", trace.Source}, {"analyze", analyze.Source}} {
		err := fs.WalkDir(src.fsys, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(src.fsys, path)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s/%s\x00%d\x00", src.name, path, len(b))
			h.Write(b)
			return nil
		})
		if err != nil {
			// The embedded files are in the binary: reading them
			// cannot fail.
			panic(fmt.Sprintf("read embedded source: %v", err))
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// SameBuild says whether a node program whose BuildIdentity is node comes
// from the same build as the dmx whose identity is own: every line the
// same but the dependencies, of which the node's must be among dmx's (it
// links a part of what dmx links; where dmx lists none, as a test binary
// does, they are not compared). The error names the first difference.
func SameBuild(own, node []string) error {
	if len(node) == 0 {
		return fmt.Errorf("it gave no build identity")
	}
	// A test binary records no dependencies (go test does not): then
	// its source hash and module alone pin the code.
	ownDeps := map[string]bool{}
	var ownRest, nodeRest []string
	for _, l := range own {
		if strings.HasPrefix(l, "dep ") {
			ownDeps[l] = true
		} else {
			ownRest = append(ownRest, l)
		}
	}
	for _, l := range node {
		if !strings.HasPrefix(l, "dep ") {
			nodeRest = append(nodeRest, l)
		} else if len(ownDeps) > 0 && !ownDeps[l] {
			return fmt.Errorf("it links %s, dmx does not", strings.TrimPrefix(l, "dep "))
		}
	}
	for i := range max(len(ownRest), len(nodeRest)) {
		switch {
		case i >= len(nodeRest):
			return fmt.Errorf("it lacks %q", short(ownRest[i]))
		case i >= len(ownRest):
			return fmt.Errorf("it has %q, dmx does not", short(nodeRest[i]))
		case ownRest[i] != nodeRest[i]:
			return fmt.Errorf("it has %q where dmx has %q", short(nodeRest[i]), short(ownRest[i]))
		}
	}
	return nil
}

// short cuts a source hash to 12 digits, enough to tell two apart in a
// notice.
func short(line string) string {
	if h, ok := strings.CutPrefix(line, "source sha256:"); ok && len(h) > 12 {
		return "source sha256:" + h[:12]
	}
	return line
}

// probeIdentity runs node with IdentityArg and returns the lines it
// prints. A node program that predates IdentityArg refuses the argument
// (exit 2) and so gives none.
func probeIdentity(node string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), identityProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, IdentityArg)
	cmd.Stdin = nil // a node program that ignores the argument reads EOF and ends
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("it does not say which build it is (%v)", err)
	}
	return strings.Split(strings.TrimSpace(string(bytes.ReplaceAll(out, []byte("\r"), nil))), "\n"), nil
}

// PrintIdentity writes BuildIdentity to w, a line a fact: what a node
// program prints when asked IdentityArg.
func PrintIdentity(w io.Writer) error {
	_, err := io.WriteString(w, strings.Join(BuildIdentity(), "\n")+"\n")
	return err
}

// nodeChoice is how this process starts node processes, settled once:
// a sweep launches many runs, and asks dmx-node who it is only once.
var nodeChoice struct {
	once   sync.Once
	start  func() *exec.Cmd
	notice string
	err    error
}

// nodeCommand returns how to start a node process: NodeBinary beside the
// running executable if it is there and comes from the same build, else
// the executable itself with the argument "node". When NodeBinary is
// there but from another build, it says so on notice, once.
func nodeCommand(notice io.Writer) (func() *exec.Cmd, error) {
	nodeChoice.once.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			nodeChoice.err = fmt.Errorf("find dmx's own executable to start nodes: %w", err)
			return
		}
		nodeChoice.start, nodeChoice.notice = nodeCommandBeside(exe, BuildIdentity)
		if nodeChoice.notice != "" {
			fmt.Fprintln(notice, nodeChoice.notice)
		}
	})
	return nodeChoice.start, nodeChoice.err
}

// nodeCommandBeside is nodeCommand for the executable exe whose identity
// own gives; notice is the line to show when NodeBinary is beside exe
// but not used.
func nodeCommandBeside(exe string, own func() []string) (start func() *exec.Cmd, notice string) {
	self := func() *exec.Cmd { return exec.Command(exe, "node") }
	node := filepath.Join(filepath.Dir(exe), NodeBinary)
	if node == exe {
		return self, ""
	}
	if fi, err := os.Stat(node); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return self, ""
	}
	id, err := probeIdentity(node)
	if err == nil {
		err = SameBuild(own(), id)
	}
	if err != nil {
		return self, fmt.Sprintf("dmx: not using %s, another build than this dmx: %v; nodes run as `dmx node` (go install ./cmd/... installs both)", node, err)
	}
	return func() *exec.Cmd { return exec.Command(node) }, ""
}

package udp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/dmxlab/dmx/runner/algo"
)

// NodeBinary is the program dmx run starts for each node, looked for
// beside the running executable (go install ./cmd/... puts both in one
// directory). It links what a node needs (the runtime, the algorithms,
// this driver) and nothing that draws: dmx itself links go-graphviz, whose
// package initialisation compiles a WebAssembly module in every process
// that links it (about 26 ms of CPU and 17 MB of memory at start), and a
// node draws nothing. Without it, or when it comes from another build
// (BuildIdentity), the running executable plays the node (the hidden `dmx
// node`), as it did before dmx-node existed.
const NodeBinary = "dmx-node"

// ProfileEnv names the environment variable that makes a node process
// write its CPU profile into the directory it names (dmx bench --profile).
const ProfileEnv = "DMX_NODE_CPUPROFILE"

// NodeProcess is the whole of a node process (dmx-node's main, and the
// hidden `dmx node`): NodeMain over the process's stdin and stdout,
// profiled if ProfileEnv says so. It returns the process's exit status: 0,
// or 2 with the reason on stderr.
func NodeProcess(lookup func(name string) *algo.Spec, stdin io.Reader, stdout, stderr io.Writer) int {
	if dir := os.Getenv(ProfileEnv); dir != "" {
		stop, err := StartCPUProfile(filepath.Join(dir, fmt.Sprintf("node-%d.pprof", os.Getpid())))
		if err != nil {
			fmt.Fprintln(stderr, "dmx node:", err)
			return 2
		}
		defer stop()
	}
	if err := NodeMain(lookup, stdin, stdout); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(stderr, "dmx node:", err)
		return 2
	}
	return 0
}

// StartCPUProfile starts a CPU profile of this process into path; stop
// ends it.
func StartCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile %s: %w", path, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

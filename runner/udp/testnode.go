package udp

import (
	"os"
	"os/exec"

	"github.com/dmxlab/dmx/runner/algo"
)

// testNodeEnv marks a test binary re-executed as a node process.
const testNodeEnv = "DMX_TEST_NODE"

// TestMainNode is the TestMain of a test package whose launches start this
// test binary as their node processes (TestNodeCommand), as dmx re-executes
// itself as `dmx node`: re-executed so, the binary serves one node with the
// algorithms lookup finds and exits; else it runs the tests.
func TestMainNode(m interface{ Run() int }, lookup func(name string) *algo.Spec) {
	if os.Getenv(testNodeEnv) == "1" {
		if err := NodeMain(lookup, os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestNodeCommand is a node process of a test package whose TestMain is
// TestMainNode: the test binary itself, running no test.
func TestNodeCommand() *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), testNodeEnv+"=1")
	return cmd
}

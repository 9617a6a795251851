// Command dmx-node is one node of a `dmx run`: dmx starts it once per
// process of the run, beside itself, and drives it over its stdin and
// stdout (see runner/udp). It is not for direct use.
//
// It is dmx's node without dmx's drawing: it links the runtime, the
// algorithms and the UDP driver, and not go-graphviz, whose package
// initialisation would cost every node about 26 ms of CPU and 17 MB of
// memory at start. Install it with dmx (go install ./cmd/...); where it
// is missing, or comes from another build than dmx (dmx-node --identity
// prints what it is made of, udp.BuildIdentity), dmx plays the node
// itself (the hidden `dmx node`) and says so.
package main

import (
	"fmt"
	"os"

	"github.com/dmxlab/dmx/runner/exec"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/udp"
)

func main() {
	// dmx asks who we are before it starts us as its nodes
	// (udp.BuildIdentity): a dmx-node of another build is not used.
	if len(os.Args) == 2 && os.Args[1] == udp.IdentityArg {
		if err := udp.PrintIdentity(os.Stdout); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	// A program of the user's own (dmx run --exec) is named on the
	// command line (runner/exec.NodeArgs).
	lookup, err := exec.NodeLookup(os.Args[1:], os.Stderr, registry.Lookup)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dmx-node:", err)
		os.Exit(2)
	}
	os.Exit(udp.NodeProcess(lookup, os.Stdin, os.Stdout, os.Stderr))
}

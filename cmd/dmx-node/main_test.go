package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/udp"
)

// TestMain lets the test binary be dmx-node: it links what dmx-node links
// (and the testing package), so its nodes weigh what dmx-node's do.
func TestMain(m *testing.M) {
	if os.Getenv("DMX_NODE_TEST") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// TestNodePeakRSS: a run of 8 central nodes, each this binary, completes,
// and no node's peak resident set reaches 20 MB (a node linking
// go-graphviz peaked at about 30 MB, most of it the WebAssembly module its
// initialisation compiles). The figure is in docs/performance.md.
func TestNodePeakRSS(t *testing.T) {
	p := runner.NewPlan(runner.DriverUDP)
	p.Spec, p.N, p.Seed = registry.Lookup("central"), 8, 1
	p.Workload.Entries = 20
	var c runner.Collector
	var stderr strings.Builder
	res, err := udp.Launch(t.Context(), p, &c, udp.LaunchHooks{
		Command: func() *exec.Cmd {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), "DMX_NODE_TEST=1")
			return cmd
		},
		Stderr: &stderr,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !res.Complete || res.Events == 0 {
		t.Fatalf("run not complete: %s, %d events\n%s", res.Status, res.Events, stderr.String())
	}
	const limit = 20 << 20
	t.Logf("peak RSS of the largest of 8 nodes: %.1f MB (%d events, nodes' CPU %v)", float64(res.NodeMaxRSS)/1e6, res.Events, res.NodeCPU.Round(time.Millisecond))
	if res.NodeMaxRSS <= 0 || res.NodeMaxRSS >= limit {
		t.Errorf("a node peaked at %d bytes, want some but under %d", res.NodeMaxRSS, limit)
	}
}

package netns

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dmxlab/dmx/runner"
)

// TestSources: which senders each receiver's rules drop, per kind of
// fault: the links NetFaults would cut, seen from the receiving side.
func TestSources(t *testing.T) {
	for _, c := range []struct {
		spec string
		proc int // the process an isolation isolates
		want string
	}{
		{"partition:0+1:2+3", 0, "[[2 3] [2 3] [0 1] [0 1]]"},
		{"partition:0:1", 0, "[[1 2] [0 2] [0 1]]"},  // 2 is in a group of its own
		{"partition:0+1", 0, "[[2] [2] [0 1]]"},      // the others form one more group
		{"isolate:2", 2, "[[2] [2] [0 1 3] [2]]"},    // everyone drops 2, 2 drops everyone
		{"isolate:leader", 1, "[[1] [0 2] [1]]"},     // resolved when it starts
		{"cut:from=3:to=0+1", 0, "[[3] [3] [] []]"},  // one way only
		{"cut:from=0+1:to=1+2", 0, "[[] [0] [0 1]]"}, // nobody cuts itself
		{"loss:30%", 0, "[[1 2] [0 2] [0 1]]"},
		{"loss:30%:from=2", 0, "[[2] [2] []]"},
		{"loss:30%:to=0", 0, "[[1 2] [] []]"},
	} {
		fs, err := runner.ParseFaults(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		n := 3
		if c.spec == "partition:0+1:2+3" || c.spec == "isolate:2" || c.spec == "cut:from=3:to=0+1" {
			n = 4
		}
		if got := fmt.Sprint(sources(&fs[0], c.proc, n)); got != c.want {
			t.Errorf("%s: %s, want %s", c.spec, got, c.want)
		}
	}
}

// TestByKernel: what the kernel makes, and why not where it does not.
func TestByKernel(t *testing.T) {
	noNetem := &network{netemErr: fmt.Errorf("this kernel has no sch_netem")}
	withNetem := &network{}
	for _, c := range []struct {
		spec          string
		without, with string // "kernel" or the start of why not
	}{
		{"partition:0:1", "kernel", "kernel"},
		{"isolate:1@1s-2s", "kernel", "kernel"},
		{"cut:from=1:to=2", "kernel", "kernel"},
		{"loss:10%", "kernel", "kernel"},
		{"loss:10%:type=ok", "the kernel cannot tell", "the kernel cannot tell"},
		{"delay:20ms", "this kernel has no sch_netem", "kernel"},
		{"delay:10ms-30ms:from=1", "this kernel has no sch_netem", "kernel"},
		{"delay:exp=20ms", "netem's jitter is uniform", "netem's jitter is uniform"},
		{"delay:20ms:to=2", "netem acts on all", "netem acts on all"},
		{"reorder", "this kernel has no sch_netem", "kernel"},
		{"duplicate:5%", "this kernel has no sch_netem", "kernel"},
	} {
		fs, err := runner.ParseFaults(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []struct {
			nw   *network
			want string
		}{{noNetem, c.without}, {withNetem, c.with}} {
			kernel, how := k.nw.byKernel(&fs[0])
			got := how
			if kernel {
				got = "kernel"
			}
			if len(got) < len(k.want) || got[:len(k.want)] != k.want {
				t.Errorf("%s (netem %v): %q, want %q...", c.spec, k.nw.netemErr == nil, got, k.want)
			}
		}
	}
}

// TestCheckMessage: what a runner without the capabilities is told.
func TestCheckMessage(t *testing.T) {
	for _, c := range []struct {
		eff  uint64
		want string
	}{
		{1<<21 | 1<<12, ""},
		{1 << 21, "--net netns needs root: it lacks CAP_NET_ADMIN (veth pairs, a bridge, nftables rules); run it as root (sudo dmx run ... --net netns), or run without --net: not privileged"},
		{0, "--net netns needs root: it lacks CAP_SYS_ADMIN (make network namespaces and name them) and CAP_NET_ADMIN (veth pairs, a bridge, nftables rules); run it as root (sudo dmx run ... --net netns), or run without --net: not privileged"},
	} {
		err := checkCaps(c.eff)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("caps %x: %q, want %q", c.eff, got, c.want)
		}
	}
}

// TestRunID: sweeps know dmx's names and nothing else.
func TestRunID(t *testing.T) {
	for name, want := range map[string]string{
		"dmx-abc234-hub": "abc234", "dmx-abc234-17": "abc234",
		"dmx-abc234": "", "dmx-abc1x4-0": "", "dmx-ABC234-0": "", "other-abc234-0": "", "dmx-abcdefg-0": "",
	} {
		id, ok := runOf(name)
		if id != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", name, id, ok, want)
		}
	}
}

// TestSweepSparesLiveRuns: a sweep leaves the namespaces of a run whose
// runner is alive (it holds its hub's lock) and removes those of a run
// whose lock is free.
func TestSweepSparesLiveRuns(t *testing.T) {
	if err := Probe(); err != nil {
		t.Skipf("skipped: runs over network namespaces need root (CI runs as root): %v", err)
	}
	live, err := open(2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.close()
	dead, err := open(2, nil)
	if err != nil {
		t.Fatal(err)
	}
	// As if its runner died: the lock goes with the descriptor, the names
	// stay.
	unix.Close(dead.hub)
	dead.hub = -1
	for _, nd := range dead.nodes {
		unix.Close(nd.fd)
	}
	left := Sweep()
	if !slices.Contains(left.Runs, dead.id) || slices.Contains(left.Runs, live.id) {
		t.Errorf("swept %v; want %s's and not %s's", left.Runs, dead.id, live.id)
	}
	for _, what := range []string{"hub", "0", "1"} {
		if _, err := os.Stat(filepath.Join(nsDir, nsName(live.id, what))); err != nil {
			t.Errorf("the live run's %s: %v", what, err)
		}
		if _, err := os.Stat(filepath.Join(nsDir, nsName(dead.id, what))); err == nil {
			t.Errorf("the dead run's %s is still there", what)
		}
	}
	if s := left.String(); !strings.Contains(s, "removed what an earlier run left") || !strings.Contains(s, dead.id) {
		t.Errorf("the sweep says %q", s)
	}
}

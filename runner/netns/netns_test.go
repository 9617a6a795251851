package netns_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dmxlab/dmx/internal/syncbuf"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/netns"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/udp"
	"github.com/dmxlab/dmx/trace"
)

// TestMain lets the test binary play a node process, as dmx-node does.
func TestMain(m *testing.M) { udp.TestMainNode(m, registry.Lookup) }

// needNetns skips a test that needs network namespaces where they
// cannot be made (not root, a container without the capabilities).
func needNetns(t *testing.T) {
	t.Helper()
	if err := netns.Probe(); err != nil {
		t.Skipf("skipped: runs over network namespaces need root (CI runs as root): %v", err)
	}
}

// plan is the plan of a test over network namespaces (skipped where
// they cannot be made): n processes of algorithm name making entries
// each, under faults (none when "").
func plan(t *testing.T, name string, n, entries int, faults string) runner.Plan {
	t.Helper()
	needNetns(t)
	p := runner.NewPlan(runner.DriverUDP)
	p.Spec, p.N = registry.Lookup(name), n
	p.Workload.Entries = entries
	if faults != "" {
		var err error
		if p.Faults, err = runner.ParseFaults(faults); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

type collector struct {
	mu  sync.Mutex
	evs []trace.Event
}

func (c *collector) Record(ev *trace.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evs = append(c.evs, *ev)
	return nil
}

// run carries out p over network namespaces with the test binary as the
// node program.
func run(t *testing.T, ctx context.Context, p runner.Plan) (udp.LaunchResult, []trace.Event, string) {
	t.Helper()
	p.Driver = runner.DriverUDP
	p.UDP.Net = runner.NetNS
	if p.Seed == 0 {
		p.Seed = 1
	}
	if p.UDP.Stall == 0 {
		p.UDP.Stall = 5 * time.Second
	}
	var stderr syncbuf.Buffer
	c := &collector{}
	res, err := netns.Launch(ctx, p, c, udp.LaunchHooks{Command: udp.TestNodeCommand, Stderr: &stderr})
	if err != nil {
		t.Fatalf("launch: %v\nstderr:\n%s", err, stderr.String())
	}
	return res, c.evs, stderr.String()
}

// dmxNamespaces lists the names of network namespaces dmx made that are
// still there.
func dmxNamespaces(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/run/netns")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "dmx-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestCentralOverNetns(t *testing.T) {
	p := plan(t, "central", 3, 3, "")
	before := dmxNamespaces(t)
	res, evs, stderr := run(t, context.Background(), p)
	if !res.Complete {
		t.Fatalf("run did not complete: %s\n%s", res.Status, stderr)
	}
	addrs := map[int]string{}
	for _, ev := range evs {
		if ev.Kind == trace.KindStart {
			d, err := ev.Start()
			if err != nil {
				t.Fatal(err)
			}
			addrs[ev.Proc] = d.Addr
			if !strings.HasPrefix(d.Netns, "dmx-") {
				t.Errorf("P%d's start event names no namespace: %+v", ev.Proc, d)
			}
		}
	}
	for i, want := range []string{"198.18.0.1:", "198.18.0.2:", "198.18.0.3:"} {
		if !strings.HasPrefix(addrs[i], want) {
			t.Errorf("P%d's address %q, want %s...", i, addrs[i], want)
		}
	}
	if after := dmxNamespaces(t); len(after) != len(before) {
		t.Errorf("namespaces left behind: before %v, after %v", before, after)
	}
	t.Log(stderr)
}

// runID returns the run id the launch's stderr names ("in namespaces
// dmx-RUN-0..").
func runID(t *testing.T, stderr string) string {
	t.Helper()
	_, rest, ok := strings.Cut(stderr, "in namespaces dmx-")
	if !ok || len(rest) < 7 {
		t.Fatalf("stderr names no namespaces:\n%s", stderr)
	}
	return rest[:6]
}

// leftOf lists the namespaces of run id still named.
func leftOf(t *testing.T, id string) []string {
	t.Helper()
	var out []string
	for _, n := range dmxNamespaces(t) {
		if strings.HasPrefix(n, "dmx-"+id+"-") {
			out = append(out, n)
		}
	}
	return out
}

// faultDetails returns the details of the fault events of spec, by
// process and phase.
func faultDetails(evs []trace.Event, spec string) []trace.Fault {
	var out []trace.Fault
	for _, ev := range evs {
		if ev.Kind != trace.KindFault {
			continue
		}
		if d, err := ev.Fault(); err == nil && d.Fault == spec {
			out = append(out, d)
		}
	}
	return out
}

// TestEveryAlgorithm runs each algorithm over network namespaces: it
// starts at its address, its messages cross the bridge, and the run ends
// and leaves nothing behind.
func TestEveryAlgorithm(t *testing.T) {
	needNetns(t)
	for _, spec := range registry.All() {
		t.Run(spec.Name, func(t *testing.T) {
			p := runner.NewPlan(runner.DriverUDP)
			p.Spec, p.N = spec, 4
			p.Workload.Entries = 2
			if spec.Kind == algo.Election {
				p.Duration = time.Second
			}
			if spec.Name == "maekawa" {
				p.Params = map[string]string{"variant": "inquire"}
			}
			res, evs, stderr := run(t, context.Background(), p)
			if res.Status == "" || strings.HasPrefix(res.Status, "failed") {
				t.Fatalf("status %q\n%s", res.Status, stderr)
			}
			starts, sends, exits := 0, 0, 0
			for _, ev := range evs {
				switch ev.Kind {
				case trace.KindStart:
					d, _ := ev.Start()
					if !strings.HasPrefix(d.Addr, "198.18.0.") || !strings.HasPrefix(d.Netns, "dmx-") {
						t.Errorf("P%d started at %q in %q", ev.Proc, d.Addr, d.Netns)
					}
					starts++
				case trace.KindSend:
					sends++
				case trace.KindCSExit:
					exits++
				}
			}
			if starts != p.N || sends == 0 {
				t.Errorf("%d starts, %d sends (status %s)", starts, sends, res.Status)
			}
			// Every entry made needs messages across the bridge; an
			// election run's messages may all come late on a loaded
			// machine, and its length is its duration.
			if spec.Kind == algo.MutualExclusion && (!res.Complete || exits != p.N*p.Workload.Entries) {
				t.Errorf("%d critical sections of %d (status %s)", exits, p.N*p.Workload.Entries, res.Status)
			}
			if left := leftOf(t, runID(t, stderr)); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// TestLossByKernel: loss made by nftables drops about its rate of the
// datagrams it sees (the kernel's draw, not dmx's seed), and the fault's
// end event says how many.
func TestLossByKernel(t *testing.T) {
	const spec = "loss:30%@100ms-1.1s"
	// At least 1500 x 1ms of thinking: the run outlasts the loss's window,
	// whose end event says what the rules dropped.
	p := plan(t, "ricart-agrawala", 4, 1500, spec)
	p.Workload.Think, p.Workload.Hold = runner.Fixed(time.Millisecond), runner.Fixed(0)
	res, evs, stderr := run(t, context.Background(), p)
	if !strings.Contains(stderr, "fault "+spec+": by the kernel") {
		t.Errorf("stderr does not say the kernel makes it:\n%s", stderr)
	}
	ds := faultDetails(evs, spec)
	if len(ds) != 2*p.N {
		t.Fatalf("%d fault events, want a start and an end at each of %d processes (status %s)", len(ds), p.N, res.Status)
	}
	// The rate (each end event gives the fault's total over its rules)
	// within five standard deviations of a binomial draw of 30 % from
	// what the rules saw: the draw is the kernel's, and a loaded machine
	// sends fewer datagrams in the window (a fixed floor of 100 and
	// 15-45 % failed under load).
	var dropped, seen int
	for _, d := range ds {
		if d.By != trace.FaultByKernel {
			t.Errorf("%+v: not by the kernel", d)
		}
		if d.Phase != trace.FaultEnd {
			continue
		}
		var dr, se int
		var pct float64
		if _, err := fmt.Sscanf(d.How, "nftables dropped %d of %d datagrams (%f%%)", &dr, &se, &pct); err != nil {
			t.Fatalf("end %q: %v", d.How, err)
		}
		t.Logf("%s: %s", spec, d.How)
		if se > seen {
			dropped, seen = dr, se
		}
	}
	if seen == 0 {
		t.Fatalf("the rules saw no datagram in the window")
	}
	rate, sd := float64(dropped)/float64(seen), math.Sqrt(0.3*0.7/float64(seen))
	if math.Abs(rate-0.3) > 5*sd {
		t.Errorf("dropped %d of %d (%.1f%%), want 30%% within %.1f%%", dropped, seen, 100*rate, 500*sd)
	}
	if !res.Complete {
		t.Errorf("run did not complete: %s", res.Status)
	}
}

// TestDelayFallback: without sch_netem (this kernel), a delay is made by
// the nodes' transport, and dmx says so at the start and in the fault's
// events; with it, by netem. Either way no message in the window arrives
// sooner than the delay.
func TestDelayFallback(t *testing.T) {
	const spec = "delay:30ms"
	p := plan(t, "central", 3, 6, spec)
	p.Workload.Think = runner.Fixed(20 * time.Millisecond)
	res, evs, stderr := run(t, context.Background(), p)
	if !res.Complete {
		t.Fatalf("run did not complete: %s\n%s", res.Status, stderr)
	}
	ds := faultDetails(evs, spec)
	if len(ds) != p.N {
		t.Fatalf("fault events %+v, want a start at each process", ds)
	}
	by := ds[0].By
	switch by {
	case trace.FaultByTransport:
		if !strings.Contains(ds[0].How, "sch_netem") || !strings.Contains(stderr, "fault "+spec+": by the transport (this kernel has no sch_netem") {
			t.Errorf("the fallback is not said: event %+v\nstderr:\n%s", ds[0], stderr)
		}
	case trace.FaultByKernel:
		if !strings.HasPrefix(ds[0].How, "netem delay 30ms") {
			t.Errorf("by the kernel, how %q", ds[0].How)
		}
	default:
		t.Fatalf("by %q", by)
	}
	t.Logf("made by the %s: %s", by, ds[0].How)
	sent := map[int64]int64{}
	late, total := 0, 0
	for _, ev := range evs {
		switch ev.Kind {
		case trace.KindSend:
			sent[ev.Msg] = ev.Wall
		case trace.KindReceive:
			if s, ok := sent[ev.Msg]; ok {
				total++
				if time.Duration(ev.Wall-s) >= 29*time.Millisecond {
					late++
				}
			}
		}
	}
	// Load can make a message later, never sooner.
	if total == 0 || late != total {
		t.Errorf("%d of %d messages took the delay", late, total)
	}
}

// TestInterruptedLeavesNothing: a run stopped by its context (Ctrl-C)
// removes its namespaces all the same.
func TestInterruptedLeavesNothing(t *testing.T) {
	p := plan(t, "token-ring", 3, 1_000_000, "")
	p.Workload.Think = runner.Fixed(10 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*time.Millisecond, cancel)
	res, _, stderr := run(t, ctx, p)
	if res.Complete || !strings.Contains(res.Status, "interrupted") {
		t.Errorf("status %q, complete %v", res.Status, res.Complete)
	}
	if left := leftOf(t, runID(t, stderr)); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestIsolateHealRestart: an isolation of the coordinator made by the
// kernel and ended by heal, and a process restarted meanwhile: the new
// incarnation starts in its namespace at its address, under the kernel
// fault in force, which it records; the run completes once healed.
func TestIsolateHealRestart(t *testing.T) {
	p := plan(t, "central", 3, 6, "isolate:coordinator@100ms,crash:2@150ms,recover:2@250ms,heal@500ms")
	p.Workload.Think = runner.Fixed(30 * time.Millisecond)
	res, evs, stderr := run(t, context.Background(), p)
	if !res.Complete {
		t.Fatalf("run did not complete: %s\n%s", res.Status, stderr)
	}
	const spec = "isolate:coordinator@100ms"
	var phases []string
	addrs := map[string]bool{}
	for _, ev := range evs {
		switch ev.Kind {
		case trace.KindFault:
			d, _ := ev.Fault()
			if d.Fault != spec {
				continue
			}
			if d.By != trace.FaultByKernel {
				t.Errorf("P%d %s: by %q", ev.Proc, d.Phase, d.By)
			}
			phases = append(phases, fmt.Sprintf("P%d %s", ev.Proc, d.Phase))
		case trace.KindRecover:
			if ev.Proc != 2 {
				t.Errorf("P%d recovered", ev.Proc)
			}
		case trace.KindStart:
			d, _ := ev.Start()
			addrs[d.Addr] = true
		}
	}
	// Each process starts it, the restarted one twice (once per
	// incarnation); each ends it at heal.
	got := strings.Join(phases, ",")
	for _, want := range []string{"P0 start", "P1 start", "P2 start", "P0 end", "P1 end", "P2 end"} {
		if !strings.Contains(got, want) {
			t.Errorf("isolation events %s: no %s", got, want)
		}
	}
	if strings.Count(got, "P2 start") != 2 {
		t.Errorf("isolation events %s: want P2's start in both its incarnations", got)
	}
	if len(addrs) != 3 {
		t.Errorf("start addresses %v", addrs)
	}
	if left := leftOf(t, runID(t, stderr)); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

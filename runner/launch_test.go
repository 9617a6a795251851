package runner_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/registry"
	"github.com/dmxlab/dmx/trace"
)

// TestMain lets the test binary play a node process: the launcher
// re-executes it with DMX_TEST_NODE=1, as dmx re-executes itself as `dmx node`.
func TestMain(m *testing.M) {
	if os.Getenv("DMX_TEST_NODE") == "1" {
		if err := runner.NodeMain(registry.Lookup, os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// procs remembers the node processes a launch started, so that a test can
// kill one.
type procs struct {
	mu   sync.Mutex
	cmds []*exec.Cmd
}

func (p *procs) command() *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DMX_TEST_NODE=1")
	p.mu.Lock()
	p.cmds = append(p.cmds, cmd)
	p.mu.Unlock()
	return cmd
}

type syncCollector struct {
	mu sync.Mutex
	runner.Collector
	onEvent func(ev *trace.Event)
}

func (c *syncCollector) Record(ev *trace.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.onEvent != nil {
		c.onEvent(ev)
	}
	return c.Collector.Record(ev)
}

func launch(t *testing.T, ctx context.Context, name string, n int, wl runner.Workload, p *procs, rec runner.Recorder, port int) (runner.LaunchResult, error) {
	t.Helper()
	if p == nil {
		p = &procs{}
	}
	var stderr strings.Builder
	res, err := runner.Launch(ctx, runner.Plan{Spec: registry.Lookup(name), N: n, Seed: 1, Workload: wl, UDP: runner.UDPOptions{BasePort: port, Stall: 2 * time.Second}}, rec, runner.LaunchHooks{Command: p.command, Stderr: &lockedWriter{w: &stderr}})
	if s := stderr.String(); s != "" {
		t.Logf("nodes' stderr:\n%s", s)
	}
	return res, err
}

type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

var udpWorkload = runner.Workload{Entries: 5, Think: runner.Dist{Max: 5 * time.Millisecond}, Hold: runner.Fixed(time.Millisecond)}

func checkAll(t *testing.T, evs []trace.Event, n int, complete bool) []analyze.Result {
	t.Helper()
	results, err := analyze.Evaluate(trace.Run{Nodes: n, Complete: complete}, &trace.SliceReader{Events: evs}, analyze.All)
	if err != nil {
		t.Fatalf("analyze: %v", err)
	}
	return results
}

// TestLaunchUDP: real processes over UDP on 127.0.0.1 record a run that
// passes every check.
func TestLaunchUDP(t *testing.T) {
	for _, name := range []string{"ricart-agrawala", "central"} {
		t.Run(name, func(t *testing.T) {
			var c syncCollector
			res, err := launch(t, context.Background(), name, 4, udpWorkload, nil, &c, 0)
			if err != nil || !res.Complete {
				t.Fatalf("launch: %v (%s)", err, res.Status)
			}
			if res.Transport.Total() != 0 {
				t.Errorf("transport rejected datagrams in a clean run: %+v", res.Transport)
			}
			enters := 0
			for _, e := range c.Events {
				if e.Kind == trace.KindCSEnter {
					enters++
				}
			}
			if enters != 4*5 {
				t.Fatalf("%d critical sections recorded, want 20", enters)
			}
			for _, r := range checkAll(t, c.Events, 4, true) {
				if r.Verdict != analyze.OK {
					t.Errorf("%s: %s %v", r.Check, r.Verdict, r.Findings)
				}
			}
		})
	}
}

// TestLaunchKilledNode: a node SIGKILLed mid-run loses none of the events it
// emitted; the runner records its crash after them, and the run ends when
// the others stall (Ricart-Agrawala needs every process: seed 003, "N points
// of failure").
func TestLaunchKilledNode(t *testing.T) {
	p := &procs{}
	var c syncCollector
	var killed bool
	var lastSeq int64
	c.onEvent = func(ev *trace.Event) {
		if ev.Proc == 1 && ev.Kind == trace.KindCSEnter && !killed {
			killed = true
			lastSeq = ev.Seq
			p.mu.Lock()
			p.cmds[1].Process.Kill()
			p.mu.Unlock()
		}
	}
	wl := udpWorkload
	wl.Hold = runner.Fixed(50 * time.Millisecond) // P1 is killed inside its critical section
	res, err := launch(t, context.Background(), "ricart-agrawala", 3, wl, p, &c, 0)
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
	if !killed {
		t.Fatal("P1 never entered its critical section")
	}
	var p1 []trace.Event
	for _, e := range c.Events {
		if e.Proc == 1 {
			p1 = append(p1, e)
		}
	}
	for i, e := range p1 {
		if e.Seq != int64(i+1) {
			t.Fatalf("P1's events have a gap at %s", &e)
		}
	}
	lastEv := p1[len(p1)-1]
	if lastEv.Kind != trace.KindCrash || lastEv.Seq <= lastSeq {
		t.Fatalf("P1's last event is %s, want a crash after P1#%d", &lastEv, lastSeq)
	}
	if !strings.Contains(string(lastEv.Detail), "killed") {
		t.Errorf("crash detail %s does not say it was killed", lastEv.Detail)
	}
	if !strings.Contains(res.Status, "P1") {
		t.Errorf("status %q does not name P1", res.Status)
	}
	// The trace is valid and its checks run: the crash excuses P1's own
	// requests, and the others' blocked requests are liveness findings.
	for _, r := range checkAll(t, c.Events, 3, true) {
		if r.Check == "clocks" && r.Verdict != analyze.OK {
			t.Errorf("clocks: %v", r.Findings)
		}
	}
}

// TestLaunchInterrupted: a run cancelled half-way (Ctrl-C) stops its nodes
// in order and is marked incomplete; its trace is valid.
func TestLaunchInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var c syncCollector
	n := 0
	c.onEvent = func(ev *trace.Event) {
		if ev.Kind == trace.KindCSExit {
			if n++; n == 5 {
				cancel()
			}
		}
	}
	wl := udpWorkload
	wl.Entries = 1000
	res, err := launch(t, ctx, "central", 3, wl, nil, &c, 0)
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
	if res.Complete || res.Status != "interrupted" {
		t.Fatalf("result %+v, want incomplete and interrupted", res)
	}
	stops := 0
	for _, e := range c.Events {
		if e.Kind == trace.KindStop {
			stops++
		}
	}
	if stops != 3 {
		t.Errorf("%d nodes recorded a stop event, want 3", stops)
	}
	for _, r := range checkAll(t, c.Events, 3, false) {
		if r.Verdict == analyze.Violated {
			t.Errorf("%s: %v", r.Check, r.Findings)
		}
	}
}

// TestLaunchConcurrentRuns: two runs on one machine at once do not disturb
// each other.
func TestLaunchConcurrentRuns(t *testing.T) {
	var wg sync.WaitGroup
	cs := make([]syncCollector, 2)
	errs := make([]error, 2)
	ress := make([]runner.LaunchResult, 2)
	for i := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ress[i], errs[i] = launch(t, context.Background(), "ricart-agrawala", 3, udpWorkload, nil, &cs[i], 0)
		}()
	}
	wg.Wait()
	for i := range cs {
		if errs[i] != nil || !ress[i].Complete || ress[i].Transport.Total() != 0 {
			t.Fatalf("run %d: %v %+v", i, errs[i], ress[i])
		}
		for _, r := range checkAll(t, cs[i].Events, 3, true) {
			if r.Verdict != analyze.OK {
				t.Errorf("run %d: %s: %v", i, r.Check, r.Findings)
			}
		}
	}
}

// TestLaunchPortInUse: a port that is taken is a clear error, not a hang.
func TestLaunchPortInUse(t *testing.T) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	port := c.LocalAddr().(*net.UDPAddr).Port
	var col syncCollector
	_, err = launch(t, context.Background(), "central", 1, udpWorkload, nil, &col, port)
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("err = %v, want address already in use", err)
	}
}

// TestLaunchCrashRecover: a fault SIGKILLs P1 and a later one restarts it as
// a new process, which resumes P1's clocks and sequence numbers from the
// trace and finishes its workload; the run passes every check.
func TestLaunchCrashRecover(t *testing.T) {
	var c syncCollector
	p := &procs{}
	spec := registry.Lookup("central")
	// Central deadlocks when a client crashes while it holds or awaits the
	// grant (seed 004: "Deadlock if mutex-holder fails"): a schedule of 60ms
	// time slots (P1 asks at 60ms, 240ms, ...) crashes P1 while it is idle,
	// with room for a slow, loaded machine.
	wl := runner.Workload{Entries: 4, Hold: runner.Fixed(time.Millisecond), Contention: runner.ContentionNone, Slot: 60 * time.Millisecond}
	plan := runner.Plan{Spec: spec, N: 3, Seed: 1, Workload: wl, Faults: []runner.Fault{{Kind: runner.FaultCrash, Proc: 1, At: 140 * time.Millisecond}, {Kind: runner.FaultRecover, Proc: 1, At: 170 * time.Millisecond}}, UDP: runner.UDPOptions{Stall: 3 * time.Second}}
	keepOnFailure(t, plan, &c)
	res, err := runner.Launch(context.Background(), plan, &c, runner.LaunchHooks{Command: p.command})
	if err != nil || !res.Complete {
		t.Fatalf("launch: %v %+v", err, res)
	}
	var kinds []string
	var seq int64
	for _, e := range c.Events {
		if e.Proc != 1 {
			continue
		}
		if e.Seq != seq+1 {
			t.Fatalf("P1's events jump from #%d to %s", seq, &e)
		}
		seq = e.Seq
		if e.Kind == trace.KindCrash || e.Kind == trace.KindRecover {
			kinds = append(kinds, string(e.Kind))
			if e.Kind == trace.KindCrash && !strings.Contains(string(e.Detail), "SIGKILL") {
				t.Errorf("crash detail %s", e.Detail)
			}
		}
	}
	if strings.Join(kinds, ",") != "crash,recover" {
		t.Fatalf("P1 recorded %v, want crash then recover", kinds)
	}
	if len(p.cmds) != 4 {
		t.Errorf("%d processes started, want 4 (P1 twice)", len(p.cmds))
	}
	for _, r := range checkAll(t, c.Events, 3, true) {
		if r.Verdict != analyze.OK {
			t.Errorf("%s: %s %v", r.Check, r.Verdict, r.Findings)
		}
	}
}

// TestLaunchRecoverAtCrashTime: a recovery scheduled at the very time of the
// crash (before the runner has seen the killed process end) restarts it, as
// the simulator does, instead of being dropped as "it is up".
func TestLaunchRecoverAtCrashTime(t *testing.T) {
	var c syncCollector
	p := &procs{}
	wl := runner.Workload{Entries: 4, Hold: runner.Fixed(time.Millisecond), Contention: runner.ContentionNone, Slot: 30 * time.Millisecond}
	res, err := runner.Launch(context.Background(), runner.Plan{Spec: registry.Lookup("central"), N: 3, Seed: 1, Workload: wl, Faults: []runner.Fault{{Kind: runner.FaultCrash, Proc: 1, At: 70 * time.Millisecond}, {Kind: runner.FaultRecover, Proc: 1, At: 70 * time.Millisecond}}, UDP: runner.UDPOptions{Stall: 3 * time.Second}}, &c, runner.LaunchHooks{Command: p.command})
	if err != nil || !res.Complete {
		t.Fatalf("launch: %v %+v", err, res)
	}
	var kinds []string
	for _, e := range c.Events {
		if e.Proc == 1 && (e.Kind == trace.KindCrash || e.Kind == trace.KindRecover) {
			kinds = append(kinds, string(e.Kind))
		}
	}
	if strings.Join(kinds, ",") != "crash,recover" {
		t.Fatalf("P1 recorded %v, want crash then recover", kinds)
	}
	if len(p.cmds) != 4 {
		t.Errorf("%d processes started, want 4 (P1 twice)", len(p.cmds))
	}
}

// TestLaunchKilledThenStopped: a node killed by a fault gets its crash
// recorded even when the run is stopped (Ctrl-C, the end of an election
// run) before the runner has seen the node's output end. The node's output
// is held open a while by a child that inherits it, as a busy machine may
// delay it.
func TestLaunchKilledThenStopped(t *testing.T) {
	var c syncCollector
	p := &procs{}
	k := 0
	command := func() *exec.Cmd {
		cmd := p.command()
		if k++; k == 2 { // P1
			cmd.Args = []string{"sh", "-c", `sleep 2 & exec "$0" "$@"`, cmd.Path, "-test.run=^$"}
			cmd.Path = "/bin/sh"
		}
		return cmd
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopper := time.AfterFunc(time.Second, cancel)
	defer stopper.Stop()
	wl := runner.Workload{Entries: 1_000_000, Hold: runner.Fixed(time.Millisecond)}
	res, err := runner.Launch(ctx, runner.Plan{Spec: registry.Lookup("central"), N: 3, Seed: 1, Workload: wl, Faults: []runner.Fault{{Kind: runner.FaultCrash, Proc: 1, At: 200 * time.Millisecond}}}, &c, runner.LaunchHooks{Command: command})
	if err != nil || res.Complete {
		t.Fatalf("launch: %v %+v", err, res)
	}
	crashes := 0
	for _, e := range c.Events {
		if e.Proc == 1 && e.Kind == trace.KindCrash {
			crashes++
		}
	}
	if crashes != 1 {
		t.Fatalf("P1 was killed by a fault; %d crash events recorded, want 1", crashes)
	}
}

// TestLaunchMulticastRecover: a restarted process of a multicast algorithm
// makes the multicasts its workload has left, as in the simulator, not its
// whole workload again.
func TestLaunchMulticastRecover(t *testing.T) {
	var c syncCollector
	p := &procs{}
	const entries = 10
	wl := runner.Workload{Entries: entries, Think: runner.Fixed(20 * time.Millisecond)}
	res, err := runner.Launch(context.Background(), runner.Plan{Spec: registry.Lookup("tomcast"), N: 3, Seed: 1, Workload: wl, Faults: []runner.Fault{{Kind: runner.FaultCrash, Proc: 1, At: 140 * time.Millisecond}, {Kind: runner.FaultRecover, Proc: 1, At: 170 * time.Millisecond}}, UDP: runner.UDPOptions{Stall: 3 * time.Second}}, &c, runner.LaunchHooks{Command: p.command})
	if err != nil || !res.Complete {
		t.Fatalf("launch: %v %+v", err, res)
	}
	multicasts, before := 0, 0
	recovered := false
	for _, e := range c.Events {
		if e.Proc != 1 {
			continue
		}
		switch {
		case e.Kind == trace.KindRecover:
			recovered = true
		case e.Kind == trace.KindInternal && strings.Contains(string(e.Detail), `"multicast"`):
			multicasts++
			if !recovered {
				before++
			}
		}
	}
	if !recovered || before == 0 || before == entries {
		t.Fatalf("P1 recovered %v after %d multicasts: the schedule did not crash it mid-workload", recovered, before)
	}
	if multicasts != entries {
		t.Fatalf("P1 made %d multicasts (%d before its crash), want %d in all", multicasts, before, entries)
	}
}

// TestLaunchSpawnFailureReaps: when a node cannot be started, the nodes
// already started are killed and reaped, not left behind as zombies.
func TestLaunchSpawnFailureReaps(t *testing.T) {
	p := &procs{}
	k := 0
	command := func() *exec.Cmd {
		if k++; k == 3 {
			return exec.Command("/nonexistent/dmx-node")
		}
		return p.command()
	}
	_, err := runner.Launch(context.Background(), runner.Plan{Spec: registry.Lookup("central"), N: 3, Seed: 1, Workload: runner.Workload{Entries: 1}}, &runner.Collector{}, runner.LaunchHooks{Command: command})
	if err == nil {
		t.Fatal("launch with a node that cannot start: no error")
	}
	if len(p.cmds) != 2 {
		t.Fatalf("%d nodes started, want 2", len(p.cmds))
	}
	for i, cmd := range p.cmds {
		if cmd.ProcessState == nil {
			t.Errorf("P%d was not reaped", i)
		}
	}
}

// udpParams are the parameters each algorithm runs with over UDP: the
// deadlock-free variants (a deadlock of basic Maekawa over UDP depends on
// timing; the simulator shows it for a named seed).
//
// Elections get a failure detector and time-outs fit for a loaded 2-core
// machine, where a process can be off the CPU for tens of milliseconds: with
// the defaults (suspect after 40ms of silence, bully waits 50ms for an
// answer) the checks rightly find split brains there (seed 004: "D too
// small => inaccurate"; bully's "safety is broken if too tight deadline").
var udpParams = map[string]map[string]string{
	"maekawa":       {"variant": "inquire"},
	"bully":         {"fd-period": "30ms", "fd-allowance": "300ms", "timeout": "400ms"},
	"ring":          {"fd-period": "30ms", "fd-allowance": "300ms", "timeout": "600ms"},
	"chang-roberts": {"fd-period": "30ms", "fd-allowance": "300ms", "timeout": "600ms"},
	"lease":         {"lease": "300ms"},
}

// TestLaunchEveryAlgorithm runs every algorithm dmx lists at least once as
// real processes over UDP and checks the trace.
func TestLaunchEveryAlgorithm(t *testing.T) {
	for _, spec := range registry.All() {
		t.Run(spec.Name, func(t *testing.T) {
			var c syncCollector
			p := &procs{}
			wl := runner.Workload{Entries: 3, Think: runner.Dist{Max: 3 * time.Millisecond}, Hold: runner.Fixed(time.Millisecond)}
			plan := runner.Plan{Spec: spec, N: 4, Seed: 1, Params: udpParams[spec.Name], Workload: wl, Duration: 1500 * time.Millisecond, UDP: runner.UDPOptions{Stall: 3 * time.Second}}
			keepOnFailure(t, plan, &c)
			res, err := runner.Launch(context.Background(), plan, &c, runner.LaunchHooks{Command: p.command})
			if err != nil || !res.Complete {
				t.Fatalf("launch: %v %+v", err, res)
			}
			if len(c.Events) < 10 {
				t.Fatalf("only %d events", len(c.Events))
			}
			results, err := analyze.Evaluate(trace.Run{Nodes: 4, Complete: true}, &trace.SliceReader{Events: c.Events}, mustChecks(t, spec.Properties))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range results {
				if r.Verdict != analyze.OK {
					t.Errorf("%s: %s %v", r.Check, r.Verdict, r.Findings)
				}
			}
		})
	}
}

// TestLaunchElectionsKillLeader: every election algorithm over real
// processes, with the leader SIGKILLed twice: the survivors elect a new one
// each time, and agreement, validity (where the algorithm claims it), no
// split brain and termination hold. Five processes, so that three are left:
// a majority, which lease (Chubby) needs to elect at all.
func TestLaunchElectionsKillLeader(t *testing.T) {
	for _, spec := range registry.All() {
		if spec.Kind != algo.Election {
			continue
		}
		t.Run(spec.Name, func(t *testing.T) {
			t.Parallel() // mostly idle processes: heartbeats
			var c syncCollector
			p := &procs{}
			plan := runner.Plan{Spec: spec, N: 5, Seed: 1, Params: udpParams[spec.Name], Duration: 5 * time.Second, Faults: []runner.Fault{{Kind: runner.FaultCrash, Proc: runner.Leader, At: 1500 * time.Millisecond},
				{Kind: runner.FaultCrash, Proc: runner.Leader, At: 3000 * time.Millisecond}}}
			keepOnFailure(t, plan, &c)
			res, err := runner.Launch(context.Background(), plan, &c, runner.LaunchHooks{Command: p.command})
			if err != nil || !res.Complete {
				t.Fatalf("launch: %v %+v", err, res)
			}
			var killed []int
			for _, e := range c.Events {
				if e.Kind == trace.KindCrash {
					if !strings.Contains(string(e.Detail), "SIGKILL") {
						t.Errorf("crash %s: %s", &e, e.Detail)
					}
					killed = append(killed, e.Proc)
				}
			}
			if len(killed) != 2 || killed[0] == killed[1] {
				t.Fatalf("killed %v, want two different leaders", killed)
			}
			results, err := analyze.Evaluate(trace.Run{Nodes: 5, Complete: true}, &trace.SliceReader{Events: c.Events}, mustChecks(t, spec.Properties))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range results {
				if r.Verdict != analyze.OK {
					t.Errorf("%s: %s %v", r.Check, r.Verdict, r.Findings)
				}
			}
		})
	}
}

// TestLaunchFailover: the two failovers of the seeds over real processes.
// Central with an elected coordinator (seed 003: "If the coordinator
// crashes, a new coordinator must be created"): the coordinator is SIGKILLed
// twice and mutual exclusion goes on. Token ring with regeneration (seed
// 001: "a unique process has to be picked to regenerate token"): a process
// is SIGKILLed while the token is mostly held, and the ring goes on with
// one token.
func TestLaunchFailover(t *testing.T) {
	for _, c := range []struct {
		algo   string
		params map[string]string
		faults []runner.Fault
	}{
		{"central", map[string]string{"failover": "bully", "fd-period": "30ms", "fd-allowance": "300ms", "timeout": "400ms"},
			[]runner.Fault{{Kind: runner.FaultCrash, Proc: runner.Leader, At: 800 * time.Millisecond}, {Kind: runner.FaultCrash, Proc: runner.Leader, At: 2 * time.Second}}},
		{"token-ring", map[string]string{"regenerate": "true", "fd-period": "30ms", "fd-allowance": "300ms", "timeout": "600ms"},
			[]runner.Fault{{Kind: runner.FaultCrash, Proc: 2, At: 500 * time.Millisecond}}},
	} {
		t.Run(c.algo, func(t *testing.T) {
			t.Parallel()
			var col syncCollector
			p := &procs{}
			spec := registry.Lookup(c.algo)
			wl := runner.Workload{Entries: 20, Think: runner.Dist{Max: 20 * time.Millisecond}, Hold: runner.Fixed(10 * time.Millisecond)}
			plan := runner.Plan{Spec: spec, N: 5, Seed: 1, Params: c.params, Workload: wl, Faults: c.faults, UDP: runner.UDPOptions{Stall: 5 * time.Second}}
			keepOnFailure(t, plan, &col)
			res, err := runner.Launch(context.Background(), plan, &col, runner.LaunchHooks{Command: p.command})
			if err != nil || !res.Complete || !strings.HasPrefix(res.Status, "the live nodes finished their workloads") {
				t.Fatalf("launch: %v %+v", err, res)
			}
			crashes := count(col.Events, trace.KindCrash, -1)
			if crashes != len(c.faults) {
				t.Fatalf("%d crashes recorded, want %d", crashes, len(c.faults))
			}
			results, err := analyze.Evaluate(trace.Run{Nodes: 5, Complete: true}, &trace.SliceReader{Events: col.Events}, mustChecks(t, spec.Properties))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range results {
				if r.Verdict != analyze.OK {
					t.Errorf("%s: %s %v", r.Check, r.Verdict, r.Findings)
				}
			}
		})
	}
}

// TestLaunchNothingAfterTheEnd: an election run ends at the same instant
// for every process, as in the simulator. P0 is stopped (SIGSTOP) just
// before the end and resumed well after the others have stopped: it finds
// everyone silent, and if it took that as a sign (suspect them all, elect
// itself) the trace would show a split brain after the run's end. It takes
// nothing after the end.
func TestLaunchNothingAfterTheEnd(t *testing.T) {
	const duration = 800 * time.Millisecond
	p := &procs{}
	var c syncCollector
	var once sync.Once
	var resumed atomic.Int64
	c.onEvent = func(*trace.Event) {
		once.Do(func() {
			// The first event comes at the run's start.
			time.AfterFunc(duration-200*time.Millisecond, func() {
				p.mu.Lock()
				defer p.mu.Unlock()
				p.cmds[0].Process.Signal(syscall.SIGSTOP)
			})
			time.AfterFunc(duration+700*time.Millisecond, func() {
				p.mu.Lock()
				defer p.mu.Unlock()
				resumed.Store(time.Now().UnixNano())
				p.cmds[0].Process.Signal(syscall.SIGCONT)
			})
		})
	}
	plan := runner.Plan{Spec: registry.Lookup("ring"), N: 4, Seed: 1, Duration: duration,
		Params: map[string]string{"fd-period": "30ms", "fd-allowance": "300ms", "timeout": "600ms"}}
	keepOnFailure(t, plan, &c)
	res, err := runner.Launch(context.Background(), plan, &c, runner.LaunchHooks{Command: p.command})
	if err != nil || !res.Complete {
		t.Fatalf("launch: %v %+v", err, res)
	}
	if resumed.Load() == 0 {
		t.Fatal("the run ended before P0 was resumed")
	}
	for _, e := range c.Events {
		if e.Proc == 0 && e.Wall > resumed.Load() && e.Kind != trace.KindStop && e.Kind != trace.KindReceive && e.Kind != trace.KindSend {
			t.Errorf("P0 acted after the run's end: %s", &e)
		}
	}
}

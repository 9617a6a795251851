package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/udp"
	"github.com/dmxlab/dmx/trace"
)

// faultEvents returns the fault events of evs whose fault is spec, as
// "P2 start" strings.
func faultEvents(evs []trace.Event, spec string) []string {
	var out []string
	for _, e := range evs {
		if e.Kind != trace.KindFault {
			continue
		}
		if d, err := e.Fault(); err == nil && d.Fault == spec {
			out = append(out, "P"+string(rune('0'+e.Proc))+" "+d.Phase)
		}
	}
	return out
}

func kinds(evs []trace.Event, k trace.Kind) (n int) {
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// faultKindCases are one run of each kind of fault, and what its trace
// must show, whichever the driver.
var faultKindCases = func() []faultKindCase {
	me := runner.Workload{Entries: 4, Think: runner.Dist{Max: 20 * time.Millisecond}, Hold: runner.Fixed(5 * time.Millisecond)}
	slow := runner.Workload{Entries: 8, Think: runner.Fixed(30 * time.Millisecond), Hold: runner.Fixed(5 * time.Millisecond)}
	return []faultKindCase{
		{name: "crash on a condition", algo: "central", faults: "crash:cs@100ms", wl: slow,
			check: func(t *testing.T, evs []trace.Event, status string) {
				for _, e := range evs {
					if e.Kind == trace.KindCrash {
						// The fault, and how the process ended: a SIGKILL
						// under run, the simulator's stop under sim.
						if d, _ := e.Crash(); d.Fault != "crash:cs@100ms" || d.Reason != "killed by SIGKILL" && d.Reason != "stopped by the simulator" {
							t.Errorf("crash %s: %+v", &e, d)
						}
						return
					}
				}
				t.Errorf("no crash (status %q; fault events %v)", status, faultEvents(evs, "crash:cs@100ms"))
				for _, e := range evs {
					if e.Kind == trace.KindFault || e.Kind == trace.KindCSEnter {
						t.Logf("%s", &e)
					}
				}
			}},
		{name: "recover with amnesia after a delay", algo: "central", faults: "crash:1@enter#2,recover:1:amnesia@+50ms", wl: me,
			check: func(t *testing.T, evs []trace.Event, status string) {
				if kinds(evs, trace.KindCrash) != 1 || kinds(evs, trace.KindRecover) != 1 {
					t.Errorf("%d crashes, %d recoveries", kinds(evs, trace.KindCrash), kinds(evs, trace.KindRecover))
				}
			}},
		{name: "pause", algo: "central", faults: "pause:coordinator@100ms-400ms", wl: slow,
			check: func(t *testing.T, evs []trace.Event, status string) {
				got := faultEvents(evs, "pause:coordinator@100ms-400ms")
				if strings.Join(got, ",") != "P0 start,P0 end" {
					t.Fatalf("pause events %v", got)
				}
				var from, to int64
				for _, e := range evs {
					if e.Kind == trace.KindFault && e.Proc == 0 {
						if from == 0 {
							from = e.Wall
						} else {
							to = e.Wall
						}
					}
				}
				if d := time.Duration(to - from); d < 280*time.Millisecond {
					t.Errorf("paused for %v, want 300ms", d)
				}
			}},
		{name: "skew", algo: "central", faults: "skew:1:+1h", wl: me,
			check: func(t *testing.T, evs []trace.Event, status string) {
				if got := faultEvents(evs, "skew:1:+1h0m0s"); len(got) != 1 {
					t.Fatalf("skew events %v", got)
				}
				var p0, p1 int64
				for _, e := range evs {
					if e.Kind == trace.KindStop {
						if e.Proc == 0 {
							p0 = e.Wall
						} else if e.Proc == 1 {
							p1 = e.Wall
						}
					}
				}
				if d := time.Duration(p1 - p0); d < 59*time.Minute {
					t.Errorf("P1's clock is %v ahead of P0's, want an hour", d)
				}
			}},
		{name: "loss, reliable", algo: "ricart-agrawala", faults: "loss:30%", wl: me,
			check: func(t *testing.T, evs []trace.Event, status string) {
				drops := 0
				for _, e := range evs {
					if e.Kind == trace.KindDrop {
						drops++
						if d, err := e.Drop(); err != nil || d.Fault != "loss:30%" || !d.Resend {
							t.Errorf("%s: %+v %v", &e, d, err)
						}
					}
				}
				if drops == 0 || status != "every workload finished" {
					t.Errorf("%d drops, status %s", drops, status)
				}
			}},
		{name: "loss, raw", algo: "ricart-agrawala", faults: "loss:100%:from=1:to=2", raw: true, wl: me,
			check: func(t *testing.T, evs []trace.Event, status string) {
				for _, e := range evs {
					if e.Kind == trace.KindDrop {
						if d, _ := e.Drop(); d.Resend || e.Proc != 1 || e.Peer != 2 {
							t.Errorf("%s: %+v", &e, d)
						}
						return
					}
				}
				t.Error("no drop")
			}},
		{name: "delay", algo: "central", faults: "delay:exp=5ms:to=0", wl: me,
			check: func(t *testing.T, evs []trace.Event, status string) {
				if got := faultEvents(evs, "delay:exp=5ms:to=0"); len(got) != 2 {
					t.Errorf("delay events %v (want P1 and P2 start)", got)
				}
			}},
		{name: "reorder", algo: "ricart-agrawala", faults: "reorder:0s-10ms", wl: me,
			check: func(t *testing.T, evs []trace.Event, status string) {
				if status != "every workload finished" {
					t.Errorf("status %s", status)
				}
			}},
		{name: "duplicate, raw", algo: "central", faults: "duplicate:50%", raw: true, wl: me,
			check: func(t *testing.T, evs []trace.Event, status string) {
				recv := map[int64]int{}
				dups := 0
				for _, e := range evs {
					if e.Kind == trace.KindReceive {
						if recv[e.Msg]++; recv[e.Msg] == 2 {
							dups++
						}
					}
				}
				if dups == 0 {
					t.Error("no message received twice")
				}
			}},
		{name: "partition", algo: "bully", faults: "partition:0+1:2@300ms-600ms",
			check: func(t *testing.T, evs []trace.Event, status string) {
				got := faultEvents(evs, "partition:0+1:2@300ms-600ms")
				if len(got) != 6 || kinds(evs, trace.KindDrop) == 0 {
					t.Errorf("partition events %v, %d drops", got, kinds(evs, trace.KindDrop))
				}
			}},
		{name: "isolate", algo: "bully", faults: "isolate:leader@300ms-600ms",
			check: func(t *testing.T, evs []trace.Event, status string) {
				if got := faultEvents(evs, "isolate:leader@300ms-600ms"); len(got) != 6 {
					t.Errorf("isolate events %v", got)
				}
			}},
		{name: "cut and heal", algo: "bully", faults: "cut:from=2:to=0+1@300ms,heal@600ms",
			check: func(t *testing.T, evs []trace.Event, status string) {
				if got := faultEvents(evs, "cut:from=2:to=0+1@300ms"); strings.Join(got, ",") != "P2 start,P2 end" {
					t.Errorf("cut events %v", got)
				}
				for _, e := range evs {
					if e.Kind == trace.KindDrop && e.Proc != 2 {
						t.Errorf("%s: only P2's messages are cut", &e)
					}
				}
			}},
	}
}()

type faultKindCase struct {
	name, algo, faults string
	raw                bool
	wl                 runner.Workload
	check              func(t *testing.T, evs []trace.Event, status string)
}

// plan is the case's run with driver d.
func (c faultKindCase) plan(t *testing.T, d runner.Driver) runner.Plan {
	faults, err := runner.ParseFaults(c.faults)
	if err != nil {
		t.Fatal(err)
	}
	p := runner.NewPlan(d)
	p.Spec, p.N, p.Seed, p.Workload, p.Faults, p.Duration = registry.Lookup(c.algo), 3, 1, c.wl, faults, 1200*time.Millisecond
	p.UDP.Stall = time.Second
	if c.algo != "bully" {
		p.Duration = 0
	}
	if c.raw {
		p.Channels = runner.ChannelsRaw
	}
	return p
}

// TestLaunchEveryFaultKind: every kind of fault under dmx run, over real
// processes: it acts (the events it must leave are in the trace), the run
// ends, and no process the runner started is left, stopped ones included.
func TestLaunchEveryFaultKind(t *testing.T) {
	for _, c := range faultKindCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := c.plan(t, runner.DriverUDP)
			var col syncCollector
			pr := &procs{}
			var stderr strings.Builder
			res, err := udp.Launch(context.Background(), p, &col, udp.LaunchHooks{Command: pr.command, Stderr: &lockedWriter{w: &stderr}})
			if err != nil {
				t.Fatalf("launch: %v\n%s", err, stderr.String())
			}
			c.check(t, col.Events, res.Status)
			noneLeft(t, pr)
		})
	}
}

// noneLeft fails if a process the launch started has not been reaped.
func noneLeft(t *testing.T, pr *procs) {
	t.Helper()
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if len(pr.cmds) == 0 {
		t.Fatal("no process started")
	}
	for _, cmd := range pr.cmds {
		if cmd.Process != nil && cmd.ProcessState == nil {
			t.Errorf("process %d was not reaped", cmd.Process.Pid)
		}
	}
}

// TestLaunchInterruptedWhilePaused: Ctrl-C while a node is stopped by a
// pause: the runner still stops every process (a stopped one is continued
// first) and the trace keeps the pause. The pause would last three
// minutes: a runner that waited for its end would take them, and the
// bound below is so far from the fraction of a second a stop takes that
// no load reaches it.
func TestLaunchInterruptedWhilePaused(t *testing.T) {
	faults, _ := runner.ParseFaults("pause:1@100ms-3m")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var col syncCollector
	col.onEvent = func(ev *trace.Event) {
		if ev.Kind == trace.KindFault && ev.Proc == 1 {
			time.AfterFunc(200*time.Millisecond, cancel)
		}
	}
	pr := &procs{}
	start := time.Now()
	res, err := udp.Launch(ctx, runner.Plan{Spec: registry.Lookup("central"), N: 3, Seed: 1, Faults: faults,
		Workload: runner.Workload{Entries: 50, Think: runner.Fixed(20 * time.Millisecond), Hold: runner.Fixed(time.Millisecond)}}, &col, udp.LaunchHooks{Command: pr.command})
	if err != nil || res.Complete || res.Status != "interrupted" {
		t.Fatalf("launch: %v %+v", err, res)
	}
	if d := time.Since(start); d > 90*time.Second {
		t.Errorf("took %v to stop: it waited for the pause to end", d)
	}
	if got := faultEvents(col.Events, "pause:1@100ms-3m0s"); len(got) == 0 || got[0] != "P1 start" {
		t.Errorf("pause events %v", got)
	}
	noneLeft(t, pr)
}

// TestLaunchFaultNotApplied: a fault that turns out not to apply during
// the run is said so, and recorded (issue: crash:leader twice in a row).
func TestLaunchFaultNotApplied(t *testing.T) {
	faults, _ := runner.ParseFaults("crash:1@100ms,crash:1@200ms,crash:leader@5s")
	var col syncCollector
	pr := &procs{}
	res, err := udp.Launch(context.Background(), runner.Plan{Spec: registry.Lookup("bully"), N: 3, Seed: 1, Faults: faults, Duration: 800 * time.Millisecond}, &col, udp.LaunchHooks{Command: pr.command})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fault crash:1@200ms not applied: P1 is already down", "fault crash:leader@5s not applied: the run ended at"}
	if len(res.Notes) != 2 || res.Notes[0] != want[0] || !strings.HasPrefix(res.Notes[1], want[1]) {
		t.Errorf("notes %q, want %q", res.Notes, want)
	}
	if got := faultEvents(col.Events, "crash:1@200ms"); len(got) != 1 || got[0] != "P0 not applied" {
		t.Errorf("events %v", got)
	}
	noneLeft(t, pr)
}

package runner_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// TestSimEveryFaultKind: the runs of TestLaunchEveryFaultKind in the
// simulator leave the same marks, and a seed reproduces each.
func TestSimEveryFaultKind(t *testing.T) {
	for _, c := range faultKindCases {
		t.Run(c.name, func(t *testing.T) {
			p := c.plan(t, runner.DriverSim)
			var a, b runner.Collector
			res, err := runner.Simulate(p, &a, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, a.Events, res.Status)
			if _, err := runner.Simulate(p, &b, nil); err != nil || !reflect.DeepEqual(a.Events, b.Events) {
				t.Fatalf("the seed does not reproduce the run: %v", err)
			}
		})
	}
}

func simFaults(t *testing.T, algo, faults string, edit func(*runner.Plan)) ([]trace.Event, runner.SimResult) {
	t.Helper()
	fs, err := runner.ParseFaults(faults)
	if err != nil {
		t.Fatal(err)
	}
	p := runner.NewPlan(runner.DriverSim)
	p.Spec, p.Seed, p.Faults = registry.Lookup(algo), 1, fs
	if edit != nil {
		edit(&p)
	}
	var c runner.Collector
	res, err := runner.Simulate(p, &c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Events, res
}

// TestSimTriggeredCrash: a crash waiting for an event of its process comes
// right after that event, in the simulator before anything else of the
// process happens.
func TestSimTriggeredCrash(t *testing.T) {
	for _, c := range []struct {
		faults string
		after  func(e *trace.Event) bool
	}{
		{"crash:1@enter#2", func(e *trace.Event) bool { return e.Kind == trace.KindCSEnter }},
		{"crash:0@send:grant#3", func(e *trace.Event) bool { return e.Kind == trace.KindSend && e.MsgType == "grant" }},
	} {
		evs, _ := simFaults(t, "central", c.faults, nil)
		var prev *trace.Event
		count := 0
		for i := range evs {
			e := &evs[i]
			if e.Kind == trace.KindCrash {
				if prev == nil || !c.after(prev) || prev.Proc != e.Proc || prev.Seq != e.Seq-1 {
					t.Errorf("%s: crash %s follows %v", c.faults, e, prev)
				}
				count++
			}
			if e.Kind != trace.KindCrash && c.after(e) {
				p := *e
				prev = &p
			}
		}
		if count != 1 {
			t.Errorf("%s: %d crashes", c.faults, count)
		}
	}
}

// TestSimPauseHolds: a paused process does nothing until it resumes; what
// came due meanwhile happens then.
func TestSimPauseHolds(t *testing.T) {
	evs, res := simFaults(t, "central", "pause:0@20ms-70ms", nil)
	var from, to int64 = -1, -1
	for _, e := range evs {
		if e.Proc != 0 {
			continue
		}
		switch {
		case e.Kind == trace.KindFault && from < 0:
			from = e.Wall
		case e.Kind == trace.KindFault:
			to = e.Wall
		case from >= 0 && to < 0:
			t.Errorf("%s happened during the pause", &e)
		}
	}
	if from != int64(20*time.Millisecond) || to != int64(70*time.Millisecond) {
		t.Errorf("paused from %d to %d", from, to)
	}
	if res.Status != "every workload finished" {
		t.Errorf("status %s", res.Status)
	}
}

// TestSimLossReliableAndRaw: with reliable channels every message a loss
// drops is sent again and delivered (the drops say so); with raw channels
// a drop is final.
func TestSimLossReliableAndRaw(t *testing.T) {
	evs, res := simFaults(t, "ricart-agrawala", "loss:30%", nil)
	sent, recvd, drops := map[int64]bool{}, map[int64]bool{}, 0
	for _, e := range evs {
		switch e.Kind {
		case trace.KindSend:
			sent[e.Msg] = true
		case trace.KindReceive:
			recvd[e.Msg] = true
		case trace.KindDrop:
			drops++
			if d, _ := e.Drop(); !d.Resend || d.Fault != "loss:30%" {
				t.Errorf("%s: %+v", &e, d)
			}
		}
	}
	if len(sent) != len(recvd) || drops == 0 || res.Status != "every workload finished" {
		t.Errorf("reliable: %d sent, %d received, %d drops, %s", len(sent), len(recvd), drops, res.Status)
	}
	evs, res = simFaults(t, "ricart-agrawala", "loss:30%", func(p *runner.Plan) { p.Channels = runner.ChannelsRaw })
	for _, e := range evs {
		if e.Kind == trace.KindDrop {
			if d, _ := e.Drop(); d.Resend {
				t.Errorf("raw: %s will be sent again", &e)
			}
		}
	}
	if !strings.HasPrefix(res.Status, "nothing more can happen") {
		t.Errorf("raw: status %s; ricart-agrawala waits for ever for a lost reply", res.Status)
	}
}

// TestSimFaultNotApplied: a fault that turns out not to apply is said so
// and recorded: the second crash of the same process, a leader that never
// comes back, a trigger never reached.
func TestSimFaultNotApplied(t *testing.T) {
	_, res := simFaults(t, "central", "crash:2@30ms,crash:2@40ms", nil)
	if want := []string{"fault crash:2@40ms not applied: P2 is already down"}; !reflect.DeepEqual(res.Notes, want) {
		t.Errorf("notes %q, want %q", res.Notes, want)
	}
	// Lease with two servers: once one is gone, the other has no majority
	// and never leads (Chubby); the second crash finds no leader.
	evs, res := simFaults(t, "lease", "crash:leader@600ms,crash:leader@610ms", func(p *runner.Plan) { p.N = 2; p.Duration = time.Second })
	want := "fault crash:leader@610ms not applied: no live leader from 610ms to the end of the run (1s)"
	if !reflect.DeepEqual(res.Notes, []string{want}) {
		t.Errorf("notes %q, want %q", res.Notes, want)
	}
	found := false
	for _, e := range evs {
		if e.Kind == trace.KindFault {
			d, _ := e.Fault()
			found = found || d.Phase == trace.FaultNotApplied && d.Fault == "crash:leader@610ms" && strings.HasPrefix(d.Reason, "no live leader")
		}
	}
	if !found {
		t.Error("no fault event says so")
	}
	_, res = simFaults(t, "central", "crash:1@enter#99,recover:1@+1ms", nil)
	if len(res.Notes) != 2 || !strings.HasSuffix(res.Notes[0], "P1 made 10 of 99 entries") || !strings.HasSuffix(res.Notes[1], "its crash (crash:1@enter#99) never happened") {
		t.Errorf("notes %q", res.Notes)
	}
}

// TestSimNextLeaderCrash: a crash of the leader at a time when none is
// alive waits for the next one (the condition first holds).
func TestSimNextLeaderCrash(t *testing.T) {
	evs, res := simFaults(t, "bully", "crash:leader@600ms,crash:leader@601ms", nil)
	var crashed []int
	for _, e := range evs {
		if e.Kind == trace.KindCrash {
			crashed = append(crashed, e.Proc)
		}
	}
	if !reflect.DeepEqual(crashed, []int{4, 3}) || len(res.Notes) != 0 {
		t.Errorf("crashed %v, notes %q: want P4 then the next leader, P3", crashed, res.Notes)
	}
}

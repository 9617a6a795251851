package replay_test

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/replay"
	"github.com/dmxlab/dmx/trace"
)

// record simulates p and returns its run row (complete as the simulator
// says) and its events.
func record(t *testing.T, p runner.Plan) (trace.Run, []trace.Event) {
	t.Helper()
	var c runner.Collector
	res, err := runner.Simulate(p, &c, nil)
	if err != nil {
		t.Fatalf("simulate %s: %v", p.Spec.Name, err)
	}
	run := p.RunRow()
	run.ID, run.Complete = 1, res.Complete
	return run, c.Events
}

func plan(name string, n int, seed uint64, params map[string]string, faults string) runner.Plan {
	p := runner.NewPlan(runner.DriverSim)
	p.Spec, p.N, p.Seed, p.Params = registry.Lookup(name), n, seed, params
	p.Workload.Entries = 4
	p.Duration = 500 * time.Millisecond
	// Majority can starve under a crash for ever: cut such a run short
	// (its replay goes up to the cut).
	p.Sim.Limit = 2 * time.Second
	if faults != "" {
		fs, err := runner.ParseFaults(faults)
		if err != nil {
			panic(err)
		}
		p.Faults = fs
	}
	return p
}

func replayEvents(t *testing.T, run trace.Run, evs []trace.Event, opt replay.Options) *replay.Result {
	t.Helper()
	if opt.Lookup == nil {
		opt.Lookup = registry.Lookup
	}
	res, err := replay.Run(run, replay.Events(evs), opt)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	return res
}

func name(spec *algo.Spec, params map[string]string) string {
	var kv []string
	for k, v := range params {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(append([]string{spec.Name}, kv...), "/")
}

// TestReplaySimulated: a simulated run of every algorithm in every
// configuration replays event for event, with and without a crash and a
// recovery (what the recovered machines persisted, their new random
// streams), over several seeds.
func TestReplaySimulated(t *testing.T) {
	seeds := uint64(3)
	if testing.Short() {
		seeds = 1
	}
	recovered := map[string]bool{} // algorithms whose runs had a recovery
	defer func() {
		if len(recovered) != len(registry.All()) {
			t.Errorf("recoveries replayed in %d algorithms' runs, want all %d", len(recovered), len(registry.All()))
		}
	}()
	for _, spec := range registry.All() {
		for _, v := range spec.Configurations() {
			for _, faults := range []string{
				"",
				"crash:1@7ms,recover:1@15ms,crash:2@40ms,recover:2:amnesia@60ms",
				"loss:20%,duplicate:10%,reorder:0ms-2ms",
				"pause:0@5ms-30ms,skew:1:+5ms@3ms,partition:0:1+2+3@10ms-40ms",
			} {
				for seed := uint64(1); seed <= seeds; seed++ {
					p := plan(spec.Name, 4, seed, v.Params, faults)
					t.Run(fmt.Sprintf("%s/faults=%q/seed=%d", name(spec, v.Params), faults, seed), func(t *testing.T) {
						run, evs := record(t, p)
						res := replayEvents(t, run, evs, replay.Options{})
						if !res.Matches() {
							t.Fatalf("diverges: %v", res.Divergence)
						}
						if res.Events != int64(len(evs)) {
							t.Fatalf("%d events replayed of %d", res.Events, len(evs))
						}
						for i := range evs {
							if evs[i].Kind == trace.KindRecover {
								recovered[spec.Name] = true
							}
						}
						if res.Cut != !run.Complete {
							t.Fatalf("cut %v, run complete %v", res.Cut, run.Complete)
						}
					})
				}
			}
		}
	}
}

// TestReplayDiverges: a trace that the machines would not produce is
// caught at the first event that differs, which the divergence names with
// what was recorded and what the machine did.
func TestReplayDiverges(t *testing.T) {
	run, evs := record(t, plan("ricart-agrawala", 3, 4, nil, ""))
	find := func(kind trace.Kind, nth int) int {
		for i := range evs {
			if evs[i].Kind == kind {
				if nth == 0 {
					return i
				}
				nth--
			}
		}
		t.Fatalf("no %s", kind)
		return -1
	}
	for _, tc := range []struct {
		name   string
		change func(evs []trace.Event) int // returns the index of the event changed
		want   string
	}{
		{"stamp of a request", func(evs []trace.Event) int {
			i := find(trace.KindSend, 0)
			evs[i].Detail = []byte(`{"stamp":99,"id":0}`)
			return i
		}, "detail"},
		{"lamport clock", func(evs []trace.Event) int {
			i := find(trace.KindCSEnter, 1)
			evs[i].Lamport++
			return i
		}, "Lamport clock"},
		// A message by its name, not its id (issue 28).
		{"message id", func(evs []trace.Event) int {
			i := find(trace.KindSend, 0)
			evs[i].Msg += 7
			return i
		}, fmt.Sprintf("P%d's message 8, replayed P%[1]d's message 1", evs[find(trace.KindSend, 0)].Proc)},
		{"an output left out", func(evs []trace.Event) int {
			i := find(trace.KindCSEnter, 0)
			evs[i].Kind = trace.KindInternal
			evs[i].Detail = []byte(`{"note":"made up"}`)
			return i
		}, "instead"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := append([]trace.Event(nil), evs...)
			i := tc.change(c)
			res := replayEvents(t, run, c, replay.Options{})
			d := res.Divergence
			if d == nil {
				t.Fatal("the replay matches a changed trace")
			}
			if d.Recorded == nil || d.Recorded.Ref() != c[i].Ref() || !strings.Contains(d.Reason, tc.want) {
				t.Fatalf("divergence %v (recorded %v), want one at %v saying %q", d, d.Recorded, c[i].Ref(), tc.want)
			}
			if d.Replayed == nil || len(d.Before.Machines) == 0 {
				t.Fatalf("divergence %v says neither what the machine did nor its state before", d)
			}
		})
	}
}

// TestReplayOtherSeed: majority draws its back-off from its random stream:
// the same events under another seed's row do not replay, because the
// draws differ (or the run row's workload does); the seed is part of what
// a replay needs.
func TestReplayOtherSeed(t *testing.T) {
	p := plan("majority", 3, 7, nil, "")
	p.Workload.Think = runner.Fixed(0)
	run, evs := record(t, p)
	backoffs := 0
	for i := range evs {
		if evs[i].Kind == trace.KindTimeout {
			backoffs++
		}
	}
	if backoffs == 0 {
		t.Skip("no back-off in this run: pick another seed")
	}
	if res := replayEvents(t, run, evs, replay.Options{}); !res.Matches() {
		t.Fatalf("diverges under its own seed: %v", res.Divergence)
	}
	run.Seed++
	res := replayEvents(t, run, evs, replay.Options{})
	if res.Matches() {
		t.Fatal("replays under another seed")
	}
	if !strings.Contains(res.Divergence.Reason, "back off") {
		t.Fatalf("divergence %v: want the back-off note to differ", res.Divergence)
	}
}

// TestReplayCut: a run cut short is replayed up to the cut, and says so;
// the same events in a run marked complete end with a divergence if the
// last input's outputs are missing.
func TestReplayCut(t *testing.T) {
	run, evs := record(t, plan("lamport", 3, 2, nil, ""))
	// Cut after an input whose outputs are all sends: at the first
	// cs_request, whose request messages follow it.
	cut := 0
	for i := range evs {
		if evs[i].Kind == trace.KindCSRequest {
			cut = i + 2 // the request and one of its sends
			break
		}
	}
	part := evs[:cut]
	run.Complete = false
	res := replayEvents(t, run, part, replay.Options{})
	if !res.Matches() || !res.Cut || res.Events != int64(cut) {
		t.Fatalf("cut run: matches %v cut %v events %d of %d (%v)", res.Matches(), res.Cut, res.Events, cut, res.Divergence)
	}
	run.Complete = true
	res = replayEvents(t, run, part, replay.Options{})
	if res.Matches() || res.Divergence.Replayed == nil || res.Divergence.Recorded != nil {
		t.Fatalf("complete run without its last outputs: %+v, want a divergence naming the output the trace lacks", res.Divergence)
	}
}

// TestReplayAbandoned: a run whose recorder died (abandoned) may hold a
// receive whose send was never written; its replay goes up to that cut,
// as the checks do, and is not a broken trace.
func TestReplayAbandoned(t *testing.T) {
	run, evs := record(t, plan("ricart-agrawala", 3, 1, nil, ""))
	// Lose the send of the last message received, and every later event
	// of its sender: the tail of the dead recorder's buffer.
	var lost trace.Event
	for i := len(evs) - 1; i >= 0 && lost.Msg == 0; i-- {
		if evs[i].Kind == trace.KindReceive {
			for _, e := range evs[:i] {
				if e.Kind == trace.KindSend && e.Msg == evs[i].Msg {
					lost = e
				}
			}
		}
	}
	var kept []trace.Event
	for _, e := range evs {
		if e.Proc != lost.Proc || e.Seq < lost.Seq {
			kept = append(kept, e)
		}
	}
	run.Complete, run.Status = false, trace.StatusAbandoned
	res := replayEvents(t, run, kept, replay.Options{})
	if !res.Matches() || !res.Cut || res.Events == 0 || res.Events >= int64(len(kept)) {
		t.Fatalf("abandoned run: matches %v cut %v, %d of %d events replayed (%v)", res.Matches(), res.Cut, res.Events, len(kept), res.Divergence)
	}
	run.Status = "interrupted"
	// The message is named as a reader says it, not by its id (issue 28).
	if _, err := replay.Run(run, replay.Events(kept), replay.Options{Lookup: registry.Lookup}); err == nil || !strings.Contains(err.Error(), "broken trace") ||
		!strings.Contains(err.Error(), trace.MsgName(lost.Msg, lost.Proc)+", which was never sent") || !strings.Contains(err.Error(), "'s message") {
		t.Fatalf("interrupted run with a receive without its send: %v, want a broken trace naming %s", err, trace.MsgName(lost.Msg, lost.Proc))
	}
}

// TestReplayBadTraces: traces replay cannot run get a BadTraceError (dmx
// replay: exit 2), never a panic.
func TestReplayBadTraces(t *testing.T) {
	run, evs := record(t, plan("ricart-agrawala", 3, 1, nil, ""))
	for _, tc := range []struct {
		name   string
		run    func(r trace.Run) trace.Run
		events func(e []trace.Event) []trace.Event
		want   string
	}{
		{"imported", func(r trace.Run) trace.Run { r.Mode = "import"; return r }, nil, "imported"},
		{"unknown algorithm", func(r trace.Run) trace.Run { r.Algorithm = "paxos"; return r }, nil, "unknown algorithm"},
		{"another algorithm's events", func(r trace.Run) trace.Run { r.Algorithm = "lamport"; return r }, nil, "says ricart-agrawala"},
		{"params", func(r trace.Run) trace.Run { r.Params = []byte(`{"entries":"x"}`); return r }, nil, "params"},
		{"receive without send", nil, func(e []trace.Event) []trace.Event {
			for i := range e {
				if e[i].Kind == trace.KindReceive {
					e[i].Msg = 1 << 40
					break
				}
			}
			return e
		}, "broken trace"},
		{"process out of range", nil, func(e []trace.Event) []trace.Event { e[0].Proc = 7; return e }, "P7"},
		{"unknown kind", nil, func(e []trace.Event) []trace.Event {
			for i := range e {
				if e[i].Kind == trace.KindCSRequest {
					e[i].Kind = "bogus"
					break
				}
			}
			return e
		}, `event kind "bogus" is not one dmx records`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, e := run, append([]trace.Event(nil), evs...)
			if tc.run != nil {
				r = tc.run(r)
			}
			if tc.events != nil {
				e = tc.events(e)
			}
			_, err := replay.Run(r, replay.Events(e), replay.Options{Lookup: registry.Lookup})
			var be *replay.BadTraceError
			if err == nil || !errorsAs(err, &be) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a BadTraceError saying %q", err, tc.want)
			}
		})
	}
}

// TestReplayStep: Visit sees every event in a causal order, inputs with
// what they changed in their machine; Until ends the walk.
func TestReplayStep(t *testing.T) {
	run, evs := record(t, plan("ricart-agrawala", 3, 3, nil, ""))
	var steps []*replay.Step
	res := replayEvents(t, run, evs, replay.Options{Visit: func(s *replay.Step) bool { steps = append(steps, s); return true }})
	if !res.Matches() || len(steps) != len(evs) {
		t.Fatalf("%d steps for %d events (%v)", len(steps), len(evs), res.Divergence)
	}
	sawHeld := false
	for _, s := range steps {
		if s.Event.Kind == trace.KindCSEnter && s.Input {
			t.Fatalf("%v taken for an input", &s.Event)
		}
		for _, c := range s.Changed {
			if c.Key == "state" && string(c.After) == `"HELD"` {
				sawHeld = true
				if s.Event.Kind != trace.KindReceive && s.Event.Kind != trace.KindCSRequest {
					t.Fatalf("state became HELD at %v", &s.Event)
				}
			}
		}
	}
	if !sawHeld {
		t.Fatal("no step shows a process becoming HELD")
	}
	until := steps[len(steps)/2].Event.Ref()
	res = replayEvents(t, run, evs, replay.Options{Until: until})
	if !res.Stopped || res.Events != int64(len(steps)/2+1) {
		t.Fatalf("until %v: stopped %v after %d events, want %d", until, res.Stopped, res.Events, len(steps)/2+1)
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

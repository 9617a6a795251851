package replay_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/replay"
	"github.com/dmxlab/dmx/trace"
)

// procOptions are the options of a replay of one process of evs, with the
// sends and drops looked up in evs.
func procOptions(evs []trace.Event, id int) replay.ProcOptions {
	sends := map[int64]*trace.Event{}
	var drops []trace.Event
	for i := range evs {
		switch {
		case evs[i].Kind == trace.KindSend:
			sends[evs[i].Msg] = &evs[i]
		case evs[i].Kind == trace.KindDrop && evs[i].Proc == id:
			drops = append(drops, evs[i])
		}
	}
	return replay.ProcOptions{Lookup: registry.Lookup, Drops: replay.Events(drops),
		Sent: func(msg int64) (*trace.Event, error) { return sends[msg], nil }}
}

// TestProcMatchesRun: replaying each process by itself gives, after every
// one of its events, the state (and changes, input, cause) that the
// replay of the whole run gives there, in every algorithm, with crashes,
// recoveries, losses and duplicates.
func TestProcMatchesRun(t *testing.T) {
	for _, spec := range registry.All() {
		for _, faults := range []string{"", "crash:1@7ms,recover:1@15ms,crash:2@40ms,recover:2:amnesia@60ms", "loss:20%,duplicate:10%,reorder:0ms-2ms"} {
			t.Run(fmt.Sprintf("%s/faults=%q", spec.Name, faults), func(t *testing.T) {
				run, evs := record(t, plan(spec.Name, 4, 3, nil, faults))
				want := map[trace.Ref]string{}
				replayEvents(t, run, evs, replay.Options{Visit: func(s *replay.Step) bool {
					want[s.Event.Ref()] = stepKey(s)
					return true
				}})
				for id := 0; id < run.Nodes; id++ {
					x, err := replay.NewProc(run, id, procOptions(evs, id))
					if err != nil {
						t.Fatal(err)
					}
					for i := range evs {
						if evs[i].Proc != id {
							continue
						}
						s, err := x.Step(&evs[i])
						if err != nil {
							t.Fatalf("P%d alone at %v: %v", id, &evs[i], err)
						}
						if got := stepKey(s); got != want[evs[i].Ref()] {
							t.Fatalf("after %v: P%d alone gives\n%s\nthe run's replay\n%s", &evs[i], id, got, want[evs[i].Ref()])
						}
					}
				}
				// Skipping the state of the events before one: the
				// same state after it (and the same changes, for an
				// input).
				for k := 7; k < len(evs); k += 41 {
					target := evs[k]
					x, err := replay.NewProc(run, target.Proc, procOptions(evs, target.Proc))
					if err != nil {
						t.Fatal(err)
					}
					for i := range evs[:k] {
						if evs[i].Proc == target.Proc {
							if err := x.Skip(&evs[i]); err != nil {
								t.Fatalf("skip %v: %v", &evs[i], err)
							}
						}
					}
					s, err := x.Step(&target)
					if err != nil {
						t.Fatalf("%v after skipping: %v", &target, err)
					}
					if !s.Input {
						// What the skipped input changed is not known.
						var w struct{ Changed []replay.Change }
						json.Unmarshal([]byte(want[target.Ref()]), &w)
						s.Changed = w.Changed
					}
					if got := stepKey(s); got != want[target.Ref()] {
						t.Fatalf("after %v, the events before skipped: \n%s\nthe run's replay\n%s", &target, got, want[target.Ref()])
					}
				}
			})
		}
	}
}

// stepKey is what a step says of the process, index apart.
func stepKey(s *replay.Step) string {
	b, _ := json.Marshal(struct {
		Ref     string
		Input   bool
		Cause   trace.Ref
		State   replay.ProcState
		Changed []replay.Change
	}{s.Event.Ref().String(), s.Input, s.Cause, s.State, s.Changed})
	return string(b)
}

// TestProcCut: in an abandoned run, the replay of a process stops at a
// receive whose send was never written, with a CutError naming it, and
// says so again for any later event; in a complete run that is a broken
// trace.
func TestProcCut(t *testing.T) {
	run, evs := record(t, plan("ricart-agrawala", 3, 1, nil, ""))
	var recv *trace.Event
	for i := range evs {
		if evs[i].Kind == trace.KindReceive && evs[i].Seq > 5 {
			recv = &evs[i]
			break
		}
	}
	opt := procOptions(evs, recv.Proc)
	sent := opt.Sent
	opt.Sent = func(msg int64) (*trace.Event, error) {
		if msg == recv.Msg {
			return nil, nil
		}
		return sent(msg)
	}
	for _, tc := range []struct {
		status   string
		complete bool
		cut      bool
	}{{trace.StatusAbandoned, false, true}, {"done", true, false}} {
		run.Status, run.Complete = tc.status, tc.complete
		x, err := replay.NewProc(run, recv.Proc, opt)
		if err != nil {
			t.Fatal(err)
		}
		var stop error
		for i := range evs {
			if evs[i].Proc == recv.Proc && evs[i].Seq <= recv.Seq+1 {
				if _, err := x.Step(&evs[i]); err != nil {
					if stop == nil && evs[i].Seq != recv.Seq {
						t.Fatalf("%s: stopped at %v, want %v: %v", tc.status, &evs[i], recv, err)
					}
					if stop != nil && err != stop {
						t.Fatalf("%s: after the stop, %v, want %v again", tc.status, err, stop)
					}
					stop = err
				}
			}
		}
		var ce *replay.CutError
		var be *replay.BadTraceError
		if tc.cut && (!errors.As(stop, &ce) || ce.At != recv.Ref()) {
			t.Fatalf("abandoned: %v, want a cut at %v", stop, recv)
		}
		if !tc.cut && !errors.As(stop, &be) {
			t.Fatalf("complete: %v, want a broken trace", stop)
		}
	}
	run.Mode = "import"
	if _, err := replay.NewProc(run, 0, opt); err == nil {
		t.Fatal("an imported run replayed")
	}
}

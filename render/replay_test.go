package render

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/dmxlab/dmx/runner/replay"
	"github.com/dmxlab/dmx/trace"
)

func replayResults() map[string]*replay.Result {
	run := trace.Run{ID: 1, Algorithm: "ricart-agrawala", Nodes: 2, Mode: "udp", ToolVersion: "v0.1.0-dev", Complete: true}
	state := replay.ProcState{Lamport: 4, VC: trace.VC{4, 1}, Machines: []replay.MachineState{
		{Resource: "cs", State: json.RawMessage(`{"state":"REQUESTED","t":3,"replied":[],"deferred":[],"waiting_for":[1]}`)}}}
	rec := &trace.Event{Proc: 0, Seq: 5, Kind: trace.KindSend, Lamport: 5, VC: trace.VC{5, 1}, Msg: 3, MsgType: "reply", Peer: 1, Resource: "cs", Detail: []byte(`{"stamp":2}`)}
	rep := *rec
	rep.Detail = []byte(`{"stamp":3}`)
	cut := run
	cut.Complete, cut.Status = false, "interrupted"
	other := run
	other.ToolVersion = "v0.0.9"
	in := &trace.Event{Proc: 0, Seq: 4, Kind: trace.KindReceive, Lamport: 4, VC: trace.VC{4, 1}, Msg: 1<<32 | 1, MsgType: "request", Peer: 1, Resource: "cs", Detail: []byte(`{"stamp":2,"id":1}`)}
	div := &replay.Divergence{Proc: 0, Input: in, Recorded: rec, Replayed: &rep,
		Reason: `P0#5 send(cs): detail {"stamp":2}, replayed {"stamp":3}`, Before: state}
	return map[string]*replay.Result{
		"matches":  {Run: run, Events: 40, PerProc: []int64{20, 20}},
		"cut":      {Run: cut, Events: 12, PerProc: []int64{7, 5}, Cut: true},
		"diverges": {Run: run, Events: 9, PerProc: []int64{4, 5}, Divergence: div},
		"older":    {Run: other, Events: 9, PerProc: []int64{4, 5}, Divergence: div},
	}
}

// TestReplayGolden: dmx replay's result in each format, for a run that
// matches, one cut short, one that diverges, and one that diverges and was
// recorded by another dmx.
func TestReplayGolden(t *testing.T) {
	for name, res := range replayResults() {
		for _, format := range ReplayFormats {
			got := render(t, func(b *bytes.Buffer) error {
				return ReplayResult(b, format, res, ReplayInfo{File: "run.db", Version: "v0.1.0-dev"})
			})
			goldenFile(t, "replay-"+name+"."+format, got)
		}
	}
}

// TestReplayStepGolden: --step's lines for an input (its state and what
// changed) and for an output, in each format.
func TestReplayStepGolden(t *testing.T) {
	in := &replay.Step{Index: 7, Input: true, Cause: trace.Ref{Proc: 1, Seq: 3},
		Event: trace.Event{Proc: 1, Seq: 3, Kind: trace.KindReceive, Lamport: 6, VC: trace.VC{2, 3}, Msg: 1, MsgType: "request", Peer: 0, Resource: "cs", Detail: []byte(`{"stamp":2}`)},
		State: replay.ProcState{Lamport: 7, VC: trace.VC{2, 4}, Timers: []string{"cs/backoff"}, Machines: []replay.MachineState{
			{Resource: "cs", State: json.RawMessage(`{"state":"HELD","deferred":[{"t":2,"from":0}]}`)}}},
		Changed: []replay.Change{{Resource: "cs", Key: "deferred", Before: json.RawMessage(`[]`), After: json.RawMessage(`[{"t":2,"from":0}]`)}}}
	out := &replay.Step{Index: 8, Cause: trace.Ref{Proc: 1, Seq: 3},
		Event: trace.Event{Proc: 1, Seq: 4, Kind: trace.KindWait, Lamport: 7, VC: trace.VC{2, 4}, Peer: trace.NoPeer, Resource: "cs", Detail: []byte(`{"waiting_for":[0]}`)},
		State: in.State}
	for _, format := range ReplayFormats {
		got := render(t, func(b *bytes.Buffer) error {
			if err := ReplayStep(b, format, in); err != nil {
				return err
			}
			return ReplayStep(b, format, out)
		})
		goldenFile(t, "replay-step."+format, got)
	}
}

package analyze

import (
	"errors"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// TestAbandonedRunCut: when a recorder dies (SIGKILL), its last writes can
// hold a receive whose send was still in its buffer: the trace of such an
// abandoned run ends in a cut, not a break. The events behind the cut are
// left out and every verdict that would have been ok is unknown. In any
// other run the same receive is a broken trace.
func TestAbandonedRunCut(t *testing.T) {
	m1, m2 := trace.MsgID(0, 1), trace.MsgID(0, 2)
	evs := []trace.Event{
		{Proc: 0, Seq: 1, Kind: trace.KindSend, Msg: m1, MsgType: "m", Peer: 1, Lamport: 1, Wall: 10},
		{Proc: 1, Seq: 1, Kind: trace.KindReceive, Msg: m1, MsgType: "m", Peer: 0, Lamport: 2, Wall: 20},
		// P0#2, the send of m2, was never written.
		{Proc: 1, Seq: 2, Kind: trace.KindReceive, Msg: m2, MsgType: "m", Peer: 0, Lamport: 4, Wall: 40},
		{Proc: 1, Seq: 3, Kind: trace.KindInternal, Lamport: 5, Wall: 50},
	}
	abandoned := trace.Run{Nodes: 2, Status: trace.StatusAbandoned}
	results, err := Evaluate(abandoned, &trace.SliceReader{Events: evs}, All)
	if err != nil {
		t.Fatalf("abandoned run: %v", err)
	}
	if v := Summarize(results); v != Unknown {
		t.Errorf("verdict %s, want unknown", v)
	}
	for _, r := range results {
		if r.Verdict == OK {
			t.Errorf("%s: ok on a run cut short by its recorder's death: %s", r.Check, r.Note)
		}
		if r.Verdict == Unknown && r.Err == nil && !strings.Contains(r.Note, "2 events") {
			t.Errorf("%s: note %q does not count the events left out", r.Check, r.Note)
		}
	}
	for _, status := range []string{"interrupted", "ok"} {
		_, err := Evaluate(trace.Run{Nodes: 2, Status: status}, &trace.SliceReader{Events: evs}, All)
		var be *BrokenError
		if !errors.As(err, &be) {
			t.Errorf("run %s: got %v, want a broken trace", status, err)
		}
	}
}

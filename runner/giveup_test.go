package runner_test

import (
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/trace"
)

// TestSimGiveUpResyncs: a message given up (the fault layer dropped every
// copy: here all of P2's heartbeats for 15s) is recorded as a drop that is
// not sent again, and the channel goes on: what P2 sent after it, held
// until then behind it (channels are FIFO), is delivered, instead of
// waiting for ever for a message that will never come.
func TestSimGiveUpResyncs(t *testing.T) {
	evs, res := simFaults(t, "bully", "loss:100%:from=2:type=heartbeat@100ms-15s", func(p *runner.Plan) { p.Duration = 20 * time.Second })
	givenUp := map[int64]bool{}
	for _, e := range evs {
		if e.Kind == trace.KindDrop {
			if d, _ := e.Drop(); !d.Resend {
				givenUp[e.Msg] = true
			}
		}
	}
	if len(givenUp) == 0 {
		t.Fatalf("no message given up (%s)", res.Status)
	}
	sent := map[int64]*trace.Event{}
	var end int64
	for i := range evs {
		e := &evs[i]
		end = max(end, e.Wall)
		if e.Kind == trace.KindSend && e.Proc == 2 && !givenUp[e.Msg] {
			sent[e.Msg] = e
		}
	}
	for _, e := range evs {
		if e.Kind == trace.KindReceive {
			delete(sent, e.Msg)
		}
	}
	late := 0
	for _, e := range sent {
		// What was sent in the last second may still be on its way.
		if e.Wall < end-1e9 {
			late++
			if late <= 5 {
				t.Errorf("%v, not given up, was never received", e)
			}
		}
	}
	if late > 5 {
		t.Errorf("... and %d more", late-5)
	}
}

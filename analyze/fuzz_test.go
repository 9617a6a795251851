package analyze

import (
	"errors"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

var fuzzKinds = []trace.Kind{
	trace.KindSend, trace.KindReceive, trace.KindReceive, trace.KindCSEnter, trace.KindCSExit,
	trace.KindCSRequest, trace.KindCrash, trace.KindInternal, trace.KindDrop, trace.KindRecover,
	trace.KindLeader, trace.KindWait, "custom",
}

// decodeEvents turns arbitrary bytes into a run and its events: mostly
// well-formed (sequence numbers in order, messages among a few ids) so that
// the fuzzer gets past the first check, with every field sometimes wrong.
func decodeEvents(data []byte) (trace.Run, []trace.Event) {
	var run trace.Run
	if len(data) == 0 {
		return run, nil
	}
	run.Nodes = int(data[0] % 6) // 0: unknown, sized dynamically
	run.Complete = data[0]&0x80 != 0
	data = data[1:]
	seq := map[int]int64{}
	var events []trace.Event
	for len(data) >= 6 {
		b := data[:6]
		data = data[6:]
		ev := trace.Event{
			Proc:     int(b[0] % 7),
			Kind:     fuzzKinds[int(b[2])%len(fuzzKinds)],
			Msg:      trace.MsgID(int(b[3]%4), int64(b[3]/4%4)),
			Peer:     int(b[4]%8) - 1,
			Resource: []string{"", "a", "b"}[b[4]%3],
			Wall:     int64(b[5]) * 1000,
			Lamport:  uint64(b[1] >> 4),
		}
		if b[0]&0x80 != 0 {
			ev.Proc = -int(b[0] & 0x7f) // out of range
		}
		seq[ev.Proc]++
		ev.Seq = seq[ev.Proc]
		if b[1]&0x0f == 0 {
			ev.Seq = int64(b[1] >> 4) // a gap or a repeat
		}
		if b[1]&0x08 != 0 && len(data) > 0 {
			n := int(data[0] % 8)
			data = data[1:]
			ev.VC = make(trace.VC, 0, n)
			for i := 0; i < n && len(data) > 0; i++ {
				ev.VC = append(ev.VC, uint64(data[0]%8))
				data = data[1:]
			}
		}
		events = append(events, ev)
	}
	return run, events
}

// FuzzRun feeds arbitrary event sequences to Run: it must not panic, and it
// either fails with a broken-trace error or gives every check a verdict.
func FuzzRun(f *testing.F) {
	f.Add([]byte{0x83, 0, 1, 0, 4, 1, 1, 1, 1, 1, 4, 5, 2})
	f.Add([]byte{0x02, 1, 1, 1, 4, 1, 1, 0, 1, 0, 4, 5, 2, 0, 1, 3, 0, 1, 3, 0, 1, 4, 0, 1, 3})
	f.Add([]byte{0x00, 6, 0x19, 0, 0, 0, 0, 3, 1, 2, 5, 7, 0, 0, 1, 3, 0, 1, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		run, events := decodeEvents(data)
		results, err := Evaluate(run, &trace.SliceReader{Events: events}, All)
		if err != nil {
			var be *BrokenError
			if !errors.As(err, &be) {
				t.Fatalf("error %v is not a broken trace", err)
			}
			return
		}
		if len(results) != len(All) {
			t.Fatalf("%d results for %d checks", len(results), len(All))
		}
		for _, r := range results {
			switch r.Verdict {
			case OK, Unknown, Skipped:
				if len(r.Findings) != 0 {
					t.Errorf("%s: %s with findings %v", r.Check, r.Verdict, r.Findings)
				}
			case Violated:
				if len(r.Findings) == 0 {
					t.Errorf("%s: violated without findings", r.Check)
				}
			default:
				t.Errorf("%s: verdict %q", r.Check, r.Verdict)
			}
		}
		_ = Summarize(results)
		_ = JSON(run, results)
	})
}

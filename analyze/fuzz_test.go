package analyze

import (
	"errors"
	"slices"
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
		checkVerdicts(t, run, events)
	})
}

// weirdDetails are what a mutation may put in an event's detail.
var weirdDetails = []string{
	``, `null`, `{}`, `[]`, `{"leader":"x"}`, `{"leader":-5,"term":3}`, `{"election":99}`,
	`{"waiting_for":[0,1,2],"model":"or"}`, `{"waiting_for":[70000]}`, `{"waiting_for":"all"}`, `{"model":"k"}`,
	`{"from":2,"stamp":1,"id":1}`, `{"from":-1}`, `{"stamp":1,"id":1}`, `{"stamp":18446744073709551615}`,
	`{`, `{"a":`, `"just a string"`, `{"leader":1e400}`,
}

// mutate applies the mutations data describes to events, 4 bytes each:
// which mutation, which event (2 bytes), and a value.
func mutate(events []trace.Event, data []byte) []trace.Event {
	for len(data) >= 4 && len(events) > 0 {
		op, v := data[0], data[3]
		i := int(data[1])<<8 | int(data[2])
		i %= len(events)
		data = data[4:]
		ev := &events[i]
		switch op % 12 {
		case 0:
			events = slices.Delete(events, i, i+1)
		case 1:
			events = slices.Insert(events, i, *ev)
		case 2:
			ev.Kind = fuzzKinds[int(v)%len(fuzzKinds)]
		case 3:
			ev.Proc = int(v%80) - 4
		case 4:
			ev.Seq += int64(int8(v))
		case 5:
			ev.Msg = events[int(v)%len(events)].Msg
		case 6:
			ev.Peer = int(v%80) - 2
		case 7:
			ev.Resource = []string{"", "cs", "lead", "r1", "x"}[v%5]
		case 8:
			ev.Wall += int64(int8(v)) * 1_000_000
		case 9:
			if len(ev.VC) > 0 {
				ev.VC = ev.VC[:int(v)%len(ev.VC)]
			}
		case 10:
			ev.Detail = []byte(weirdDetails[int(v)%len(weirdDetails)])
		case 11:
			ev.Lamport = uint64(v)
		}
	}
	return events
}

// FuzzMutated feeds the generator's runs, clean or with a violation
// planted, mutated at random, to every check: no panic, an error only for
// a broken trace, and every verdict consistent with its findings.
func FuzzMutated(f *testing.F) {
	f.Add(uint64(1), byte(0), []byte{})
	f.Add(uint64(2), byte(3), []byte{0, 0, 5, 0, 2, 0, 7, 3})
	f.Add(uint64(3), byte(9), []byte{10, 0, 1, 7, 4, 0, 2, 1, 3, 0, 9, 70})
	f.Add(uint64(4), byte(14), []byte{1, 0, 3, 0, 5, 0, 4, 2, 8, 0, 6, 200})
	f.Fuzz(func(t *testing.T, seed uint64, which byte, data []byte) {
		var p *plant
		if int(which) < len(plants) {
			p = &plants[which]
		}
		g := generate(seed%1000, p)
		events := mutate(slices.Clone(g.events), data)
		checkVerdicts(t, g.run, events)
	})
}

// checkVerdicts runs every check over events: it must not panic, fail only
// with a broken-trace error, and give each check a verdict that agrees with
// its findings.
func checkVerdicts(t *testing.T, run trace.Run, events []trace.Event) {
	t.Helper()
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
		case OK, Unknown, Skipped, NotApplicable:
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
}

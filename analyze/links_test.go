package analyze

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// linkedTrace is an imported trace whose events send and receive messages
// beyond their Msg column (trace.Links): P0#1 sends one message to P1 and
// one to P2 (a send that reached two processes), P1#2 merges the clocks of
// P2#2 (its Msg) and of P0#2 (a link) at once.
func linkedTrace() []trace.Event {
	m1, m2, m3, m4 := trace.MsgID(0, 1), trace.MsgID(0, 2), trace.MsgID(2, 1), trace.MsgID(0, 3)
	imported := func(p int, seq int64, kind trace.Kind, l trace.Links) trace.Event {
		return trace.Event{Proc: p, Seq: seq, Kind: kind, Peer: trace.NoPeer,
			Detail: trace.EncodeImported(nil, trace.Origin{Src: "x.log:1"}, l)}
	}
	evs := []trace.Event{
		imported(0, 1, trace.KindInternal, trace.Links{Sent: []trace.Link{{Msg: m1, Peer: 1}, {Msg: m2, Peer: 2}}}),
		{Proc: 0, Seq: 2, Kind: trace.KindSend, Msg: m4, Peer: 1, MsgType: "msg"},
		imported(1, 1, trace.KindCSEnter, trace.Links{Recv: []trace.Link{{Msg: m1, Peer: 0}}}),
		imported(2, 1, trace.KindInternal, trace.Links{Recv: []trace.Link{{Msg: m2, Peer: 0}}}),
		{Proc: 2, Seq: 2, Kind: trace.KindSend, Msg: m3, Peer: 1, MsgType: "msg"},
		imported(1, 2, trace.KindReceive, trace.Links{Recv: []trace.Link{{Msg: m4, Peer: 0}}}),
	}
	evs[5].Msg, evs[5].Peer, evs[5].MsgType = m3, 2, "msg"
	evs[2].Resource = "r"
	return evs
}

// TestWalkFollowsLinks: happens-before follows the Links of imported events
// as it follows Msg, in any reader order, and the clocks check accepts the
// clocks they give.
func TestWalkFollowsLinks(t *testing.T) {
	want := map[trace.Ref]string{
		{Proc: 0, Seq: 1}: "[1,0,0]", {Proc: 0, Seq: 2}: "[2,0,0]",
		{Proc: 1, Seq: 1}: "[1,1,0]", {Proc: 1, Seq: 2}: "[2,2,2]",
		{Proc: 2, Seq: 1}: "[1,0,1]", {Proc: 2, Seq: 2}: "[1,0,2]",
	}
	base := linkedTrace()
	orders := map[string][]int{"as written": {0, 1, 2, 3, 4, 5}, "receivers first": {2, 5, 3, 4, 0, 1}}
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			var evs []trace.Event
			for _, i := range order {
				e := base[i]
				if vc, ok := want[e.Ref()]; ok {
					e.VC, _ = trace.ParseVC(nil, []byte(vc))
				}
				evs = append(evs, e)
			}
			run := trace.Run{ID: 1, Nodes: 3, Mode: "import", Complete: true}
			got := map[trace.Ref]string{}
			if _, err := Walk(run, &trace.SliceReader{Events: evs}, func(ev *trace.Event, hb *HB) {
				got[ev.Ref()] = hb.Clock().String()
			}); err != nil {
				t.Fatal(err)
			}
			for ref, vc := range want {
				if got[ref] != vc {
					t.Errorf("%v: clock %s, want %s", ref, got[ref], vc)
				}
			}
			if r := checkOne(t, run, &trace.SliceReader{Events: evs}, Clocks); r.Verdict != OK {
				t.Errorf("clocks: %v %v", r.Verdict, r.Findings)
			}
		})
	}
}

// TestBrokenLinks: a link received but never sent, a message sent twice by
// links, and links that do not read are broken traces naming the event.
func TestBrokenLinks(t *testing.T) {
	never := linkedTrace()
	never = append(never[:1], never[2:]...) // without P0#2, the send of P1#2's link
	twice := linkedTrace()
	twice[4].Detail = trace.EncodeImported(nil, trace.Origin{}, trace.Links{Sent: []trace.Link{{Msg: trace.MsgID(0, 1), Peer: 1}}})
	bad := linkedTrace()
	bad[3].Detail = []byte(`{"recv_msgs":[["x",0]]}`)
	for _, tc := range []struct {
		name string
		evs  []trace.Event
		want string
	}{
		{"never sent", never, "P1#2 receive(msg from P2) receives message 3, which was never sent"},
		{"sent twice", twice, "P2#2 send(msg to P1) sends message 1, already sent and received"},
		{"unreadable", bad, "P2#1 internal: detail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Walk(trace.Run{ID: 1, Nodes: 3}, &trace.SliceReader{Events: tc.evs}, func(*trace.Event, *HB) {})
			var be *BrokenError
			if !errors.As(err, &be) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want a broken trace saying %q", err, tc.want)
			}
		})
	}
}

// TestFindingSources: Evaluate names the log lines of the events of every
// finding when the events say where they came from.
func TestFindingSources(t *testing.T) {
	at := func(p int, seq int64, kind trace.Kind, line int) trace.Event {
		return trace.Event{Proc: p, Seq: seq, Kind: kind, Peer: trace.NoPeer, Resource: "cs",
			Detail: trace.EncodeImported(nil, trace.Origin{Src: fmt.Sprintf("lock.log:%d", line)}, trace.Links{})}
	}
	evs := []trace.Event{
		at(0, 1, trace.KindCSEnter, 2), at(1, 1, trace.KindCSEnter, 4), at(0, 2, trace.KindCSExit, 6), at(1, 2, trace.KindCSExit, 8),
	}
	r := checkOne(t, trace.Run{ID: 1, Nodes: 2, Mode: "import", Complete: true}, &trace.SliceReader{Events: evs}, MutexCausal)
	if len(r.Findings) != 1 {
		t.Fatalf("findings: %v", r.Findings)
	}
	f := r.Findings[0]
	for i, ref := range f.Events {
		want := map[trace.Ref]string{{Proc: 0, Seq: 1}: "lock.log:2", {Proc: 1, Seq: 1}: "lock.log:4",
			{Proc: 0, Seq: 2}: "lock.log:6", {Proc: 1, Seq: 2}: "lock.log:8"}[ref]
		if i >= len(f.Sources) || f.Sources[i] != want {
			t.Errorf("source of %v: %q, want %q", ref, f.Sources, want)
		}
	}
	if !strings.Contains(f.Text(), "(in the log: P0#1 at lock.log:2") {
		t.Errorf("text %q does not name the log's lines", f.Text())
	}
}

package trace

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var wireCases = []Event{
	{Proc: 0, Seq: 1, Kind: KindStart, Lamport: 1, VC: VC{1, 0, 0}, Wall: 1700000000000000000, Peer: NoPeer,
		Detail: json.RawMessage(`{"algorithm":"ricart-agrawala","n":3,"resources":["cs"]}`)},
	{Proc: 2, Seq: 17, Kind: KindSend, Lamport: 40, VC: VC{3, 9, 17}, Wall: 5, Msg: MsgID(2, 5), MsgType: "request",
		Peer: 0, Resource: "cs", Detail: json.RawMessage(`{"stamp":39}`)},
	{Proc: 1, Seq: 3, Kind: KindReceive, Lamport: 7, VC: VC{2, 3}, Msg: MsgID(0, 1), MsgType: "ok", Peer: 0},
	{Proc: 1, Seq: 4, Kind: KindCSEnter, Lamport: 8, Peer: NoPeer, Resource: "a<b>&c"},
	{Proc: 3, Seq: 9, Kind: "imported kind", Lamport: 0, VC: VC{}, Wall: -1, Peer: 2, Detail: json.RawMessage(`null`)},
	{Proc: 0, Seq: 2, Kind: KindInternal, Lamport: 2, Peer: NoPeer, Detail: json.RawMessage(`{"note":"é \u2028"}`)},
	{Proc: 4, Seq: 1 << 40, Kind: KindInternal, Lamport: 1 << 63, VC: VC{1 << 63, 0}, Wall: -1 << 62, Peer: NoPeer,
		Detail: json.RawMessage(`{"note":"` + strings.Repeat("long ", 100) + `"}`)},
}

// TestWireRoundTrip: ParseWire, and a WireParser over many events, give
// back the event AppendWire wrote, whatever precedes it in the buffer; the
// events a WireParser gives share no memory with the encoding nor with
// each other (they are cut from shared blocks).
func TestWireRoundTrip(t *testing.T) {
	var p WireParser
	for _, tc := range []struct {
		name  string
		parse func([]byte, *Event) error
		times int
	}{
		{"ParseWire", ParseWire, 1},
		{"WireParser", p.Parse, 300},
	} {
		var backs, wants []Event
		for range tc.times {
			for _, ev := range wireCases {
				got := AppendWire([]byte("x"), &ev)
				var back Event
				if err := tc.parse(got[1:], &back); err != nil {
					t.Fatalf("%s: %v: Parse(%q): %v", tc.name, &ev, got[1:], err)
				}
				if !reflect.DeepEqual(back, ev) {
					t.Errorf("%s: %v: came back as %#v", tc.name, &ev, back)
				}
				// The result shares no memory with the encoding.
				clear(got)
				if !reflect.DeepEqual(back, ev) {
					t.Errorf("%s: %v: changed with the buffer it was read from: %#v", tc.name, &ev, back)
				}
				backs, wants = append(backs, back), append(wants, ev)
			}
		}
		// Growing one event's clock or detail leaves the others as they were.
		for i := range backs {
			backs[i].VC = append(backs[i].VC, 99)
			backs[i].Detail = append(backs[i].Detail, '!')
		}
		for i := range backs {
			backs[i].VC = backs[i].VC[:len(wants[i].VC)]
			backs[i].Detail = backs[i].Detail[:len(wants[i].Detail)]
			if len(wants[i].VC) == 0 && wants[i].VC == nil {
				backs[i].VC = nil
			}
			if wants[i].Detail == nil {
				backs[i].Detail = nil
			}
			if !reflect.DeepEqual(backs[i], wants[i]) {
				t.Fatalf("%s: event %d changed when others grew: %#v", tc.name, i, backs[i])
			}
		}
	}
}

// TestWireDetailOnOneLine: a detail that is not compact, or not JSON at
// all, travels as the store would keep it.
func TestWireDetailOnOneLine(t *testing.T) {
	for _, tc := range []struct{ detail, want string }{
		{"{\n  \"note\": \"x\"\n}", `{"note":"x"}`},
		{` {"a":1} `, `{"a":1}`},
		{"not json\n", `"not json\n"`},
		{`{"a":`, `"{\"a\":"`},
	} {
		ev := Event{Proc: 1, Seq: 1, Kind: KindInternal, Peer: NoPeer, Detail: json.RawMessage(tc.detail)}
		var back Event
		if err := ParseWire(AppendWire(nil, &ev), &back); err != nil {
			t.Fatalf("%q: %v", tc.detail, err)
		}
		if string(back.Detail) != tc.want {
			t.Errorf("%q: detail came back as %s, want %s", tc.detail, back.Detail, tc.want)
		}
	}
}

// TestParseWireErrors: an encoding cut anywhere, with bytes after it, or
// of another version is refused, and leaves the event empty.
func TestParseWireErrors(t *testing.T) {
	whole := AppendWire(nil, &wireCases[1])
	type tc struct {
		name string
		b    []byte
		err  string
	}
	cases := []tc{
		{"empty", nil, "not an event of this version"},
		{"JSON", []byte(`{"p":1,"s":2,"k":"send"}`), "not an event of this version"},
		{"trailing", append(append([]byte(nil), whole...), 0), "bytes after the event"},
		{"huge clock", []byte{wireVersion, 2, 2, 4, 's', 'e', 'n', 'd', 1, 0xff, 0xff, 0xff, 0x0f}, "vc: longer than the event"},
		{"proc out of range", append([]byte{wireVersion}, 0xfe, 0xff, 0xff, 0xff, 0xff, 0x01), "proc: "},
	}
	for i := 1; i < len(whole); i++ {
		cases = append(cases, tc{"cut", whole[:i], ""})
	}
	for _, c := range cases {
		ev := Event{Proc: 7, Detail: json.RawMessage("old")}
		err := ParseWire(c.b, &ev)
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "wire event ") {
			t.Errorf("%s: ParseWire(%q): error %v, want one with %q", c.name, c.b, err, c.err)
		}
		if !reflect.DeepEqual(ev, Event{}) {
			t.Errorf("%s: ParseWire(%q) failed and left %+v", c.name, c.b, ev)
		}
	}
}

package trace

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// legacyWire is how runner/nodeproc.go encoded an event for the pipe
// before trace owned the encoding: AppendWire must write the same bytes, so
// that either side of a mixed pair would still understand the other.
type legacyWire struct {
	Proc     int             `json:"p"`
	Seq      int64           `json:"s"`
	Kind     Kind            `json:"k"`
	Lamport  uint64          `json:"l"`
	VC       VC              `json:"vc"`
	Wall     int64           `json:"w"`
	Msg      int64           `json:"m,omitempty"`
	MsgType  string          `json:"mt,omitempty"`
	Peer     int             `json:"pe"`
	Resource string          `json:"r,omitempty"`
	Detail   json.RawMessage `json:"d,omitempty"`
}

func toLegacy(ev *Event) legacyWire {
	return legacyWire{ev.Proc, ev.Seq, ev.Kind, ev.Lamport, ev.VC, ev.Wall, ev.Msg, ev.MsgType, ev.Peer, ev.Resource, ev.Detail}
}

var wireCases = []Event{
	{Proc: 0, Seq: 1, Kind: KindStart, Lamport: 1, VC: VC{1, 0, 0}, Wall: 1700000000000000000, Peer: NoPeer,
		Detail: json.RawMessage(`{"algorithm":"ricart-agrawala","n":3,"resources":["cs"]}`)},
	{Proc: 2, Seq: 17, Kind: KindSend, Lamport: 40, VC: VC{3, 9, 17}, Wall: 5, Msg: MsgID(2, 5), MsgType: "request",
		Peer: 0, Resource: "cs", Detail: json.RawMessage(`{"stamp":39}`)},
	{Proc: 1, Seq: 3, Kind: KindReceive, Lamport: 7, VC: VC{2, 3}, Msg: MsgID(0, 1), MsgType: "ok", Peer: 0},
	{Proc: 1, Seq: 4, Kind: KindCSEnter, Lamport: 8, Peer: NoPeer, Resource: "a<b>&c"},
	{Proc: 3, Seq: 9, Kind: "imported kind", Lamport: 0, VC: VC{}, Wall: -1, Peer: 2, Detail: json.RawMessage(`null`)},
	{Proc: 0, Seq: 2, Kind: KindInternal, Lamport: 2, Peer: NoPeer, Detail: json.RawMessage(`{"note":"é \u2028"}`)},
}

// TestWireRoundTrip: AppendWire writes what the runner always read, and
// ParseWire gives the event back.
func TestWireRoundTrip(t *testing.T) {
	for _, ev := range wireCases {
		got := AppendWire([]byte("x"), &ev)
		want, err := json.Marshal(toLegacy(&ev))
		if err != nil {
			t.Fatal(err)
		}
		if string(got[1:]) != string(want) {
			t.Errorf("%v: AppendWire = %s\n    the runtime wrote %s", &ev, got[1:], want)
		}
		var back Event
		if err := ParseWire(append(got[1:], '\n'), &back); err != nil {
			t.Fatalf("%v: ParseWire(%s): %v", &ev, got[1:], err)
		}
		if !reflect.DeepEqual(back, ev) {
			t.Errorf("%v: came back as %#v", &ev, back)
		}
		var old legacyWire
		if err := json.Unmarshal(got[1:], &old); err != nil || !reflect.DeepEqual(old, toLegacy(&ev)) {
			t.Errorf("%v: the old reader reads %+v, %v", &ev, old, err)
		}
	}
}

// TestWireDetailOnOneLine: a detail that is not compact, or not JSON at
// all, still makes one line that parses.
func TestWireDetailOnOneLine(t *testing.T) {
	for _, tc := range []struct{ detail, want string }{
		{"{\n  \"note\": \"x\"\n}", `{"note":"x"}`},
		{` {"a":1} `, `{"a":1}`},
		{"not json\n", `"not json\n"`},
		{`{"a":`, `"{\"a\":"`},
	} {
		ev := Event{Proc: 1, Seq: 1, Kind: KindInternal, Peer: NoPeer, Detail: json.RawMessage(tc.detail)}
		line := AppendWire(nil, &ev)
		if strings.ContainsAny(string(line), "\n\r") {
			t.Errorf("%q: line %q has a line break", tc.detail, line)
		}
		var back Event
		if err := ParseWire(line, &back); err != nil {
			t.Fatalf("%q: %v", tc.detail, err)
		}
		if string(back.Detail) != tc.want {
			t.Errorf("%q: detail came back as %s, want %s", tc.detail, back.Detail, tc.want)
		}
	}
}

func TestParseWireErrors(t *testing.T) {
	for _, tc := range []struct{ line, err string }{
		{``, `want a JSON object, got nothing`},
		{`[1]`, `want a JSON object`},
		{`{"p":1,"s":2}`, `want the keys p, s and k`},
		{`{"p":"x","s":2,"k":"send"}`, `p: want an integer, got string "x"`},
		{`{"p":1,"s":2,"k":"send","vc":[1,-2]}`, `vc: vector clock`},
		{`{"p":1,"s":2,"k":"send","pe":99999999999999999999}`, `pe: 99999999999999999999 is out of range`},
		{`{"p":1,"s":2,"k":"send","d":{"a":}}`, `unexpected '}'`},
		{`{"p":1,"s":2,"k":"send"}{}`, `text after the JSON value`},
	} {
		ev := Event{Proc: 7, Detail: json.RawMessage("old")}
		err := ParseWire([]byte(tc.line), &ev)
		if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "wire event ") {
			t.Errorf("ParseWire(%s): error %v, want one with %q", tc.line, err, tc.err)
		}
		if !reflect.DeepEqual(ev, Event{}) {
			t.Errorf("ParseWire(%s) failed and left %+v", tc.line, ev)
		}
	}
	var ev Event
	if err := ParseWire([]byte(`{"k":"stop","s":4,"p":1,"future":{"x":[1]}}`), &ev); err != nil || ev.Peer != NoPeer || ev.Kind != KindStop {
		t.Errorf("unknown keys, no pe: %+v, %v", ev, err)
	}
}

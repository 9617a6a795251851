package trace

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner/algo"
)

// legacyMsg is how the runtime wrote a send's or receive's detail before
// trace owned it: algo.Msg without its type and resource.
type legacyMsg struct {
	Stamp uint64   `json:"stamp,omitempty"`
	ID    int      `json:"id,omitempty"`
	Term  uint64   `json:"term,omitempty"`
	Vals  []uint64 `json:"vals,omitempty"`
}

// detailCases are one event of each detail shape dmx records: the typed
// detail, the exact bytes of its encoding, and what the runtime marshalled
// before trace owned the encoding (a map, so keys in sorted order), which
// must give the same bytes.
var detailCases = []struct {
	name   string
	ev     Event // Kind, and the columns the decoder reads (Peer, MsgType, Resource)
	d      Detail
	want   string
	legacy any
}{
	{"start", Event{Kind: KindStart}, Start{"ricart-agrawala", 3, []string{"cs", "db"}, 0, "", ""},
		`{"algorithm":"ricart-agrawala","n":3,"resources":["cs","db"]}`,
		map[string]any{"algorithm": "ricart-agrawala", "n": 3, "resources": []string{"cs", "db"}}},
	{"start without resources", Event{Kind: KindStart}, Start{"bully", 5, nil, 0, "", ""},
		`{"algorithm":"bully","n":5,"resources":null}`,
		map[string]any{"algorithm": "bully", "n": 5, "resources": []string(nil)}},
	{"start with no resources", Event{Kind: KindStart}, Start{"bully", 5, []string{}, 0, "", ""},
		`{"algorithm":"bully","n":5,"resources":[]}`,
		map[string]any{"algorithm": "bully", "n": 5, "resources": []string{}}},
	{"start of a real run", Event{Kind: KindStart}, Start{"lease", 3, nil, 1700000000123456789, "", ""},
		`{"algorithm":"lease","n":3,"resources":null,"t0":1700000000123456789}`,
		map[string]any{"algorithm": "lease", "n": 3, "resources": []string(nil), "t0": int64(1700000000123456789)}},
	{"start in a network namespace", Event{Kind: KindStart}, Start{"lease", 3, nil, 1700000000123456789, "198.18.0.2:40123", "dmx-abcdef-1"},
		`{"algorithm":"lease","n":3,"resources":null,"t0":1700000000123456789,"addr":"198.18.0.2:40123","netns":"dmx-abcdef-1"}`,
		struct {
			A  string   `json:"algorithm"`
			N  int      `json:"n"`
			R  []string `json:"resources"`
			T0 int64    `json:"t0"`
			Ad string   `json:"addr"`
			NS string   `json:"netns"`
		}{"lease", 3, nil, 1700000000123456789, "198.18.0.2:40123", "dmx-abcdef-1"}},
	{"crash in the simulator", Event{Kind: KindCrash}, Crash{Reason: "fault crash(P1@2s)"},
		`{"reason":"fault crash(P1@2s)"}`, map[string]any{"reason": "fault crash(P1@2s)"}},
	{"crash by the launcher", Event{Kind: KindCrash}, Crash{Reason: "killed by SIGKILL", Fault: "crash(P1@2s)"},
		`{"fault":"crash(P1@2s)","reason":"killed by SIGKILL"}`,
		map[string]string{"reason": "killed by SIGKILL", "fault": "crash(P1@2s)"}},
	{"recover", Event{Kind: KindRecover}, Crash{Reason: "restarted"},
		`{"reason":"restarted"}`, map[string]string{"reason": "restarted"}},
	{"election_start", Event{Kind: KindElectionStart}, ElectionStart{7},
		`{"term":7}`, map[string]any{"term": uint64(7)}},
	{"election_start without term", Event{Kind: KindElectionStart}, ElectionStart{},
		`{"term":0}`, map[string]any{"term": uint64(0)}},
	{"leader", Event{Kind: KindLeader, Peer: 2}, Leader{2, 0},
		`{"leader":2,"term":0}`, map[string]any{"leader": 2, "term": uint64(0)}},
	{"no leader", Event{Kind: KindLeader, Peer: -1}, Leader{-1, 4},
		`{"leader":-1,"term":4}`, map[string]any{"leader": -1, "term": uint64(4)}},
	{"wait", Event{Kind: KindWait, Peer: NoPeer}, Wait{WaitingFor: []int{0, 2}},
		`{"waiting_for":[0,2]}`, map[string]any{"waiting_for": []int{0, 2}}},
	{"wait for nobody", Event{Kind: KindWait, Peer: NoPeer}, Wait{},
		`{"waiting_for":[]}`, map[string]any{"waiting_for": []int{}}},
	{"wait for any one", Event{Kind: KindWait, Peer: NoPeer}, Wait{WaitingFor: []int{1, 3}, Model: WaitAny},
		`{"model":"or","waiting_for":[1,3]}`, map[string]any{"waiting_for": []int{1, 3}, "model": "or"}},
	{"timeout", Event{Kind: KindTimeout}, Timeout{"election"},
		`{"timer":"election"}`, map[string]any{"timer": "election"}},
	{"deliver", Event{Kind: KindDeliver, Peer: 1}, Delivery{From: 1, Stamp: 12, ID: 1},
		`{"from":1,"id":1,"stamp":12}`, map[string]any{"from": 1, "stamp": uint64(12), "id": 1}},
	{"send", Event{Kind: KindSend, MsgType: "request", Resource: "cs"},
		Message{Type: "request", Resource: "cs", Stamp: 5, ID: 2, Term: 3, Vals: []uint64{1, 0, 4}},
		`{"stamp":5,"id":2,"term":3,"vals":[1,0,4]}`, legacyMsg{5, 2, 3, []uint64{1, 0, 4}}},
	{"receive with a term only", Event{Kind: KindReceive, MsgType: "vote"}, Message{Type: "vote", Term: 9},
		`{"term":9}`, legacyMsg{Term: 9}},
	{"drop with vals only", Event{Kind: KindDrop, MsgType: "token"}, Drop{Msg: Message{Type: "token", Vals: []uint64{3}}},
		`{"vals":[3]}`, legacyMsg{Vals: []uint64{3}}},
	{"drop by a fault, sent again", Event{Kind: KindDrop, MsgType: "request", Resource: "cs"},
		Drop{Msg: Message{Type: "request", Resource: "cs", Stamp: 4, ID: 1}, Fault: "loss:20%", Resend: true},
		`{"stamp":4,"id":1,"fault":"loss:20%","resend":true}`,
		struct {
			Stamp  uint64 `json:"stamp"`
			ID     int    `json:"id"`
			Fault  string `json:"fault"`
			Resend bool   `json:"resend"`
		}{4, 1, "loss:20%", true}},
	{"final drop of a message without fields", Event{Kind: KindDrop, MsgType: "ok"}, Drop{Msg: Message{Type: "ok"}, Fault: "partition:0:1@1s-2s"},
		`{"fault":"partition:0:1@1s-2s"}`, map[string]string{"fault": "partition:0:1@1s-2s"}},
	{"fault start", Event{Kind: KindFault}, Fault{Fault: "pause:4@600ms-1s", Phase: FaultStart},
		`{"fault":"pause:4@600ms-1s","phase":"start"}`, map[string]string{"fault": "pause:4@600ms-1s", "phase": "start"}},
	{"fault made by the kernel", Event{Kind: KindFault}, Fault{Fault: "loss:30%@1s-2s", Phase: FaultEnd, By: FaultByKernel, How: "nftables dropped 3 of 10 datagrams (30.0%)"},
		`{"fault":"loss:30%@1s-2s","phase":"end","by":"kernel","how":"nftables dropped 3 of 10 datagrams (30.0%)"}`,
		struct {
			F string `json:"fault"`
			P string `json:"phase"`
			B string `json:"by"`
			H string `json:"how"`
		}{"loss:30%@1s-2s", "end", "kernel", "nftables dropped 3 of 10 datagrams (30.0%)"}},
	{"fault not applied", Event{Kind: KindFault}, Fault{Fault: "crash:leader@610ms", Phase: FaultNotApplied, Reason: "no leader alive"},
		`{"fault":"crash:leader@610ms","phase":"not applied","reason":"no leader alive"}`,
		map[string]string{"fault": "crash:leader@610ms", "phase": "not applied", "reason": "no leader alive"}},
	{"send without fields", Event{Kind: KindSend, MsgType: "ok"}, Message{Type: "ok"}, ``, nil},
	{"persist", Event{Kind: KindInternal, Resource: "cs"},
		Persist{Message{Type: "vote", Resource: "cs", ID: 3, Term: 2}},
		`{"persist":{"type":"vote","resource":"cs","id":3,"term":2}}`,
		map[string]any{"persist": algo.Msg{Type: "vote", Resource: "cs", ID: 3, Term: 2}}},
	{"persist without resource", Event{Kind: KindInternal}, Persist{Message{Type: "state", Stamp: 4, Vals: []uint64{1, 2}}},
		`{"persist":{"type":"state","stamp":4,"vals":[1,2]}}`,
		map[string]any{"persist": algo.Msg{Type: "state", Stamp: 4, Vals: []uint64{1, 2}}}},
	{"multicast", Event{Kind: KindInternal}, Multicast{Entry: 2, Resource: "cs"},
		`{"multicast":2,"resource":"cs"}`, map[string]any{"multicast": 2, "resource": "cs"}},
	{"note", Event{Kind: KindInternal}, Note{Text: "became candidate"},
		`{"note":"became candidate"}`, map[string]any{"note": "became candidate"}},
	{"note about a message", Event{Kind: KindInternal, Peer: 1}, Note{Text: "message for unknown resource ignored", Msg: MsgID(1, 1)},
		`{"msg":4294967297,"note":"message for unknown resource ignored"}`,
		map[string]any{"note": "message for unknown resource ignored", "msg": MsgID(1, 1)}},
	{"error", Event{Kind: KindInternal}, Failure{"bully at P1 sent \"x\" to P7, which does not exist (N=3)"},
		`{"error":"bully at P1 sent \"x\" to P7, which does not exist (N=3)"}`,
		map[string]any{"error": "bully at P1 sent \"x\" to P7, which does not exist (N=3)"}},
	{"html and unicode", Event{Kind: KindInternal}, Note{Text: "a<b && c>d é \u2028 \x01\t\"\\"},
		`{"note":"a\u003cb \u0026\u0026 c\u003ed é \u2028 \u0001\t\"\\"}`,
		map[string]any{"note": "a<b && c>d é \u2028 \x01\t\"\\"}},
}

// TestDetailRoundTrip: every shape encodes to the bytes the runtime always
// wrote, and decodes back to itself.
func TestDetailRoundTrip(t *testing.T) {
	for _, tc := range detailCases {
		t.Run(tc.name, func(t *testing.T) {
			got := EncodeDetail(tc.d)
			if string(got) != tc.want {
				t.Errorf("EncodeDetail = %s\n                  want %s", got, tc.want)
			}
			if tc.legacy != nil {
				old, err := json.Marshal(tc.legacy)
				if err != nil {
					t.Fatal(err)
				}
				if string(old) != tc.want {
					t.Errorf("the runtime used to write %s, the case wants %s", old, tc.want)
				}
			} else if got != nil {
				t.Errorf("EncodeDetail = %q, want no detail", got)
			}
			if b := AppendDetail([]byte("x"), tc.d); string(b) != "x"+tc.want {
				t.Errorf("AppendDetail after x = %s", b)
			}
			ev := tc.ev
			ev.Proc, ev.Seq, ev.Detail = 1, 2, got
			back, err := ev.Details()
			if err != nil {
				t.Fatalf("Details: %v", err)
			}
			if !reflect.DeepEqual(back, tc.d) {
				t.Errorf("Details = %#v\n   want %#v", back, tc.d)
			}
		})
	}
}

// TestMessageIsAlgoMsg: a message converts between trace and the runtime
// without loss, and its full encoding is encoding/json's of algo.Msg.
func TestMessageIsAlgoMsg(t *testing.T) {
	for _, m := range []algo.Msg{{Type: "t"}, {Type: "a&b", Resource: "<r>", Stamp: 1, ID: -2, Term: 3, Vals: []uint64{0}}} {
		want, _ := json.Marshal(m)
		if got := Message(m).appendFull(nil); string(got) != string(want) {
			t.Errorf("%+v: appendFull = %s, encoding/json %s", m, got, want)
		}
		if back := algo.Msg(Message(m)); !reflect.DeepEqual(back, m) {
			t.Errorf("%+v came back as %+v", m, back)
		}
	}
}

// TestDecodeForeign: details of traces dmx did not write, and broken ones.
func TestDecodeForeign(t *testing.T) {
	leader := func(peer int) Event { return Event{Proc: 1, Seq: 2, Kind: KindLeader, Peer: peer} }
	wait := func(peer int) Event { return Event{Proc: 1, Seq: 2, Kind: KindWait, Peer: peer} }
	of := func(k Kind) Event { return Event{Proc: 1, Seq: 2, Kind: k, Peer: NoPeer} }
	deep := `{"x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`
	for _, tc := range []struct {
		ev     Event
		detail string
		want   Detail // with an error: what the accessor still returns
		err    string // "" for no error, else a part of the message
	}{
		// Leaders and terms: the elections view's rule.
		{leader(NoPeer), `{"leader":2.0,"term":"7"}`, Leader{2, 7}, ""},
		{leader(NoPeer), `{"leader":"2","term":7e0}`, Leader{2, 7}, ""},
		{leader(NoPeer), `{"leader":2,"election":9,"term":7}`, Leader{2, 9}, ""},
		{leader(NoPeer), `{"term":7,"election":9,"leader":2}`, Leader{2, 9}, ""},
		{leader(NoPeer), `{"leader":2,"election":null,"term":7}`, Leader{2, 7}, ""},
		{leader(NoPeer), `{"leader":2,"election":0,"term":7}`, Leader{2, 0}, ""},
		{leader(3), ``, Leader{3, 0}, ""},
		{leader(3), `null`, Leader{3, 0}, ""},
		{leader(3), ` { } `, Leader{3, 0}, ""},
		{leader(3), `{"leader":null}`, Leader{3, 0}, ""},
		{leader(3), `{"Leader":5}`, Leader{3, 0}, ""}, // keys are case-sensitive, as json_extract's
		{leader(3), `{"le\u0061der":4}`, Leader{4, 0}, ""},
		{leader(3), `{"leader":4,"leader":5}`, Leader{5, 0}, ""}, // the last wins
		{leader(3), `{"leader":2,"who":"x","nested":{"a":[1,{"b":null}],"c":true}}`, Leader{2, 0}, ""},
		{leader(3), `{"leader":-0.0}`, Leader{0, 0}, ""},
		{leader(3), `{"leader":"abc"}`, Leader{3, 0}, `P1#2 leader: detail {"leader":"abc"}: leader: want an integer, got string "abc"`},
		{leader(3), `{"leader":1.5}`, Leader{3, 0}, `leader: want an integer, got number 1.5`},
		{leader(3), `{"leader":true}`, Leader{3, 0}, `leader: want an integer, got boolean true`},
		{leader(3), `{"leader":[1]}`, Leader{3, 0}, `leader: want an integer, got array [1]`},
		{leader(3), `{"term":-1}`, Leader{3, 0}, `term: want a non-negative integer, got number -1`},
		{leader(3), `{"term":1e30}`, Leader{3, 0}, `term: 1e30 is out of range`},
		{leader(3), `{"term":18446744073709551616}`, Leader{3, 0}, `term: 18446744073709551616 is out of range`},
		{leader(3), `{"leader":9223372036854775808}`, Leader{3, 0}, `out of range`},
		{leader(3), `{"election":"x"}`, Leader{3, 0}, `election: want an integer, got string "x"`},
		{leader(3), `"not json"`, Leader{3, 0}, `want a JSON object, got string "not json"`},
		{leader(3), `[1,2]`, Leader{3, 0}, `want a JSON object, got array [1,2]`},
		{leader(3), `{"leader":2,`, Leader{3, 0}, `unexpected end of JSON`},
		{leader(3), `{"leader":2} x`, Leader{3, 0}, `text after the JSON value`},
		{leader(3), `{"leader":02}`, Leader{3, 0}, `want ',' or '}'`},
		{leader(3), `{"leader":"2\u00"}`, Leader{3, 0}, `bad \u escape`},
		{leader(3), deep, Leader{3, 0}, `nested more than`},
		{of(KindElectionStart), `{"election":4}`, ElectionStart{4}, ""},
		{of(KindElectionStart), `{"term":4}`, ElectionStart{4}, ""},
		{of(KindElectionStart), ``, ElectionStart{0}, ""},

		// Waits: the set, else Peer.
		{wait(NoPeer), `{"waiting_for":[2,1.0,"0"]}`, Wait{WaitingFor: []int{2, 1, 0}}, ""},
		{wait(2), `{}`, Wait{WaitingFor: []int{2}}, ""},
		{wait(2), ``, Wait{WaitingFor: []int{2}}, ""},
		{wait(2), `{"waiting_for":null}`, Wait{WaitingFor: []int{2}}, ""},
		{wait(2), `{"waiting_for":[]}`, Wait{}, ""},
		{wait(NoPeer), ``, Wait{}, ""},
		{wait(NoPeer), `{"waiting_for":[1,"x"]}`, Wait{}, `waiting_for: element 1: want an integer, got string "x"`},
		{wait(4), `{"waiting_for":3}`, Wait{WaitingFor: []int{4}}, `waiting_for: want an array, got number 3`},
		{wait(NoPeer), `{"waiting_for":[1],"model":"AND"}`, Wait{WaitingFor: []int{1}}, ""},
		{wait(NoPeer), `{"waiting_for":[1,2],"model":"Or"}`, Wait{WaitingFor: []int{1, 2}, Model: WaitAny}, ""},
		{wait(3), `{"waiting_for":[1,2],"model":"k-of-n"}`, Wait{WaitingFor: []int{3}}, `model: want "and" or "or", got "k-of-n"`},

		// Deliveries must name their multicast.
		{of(KindDeliver), `{"from":"1","stamp":3.0,"id":2,"origin":"x"}`, Delivery{1, 3, 2}, ""},
		{of(KindDeliver), `{}`, Delivery{}, ""},
		{of(KindDeliver), ``, Delivery{}, `no detail, so no multicast named`},
		{of(KindDeliver), `{"stamp":-3}`, Delivery{}, `stamp: want a non-negative integer`},

		// Names accept what a logger writes unquoted.
		{of(KindTimeout), `{"timer":5}`, Timeout{"5"}, ""},
		{of(KindTimeout), `{}`, Timeout{}, ""},
		{of(KindTimeout), `{"timer":{"a":1}}`, Timeout{}, `timer: want a string, got object {"a":1}`},
		{of(KindStart), `{"algorithm":"x","n":"3","resources":["a",1]}`, Start{"x", 3, []string{"a", "1"}, 0, "", ""}, ""},
		{of(KindStart), `{"algorithm":"x","n":3,"t0":"12"}`, Start{"x", 3, nil, 12, "", ""}, ""},
		{of(KindStart), `{"n":3.5}`, Start{}, `n: want an integer, got number 3.5`},
		{of(KindCrash), `{"reason":"power","node":"a"}`, Crash{Reason: "power"}, ""},
		{of(KindCrash), `{"fault":[]}`, Crash{}, `fault: want a string, got array []`},

		// Messages: type and resource are columns.
		{Event{Proc: 1, Seq: 2, Kind: KindSend, MsgType: "request", Resource: "cs"}, `{"stamp":1,"type":"ignored","resource":"x"}`,
			Message{Type: "request", Resource: "cs", Stamp: 1}, ""},
		{Event{Proc: 1, Seq: 2, Kind: KindReceive, MsgType: "ok"}, ``, Message{Type: "ok"}, ""},
		{Event{Proc: 1, Seq: 2, Kind: KindReceive, MsgType: "ok"}, `{"vals":[1,-1]}`, Message{Type: "ok"}, `vals: element 1`},

		// Internal events: their keys tell their shape.
		{of(KindInternal), `{"note":"x","extra":1}`, Note{Text: "x"}, ""},
		{of(KindInternal), `{"note":"x","msg":"12"}`, Note{Text: "x", Msg: 12}, ""},
		{of(KindInternal), `{"foo":1}`, nil, ""},
		{of(KindInternal), ``, nil, ""},
		{of(KindInternal), `{"persist":{"type":"t","vals":[1]}}`, Persist{Message{Type: "t", Vals: []uint64{1}}}, ""},
		{of(KindInternal), `{"persist":{"type":"t","id":"x"}}`, nil, `persist: id: want an integer`},
		{of(KindInternal), `{"multicast":2}`, Multicast{Entry: 2}, ""},
		{of(KindInternal), `{"multicast":"two","resource":"cs"}`, nil, `multicast: want an integer, got string "two"`},
		{of(KindInternal), `{"error":"boom","note":"n"}`, Failure{"boom"}, ""},
		{of(KindInternal), `{"error":null,"note":"n"}`, Note{Text: "n"}, ""},

		// Kinds without a detail of their own.
		{of(KindCSEnter), `{"leader":1}`, nil, ""},
		{of("gossip"), `{"x":1}`, nil, ""},
	} {
		ev := tc.ev
		ev.Detail = json.RawMessage(tc.detail)
		got, err := ev.Details()
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s %s: error %v, want one with %q", ev.Kind, tc.detail, err, tc.err)
		}
		if tc.err != "" && err != nil && !strings.HasPrefix(err.Error(), "P1#2 ") {
			t.Errorf("%s %s: error %q does not name the event", ev.Kind, tc.detail, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s: Details = %#v, want %#v", ev.Kind, tc.detail, got, tc.want)
		}
	}
}

// TestAccessorKinds: each accessor refuses an event of another kind and
// says so.
func TestAccessorKinds(t *testing.T) {
	ev := &Event{Proc: 0, Seq: 3, Kind: KindCSEnter, Resource: "cs", Peer: 1, Detail: json.RawMessage(`{"leader":1}`)}
	for name, call := range map[string]func() error{
		"Start":         func() error { _, err := ev.Start(); return err },
		"Crash":         func() error { _, err := ev.Crash(); return err },
		"ElectionStart": func() error { _, err := ev.ElectionStart(); return err },
		"Leader":        func() error { _, err := ev.Leader(); return err },
		"Wait":          func() error { _, err := ev.Wait(); return err },
		"Timeout":       func() error { _, err := ev.Timeout(); return err },
		"Delivery":      func() error { _, err := ev.Delivery(); return err },
		"Message":       func() error { _, err := ev.Message(); return err },
	} {
		if err := call(); err == nil || !strings.HasPrefix(err.Error(), "P0#3 cs_enter(cs): not a") {
			t.Errorf("%s of a cs_enter: error %v", name, err)
		}
	}
}

// TestElectionsViewAgrees: the elections view of the schema and the
// accessors read the same leader and term from the same details, so that a
// user's SQL and dmx check agree.
func TestElectionsViewAgrees(t *testing.T) {
	details := []string{``, `{}`, `{"term":3}`, `{"election":4}`, `{"election":5,"term":6}`,
		`{"election":null,"term":7}`, `{"leader":2}`, `{"leader":-1,"term":2}`, `{"leader":null,"term":8}`,
		`{"leader":3,"election":9,"extra":[1,2]}`}
	var evs []Event
	seq := int64(0)
	for _, d := range details {
		for _, k := range []Kind{KindElectionStart, KindLeader} {
			seq++
			e := withDetail(ev(0, seq, k, seq), d)
			e.Peer = 1
			evs = append(evs, e)
		}
	}
	path := filepath.Join(t.TempDir(), "t.db")
	id := record(t, path, Run{Algorithm: "bully", Nodes: 4, Mode: "sim"}, evs)
	got := query(t, open(t, path), `SELECT kind, coalesce(leader, 'none'), coalesce(term, 0) FROM elections WHERE run = ? ORDER BY wall_ns`, id)
	for i, e := range evs {
		var want string
		if e.Kind == KindLeader {
			d, err := e.Leader()
			if err != nil {
				t.Fatal(err)
			}
			want = "decide|" + strconv.Itoa(d.Leader) + "|" + strconv.FormatUint(d.Term, 10)
		} else {
			d, err := e.ElectionStart()
			if err != nil {
				t.Fatal(err)
			}
			want = "start|none|" + strconv.FormatUint(d.Term, 10)
		}
		if got[i] != want {
			t.Errorf("%s %s: the view reads %s, the accessor %s", e.Kind, e.Detail, got[i], want)
		}
	}
}

// TestAppendStringMatchesJSON: appendString writes what encoding/json does
// for any string, valid UTF-8 or not.
func TestAppendStringMatchesJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "a\"b", "back\\slash", "<script>&", "\x00\x1f\x7f", "\b\f\n\r\t",
		"é日本", "\u2028\u2029", "bad \xff utf8", "\xed\xa0\x80", "mixed \x01 é <"} {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); string(got) != string(want) {
			t.Errorf("appendString(%q) = %s, encoding/json %s", s, got, want)
		}
	}
}

package trace

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// shapedKinds are the kinds whose detail Details reads.
var shapedKinds = []Kind{KindStart, KindCrash, KindRecover, KindElectionStart, KindLeader, KindWait,
	KindTimeout, KindDeliver, KindSend, KindReceive, KindDrop, KindFault, KindInternal}

// FuzzDetails feeds arbitrary details to the decoder (the corpus, under
// testdata/fuzz/FuzzDetails, holds foreign shapes). It must not panic; its
// errors name the event; it accepts no detail that is not JSON; and what it
// reads encodes to a detail that reads back the same.
func FuzzDetails(f *testing.F) {
	for _, tc := range detailCases {
		f.Add(string(tc.ev.Kind), tc.ev.Peer, []byte(tc.want))
	}
	f.Add("leader", 3, []byte(`{"leader":"2","election":7.0,"term":1}`))
	f.Add("wait", 1, []byte(`{"waiting_for":[2,"x"]}`))
	f.Add("internal", -1, []byte(`{"persist":{"type":"t","vals":[1e2]},"note":"n"}`))
	f.Fuzz(func(t *testing.T, kind string, peer int, detail []byte) {
		ev := Event{Proc: 1, Seq: 2, Kind: Kind(kind), Peer: peer, MsgType: "m", Resource: "r", Detail: detail}
		d, err := ev.Details()
		if err != nil {
			if !strings.HasPrefix(err.Error(), ev.String()+": ") {
				t.Fatalf("error %q does not name the event", err)
			}
			return
		}
		shaped := false
		for _, k := range shapedKinds {
			shaped = shaped || ev.Kind == k
		}
		if td := trimSpace(detail); shaped && len(td) > 0 && !isNull(td) && !json.Valid(detail) {
			t.Fatalf("Details read %q, which is not JSON", detail)
		}
		if d == nil {
			return
		}
		enc := EncodeDetail(d)
		again := ev
		again.Detail = enc
		d2, err := again.Details()
		if err != nil || !reflect.DeepEqual(d2, d) {
			t.Fatalf("%s read as %#v, which encodes to %s and reads back as %#v, %v", detail, d, enc, d2, err)
		}
	})
}

// FuzzParseWire feeds arbitrary bytes to ParseWire. It must not panic, and
// an event it reads must encode to bytes that read back the same.
func FuzzParseWire(f *testing.F) {
	for _, ev := range wireCases {
		f.Add(AppendWire(nil, &ev))
	}
	f.Add([]byte(`{"p":1,"s":2,"k":"send","vc":null,"d":{"a" :[1, 2]}}` + "\n"))
	f.Add([]byte{wireVersion, 2, 2, 1, 'x', 0, 1, 0, 0, 0, 1, 0, 6, '{', '"', 'a', '"', ':', '}'})
	f.Fuzz(func(t *testing.T, line []byte) {
		var ev Event
		if err := ParseWire(line, &ev); err != nil {
			if !reflect.DeepEqual(ev, Event{}) {
				t.Fatalf("failed (%v) and left %+v", err, ev)
			}
			return
		}
		enc := AppendWire(nil, &ev)
		var back Event
		if err := ParseWire(enc, &back); err != nil {
			t.Fatalf("%s encodes to %s, which does not parse: %v", line, enc, err)
		}
		// A detail comes back as the store keeps it (compacted, or a JSON
		// string of what is not JSON): compare those apart.
		if !sameJSON(back.Detail, ev.Detail) && string(back.Detail) != string(appendRaw(nil, ev.Detail)) {
			t.Fatalf("%s: detail %s came back as %s", line, ev.Detail, back.Detail)
		}
		back.Detail, ev.Detail = nil, nil
		if !reflect.DeepEqual(back, ev) {
			t.Fatalf("%s read as %+v, encodes to %s, reads back as %+v", line, ev, enc, back)
		}
	})
}

func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

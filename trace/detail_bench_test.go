package trace

import (
	"encoding/json"
	"testing"
)

// The encoders run once per recorded event and the decoders once per event
// a check reads; these measure them beside encoding/json, which did the
// work before (go test ./trace -run X -bench 'Detail|Wire').

func BenchmarkDetailEncode(b *testing.B) {
	m := Message{Type: "request", Stamp: 39, ID: 2}
	w := Wait{WaitingFor: []int{0, 2, 5}}
	b.Run("message", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = AppendDetail(buf[:0], m)
		}
	})
	b.Run("wait", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = AppendDetail(buf[:0], w)
		}
	})
	b.Run("wait/encoding-json", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(map[string]any{"waiting_for": w.WaitingFor})
		}
	})
}

func BenchmarkDetailDecode(b *testing.B) {
	ev := Event{Kind: KindLeader, Peer: 2, Detail: json.RawMessage(`{"leader":2,"term":7}`)}
	b.Run("leader", func(b *testing.B) {
		for b.Loop() {
			if _, err := ev.Leader(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("leader/encoding-json", func(b *testing.B) {
		for b.Loop() {
			var d struct {
				Leader *int   `json:"leader"`
				Term   uint64 `json:"term"`
			}
			if err := json.Unmarshal(ev.Detail, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
	wait := Event{Kind: KindWait, Peer: NoPeer, Detail: json.RawMessage(`{"waiting_for":[0,2,5]}`)}
	b.Run("wait", func(b *testing.B) {
		for b.Loop() {
			if _, err := wait.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkWire(b *testing.B) {
	ev := wireCases[1]
	line := AppendWire(nil, &ev)
	b.Run("append", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = AppendWire(buf[:0], &ev)
		}
	})
	b.Run("parse", func(b *testing.B) {
		var e Event
		for b.Loop() {
			if err := ParseWire(line, &e); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package udp

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/dmxlab/dmx/internal/fuzzseed"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// fuzzKey is the run key of the datagram fuzz target.
var fuzzKey = []byte("0123456789abcdef0123456789abcdef")

// fuzzPackets are packets of every shape a node sends, whose datagrams
// seed FuzzDatagram (testdata/fuzz/FuzzDatagram holds them and the
// fuzzer's finds).
func fuzzPackets() [][]*packet {
	env := &runner.Envelope{ID: 1<<32 | 7, From: 0, To: 2, Lamport: 9, VC: trace.VC{3, 0, 5},
		Msg: algo.Msg{Type: "request", Resource: "cs", Stamp: 4, ID: 2, Term: 1, Vals: []uint64{1, 2}, Body: `{"type":"x"}`}}
	return [][]*packet{
		{{Kind: "a", From: 1, To: 0, Inc: 0, RInc: 2, Ack: 17}},
		{{Kind: "d", From: 0, To: 2, Seq: 1, Env: env}},
		{{Kind: "d", From: 0, To: 2, Seq: 9, Base: 4, U: true, Env: env}, {Kind: "a", From: 0, To: 2, Ack: 3}},
		{{Kind: "d", From: 2, To: 1, Inc: 1, RInc: 1, Seq: 2, Env: &runner.Envelope{ID: 2, From: 2, To: 1}}},
	}
}

// FuzzDatagram feeds arbitrary bodies, signed with the run's key, to the
// datagram decoder, and arbitrary datagrams unsigned. Nothing panics; a
// datagram whose signature does not check is never decoded; a body that
// decodes encodes again to packets that decode the same (the decoder reads
// nothing the encoder cannot say), and what it holds is bounded by its
// size (no length is trusted past the bytes that follow it).
func FuzzDatagram(f *testing.F) {
	for _, ps := range fuzzPackets() {
		d := newSealer(fuzzKey).sealAll(ps)
		f.Add(d[len(packetMagic)+macLen:], false)
		f.Add(d, true)
	}
	f.Add([]byte("d\x00\x00\x00\x00\x01\x00\x00\x02\xff\xff\xff\xff\x0f"), false)
	f.Fuzz(func(t *testing.T, b []byte, raw bool) {
		s := newSealer(fuzzKey)
		if raw {
			// As it came off the network: only a datagram signed with
			// the key is decoded.
			ps, err := s.open(b)
			if err == nil {
				mac := hmac.New(sha256.New, fuzzKey)
				mac.Write(b[len(packetMagic)+macLen:])
				if !hmac.Equal(mac.Sum(nil), b[len(packetMagic):len(packetMagic)+macLen]) {
					t.Fatalf("a datagram with a wrong signature was decoded: %v", ps)
				}
			} else if !errors.Is(err, errMalformed) && !errors.Is(err, errBadMAC) {
				t.Fatalf("error %v is neither malformed nor bad MAC", err)
			}
			return
		}
		// A body signed with the key: the decoder itself is on trial.
		d := make([]byte, 0, len(packetMagic)+macLen+len(b))
		d = append(d, packetMagic...)
		mac := hmac.New(sha256.New, fuzzKey)
		mac.Write(b)
		d = mac.Sum(d)
		d = append(d, b...)
		ps, err := s.open(d)
		if err != nil {
			if !errors.Is(err, errMalformed) {
				t.Fatalf("a signed body: %v", err)
			}
			return
		}
		var held int
		for _, p := range ps {
			if p.Env != nil {
				held += len(p.Env.VC) + len(p.Env.Msg.Vals) + len(p.Env.Msg.Type) + len(p.Env.Msg.Resource) + len(p.Env.Msg.Body)
			}
		}
		if held > len(b) {
			t.Fatalf("%d bytes decoded into %d values and bytes", len(b), held)
		}
		again, err := newSealer(fuzzKey).open(newSealer(fuzzKey).sealAll(clonePackets(ps)))
		if err != nil {
			t.Fatalf("decoded packets do not encode to a datagram that decodes: %v\n%+v", err, ps)
		}
		if !reflect.DeepEqual(clonePackets(again), clonePackets(ps)) {
			t.Fatalf("decoded %+v, encoded and decoded again %+v", ps, again)
		}
	})
}

// clonePackets copies packets out of a sealer's buffer.
func clonePackets(ps []*packet) []*packet {
	out := make([]*packet, len(ps))
	for i, p := range ps {
		c := *p
		if p.Env != nil {
			e := *p.Env
			c.Env = &e
		}
		out[i] = &c
	}
	return out
}

// TestWriteFuzzSeeds writes the seed corpus of FuzzDatagram into
// testdata/fuzz (DMX_FUZZ_SEEDS=1), in the form go test -fuzz reads.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("DMX_FUZZ_SEEDS") == "" {
		t.Skip("DMX_FUZZ_SEEDS=1 writes the seed corpus")
	}
	write := fuzzseed.Writer(t, "FuzzDatagram")
	for i, ps := range fuzzPackets() {
		d := newSealer(fuzzKey).sealAll(ps)
		for _, raw := range []bool{false, true} {
			b := d[len(packetMagic)+macLen:]
			if raw {
				b = d
			}
			write("seed-"+string(rune('a'+i))+map[bool]string{false: "-body", true: "-datagram"}[raw],
				"[]byte("+quoteBytes(b)+")", fmt.Sprintf("bool(%t)", raw))
		}
	}
}

// quoteBytes writes b as a Go string literal of escapes.
func quoteBytes(b []byte) string {
	const hex = "0123456789abcdef"
	out := []byte{'"'}
	for _, c := range b {
		out = append(out, '\\', 'x', hex[c>>4], hex[c&15])
	}
	return string(append(out, '"'))
}

package udp

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"math"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"

	"github.com/dmxlab/dmx/runner"
)

// Datagram layout: magic "DMX2", 32-byte HMAC-SHA256 of the body, body.
// The body is binary, every datagram of a run going through it: one or
// more packets, one after the other (the data a node sends one peer at one
// safe point travels in one datagram). A packet is its kind byte ('d'
// data, 'a' ack), then its fields in a fixed order, integers as varints
// (unsigned ones as uvarints), and for data the envelope: its id, ends and
// clocks, then the message's fields, strings and arrays as a uvarint
// length and their contents (a foreign program's body last).
var packetMagic = []byte("DMX2")

const macLen = sha256.Size

// packet flags.
const (
	flagUnordered = 1 << iota // deliver on arrival (a reorder fault)
	flagEnv                   // an envelope follows
)

// sealer seals and opens the datagrams of one run: it keeps the HMAC of
// the run's key, reset for each datagram, so that neither allocates one.
// A sealer is used from one goroutine.
type sealer struct {
	mac   hash.Hash
	sum   [macLen]byte
	body  []byte
	names map[string]string // message types and resources seen, so that each is one string
	// opened holds what open returns.
	opened []*packet
}

func newSealer(key []byte) *sealer {
	return &sealer{mac: hmac.New(sha256.New, key), names: map[string]string{}}
}

// seal encodes p and signs it, into a new datagram.
func (s *sealer) seal(p *packet) []byte {
	return s.sealAll([]*packet{p})
}

// sealAll encodes ps and signs them, into one new datagram.
func (s *sealer) sealAll(ps []*packet) []byte {
	s.body = s.body[:0]
	for _, p := range ps {
		s.body = appendPacket(s.body, p)
	}
	s.mac.Reset()
	s.mac.Write(s.body)
	out := make([]byte, 0, len(packetMagic)+macLen+len(s.body))
	out = append(out, packetMagic...)
	out = s.mac.Sum(out)
	return append(out, s.body...)
}

// seal is a sealer's seal under key, for tests and one-off datagrams.
func seal(key []byte, p *packet) []byte { return newSealer(key).seal(p) }

// open authenticates and decodes a datagram into its packets, valid until
// the next open; the error says why it was rejected and which counter it
// belongs to. The packets share no memory with b.
func (s *sealer) open(b []byte) ([]*packet, error) {
	if len(b) < len(packetMagic)+macLen || !bytes.Equal(b[:len(packetMagic)], packetMagic) {
		return nil, errMalformed
	}
	mac, body := b[len(packetMagic):len(packetMagic)+macLen], b[len(packetMagic)+macLen:]
	s.mac.Reset()
	s.mac.Write(body)
	if !hmac.Equal(mac, s.mac.Sum(s.sum[:0])) {
		return nil, errBadMAC
	}
	d := packetDecoder{b: body, names: s.names}
	s.opened = s.opened[:0]
	for {
		p := d.packet()
		if !d.ok {
			return nil, errMalformed
		}
		s.opened = append(s.opened, p)
		if d.i == len(body) {
			return s.opened, nil
		}
	}
}

var (
	errMalformed = errors.New("malformed datagram")
	errBadMAC    = errors.New("datagram not authenticated with this run's key")
)

func appendPacket(b []byte, p *packet) []byte {
	if p.Kind == "a" {
		b = append(b, 'a')
	} else {
		b = append(b, 'd')
	}
	b = binary.AppendVarint(b, int64(p.From))
	b = binary.AppendVarint(b, int64(p.To))
	b = binary.AppendVarint(b, int64(p.Inc))
	b = binary.AppendVarint(b, int64(p.RInc))
	b = binary.AppendUvarint(b, p.Seq)
	b = binary.AppendUvarint(b, p.Base)
	b = binary.AppendUvarint(b, p.Ack)
	var flags byte
	if p.U {
		flags |= flagUnordered
	}
	if p.Env != nil {
		flags |= flagEnv
	}
	b = append(b, flags)
	if e := p.Env; e != nil {
		b = binary.AppendVarint(b, e.ID)
		b = binary.AppendVarint(b, int64(e.From))
		b = binary.AppendVarint(b, int64(e.To))
		b = binary.AppendUvarint(b, e.Lamport)
		b = appendUvarints(b, e.VC)
		m := &e.Msg
		b = appendBytes(b, m.Type)
		b = appendBytes(b, m.Resource)
		b = binary.AppendUvarint(b, m.Stamp)
		b = binary.AppendVarint(b, int64(m.ID))
		b = binary.AppendUvarint(b, m.Term)
		b = appendUvarints(b, m.Vals)
		b = appendBytes(b, m.Body)
	}
	return b
}

func appendBytes(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendUvarints(b []byte, v []uint64) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	for _, x := range v {
		b = binary.AppendUvarint(b, x)
	}
	return b
}

// packetDecoder reads a packet's fields in turn; the first failure sticks
// (ok false) and every later read gives zero.
type packetDecoder struct {
	b     []byte
	i     int
	ok    bool
	names map[string]string
}

// packet reads the packet at d.i.
func (d *packetDecoder) packet() *packet {
	d.ok = d.i < len(d.b)
	if !d.ok {
		return nil
	}
	p := &packet{}
	switch d.b[d.i] {
	case 'a':
		p.Kind = "a"
	case 'd':
		p.Kind = "d"
	default:
		d.ok = false
		return nil
	}
	d.i++
	p.From, p.To, p.Inc, p.RInc = d.int(), d.int(), d.int(), d.int()
	p.Seq, p.Base, p.Ack = d.uvarint(), d.uvarint(), d.uvarint()
	flags := d.byte()
	p.U = flags&flagUnordered != 0
	if flags&flagEnv != 0 {
		e := &runner.Envelope{}
		e.ID, e.From, e.To, e.Lamport = d.varint(), d.int(), d.int(), d.uvarint()
		if vc := d.uvarints(); vc != nil {
			e.VC = trace.VC(vc)
		}
		e.Msg = algo.Msg{Type: d.name(), Resource: d.name(), Stamp: d.uvarint(), ID: d.int(), Term: d.uvarint(), Vals: d.uvarints(), Body: d.text()}
		p.Env = e
	}
	return p
}

func (d *packetDecoder) byte() byte {
	if !d.ok || d.i >= len(d.b) {
		d.ok = false
		return 0
	}
	d.i++
	return d.b[d.i-1]
}

func (d *packetDecoder) varint() int64 { return packetNumber(d, binary.Varint) }

func (d *packetDecoder) uvarint() uint64 { return packetNumber(d, binary.Uvarint) }

// packetNumber reads a number with read (binary.Varint or binary.Uvarint).
func packetNumber[T int64 | uint64](d *packetDecoder, read func([]byte) (T, int)) T {
	if !d.ok {
		return 0
	}
	v, k := read(d.b[d.i:])
	if k <= 0 {
		d.ok = false
		return 0
	}
	d.i += k
	return v
}

func (d *packetDecoder) int() int {
	v := d.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.ok = false
		return 0
	}
	return int(v)
}

// name reads a string, one string for each distinct name.
func (d *packetDecoder) name() string {
	n := d.uvarint()
	if !d.ok || n > uint64(len(d.b)-d.i) {
		d.ok = false
		return ""
	}
	b := d.b[d.i : d.i+int(n)]
	d.i += int(n)
	if s, ok := d.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.names) < 1024 {
		d.names[s] = s
	}
	return s
}

// text reads a string that is not a name (a foreign program's message
// body: runner/exec), not interned.
func (d *packetDecoder) text() string {
	n := d.uvarint()
	if !d.ok || n > uint64(len(d.b)-d.i) {
		d.ok = false
		return ""
	}
	s := string(d.b[d.i : d.i+int(n)])
	d.i += int(n)
	return s
}

// uvarints reads an array; an empty one is nil.
func (d *packetDecoder) uvarints() []uint64 {
	n := d.uvarint()
	if !d.ok || n > uint64(len(d.b)-d.i) {
		d.ok = false
		return nil
	}
	if n == 0 {
		return nil
	}
	v := make([]uint64, n)
	for i := range v {
		v[i] = d.uvarint()
	}
	return v
}

package trace

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// The wire encoding is how an event travels from a node process to the
// runner that records it (dmx run). Every event of a run goes through it,
// and both ends are the same dmx binary, so it is compact binary: a
// version byte, then the fields in a fixed order, integers as varints
// (unsigned ones as uvarints), strings and the detail as a uvarint length
// and the bytes, the vector clock as a uvarint (its length + 1, 0 for
// none) and its entries:
//
//	'E' proc seq kind lamport vc wall msg msgtype peer resource detail
//
// The event's ID and Run are the store's business and do not travel.
// AppendWire and ParseWire are the only code that knows the encoding, so
// that it can change in one place; an encoding of another version is
// refused, not misread.

// wireVersion is the first byte of every event on the wire.
const wireVersion = 'E'

// AppendWire appends the wire encoding of ev to b. A Detail that is not
// valid JSON travels as a JSON string holding its text, and one with line
// breaks compacted, which is how the store would keep it anyway.
func AppendWire(b []byte, ev *Event) []byte {
	b = append(b, wireVersion)
	b = binary.AppendVarint(b, int64(ev.Proc))
	b = binary.AppendVarint(b, ev.Seq)
	b = appendWireString(b, string(ev.Kind))
	b = binary.AppendUvarint(b, ev.Lamport)
	if ev.VC == nil {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(ev.VC))+1)
		for _, c := range ev.VC {
			b = binary.AppendUvarint(b, c)
		}
	}
	b = binary.AppendVarint(b, ev.Wall)
	b = binary.AppendVarint(b, ev.Msg)
	b = appendWireString(b, ev.MsgType)
	b = binary.AppendVarint(b, int64(ev.Peer))
	b = appendWireString(b, ev.Resource)
	if len(ev.Detail) == 0 {
		return append(b, 0)
	}
	// The detail's length is not known before it is normalized: room for
	// a short one's length, moved along for a long one.
	at := len(b)
	b = append(b, 0)
	b = appendRaw(b, ev.Detail)
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b
	}
	var l [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(l[:], uint64(n))
	b = append(b, l[:k-1]...)
	copy(b[at+k:], b[at+1:at+1+n])
	copy(b[at:], l[:k])
	return b
}

// appendRaw appends the JSON value v so that it stays on one line: as it
// is when it is valid and has no line break, compacted when it has, and as
// a JSON string of its text when it is not valid JSON.
func appendRaw(b []byte, v []byte) []byte {
	t := trimSpace(v)
	if end, err := skipValue(t, 0, 0); err == nil && end == len(t) {
		if bytes.IndexAny(t, "\n\r") < 0 {
			return append(b, t...)
		}
		var buf bytes.Buffer
		if json.Compact(&buf, t) == nil {
			return append(b, buf.Bytes()...)
		}
	}
	return appendString(b, string(v))
}

func appendWireString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// ParseWire parses one event in the wire encoding, all of b, into ev,
// replacing all of it. The result shares no memory with b.
func ParseWire(b []byte, ev *Event) error { return (*WireParser)(nil).Parse(b, ev) }

// WireParser parses wire events as ParseWire does, for a reader of many
// (the runner reads every event of a run this way): the vector clocks and
// details of the events it parses are cut from shared blocks, and their
// message types and resources, which repeat, are kept once, so that an
// event costs a fraction of an allocation. Events it gave share no memory
// with each other's fields nor with b. A WireParser is used from one
// goroutine; its zero value is ready (a nil one parses as ParseWire).
type WireParser struct {
	vcs   []uint64
	bytes []byte
	names map[string]string
}

// wireBlock is the size of the blocks a WireParser cuts clocks and
// details from; maxNames bounds the names it keeps.
const (
	wireBlock = 4096
	maxNames  = 1024
)

// vc is a clock of k entries, cut from the current block.
func (p *WireParser) vc(k int) VC {
	if p == nil || k > wireBlock/4 {
		return make(VC, k)
	}
	if cap(p.vcs)-len(p.vcs) < k {
		p.vcs = make([]uint64, 0, wireBlock)
	}
	n := len(p.vcs)
	p.vcs = p.vcs[:n+k]
	return VC(p.vcs[n : n+k : n+k])
}

// copyBytes is a copy of b, cut from the current block.
func (p *WireParser) copyBytes(b []byte) []byte {
	if p == nil || len(b) > wireBlock/4 {
		return append([]byte(nil), b...)
	}
	if cap(p.bytes)-len(p.bytes) < len(b) {
		p.bytes = make([]byte, 0, wireBlock)
	}
	n := len(p.bytes)
	p.bytes = append(p.bytes, b...)
	return p.bytes[n:len(p.bytes):len(p.bytes)]
}

// name is b as a string, the same string each time it comes.
func (p *WireParser) name(b []byte) string {
	if p == nil || len(b) == 0 {
		return string(b)
	}
	if s, ok := p.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if p.names == nil {
		p.names = map[string]string{}
	}
	if len(p.names) < maxNames {
		p.names[s] = s
	}
	return s
}

// Parse decodes one event (see ParseWire).
func (p *WireParser) Parse(b []byte, ev *Event) error {
	*ev = Event{}
	d := wireDecoder{b: b}
	if len(b) == 0 || b[0] != wireVersion {
		return fmt.Errorf("wire event %s: not an event of this version of dmx", truncate(b))
	}
	d.i = 1
	out := Event{
		Proc: d.int("proc"), Seq: d.varint("seq"), Kind: Kind(d.kind()), Lamport: d.uvarint("lamport"),
	}
	if k := d.uvarint("vc"); k > 0 && d.err == nil {
		if k-1 > uint64(len(b)-d.i) {
			d.fail("vc", "longer than the event")
		} else {
			out.VC = p.vc(int(k - 1))
			for i := range out.VC {
				out.VC[i] = d.uvarint("vc")
			}
		}
	}
	out.Wall = d.varint("wall")
	out.Msg = d.varint("msg")
	out.MsgType = p.name(d.bytes("msg type"))
	out.Peer = d.int("peer")
	out.Resource = p.name(d.bytes("resource"))
	if det := d.bytes("detail"); len(det) > 0 {
		out.Detail = p.copyBytes(det)
	}
	if d.err == nil && d.i != len(b) {
		d.fail("end", "bytes after the event")
	}
	if d.err != nil {
		return fmt.Errorf("wire event %s: %w", truncate(b), d.err)
	}
	*ev = out
	return nil
}

// wireDecoder reads the fields of a wire event in turn; the first error
// sticks and makes every later read give zero.
type wireDecoder struct {
	b   []byte
	i   int
	err error
}

func (d *wireDecoder) fail(field, why string) {
	if d.err == nil {
		d.err = fmt.Errorf("%s: %s", field, why)
	}
}

func (d *wireDecoder) varint(field string) int64 { return wireNumber(d, field, binary.Varint) }

func (d *wireDecoder) uvarint(field string) uint64 { return wireNumber(d, field, binary.Uvarint) }

// wireNumber reads a number with read (binary.Varint or binary.Uvarint).
func wireNumber[T int64 | uint64](d *wireDecoder, field string, read func([]byte) (T, int)) T {
	if d.err != nil {
		return 0
	}
	v, k := read(d.b[d.i:])
	if k <= 0 {
		d.fail(field, "cut short or out of range")
		return 0
	}
	d.i += k
	return v
}

func (d *wireDecoder) int(field string) int {
	v := d.varint(field)
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail(field, fmt.Sprintf("%d is out of range", v))
		return 0
	}
	return int(v)
}

func (d *wireDecoder) bytes(field string) []byte {
	n := d.uvarint(field)
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)-d.i) {
		d.fail(field, "longer than the event")
		return nil
	}
	s := d.b[d.i : d.i+int(n)]
	d.i += int(n)
	return s
}

// kind reads the kind, without allocating for the kinds dmx knows.
func (d *wireDecoder) kind() string {
	s := d.bytes("kind")
	for _, k := range knownKinds {
		if string(k) == string(s) {
			return string(k)
		}
	}
	return string(s)
}

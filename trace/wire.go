package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// The wire encoding is how an event travels from a node process to the
// runner that records it (dmx run): one JSON object on one line, with short
// keys because every event of a run goes through it.
//
//	{"p":2,"s":17,"k":"send","l":40,"vc":[3,9,17],"w":1700000000000000000,
//	 "m":8589934597,"mt":"request","pe":0,"r":"cs","d":{"stamp":39}}
//
// p, s, k, l, vc, w and pe are always present (vc may be null); m, mt, r
// and d only when set. The event's ID and Run are the store's business and
// do not travel. AppendWire and ParseWire are the only code that knows the
// encoding, so that it can change (a binary one, say) in one place.

// AppendWire appends the wire encoding of ev to b, without a newline. A
// Detail that is not valid JSON travels as a JSON string holding its text,
// which is how the store would keep it anyway.
func AppendWire(b []byte, ev *Event) []byte {
	b = append(b, `{"p":`...)
	b = strconv.AppendInt(b, int64(ev.Proc), 10)
	b = append(b, `,"s":`...)
	b = strconv.AppendInt(b, ev.Seq, 10)
	b = append(b, `,"k":`...)
	b = appendString(b, string(ev.Kind))
	b = append(b, `,"l":`...)
	b = strconv.AppendUint(b, ev.Lamport, 10)
	b = append(b, `,"vc":`...)
	if ev.VC == nil {
		b = append(b, "null"...)
	} else {
		b = ev.VC.AppendText(b)
	}
	b = append(b, `,"w":`...)
	b = strconv.AppendInt(b, ev.Wall, 10)
	if ev.Msg != 0 {
		b = append(b, `,"m":`...)
		b = strconv.AppendInt(b, ev.Msg, 10)
	}
	if ev.MsgType != "" {
		b = append(b, `,"mt":`...)
		b = appendString(b, ev.MsgType)
	}
	b = append(b, `,"pe":`...)
	b = strconv.AppendInt(b, int64(ev.Peer), 10)
	if ev.Resource != "" {
		b = append(b, `,"r":`...)
		b = appendString(b, ev.Resource)
	}
	if len(ev.Detail) > 0 {
		b = append(b, `,"d":`...)
		b = appendRaw(b, ev.Detail)
	}
	return append(b, '}')
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

// ParseWire parses one event in the wire encoding (a trailing newline is
// allowed) into ev, replacing all of it. The result shares no memory with
// line. Keys it does not know are skipped, so that a newer node may add
// some; p, s and k are required, a missing pe is NoPeer.
func ParseWire(line []byte, ev *Event) error {
	*ev = Event{Peer: NoPeer}
	var have [3]bool // p, s, k
	err := members(line, func(k, v []byte) (err error) {
		switch string(k) {
		case "p":
			ev.Proc, err = jsonIntN(v)
			have[0] = true
		case "s":
			ev.Seq, err = jsonInt(v)
			have[1] = true
		case "k":
			var s string
			s, err = jsonString(v)
			ev.Kind = Kind(s)
			have[2] = true
		case "l":
			ev.Lamport, err = jsonUint(v)
		case "vc":
			ev.VC = nil
			if !isNull(v) {
				ev.VC, err = ParseVC(VC{}, v) // [] stays an empty clock, not nil
			}
		case "w":
			ev.Wall, err = jsonInt(v)
		case "m":
			ev.Msg, err = jsonInt(v)
		case "mt":
			ev.MsgType, err = jsonString(v)
		case "pe":
			ev.Peer, err = jsonIntN(v)
		case "r":
			ev.Resource, err = jsonString(v)
		case "d":
			ev.Detail = append(json.RawMessage(nil), v...)
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", k, err)
		}
		return err
	})
	if err == nil && !(have[0] && have[1] && have[2]) {
		err = errors.New("want the keys p, s and k")
	}
	if err != nil {
		*ev = Event{}
		return fmt.Errorf("wire event %s: %w", truncate(line), err)
	}
	return nil
}

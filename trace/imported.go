package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// An event imported from the log of another program (a GoVector or ShiViz
// log) keeps, in its detail beside the members its kind has, where it came
// from (Origin) and the messages it sends and receives beyond the one its
// Msg column names (Links). Both are read by whoever needs them, through the
// accessors below: a finding names the log's own line (Event.Source), happens-
// before follows every message (Event.Links), an exporter writes the text
// back (Event.Origin).

// Origin is what an importer keeps of an event of a foreign log: where its
// text is and what it says.
type Origin struct {
	Src    string  // "file:line" of the event's text in the log
	Text   string  // the event's text as the log has it
	Fields []Field // the other named groups of the log's regex, in its order
}

// Field is a named group of a foreign log's regex and what it matched.
type Field struct {
	Name, Value string
}

// Link is a message an event sends or receives besides the one its Msg
// column names.
type Link struct {
	Msg  int64 // the message id, unique in the run as Msg is
	Peer int   // the receiver of a sent message, the sender of a received one
}

// Links are the messages an event sends and receives beyond its Msg column.
// dmx's own events never have any: each sends or receives one message. An
// event of a foreign log may merge the clocks of several senders at once,
// and one send of GoVector's may reach several processes; such an event
// names its first message in Msg (when it is a send or a receive) and the
// others here, and the message table, happens-before and the exporters
// follow them all.
type Links struct {
	Recv []Link // messages the event receives
	Sent []Link // messages the event sends
}

// Keys of an imported event's detail (documented in Schema).
const (
	keySrc    = "src"
	keyText   = "text"
	keyFields = "fields"
	keyRecv   = "recv_msgs"
	keySent   = "sent_msgs"
)

// EncodeImported returns the detail of an imported event: the members of d
// (the detail of the event's kind, nil if it has none) followed by "src",
// "text", "fields", "recv_msgs" and "sent_msgs", each only when set. It is
// nil when there is nothing to say.
func EncodeImported(d Detail, o Origin, l Links) json.RawMessage {
	b := AppendDetail(nil, d)
	if len(b) > 0 && b[len(b)-1] == '}' {
		b = b[:len(b)-1]
	} else {
		b = append(b[:0], '{')
	}
	member := func(key string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendString(b, key)
		b = append(b, ':')
	}
	if o.Src != "" {
		member(keySrc)
		b = appendString(b, o.Src)
	}
	if o.Text != "" {
		member(keyText)
		b = appendString(b, o.Text)
	}
	if len(o.Fields) > 0 {
		member(keyFields)
		b = append(b, '{')
		for i, f := range o.Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, f.Name)
			b = append(b, ':')
			b = appendString(b, f.Value)
		}
		b = append(b, '}')
	}
	for _, ls := range []struct {
		key   string
		links []Link
	}{{keyRecv, l.Recv}, {keySent, l.Sent}} {
		if len(ls.links) == 0 {
			continue
		}
		member(ls.key)
		b = append(b, '[')
		for i, k := range ls.links {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = strconv.AppendInt(b, k.Msg, 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(k.Peer), 10)
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	if len(b) == 1 {
		return nil
	}
	return append(b, '}')
}

// Origin returns where an imported event came from. An event of dmx's own
// has none (the zero Origin, no error).
func (e *Event) Origin() (Origin, error) {
	var o Origin
	if !bytes.Contains(e.Detail, []byte(`"`+keySrc+`"`)) && !bytes.Contains(e.Detail, []byte(`"`+keyText+`"`)) &&
		!bytes.Contains(e.Detail, []byte(`"`+keyFields+`"`)) {
		return o, nil // the fast way out for dmx's own events
	}
	err := fields(e.Detail, func(k, v []byte) (err error) {
		switch string(k) {
		case keySrc:
			o.Src, err = jsonString(v)
		case keyText:
			o.Text, err = jsonString(v)
		case keyFields:
			o.Fields = o.Fields[:0]
			err = members(v, func(name, val []byte) error {
				s, err := jsonString(val)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				o.Fields = append(o.Fields, Field{string(name), s})
				return nil
			})
		}
		return err
	})
	if err != nil {
		return Origin{}, e.badDetail(err)
	}
	return o, nil
}

// Source returns the "file:line" an imported event came from, or "" for an
// event that has none (or whose detail cannot be read: a finding still
// names the event by its process and sequence number).
func (e *Event) Source() string {
	if !bytes.Contains(e.Detail, []byte(`"`+keySrc+`"`)) {
		return ""
	}
	var src string
	fields(e.Detail, func(k, v []byte) error {
		if string(k) == keySrc {
			src, _ = jsonString(v)
		}
		return nil
	})
	return src
}

// HasLinks reports whether the event's detail may list Links: a quick look
// for the keys, so that readers of dmx's own traces, which never have any,
// pay nothing more.
func (e *Event) HasLinks() bool { return bytes.Contains(e.Detail, []byte(`_msgs"`)) }

// Links returns the messages the event sends and receives beyond its Msg
// column; none for an event of dmx's own.
func (e *Event) Links() (Links, error) {
	var l Links
	if !e.HasLinks() {
		return l, nil
	}
	err := fields(e.Detail, func(k, v []byte) (err error) {
		switch string(k) {
		case keyRecv:
			l.Recv, err = jsonArray(v, jsonLink)
		case keySent:
			l.Sent, err = jsonArray(v, jsonLink)
		}
		return err
	})
	if err != nil {
		return Links{}, e.badDetail(err)
	}
	return l, nil
}

// jsonLink reads a [message id, peer] pair.
func jsonLink(v []byte) (Link, error) {
	var k Link
	n := 0
	err := elements(v, func(x []byte) (err error) {
		switch n {
		case 0:
			k.Msg, err = jsonInt(x)
			if err == nil && k.Msg == 0 {
				err = errors.New("message id 0")
			}
		case 1:
			k.Peer, err = jsonIntN(x)
		}
		n++
		return err
	})
	if err == nil && n != 2 {
		err = fmt.Errorf("want [message id, peer], got %d elements", n)
	}
	return k, err
}

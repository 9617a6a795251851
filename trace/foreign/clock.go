package foreign

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseClock reads a vector clock as ShiViz and GoVector write it, a JSON
// object from host names to counts ({"a":3, "b":1}), keeping the order of
// its entries. Counts are integers from 0 (a 0 entry says nothing); a host
// named twice is an error, as is anything after the object. A clock whose
// quotes are escaped, as a TLA+ trace (TLC) prints a JSON string inside a
// string ({\"n1\":0,\"n2\":1}, the ShiViz repository's ewd998.log), is
// read as ShiViz reads it, with \" taken for ".
func ParseClock(s string) ([]Entry, error) {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, `{\"`) {
		s = strings.ReplaceAll(t, `\"`, `"`)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, clockErr(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", short(s))
	}
	var out []Entry
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, clockErr(err)
		}
		host, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("want a host name, got %v", tok)
		}
		if seen[host] {
			return nil, fmt.Errorf("host %q appears twice", host)
		}
		seen[host] = true
		tok, err = dec.Token()
		if err != nil {
			return nil, clockErr(err)
		}
		n, ok := tok.(json.Number)
		if !ok {
			return nil, fmt.Errorf("host %q: want a count, got %v", host, describeToken(tok))
		}
		v, err := strconv.ParseUint(n.String(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("host %q: want a count (a whole number from 0), got %s", host, n)
		}
		out = append(out, Entry{host, v})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, clockErr(err)
	}
	rest, _ := io.ReadAll(dec.Buffered())
	if len(bytes.TrimSpace(rest)) > 0 || dec.More() {
		return nil, fmt.Errorf("text after the clock: %s", short(string(rest)))
	}
	return out, nil
}

func clockErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the clock is cut short")
	}
	return err
}

func describeToken(tok any) string {
	switch t := tok.(type) {
	case json.Delim:
		return "a JSON " + map[json.Delim]string{'{': "object", '[': "array"}[t]
	case string:
		return strconv.Quote(t)
	case nil:
		return "null"
	}
	return fmt.Sprint(tok)
}

// short quotes s, shortened to a readable length for an error.
func short(s string) string {
	const max = 60
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}

// ClockText writes a vector clock as ShiViz and GoVector read it: a JSON
// object of the non-zero entries, in order.
func ClockText(entries []Entry) string {
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	for _, e := range entries {
		if e.Value == 0 {
			continue
		}
		if n > 0 {
			b.WriteString(", ")
		}
		n++
		q, _ := json.Marshal(e.Host) // a string always marshals
		b.Write(q)
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(e.Value, 10))
	}
	b.WriteByte('}')
	return b.String()
}

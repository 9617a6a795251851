package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// A small JSON reader for details and wire lines. It exists instead of
// encoding/json for two reasons: details come from traces dmx did not write
// (numbers written as 3.0 or "3", extra keys), and a reader has to accept
// the harmless variants and name what is wrong with the rest; and analyses
// decode a detail per event, where reflection would cost more than the rest
// of the work on that event. Keys match exactly, as SQLite's json_extract
// (the schema's views) matches them, not case-insensitively as
// encoding/json does.

// maxDepth bounds the nesting of a value: a foreign detail nested a million
// arrays deep must be refused, not exhaust the stack.
const maxDepth = 256

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// trimSpace returns b without leading and trailing JSON whitespace.
func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// skipValue returns the offset just past the JSON value that starts at
// b[i] (no leading space), checking its syntax.
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, errors.New("unexpected end of JSON")
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '-' || c >= '0' && c <= '9':
		return skipNumber(b, i)
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return i, fmt.Errorf("values nested more than %d deep", maxDepth)
		}
		return composite(b, i, depth+1, nil)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
			return i + len(lit), nil
		}
	}
	return i, fmt.Errorf("unexpected %q at offset %d", b[i], i)
}

// composite walks the object or array that starts at b[i] and returns the
// offset just past it. If f is not nil it is called with each member's
// key, unescaped (nil in an array), and value text, in order.
func composite(b []byte, i, depth int, f func(key, val []byte) error) (int, error) {
	obj := b[i] == '{'
	end := byte(']')
	if obj {
		end = '}'
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == end {
		return i + 1, nil
	}
	for {
		var key []byte
		var err error
		if obj {
			if i >= len(b) || b[i] != '"' {
				return i, errAt(b, i, "a string key")
			}
			kend, err := skipString(b, i)
			if err != nil {
				return i, err
			}
			if f != nil {
				if key, err = unquote(b[i:kend]); err != nil {
					return i, err
				}
			}
			i = skipSpace(b, kend)
			if i >= len(b) || b[i] != ':' {
				return i, errAt(b, i, "':'")
			}
			i = skipSpace(b, i+1)
		}
		start := i
		if i, err = skipValue(b, i, depth); err != nil {
			return i, err
		}
		if f != nil {
			if err := f(key, b[start:i]); err != nil {
				return i, err
			}
		}
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == end {
			return i + 1, nil
		}
		return i, errAt(b, i, fmt.Sprintf("',' or '%c'", end))
	}
}

func errAt(b []byte, i int, want string) error {
	if i >= len(b) {
		return fmt.Errorf("unexpected end of JSON, want %s", want)
	}
	return fmt.Errorf("unexpected %q at offset %d, want %s", b[i], i, want)
}

// skipString skips the string that starts at b[i] (a '"').
func skipString(b []byte, i int) (int, error) {
	start := i
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			i++
			if i >= len(b) {
				break
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 || !isHex4(b[i+1:i+5]) {
					return i, fmt.Errorf("bad \\u escape at offset %d", i)
				}
				i += 4
			default:
				return i, fmt.Errorf("bad escape \\%c at offset %d", b[i], i)
			}
		case c < 0x20:
			return i, fmt.Errorf("control character %q in string at offset %d", c, i)
		}
	}
	return start, fmt.Errorf("unterminated string at offset %d", start)
}

func isHex4(h []byte) bool {
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// skipNumber skips the number that starts at b[i], following JSON's
// grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) (int, error) {
	start := i
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return start, fmt.Errorf("bad number at offset %d", start)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return start, fmt.Errorf("bad number at offset %d", start)
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return start, fmt.Errorf("bad number at offset %d", start)
		}
	}
	return i, nil
}

// members calls f with each member of the JSON object b (surrounding space
// allowed), in order: the key, unescaped, and the value's text. The key may
// be reused after f returns. A later duplicate key is simply called again,
// so that the last one wins as in encoding/json.
func members(b []byte, f func(key, val []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return fmt.Errorf("want a JSON object, got %s", describe(b))
	}
	i, err := composite(b, i, 1, f)
	if err != nil {
		return err
	}
	return trailing(b, i)
}

func trailing(b []byte, i int) error {
	if i = skipSpace(b, i); i != len(b) {
		return fmt.Errorf("text after the JSON value at offset %d", i)
	}
	return nil
}

// elements calls f with the text of each element of the JSON array v (a
// value returned by members, so already checked).
func elements(v []byte, f func(val []byte) error) error {
	if len(v) == 0 || v[0] != '[' {
		return fmt.Errorf("want an array, got %s", describe(v))
	}
	_, err := composite(v, 0, 1, func(_, e []byte) error { return f(e) })
	return err
}

// unquote returns the contents of the JSON string s (quotes included, syntax
// already checked). Without escapes it is s's own bytes. Invalid UTF-8
// becomes U+FFFD, as encoding/json has it (and writes it).
func unquote(s []byte) ([]byte, error) {
	in := s[1 : len(s)-1]
	plain := true
	for _, c := range in {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain || utf8.Valid(in) && bytes.IndexByte(in, '\\') < 0 {
		return in, nil
	}
	var str string
	if err := json.Unmarshal(s, &str); err != nil {
		return nil, err
	}
	return []byte(str), nil
}

// isNull reports whether v, a value's text, is JSON null. A null member is
// read as an absent one.
func isNull(v []byte) bool { return string(v) == "null" }

// describe names a value for an error message: its JSON type and, shortened,
// its text.
func describe(v []byte) string {
	v = trimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	what := "text"
	switch c := v[0]; {
	case c == '"':
		what = "string"
	case c == '-' || c >= '0' && c <= '9':
		what = "number"
	case c == '{':
		what = "object"
	case c == '[':
		what = "array"
	case c == 't' || c == 'f':
		what = "boolean"
	case c == 'n':
		what = "null"
	}
	const max = 40
	if len(v) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		return what + " " + string(v[:cut]) + "..."
	}
	return what + " " + string(v)
}

// numberText returns the text of a number value: the number itself, or the
// contents of a string that holds one (some loggers quote large integers).
func numberText(v []byte) ([]byte, error) {
	text := v
	if len(v) > 0 && v[0] == '"' {
		s, err := unquote(v)
		if err != nil {
			return nil, err
		}
		text = trimSpace(s)
	}
	if len(text) == 0 || !(text[0] == '-' || text[0] >= '0' && text[0] <= '9') {
		return nil, fmt.Errorf("want an integer, got %s", describe(v))
	}
	if end, err := skipNumber(text, 0); err != nil || end != len(text) {
		return nil, fmt.Errorf("want an integer, got %s", describe(v))
	}
	return text, nil
}

// integral reads a number that strconv's integer parsers refused with
// perr: too large, or written with a fraction or an exponent (3.0, 1e3),
// which is fine as long as it is a whole number within [lo, hi).
func integral(text, v []byte, perr error, lo, hi float64) (float64, error) {
	if errors.Is(perr, strconv.ErrRange) {
		return 0, fmt.Errorf("%s is out of range", text)
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("want an integer, got %s", describe(v))
	}
	switch {
	case math.IsInf(f, 0) || f < lo || f >= hi:
		return 0, fmt.Errorf("%s is out of range", text)
	case f != math.Trunc(f):
		return 0, fmt.Errorf("want an integer, got %s", describe(v))
	}
	return f, nil
}

// jsonInt reads an integer value: a JSON integer, a whole number written
// as a float, or a string holding either.
func jsonInt(v []byte) (int64, error) {
	text, err := numberText(v)
	if err != nil {
		return 0, err
	}
	x, err := strconv.ParseInt(string(text), 10, 64)
	if err == nil {
		return x, nil
	}
	f, err := integral(text, v, err, -(1 << 63), 1<<63)
	return int64(f), err
}

// jsonUint reads a non-negative integer value, as jsonInt does.
func jsonUint(v []byte) (uint64, error) {
	text, err := numberText(v)
	if err != nil {
		return 0, err
	}
	if text[0] == '-' {
		// -0 and -0.0 are zero; anything else below it is refused.
		if f, ferr := strconv.ParseFloat(string(text), 64); ferr != nil || f != 0 {
			return 0, fmt.Errorf("want a non-negative integer, got %s", describe(v))
		}
		return 0, nil
	}
	x, err := strconv.ParseUint(string(text), 10, 64)
	if err == nil {
		return x, nil
	}
	f, err := integral(text, v, err, 0, 1<<64)
	return uint64(f), err
}

// jsonIntN reads an integer value that must fit an int.
func jsonIntN(v []byte) (int, error) {
	x, err := jsonInt(v)
	if err == nil && int64(int(x)) != x {
		err = fmt.Errorf("%d is out of range", x)
	}
	return int(x), err
}

// jsonString reads a string value. A number or a boolean is taken as its
// text: a name written unquoted by a foreign logger is still a name.
func jsonString(v []byte) (string, error) {
	if len(v) == 0 {
		return "", errors.New("want a string, got nothing")
	}
	switch c := v[0]; {
	case c == '"':
		s, err := unquote(v)
		return string(s), err
	case c == '-' || c >= '0' && c <= '9' || c == 't' || c == 'f':
		return string(v), nil
	}
	return "", fmt.Errorf("want a string, got %s", describe(v))
}

// jsonBool reads a boolean value: true or false, or a string holding one.
func jsonBool(v []byte) (bool, error) {
	t := trimSpace(v)
	if len(t) > 0 && t[0] == '"' {
		u, err := unquote(t)
		if err != nil {
			return false, err
		}
		t = u
	}
	switch string(t) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("want true or false, got %s", describe(v))
}

// jsonArray reads an array whose elements elem reads; null is a nil
// slice, [] an empty one.
func jsonArray[T any](v []byte, elem func([]byte) (T, error)) ([]T, error) {
	if isNull(v) {
		return nil, nil
	}
	out := []T{}
	err := elements(v, func(e []byte) error {
		x, err := elem(e)
		if err != nil {
			return fmt.Errorf("element %d: %w", len(out), err)
		}
		out = append(out, x)
		return nil
	})
	return out, err
}

// appendString appends s as a JSON string exactly as encoding/json writes
// it (HTML-escaped), so that details keep the bytes they always had. Plain
// ASCII, which is every name dmx writes, takes the fast path.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// fields is members for a detail: a null member is read as an absent one,
// and an empty or null detail has no members.
func fields(detail []byte, f func(key, val []byte) error) error {
	if t := trimSpace(detail); len(t) == 0 || isNull(t) {
		return nil
	}
	return members(detail, func(k, v []byte) error {
		if isNull(v) {
			return nil
		}
		if err := f(k, v); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		return nil
	})
}

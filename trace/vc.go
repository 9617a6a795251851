package trace

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

var errEOF = io.EOF

// VC is a vector clock: VC[p] counts the events of process p that happened
// before or at the stamped event.
type VC []uint64

// Clone returns a copy of v.
func (v VC) Clone() VC {
	if v == nil {
		return nil
	}
	c := make(VC, len(v))
	copy(c, v)
	return c
}

// Merge sets v to the componentwise maximum of v and o, growing v if o is
// longer.
func (v *VC) Merge(o VC) {
	if len(o) > len(*v) {
		n := make(VC, len(o))
		copy(n, *v)
		*v = n
	}
	w := *v
	for i, x := range o {
		if x > w[i] {
			w[i] = x
		}
	}
}

// LessEq reports whether v <= o componentwise (missing entries are 0).
func (v VC) LessEq(o VC) bool {
	for i, x := range v {
		var y uint64
		if i < len(o) {
			y = o[i]
		}
		if x > y {
			return false
		}
	}
	return true
}

// Equal reports whether v and o are the same clock (missing entries are 0).
func (v VC) Equal(o VC) bool { return v.LessEq(o) && o.LessEq(v) }

// Before reports whether v happened strictly before o.
func (v VC) Before(o VC) bool { return v.LessEq(o) && !o.LessEq(v) }

// Concurrent reports whether neither of v and o happened before the other.
func (v VC) Concurrent(o VC) bool { return !v.LessEq(o) && !o.LessEq(v) }

// AppendText appends v as a JSON array of integers, the form the trace
// stores ("[1,0,3]").
func (v VC) AppendText(b []byte) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, x, 10)
	}
	return append(b, ']')
}

// String returns the JSON array form of v.
func (v VC) String() string { return string(v.AppendText(nil)) }

// ParseVC parses the stored form of a vector clock, a JSON array of
// non-negative integers, into dst (reused when large enough). It is the hot
// path of reading a trace, so it does not go through encoding/json.
func ParseVC(dst VC, s []byte) (VC, error) {
	dst = dst[:0]
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
	}
	skip()
	if i >= len(s) || s[i] != '[' {
		return nil, fmt.Errorf("vector clock %q: want a JSON array of integers", truncate(s))
	}
	i++
	skip()
	if i < len(s) && s[i] == ']' {
		i++
		skip()
		if i != len(s) {
			return nil, fmt.Errorf("vector clock %q: trailing text", truncate(s))
		}
		return dst, nil
	}
	for {
		skip()
		start := i
		var x uint64
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			d := uint64(s[i] - '0')
			if x > (1<<64-1-d)/10 {
				return nil, fmt.Errorf("vector clock %q: entry overflows", truncate(s))
			}
			x = x*10 + d
			i++
		}
		if i == start {
			return nil, fmt.Errorf("vector clock %q: want a non-negative integer at offset %d", truncate(s), i)
		}
		dst = append(dst, x)
		skip()
		if i >= len(s) {
			return nil, errors.New("vector clock: unterminated array")
		}
		if s[i] == ',' {
			i++
			continue
		}
		if s[i] == ']' {
			i++
			skip()
			if i != len(s) {
				return nil, fmt.Errorf("vector clock %q: trailing text", truncate(s))
			}
			return dst, nil
		}
		return nil, fmt.Errorf("vector clock %q: unexpected %q at offset %d", truncate(s), s[i], i)
	}
}

func truncate(s []byte) string {
	if len(s) > 40 {
		return string(s[:40]) + "..."
	}
	return string(s)
}

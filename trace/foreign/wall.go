package foreign

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// TimeFields are the fields of a log whose value WallTimes reads as the
// events' wall time when none is named: the first of them that some event
// has ("timestamp" and "date" are the names ShiViz's own examples give the
// group).
var TimeFields = []string{"timestamp", "date", "time"}

// TimeLayouts are the layouts WallTimes tries, in this order, when none is
// given: the first that reads every value of the field wins. Numbers (Unix
// time) are tried before them: see unixUnit.
var TimeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999 Z0700",
	"2006-01-02 15:04:05.999999999",
	"2006/01/02 15:04:05.999999999",
	"1/2/2006 15:04:05.999999999",
	"1/2/2006 3:04:05.999999999 PM",
	"2/1/2006 15:04:05.999999999",
	"2/1/2006 3:04:05.999999999 PM",
	"02/Jan/2006:15:04:05.999999999 -0700",
	"Jan _2 15:04:05.999999999",
	"Jan _2 2006 15:04:05.999999999",
	time.RFC1123Z,
	time.RFC1123,
	time.UnixDate,
	"15:04:05.999999999",
}

// Unix time layouts a user can name for a field of numbers.
const (
	LayoutUnix   = "unix"    // seconds since the Unix epoch, a fraction allowed
	LayoutUnixMs = "unix-ms" // milliseconds
	LayoutUnixUs = "unix-us" // microseconds
	LayoutUnixNs = "unix-ns" // nanoseconds
)

// WallTimes gives the events of lg that have no wall time (GoVector's
// clock lines may carry one) the time their field names, read with layout
// (a Go time layout, or unix, unix-ms, unix-us, unix-ns). An empty field
// takes the first of TimeFields that an event has; an empty layout is
// inferred: the first of Unix time (by the numbers' magnitude) and
// TimeLayouts that reads every value. A time without a zone is UTC; one
// without a year or date counts from 1970-01-01 (only differences matter).
// It returns what it did in a sentence for the user ("" if no event has
// the field and none was named), and an error naming the file and line of a
// value it cannot read, or a field that no event has.
func WallTimes(lg *Log, field, layout string) (string, error) {
	named := field != ""
	if !named {
		for _, f := range TimeFields {
			if hasField(lg, f) {
				field = f
				break
			}
		}
		if field == "" {
			if layout != "" {
				return "", fmt.Errorf("--time-format %q: no event has a field %s to read it from (name the regex's group with --time-field)", layout, strings.Join(TimeFields, ", "))
			}
			return "", nil
		}
	} else if !hasField(lg, field) {
		return "", fmt.Errorf("--time-field %s: no event of the log has that field (the regex's named groups are the fields)", field)
	}
	type at struct {
		ev  *Event
		val string
	}
	var vals []at
	for i := range lg.Executions {
		for j := range lg.Executions[i].Events {
			ev := &lg.Executions[i].Events[j]
			if ev.Wall != 0 {
				continue
			}
			for _, f := range ev.Fields {
				if f.Name == field && strings.TrimSpace(f.Value) != "" {
					vals = append(vals, at{ev, strings.TrimSpace(f.Value)})
				}
			}
		}
	}
	if len(vals) == 0 {
		return "", nil
	}
	read := func(layout string) ([]int64, *at, error) {
		out := make([]int64, len(vals))
		for i := range vals {
			ns, err := parseTime(layout, vals[i].val)
			if err != nil {
				return nil, &vals[i], err
			}
			out[i] = ns
		}
		return out, nil, nil
	}
	how := "given"
	var walls []int64
	if layout != "" {
		var bad *at
		var err error
		if walls, bad, err = read(layout); err != nil {
			return "", fmt.Errorf("%s: the %s field %q does not read as %s: %v", bad.ev.At, field, bad.val, layout, err)
		}
	} else {
		how = "inferred"
		for _, l := range append(numberLayouts(vals[0].val), TimeLayouts...) {
			if w, _, err := read(l); err == nil {
				walls, layout = w, l
				break
			}
		}
		if walls == nil {
			return "", fmt.Errorf("%s: the %s field %q reads as none of the time layouts dmx knows; give one with --time-format (a Go layout such as \"01/02/2006 15:04:05.000\", or unix, unix-ms, unix-us, unix-ns)",
				vals[0].ev.At, field, vals[0].val)
		}
	}
	for i := range vals {
		vals[i].ev.Wall = walls[i]
	}
	note := fmt.Sprintf("wall times of %d events from their %s field, read as %q (%s", len(vals), field, layout, how)
	if !strings.HasPrefix(layout, "unix") && !strings.Contains(layout, "Z07") && !strings.Contains(layout, "-0700") && !strings.Contains(layout, "MST") {
		note += ", UTC"
	}
	if layout == "1/2/2006 15:04:05.999999999" || layout == "1/2/2006 3:04:05.999999999 PM" {
		if _, _, err := read(strings.Replace(layout, "1/2/", "2/1/", 1)); err == nil {
			note += "; month first: the values read day first as well"
		}
	}
	if how == "inferred" {
		note += "; --time-format sets it"
	}
	return note + ")", nil
}

func hasField(lg *Log, name string) bool {
	for _, ex := range lg.Executions {
		for _, ev := range ex.Events {
			for _, f := range ev.Fields {
				if f.Name == name {
					return true
				}
			}
		}
	}
	return false
}

// numberLayouts returns the Unix time layout for a field whose first value
// is v, if it is a number: the unit by its magnitude (a time after 1973 in
// seconds has 9 or 10 digits, in ms 12 or 13...).
func numberLayouts(v string) []string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return nil
	}
	switch {
	case f < 1e11:
		return []string{LayoutUnix}
	case f < 1e14:
		return []string{LayoutUnixMs}
	case f < 1e17:
		return []string{LayoutUnixUs}
	}
	return []string{LayoutUnixNs}
}

// parseTime reads v with layout and returns ns since the Unix epoch.
func parseTime(layout, v string) (int64, error) {
	unit := map[string]float64{LayoutUnix: 1e9, LayoutUnixMs: 1e6, LayoutUnixUs: 1e3, LayoutUnixNs: 1}
	if u, ok := unit[layout]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			if n < 0 || float64(n) > math.MaxInt64/u {
				return 0, fmt.Errorf("%d is out of range", n)
			}
			return n * int64(u), nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f*u > math.MaxInt64 {
			return 0, fmt.Errorf("not a number of %s since the Unix epoch", strings.TrimPrefix(layout, "unix-"))
		}
		return int64(f * u), nil
	}
	t, err := time.Parse(layout, v)
	if err != nil {
		return 0, err
	}
	if t.Year() == 0 {
		t = t.AddDate(1970, 0, 0) // no year in the layout: only differences matter
	}
	if t.Year() < 1678 || t.Year() > 2261 {
		return 0, fmt.Errorf("year %d is out of the range of wall times in ns", t.Year())
	}
	return t.UnixNano(), nil
}

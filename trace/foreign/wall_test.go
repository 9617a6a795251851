package foreign

import (
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/trace"
)

// logWith makes a log of one execution whose events have a field name
// with the given values.
func logWith(name string, vals ...string) *Log {
	lg := &Log{Executions: []Execution{{}}}
	for i, v := range vals {
		lg.Executions[0].Events = append(lg.Executions[0].Events, Event{Host: "a", Text: "x",
			Fields: []trace.Field{{Name: name, Value: v}}, At: Pos{File: "l.log", Line: i + 1}})
	}
	return lg
}

func TestWallTimes(t *testing.T) {
	utc := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixNano()
	}
	for _, tc := range []struct {
		name, field, layout string
		vals                []string
		want                []int64
		note, err           string
	}{
		{"date", "", "", []string{"10/13/2014 14:37:20.543", "10/13/2014 14:37:20.548"},
			[]int64{utc("2014-10-13T14:37:20.543Z"), utc("2014-10-13T14:37:20.548Z")}, `read as "1/2/2006 15:04:05.999999999" (inferred, UTC`, ""},
		{"date", "", "", []string{"4/24/2015 12:03:50 PM", "4/24/2015 1:04:11 PM"},
			[]int64{utc("2015-04-24T12:03:50Z"), utc("2015-04-24T13:04:11Z")}, `"1/2/2006 3:04:05.999999999 PM"`, ""},
		{"date", "", "", []string{"03/04/2015 10:00:00"}, []int64{utc("2015-03-04T10:00:00Z")}, "month first: the values read day first as well", ""},
		{"date", "", "", []string{"13/04/2015 10:00:00"}, []int64{utc("2015-04-13T10:00:00Z")}, `"2/1/2006 15:04:05.999999999"`, ""},
		{"timestamp", "", "", []string{"1413211040", "1413211041.5"}, []int64{1413211040e9, 1413211041.5e9}, `"unix"`, ""},
		{"timestamp", "", "", []string{"1413211040543"}, []int64{1413211040543e6}, `"unix-ms"`, ""},
		{"timestamp", "", "", []string{"2021-06-11T17:03:20.5+02:00"}, []int64{utc("2021-06-11T15:03:20.5Z")}, `(inferred;`, ""},
		{"time", "", "", []string{"17:03:20.5"}, []int64{utc("1970-01-01T17:03:20.5Z")}, "", ""},
		{"when", "when", "02.01.2006 15:04", []string{"13.04.2015 10:00"}, []int64{utc("2015-04-13T10:00:00Z")}, "(given, UTC)", ""},
		{"when", "when", "02.01.2006 15:04", []string{"13.04.2015 10:00", "yesterday"}, nil, "", `l.log:2: the when field "yesterday" does not read as 02.01.2006 15:04`},
		{"date", "", "", []string{"sometime"}, nil, "", `l.log:1: the date field "sometime" reads as none of the time layouts dmx knows; give one with --time-format`},
		{"date", "stamp", "", []string{"x"}, nil, "", "--time-field stamp: no event of the log has that field"},
		{"other", "", "", []string{"x"}, nil, "", ""},
	} {
		lg := logWith(tc.name, tc.vals...)
		note, err := WallTimes(lg, tc.field, tc.layout)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want %q", tc.vals, err, tc.err)
			}
			continue
		case err != nil:
			t.Errorf("%v: %v", tc.vals, err)
			continue
		}
		if !strings.Contains(note, tc.note) {
			t.Errorf("%v: note %q, want it to say %q", tc.vals, note, tc.note)
		}
		for i, w := range tc.want {
			if got := lg.Executions[0].Events[i].Wall; got != w {
				t.Errorf("%v: wall %d is %v, want %v", tc.vals, i, time.Unix(0, got).UTC(), time.Unix(0, w).UTC())
			}
		}
	}
}

// TestEscapedClockAndBOM: a clock whose quotes are escaped (a TLA+ trace)
// reads as ShiViz reads it; a rules file that starts with a byte-order
// mark reads as one without.
func TestEscapedClockAndBOM(t *testing.T) {
	got, err := ParseClock(`{\"n1\":0,\"n2\":3}`)
	if err != nil || len(got) != 2 || got[1] != (Entry{"n2", 3}) {
		t.Errorf("escaped clock: %v, %v", got, err)
	}
	rules, err := ParseRules("r.rules", []byte(BOM+"cs_enter=^in\n"))
	if err != nil || len(rules) != 1 || rules[0].Kind != trace.KindCSEnter {
		t.Errorf("rules with a BOM: %v, %v", rules, err)
	}
}

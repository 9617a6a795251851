package foreign

import (
	"strings"
	"testing"
)

// FuzzCompileJS: any text given as a ShiViz regex compiles or fails with
// an error; what compiles matches any text without panicking.
func FuzzCompileJS(f *testing.F) {
	for _, s := range []string{`(?<host>\S*) (?<clock>{.*})\n(?<event>.*)`, `\u0041[^]\cJ.`, `(?=x)`, `[\b\]]`, `\u{1F600}\0`, `[`} {
		f.Add(s, "a {\"a\":1}\nx")
	}
	f.Fuzz(func(t *testing.T, js, text string) {
		re, err := CompileJS(js)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "regex ") {
				t.Fatalf("error %q does not say it is about the regex", err)
			}
			return
		}
		re.FindAllStringSubmatchIndex(text, -1)
	})
}

// FuzzParseClock: any text given as a clock parses or fails with an error,
// and what parses is written back (ClockText) to the same entries.
func FuzzParseClock(f *testing.F) {
	for _, s := range []string{`{"a":1, "b":20}`, `{"node0" : 1}`, `{}`, `{"a":1, "b"`, `{"a":1,"a":2}`, `{"\u00e9":3}`, `{"a":0}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		es, err := ParseClock(s)
		if err != nil {
			return
		}
		again, err := ParseClock(ClockText(es))
		if err != nil {
			t.Fatalf("%q parsed, but %q, written back, does not: %v", s, ClockText(es), err)
		}
		var nonzero []Entry
		for _, e := range es {
			if e.Value != 0 {
				nonzero = append(nonzero, e)
			}
		}
		if len(again) != len(nonzero) {
			t.Fatalf("%q: %v written back reads %v", s, nonzero, again)
		}
		for i := range again {
			if again[i] != nonzero[i] {
				t.Fatalf("%q: %v written back reads %v", s, nonzero, again)
			}
		}
	})
}

// FuzzParseRules: any rules file reads or fails with an error naming the
// file and line; what reads matches any text without panicking.
func FuzzParseRules(f *testing.F) {
	f.Add([]byte(dmxRules), "cs_enter cs")
	f.Add([]byte("leader=^(?<leader>\\S+) leads (?<term>\\d+)\n# x\n"), "b leads 3")
	f.Add([]byte("wait=for (?<waiting_for>.*)"), "for a, b")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		rules, err := ParseRules("r.rules", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "r.rules") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		match(rules, text)
	})
}

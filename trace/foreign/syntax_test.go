package foreign

import (
	"strconv"
	"strings"
	"testing"
)

// TestCompileJS: ShiViz's regexes, in JavaScript's syntax, compile to
// regexps that match as JavaScript's would, or fail saying why.
func TestCompileJS(t *testing.T) {
	for _, tc := range []struct {
		js, text, want string // want: what the whole match is, or the error
	}{
		{`(?<host>\S*) (?<clock>{.*})\n(?<event>.*)`, "a {\"a\":1}\nhello\n", "a {\"a\":1}\nhello"},
		{`a.b`, "a\rb a-b", "a-b"},          // JavaScript's dot matches no line end
		{`^x$`, "y\nx\nz", "x"},             // multi-line, as ShiViz compiles
		{`\u0041\u{42}\cJ`, "AB\n", "AB\n"}, // \u, \u{}, \c
		{`a\/b\-c`, "a/b-c", "a/b-c"},       // escaped punctuation
		{`[^]x`, "\nx", "\nx"},              // [^] is any character
		{`[\b]`, "\b", "\b"},                // a backspace in a class
		{`\e`, "e", "e"},                    // an unknown escape is the letter
		{`x(?=y)`, "", "lookahead"},         // RE2 has no lookaround
		{`(?<=y)x`, "", "lookbehind"},
		{`(a)\1`, "", "back-reference"},
		{`(?<n>a)\k<n>`, "", "named back-reference"},
		{`(?<a>x)(?<a>y)`, "", `two groups are named "a"`},
		{`[abc`, "", "not closed"},
		{`x\`, "", "lone backslash"},
		{`a{2,1}`, "", "invalid repeat count"},
	} {
		re, err := CompileJS(tc.js)
		if err != nil {
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%q: error %v, want one saying %q", tc.js, err, tc.want)
			}
			continue
		}
		if got := re.FindString(tc.text); got != tc.want {
			t.Errorf("%q on %q: matched %q, want %q", tc.js, tc.text, got, tc.want)
		}
	}
}

// TestParseClock: clocks as GoVector and ShiViz write them, and the ways
// they break.
func TestParseClock(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want: the entries, or the error
	}{
		{`{"a":1, "b":20}`, "a=1 b=20"},
		{` {"node0" : 1} `, "node0=1"},
		{`{}`, ""},
		{`{"a":1, "b"`, "cut short"},
		{`{"a":1,"a":2}`, "appears twice"},
		{`{"a":-1}`, "want a count"},
		{`{"a":1.5}`, "want a count"},
		{`{"a":"1"}`, "want a count"},
		{`{"a":{}}`, "want a count, got a JSON object"},
		{`[1,2]`, "want a JSON object"},
		{`{"a":1} x`, "text after the clock"},
		{`{"a":18446744073709551616}`, "want a count"},
	} {
		es, err := ParseClock(tc.in)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			var parts []string
			for _, e := range es {
				parts = append(parts, e.Host+"="+strconv.FormatUint(e.Value, 10))
			}
			got = strings.Join(parts, " ")
		}
		if !strings.Contains(got, tc.want) || tc.want == "" && got != "" {
			t.Errorf("ParseClock(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestParseRules: rules, and the mistakes a rules file can have.
func TestParseRules(t *testing.T) {
	good := "# lock\ncs_enter=^got (?<resource>\\w+)\n\n leader = ^(?<leader>\\S+) leads (?<term>\\d+)\n"
	rules, err := ParseRules("r.rules", []byte(good))
	if err != nil || len(rules) != 2 || rules[1].From != "r.rules:4" || rules[0].Kind != "cs_enter" {
		t.Fatalf("rules %+v, %v", rules, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"cs_enter", "want KIND=REGEX"},
		{"enter=^x", `no kind "enter"`},
		{"cs_enter=(", "missing closing )"},
		{"cs_enter=(?<leader>x)", `a cs_enter rule has no group "leader"`},
		{"leader=^x", "a leader rule needs a (?<leader>...) group"},
	} {
		if _, err := ParseRules("r.rules", []byte("\n"+tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "r.rules:2: ") {
			t.Errorf("%q: error %v, want r.rules:2 and %q", tc.in, err, tc.want)
		}
	}
	if len(DMXRules()) == 0 {
		t.Error("no dmx rules")
	}
}

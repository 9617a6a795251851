package shiviz

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/foreign"
)

// DefaultRegex is ShiViz's own default parser regex, used when line 1 of a
// ShiViz file is empty.
const DefaultRegex = `(?<event>.*)\n(?<host>\S*) (?<clock>{.*})`

// Importer reads ShiViz files.
var Importer = foreign.Importer{
	Name:    "shiviz",
	Summary: "a ShiViz log: line 1 the regex, line 2 the separator, then the log (or a bare log with --regex)",
	Parse:   parseFiles,
}

func parseFiles(files []string, opt foreign.ParseOptions, ps *foreign.Problems) (*foreign.Log, error) {
	if len(files) != 1 {
		return nil, fmt.Errorf("shiviz: want one log file, got %d", len(files))
	}
	data, err := trace.ReadInput(files[0], trace.MaxLogBytes)
	if err != nil {
		return nil, err
	}
	return Parse(files[0], data, opt, ps)
}

// required are the named groups ShiViz needs in its regex.
var required = []string{"host", "clock", "event"}

// Parse reads a ShiViz log from data, which name names in problems and
// errors. With opt.Regex empty, data is a ShiViz file (regex and separator
// on its first two lines); otherwise it is the bare log and opt gives the
// regex and the separator.
func Parse(name string, data []byte, opt foreign.ParseOptions, ps *foreign.Problems) (*foreign.Log, error) {
	text := strings.ReplaceAll(strings.TrimPrefix(string(data), foreign.BOM), "\r\n", "\n")
	lines := newLines(text)
	regex, sep, start := opt.Regex, opt.Separator, 0
	regexLine, sepLine := 0, 0 // the lines they are on; 0: given apart from the file
	if regex == "" {
		if sep != "" {
			return nil, fmt.Errorf("%s: a separator is given with a regex, for a bare log; a ShiViz file has its separator on line 2", name)
		}
		first, rest, ok := strings.Cut(text, "\n")
		if !ok {
			return nil, fmt.Errorf("%s: a ShiViz file has the parser regex on line 1, the separator on line 2, then the log; this one has one line (for a bare log, give the regex)", name)
		}
		second, _, ok := strings.Cut(rest, "\n")
		regex, sep = first, strings.TrimSpace(second)
		if strings.TrimSpace(regex) == "" {
			regex = DefaultRegex
		}
		start = len(first) + 1 + len(second)
		if ok {
			start++
		}
		regexLine, sepLine = 1, 2
	}
	re, err := compile(name, regexLine, "parser regex", strings.TrimSpace(regex))
	if err != nil {
		return nil, err
	}
	if err := checkGroups(name, regexLine, strings.TrimSpace(regex), re); err != nil {
		return nil, err
	}
	lg := &foreign.Log{Format: "shiviz", Files: []string{name}, Params: map[string]string{"regex": strings.TrimSpace(regex)}}
	if sep != "" {
		lg.Params["separator"] = sep
	}
	// ShiViz trims the log; line numbers stay those of the file.
	body := text[start:]
	trimmed := strings.TrimSpace(body)
	off := start + strings.Index(body, trimmed)
	if trimmed == "" {
		return nil, fmt.Errorf("%s: the log is empty", name)
	}
	pieces, err := split(name, sepLine, sep, trimmed, off, lines, ps)
	if err != nil {
		return nil, err
	}
	unmatched := 0
	for _, pc := range pieces {
		ex := foreign.Execution{Label: pc.label}
		before := ps.Len()
		events(name, re, text, pc.from, pc.to, lines, &ex, ps)
		ex.Skipped = ps.Len() - before
		unmatched += ex.Unmatched
		lg.Executions = append(lg.Executions, ex)
	}
	if unmatched > 0 {
		lg.Notes = append(lg.Notes, fmt.Sprintf("%s: %d lines of text the regex does not match skipped, as ShiViz skips them (they hold no event)", name, unmatched))
	}
	return lg, nil
}

// compile compiles the parser regex or the separator (what says which).
func compile(name string, line int, what, js string) (*regexp.Regexp, error) {
	at := foreign.Pos{File: name, Line: line}
	re, err := foreign.CompileJS(js)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", at, what, err)
	}
	if re.MatchString("") {
		return nil, fmt.Errorf("%s: %s %q matches the empty text, so it would match everywhere", at, what, js)
	}
	return re, nil
}

func checkGroups(name string, line int, js string, re *regexp.Regexp) error {
	var missing []string
	for _, g := range required {
		if re.SubexpIndex(g) < 0 {
			missing = append(missing, "(?<"+g+">...)")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: the parser regex %q has no %s group: ShiViz needs the named groups host, clock and event",
			foreign.Pos{File: name, Line: line}, js, strings.Join(missing, " or "))
	}
	return nil
}

// piece is the text of one execution: text[from:to].
type piece struct {
	label    string
	from, to int
}

// split cuts the log (text[off:off+len(log)]) at the separator's matches.
func split(name string, sepLine int, sep, log string, off int, lines lineIndex, ps *foreign.Problems) ([]piece, error) {
	if sep == "" {
		return []piece{{from: off, to: off + len(log)}}, nil
	}
	re, err := compile(name, sepLine, "separator", sep)
	if err != nil {
		return nil, err
	}
	ms := re.FindAllStringSubmatchIndex(log, -1)
	if len(ms) == 0 {
		ps.Add(foreign.Pos{File: name, Line: sepLine}, foreign.ReasonNoExecutions,
			"the separator %q matches nothing in the log, which is then one execution", sep)
		return []piece{{from: off, to: off + len(log)}}, nil
	}
	tg := re.SubexpIndex("trace")
	var out []piece
	from, label := 0, ""
	for _, m := range ms {
		out = append(out, piece{label, off + from, off + m[0]})
		from, label = m[1], ""
		if tg >= 0 && m[2*tg] >= 0 {
			label = log[m[2*tg]:m[2*tg+1]]
		}
	}
	out = append(out, piece{label, off + from, off + len(log)})
	keep := out[:0]
	for _, p := range out {
		if strings.TrimSpace(lines.text[p.from:p.to]) != "" {
			keep = append(keep, p)
		}
	}
	return keep, nil
}

// events finds the events of text[from:to].
func events(name string, re *regexp.Regexp, text string, from, to int, lines lineIndex, ex *foreign.Execution, ps *foreign.Problems) {
	body := text[from:to]
	names := re.SubexpNames()
	hostG, clockG, eventG := re.SubexpIndex("host"), re.SubexpIndex("clock"), re.SubexpIndex("event")
	pos := func(i int) foreign.Pos { return foreign.Pos{File: name, Line: lines.line(from + i)} }
	// Text the regex does not match holds no event: ShiViz skips it, and
	// so does Parse, counting its lines (an event lost in it shows as a
	// clock that jumps). Only the end of the log is looked at closer: text
	// there with a brace in it is an event cut short.
	unmatched := func(a, b int, atEnd bool) {
		gap := body[a:b]
		t := strings.TrimSpace(gap)
		if t == "" {
			return
		}
		at := pos(a + strings.Index(gap, t))
		if atEnd && strings.Contains(t, "{") {
			ps.Add(at, foreign.ReasonTruncated, "the log ends with text the regex does not match, a cut event? %s", quote(t))
			return
		}
		ex.Unmatched += strings.Count(t, "\n") + 1
	}
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(body, -1) {
		if m[0] == m[1] {
			continue // an empty match holds no event
		}
		unmatched(last, m[0], false)
		last = m[1]
		group := func(g int) (string, int) {
			if g < 0 || m[2*g] < 0 {
				return "", m[0]
			}
			return body[m[2*g]:m[2*g+1]], m[2*g]
		}
		host, _ := group(hostG)
		clock, clockAt := group(clockG)
		text, textAt := group(eventG)
		ev := foreign.Event{Host: host, Text: text, At: pos(textAt), Clock0: pos(clockAt)}
		entries, err := foreign.ParseClock(clock)
		if err != nil {
			ps.Add(ev.Clock0, foreign.ReasonBadClock, "clock %s: %v", quote(clock), err)
			continue
		}
		ev.Clock = entries
		for g, n := range names {
			if n == "" || g == hostG || g == clockG || g == eventG || m[2*g] < 0 {
				continue
			}
			v, _ := group(g)
			ev.Fields = append(ev.Fields, trace.Field{Name: n, Value: v})
		}
		ex.Events = append(ex.Events, ev)
	}
	unmatched(last, len(body), true)
}

func quote(s string) string {
	const max = 80
	if len(s) > max {
		return fmt.Sprintf("%q...", s[:max])
	}
	return fmt.Sprintf("%q", s)
}

// lineIndex finds the line of an offset in a text.
type lineIndex struct {
	text   string
	starts []int
}

func newLines(text string) lineIndex {
	li := lineIndex{text: text, starts: []int{0}}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			li.starts = append(li.starts, i+1)
		}
	}
	return li
}

// line returns the 1-based line of offset i.
func (li lineIndex) line(i int) int {
	return sort.Search(len(li.starts), func(k int) bool { return li.starts[k] > i })
}

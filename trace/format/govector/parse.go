package govector

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/foreign"
	"github.com/dmxlab/dmx/trace/format/shiviz"
)

// Importer reads GoVector logs.
var Importer = foreign.Importer{
	Name:    "govector",
	Summary: "GoVector's per-process logs (host {clock} then the message), or one file merged by GoVector's tool",
	Parse:   parseFiles,
}

func parseFiles(files []string, opt foreign.ParseOptions, ps *foreign.Problems) (*foreign.Log, error) {
	if opt.Regex != "" || opt.Separator != "" {
		return nil, fmt.Errorf("govector: a GoVector log has no regex or separator to give (they are for shiviz)")
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("govector: no log files")
	}
	datas := make([][]byte, len(files))
	for i, f := range files {
		data, err := trace.ReadInput(f, trace.MaxLogBytes)
		if err != nil {
			return nil, err
		}
		datas[i] = data
	}
	return Parse(files, datas, ps)
}

// priority is the priority GoVector may write before a message.
var priority = regexp.MustCompile(`^(DEBUG|INFO|WARNING|ERROR|FATAL)[ -]`)

// execution is the line GoVector writes before each execution of a log
// that is appended to: " " as the clock line, then this.
var execution = regexp.MustCompile(`^=== (.*?) *===\s*$`)

// Parse reads GoVector logs, datas[i] the contents of the file names[i]:
// per-process logs, or a single file that GoVector's tool merged.
func Parse(names []string, datas [][]byte, ps *foreign.Problems) (*foreign.Log, error) {
	if len(names) == 1 && merged([]byte(strings.TrimPrefix(string(datas[0]), foreign.BOM))) {
		lg, err := shiviz.Parse(names[0], datas[0], foreign.ParseOptions{}, ps)
		if lg != nil {
			lg.Format = "govector"
		}
		return lg, err
	}
	lg := &foreign.Log{Format: "govector", Files: names}
	for i, name := range names {
		execs := parseFile(name, strings.ReplaceAll(strings.TrimPrefix(string(datas[i]), foreign.BOM), "\r\n", "\n"), ps)
		for k, ex := range execs {
			if k == len(lg.Executions) {
				lg.Executions = append(lg.Executions, foreign.Execution{Label: ex.Label})
			}
			into := &lg.Executions[k]
			if into.Label == "" {
				into.Label = ex.Label
			}
			into.Events = append(into.Events, ex.Events...)
			into.Skipped += ex.Skipped
		}
	}
	return lg, nil
}

// merged reports whether data is a merged log: its first line is a regex,
// not a clock line.
func merged(data []byte) bool {
	first, _, _ := strings.Cut(string(data), "\n")
	_, _, _, err := clockLine(first)
	return err != nil && (strings.Contains(first, "(?<") || strings.Contains(first, "(?P<"))
}

// parseFile reads one per-process log.
func parseFile(name, text string, ps *foreign.Problems) []foreign.Execution {
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1] // the last line's end
	}
	execs := []foreign.Execution{{}}
	cur := &execs[0]
	pos := func(i int) foreign.Pos { return foreign.Pos{File: name, Line: i + 1} }
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" {
			if i+1 < len(lines) {
				if m := execution.FindStringSubmatch(lines[i+1]); m != nil {
					// A new execution of a log that is appended to.
					if len(cur.Events) > 0 || cur.Skipped > 0 {
						execs = append(execs, foreign.Execution{})
						cur = &execs[len(execs)-1]
					}
					cur.Label = m[1]
					i++
				}
			}
			continue // a blank line between events
		}
		host, wall, clockText, err := clockLine(line)
		if err != nil {
			ps.Add(pos(i), foreign.ReasonBadClock, "want a clock line, host {clock}: %v", err)
			cur.Skipped++
			continue
		}
		if i+1 >= len(lines) {
			ps.Add(pos(i), foreign.ReasonTruncated, "the log ends after the clock line of an event, without its message: a cut event")
			cur.Skipped++
			break
		}
		entries, err := foreign.ParseClock(clockText)
		if err != nil {
			ps.Add(pos(i), foreign.ReasonBadClock, "clock %s: %v", strconv.Quote(clockText), err)
			cur.Skipped++
			i++ // its message goes with it
			continue
		}
		msg := lines[i+1]
		ev := foreign.Event{Host: host, Clock: entries, Wall: wall, At: pos(i + 1), Clock0: pos(i)}
		if m := priority.FindStringSubmatch(msg); m != nil {
			ev.Fields = []trace.Field{{Name: "priority", Value: m[1]}}
			msg = msg[len(m[0]):]
		}
		ev.Text = msg
		cur.Events = append(cur.Events, ev)
		i++
	}
	return execs
}

// clockLine splits a clock line, "[wall ]host {clock}", into its parts.
func clockLine(line string) (host string, wall int64, clock string, err error) {
	brace := strings.IndexByte(line, '{')
	if brace < 0 {
		return "", 0, "", fmt.Errorf("no clock in %s", strconv.Quote(line))
	}
	clock = strings.TrimSpace(line[brace:])
	words := strings.Fields(line[:brace])
	switch len(words) {
	case 1:
		return words[0], 0, clock, nil
	case 2:
		if ns, err := strconv.ParseInt(words[0], 10, 64); err == nil && ns >= 0 {
			return words[1], ns, clock, nil
		}
	}
	return "", 0, "", fmt.Errorf("%s before the clock: want a host name, or a timestamp (ns) and a host name", strconv.Quote(line[:brace]))
}

package shiviz

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/foreign"
)

// ExportRegex is the parser regex of the files Write writes: GoVector's,
// an event as "host {clock}" and its text on the next line.
const ExportRegex = `(?<host>\S*) (?<clock>{.*})\n(?<event>.*)`

// ExportSeparator splits the executions of a file of several runs; each is
// named by the line that starts it, "=== run 2: bully ===" (or, for a run
// imported from an execution of a log, by that execution's label).
const ExportSeparator = `^=== (?<trace>.*) ===$`

// separatorLine is a line the separator would take for the start of an
// execution; an event text that looks so is written with a space before.
var separatorLine = regexp.MustCompile(`^=== .* ===$`)

// Exporter writes a ShiViz file of the runs.
var Exporter = foreign.Exporter{
	Name:    "shiviz",
	Summary: "one file ShiViz opens as it is: the regex on line 1, one execution per run",
	File:    Write,
}

// Write writes runs as one ShiViz file.
func Write(w io.Writer, runs []foreign.Exported, _ foreign.ExportOptions) error {
	bw := bufio.NewWriter(w)
	sep := ""
	if len(runs) > 1 {
		sep = ExportSeparator
	}
	fmt.Fprintf(bw, "%s\n%s\n", ExportRegex, sep)
	for _, r := range runs {
		if len(runs) > 1 {
			fmt.Fprintf(bw, "=== run %d: %s ===\n", r.Run.ID, label(r.Run))
		}
		for i := range r.Events {
			ev := &r.Events[i]
			text := r.TextOf(ev)
			if len(runs) > 1 && separatorLine.MatchString(text) {
				text = " " + text
			}
			fmt.Fprintf(bw, "%s %s\n%s\n", r.Hosts[ev.Proc], foreign.ClockText(foreign.Clock(ev, r.Hosts)), text)
		}
	}
	return bw.Flush()
}

// label names a run in its execution's separator line: by the label of
// the execution it was imported from, else by its algorithm.
func label(r trace.Run) string {
	var p struct {
		Execution string `json:"execution"`
	}
	json.Unmarshal(r.Params, &p) // params without one leave it empty
	s := strings.Join(strings.Fields(p.Execution), " ")
	if s == "" {
		s = r.Algorithm
	}
	return s
}

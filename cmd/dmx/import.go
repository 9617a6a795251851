package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/foreign"
	"github.com/dmxlab/dmx/trace/format"
)

// newImportCmd is dmx import: logs of other programs into a trace.
func newImportCmd() *cobra.Command {
	var out, regex, separator, rulesFile, timeField, timeFormat, algorithm string
	var rules []string
	var lenient, dmxText, cut bool
	cmd := &cobra.Command{
		Use:   "import FORMAT FILE... -o TRACE",
		Short: "Turn logs of other programs (GoVector, ShiViz) into a trace dmx checks",
		Long:  importLong(),
		Example: `  dmx import govector p1-Log.txt p2-Log.txt -o run.db
  dmx import shiviz chord.log --regex '(?<host>\S*) (?<clock>{.*})\n(?<event>.*)' -o chord.db
  dmx import shiviz shiviz.log --rules lock.rules -o lock.db && dmx check lock.db
  dmx import shiviz broadcast.log --regex '\[(?<date>[^\]]+)\] (?<host>\w+) (?<clock>{.*}) (?<event>.*)' --time-format '01/02/2006 15:04:05.000' -o b.db
  dmx import govector excerpt/*-Log.txt --rules lock.rules --cut -o excerpt.db
  dmx export shiviz run.db -o run.log && dmx import shiviz run.log --dmx -o again.db`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			imp := format.Importer(args[0])
			if imp == nil {
				return &exitError{exitUsage, fmt.Errorf("import: no format %q (formats: %s)", args[0], strings.Join(format.ImporterNames(), ", "))}
			}
			if out == "" {
				return &exitError{exitUsage, fmt.Errorf("import: -o TRACE is required")}
			}
			for _, in := range append(args[1:], rulesFile) {
				if in != "" && sameFile(out, in) {
					return &exitError{exitUsage, fmt.Errorf("the trace (-o) %s is also the input %s: dmx does not write over its input; choose another name", out, in)}
				}
			}
			if separator != "" && regex == "" {
				return &exitError{exitUsage, fmt.Errorf("import: --separator goes with --regex (a ShiViz file has its separator on line 2)")}
			}
			opt := foreign.ImportOptions{
				ParseOptions: foreign.ParseOptions{Regex: regex, Separator: separator},
				Options:      foreign.Options{Lenient: lenient, ToolVersion: toolVersion(), Cut: cut},
				TimeField:    timeField, TimeFormat: timeFormat, Algorithm: algorithm, DMXText: dmxText,
			}
			if algorithm != "" && registry.Lookup(algorithm) == nil {
				return &exitError{exitUsage, fmt.Errorf("import: --algorithm %q: no such algorithm (dmx list names them)", algorithm)}
			}
			for _, r := range rules {
				rule, err := foreign.ParseRule(r, "--rule")
				if err != nil {
					return &exitError{exitUsage, err}
				}
				opt.Rules = append(opt.Rules, rule)
			}
			if rulesFile != "" {
				data, err := trace.ReadInput(rulesFile, trace.MaxScenarioBytes)
				if err != nil {
					return &exitError{exitUsage, err}
				}
				rs, err := foreign.ParseRules(rulesFile, data)
				if err != nil {
					return &exitError{exitUsage, err}
				}
				opt.Rules = append(opt.Rules, rs...)
			}
			opt.Writing = func(write func() error) error { return guardOf(cmd).hold("writing the trace "+out, write) }
			res, err := foreign.Import(*imp, args[1:], out, opt)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			for _, n := range res.Notes {
				fmt.Fprintf(cmd.ErrOrStderr(), "dmx import: %s\n", n)
			}
			w := cmd.OutOrStdout()
			printImported(w, cmd.ErrOrStderr(), res)
			fmt.Fprintf(w, "trace: %s\nlook further:\n  dmx check %s\n  dmx stats %s\n", out, out, out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "the trace to add the runs to (created if missing)")
	cmd.Flags().StringVar(&regex, "regex", "", "shiviz: the parser regex of a bare log (without it, the file's line 1 is the regex)")
	cmd.Flags().StringVar(&separator, "separator", "", "shiviz: the execution separator regex of a bare log")
	cmd.Flags().StringArrayVar(&rules, "rule", nil, "a rule KIND=REGEX mapping event texts to a kind (repeatable; before --rules)")
	cmd.Flags().StringVar(&rulesFile, "rules", "", "a file of rules, KIND=REGEX one a line")
	cmd.Flags().BoolVar(&dmxText, "dmx", false, "read back the kinds of a log that dmx export wrote (applied by itself to a log that is plainly dmx's)")
	cmd.Flags().BoolVar(&cut, "cut", false, "the log is an excerpt of a longer one: its runs are incomplete (no ok verdicts; what is open at its end is unknown)")
	cmd.Flags().StringVar(&timeField, "time-field", "", "the field (named group of the regex) holding each event's wall time (default: timestamp, date or time)")
	cmd.Flags().StringVar(&timeFormat, "time-format", "", "how to read the time field: a Go layout (\"01/02/2006 15:04:05.000\") or unix, unix-ms, unix-us, unix-ns (default: inferred, and said)")
	cmd.Flags().StringVar(&algorithm, "algorithm", "", "the algorithm the logged program runs, as dmx list names it: its runs are checked as that algorithm's")
	cmd.Flags().BoolVar(&lenient, "lenient", false, "import what can be read, skip what breaks the rules and count it")
	return cmd
}

// printImported says what an import made: a line per run on w, and on ew
// the problems skipped under --lenient (the first ten, and their count).
func printImported(w, ew io.Writer, res foreign.Imported) {
	for _, r := range res.Runs {
		label := ""
		if r.Label != "" {
			label = fmt.Sprintf(" (%s)", r.Label)
		}
		fmt.Fprintf(w, "run %d%s: %s, %s, %s\n", r.ID, label, counted(r.Events, "event"), counted(r.Hosts, "process"), counted(r.Messages, "message"))
	}
	if len(res.Problems) == 0 {
		return
	}
	for i, p := range res.Problems {
		if i == 10 {
			fmt.Fprintf(ew, "dmx import: ... and %d more\n", len(res.Problems)-10)
			break
		}
		fmt.Fprintf(ew, "dmx import: skipped: %v\n", p)
	}
	fmt.Fprintf(ew, "dmx import: skipped %s (--lenient): %s\n", counted(len(res.Problems), "problem"), res.Summary)
}

// importLong is the long help of dmx import: what it does, in full.
func importLong() string {
	return `import reads the logs of a program dmx did not run and adds one run per
execution of the log to TRACE (created if missing), so that check, stats
and sql work on them. Formats:

` + importerList() + `
Hosts become processes (numbered in the order they first appear, their
names kept in the procs table) and vector clocks are kept. Messages are
rebuilt from the clocks: an event whose clock shows host X at t, more than
the event before it did, merged X's event t; of those it merged, the ones
another merged event already knew came along with it, and each other one is
a message to it. So a receive is matched with the send whose clock it
merged (the last of several sends of the same host: each send's clock holds
the ones before), one send merged by several hosts is a message to each, and
an event that merged several clocks at once receives several messages.
Lamport clocks are derived from happens-before.

ShiViz's validity rules are checked, each problem named by file and line: a
host's own clock entry starts at 1 and rises by exactly 1 (events are
ordered by it), no entry goes back, clocks name only hosts of the log and
events they logged, an event's clock dominates the clock of every event it
merged. Any problem fails the import (exit 2); --lenient imports what can
be read and counts what it skipped and why.

Events are internal, send or receive by their clocks, unless a rule maps
their text to a kind. A rule is KIND=REGEX (Go syntax, (?<name>...) for a
named group), the first that matches wins, and named groups give what the
kind needs: resource (cs_request, cs_enter, cs_exit, wait; default "cs"),
leader (a host name) and term (leader, election_start), waiting_for (hosts,
for wait), type and msg (send and receive: a message id pairs a send with its
receive when the clocks cannot, e.g. a send nobody received).
Kinds: ` + strings.Join(foreign.RuleKinds(), ", ") + `.

A lock log:

  --rule 'cs_request=^want lock (?<resource>\w+)'
  --rule 'cs_enter=^got lock (?<resource>\w+)'
  --rule 'cs_exit=^released lock (?<resource>\w+)'

an election log:

  --rule 'election_start=^starting election (?<term>\d+)'
  --rule 'leader=^(?<leader>\S+) is the leader of term (?<term>\d+)'

or the same rules one a line in a file given with --rules (# comments).
A Raft-like log: step_down (a leader event naming no leader: the process
stops leading) and the term a message carries (the term group of a send or
receive rule), with step_down=<higher-term> to say that a leader steps down
on receiving a message of a higher term, as Raft's do, whether or not the
log says so:

  --rule 'leader=^became leader of term (?<term>\d+)(?<leader>)'
  --rule 'step_down=^stepping down in term (?<term>\d+)'
  --rule 'receive=^got (?<type>\w+) term=(?<term>\d+)'
  --rule 'step_down=<higher-term>'

--dmx applies the rules that read back what dmx export writes; a log that
is plainly dmx's (every host's first event is its start line) gets them
without it, and its runs are checked as the algorithm it names (the same
checks and validity rule as the run it was exported from). --algorithm
names the algorithm of another program's log.

Wall times: GoVector's clock lines may start with one (ns). A ShiViz
regex's group named timestamp, date or time (or --time-field NAME) gives
each event its wall time, read with --time-format (a Go layout such as
"01/02/2006 15:04:05.000", or unix, unix-ms, unix-us, unix-ns) or a layout
inferred from the values (the import says which; a time without a zone is
UTC). A log without wall times is checked causally: what only wall time
can order (a crash against another's entry) is unknown.

--cut says the log is an excerpt of a longer one: its runs are incomplete,
so no check says ok of them, and a request or an election still open at
its end is unknown rather than violated.

A ShiViz regex is JavaScript's, read by Go's regexp: named groups, classes
and escapes carry over; lookaround and back-references are refused with
the reason. A finding of dmx check on an imported trace names the log's
own lines.`
}

// counted formats n things: "1 event", "2 events", "3 processes".
func counted(n int, thing string) string {
	switch {
	case n == 1:
		return "1 " + thing
	case strings.HasSuffix(thing, "s"):
		return fmt.Sprintf("%d %ses", n, thing)
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func importerList() string {
	var b strings.Builder
	for _, imp := range format.Importers {
		fmt.Fprintf(&b, "  %-9s %s\n", imp.Name, imp.Summary)
	}
	return b.String()
}

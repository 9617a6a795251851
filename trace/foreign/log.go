package foreign

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// Log is what a format's parser read: one or more executions, each of
// which becomes a run.
type Log struct {
	Format     string            // the format's name ("shiviz", "govector")
	Files      []string          // the files read, in order
	Params     map[string]string // what the parser was told (regex, separator), for the runs' params
	Executions []Execution
	// Notes say what the parser did that loses nothing but the user
	// should know (text between events that the regex does not match,
	// skipped as ShiViz skips it), for the import to print.
	Notes []string
}

// Execution is one execution of a log.
type Execution struct {
	Label   string  // its name in the log (a ShiViz separator's "trace" group); "" if none
	Events  []Event // in the order of the log
	Skipped int     // problems the parser found in it (text it could not read)
	// Unmatched counts the lines of text in it that the regex does not
	// match: not events, skipped as ShiViz skips them (a TLC trace's
	// other variables, a preamble).
	Unmatched int
}

// Event is an event of a foreign log as a parser read it.
type Event struct {
	Host   string
	Clock  []Entry       // its vector clock, in the order the log wrote it
	Text   string        // what the log says happened
	Fields []trace.Field // the log's other named fields
	Wall   int64         // wall time in ns since the Unix epoch; 0 if the log has none
	At     Pos           // where its text is
	Clock0 Pos           // where its clock is (the same line in one-line formats)
}

// Entry is one entry of a vector clock: how many events of Host the event
// knows of.
type Entry struct {
	Host  string
	Value uint64
}

// BOM is the UTF-8 byte-order mark some editors write at the start of a
// text file. The parsers skip it: it is not part of the log's first line.
const BOM = "\ufeff"

// Pos is a place in an input file.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File // the input as a whole
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Problem is something wrong with the input: an error of the import, or
// under Lenient something skipped, counted by its Reason.
type Problem struct {
	At     Pos
	Reason string // a short name for the kind of problem: "unknown host", ...
	Msg    string // what is wrong, in a sentence
}

func (p Problem) Error() string { return p.At.String() + ": " + p.Msg }

// Problems collects the problems of one import.
type Problems struct {
	list []Problem
}

// Add records a problem at pos.
func (ps *Problems) Add(pos Pos, reason, format string, args ...any) {
	ps.list = append(ps.list, Problem{At: pos, Reason: reason, Msg: fmt.Sprintf(format, args...)})
}

// Len returns the number of problems recorded.
func (ps *Problems) Len() int { return len(ps.list) }

// List returns the problems in the order they were found.
func (ps *Problems) List() []Problem { return ps.list }

// maxShown bounds the problems an error lists one by one.
const maxShown = 10

// Err returns the problems as one error (nil if there are none): the first
// ones each on its line, then how many more there are.
func (ps *Problems) Err() error {
	if len(ps.list) == 0 {
		return nil
	}
	var errs []error
	for i, p := range ps.list {
		if i == maxShown {
			errs = append(errs, fmt.Errorf("... and %s (%s); --lenient imports what it can", plural.Count(len(ps.list)-maxShown, "more problem"), ps.Summary()))
			break
		}
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// Summary counts the problems by reason, most frequent first: "unknown
// host in a clock (2), truncated event (1)".
func (ps *Problems) Summary() string {
	count := map[string]int{}
	for _, p := range ps.list {
		count[p.Reason]++
	}
	reasons := make([]string, 0, len(count))
	for r := range count {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if count[reasons[i]] != count[reasons[j]] {
			return count[reasons[i]] > count[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%s (%d)", r, count[r])
	}
	return strings.Join(parts, ", ")
}

// The reasons of problems, as Summary counts them.
const (
	ReasonUnmatchedText   = "text the regex does not match"
	ReasonTruncated       = "truncated event"
	ReasonBadClock        = "unreadable clock"
	ReasonNoHost          = "event without a host"
	ReasonNoOwnEntry      = "clock without its own host"
	ReasonClockStart      = "clock not starting at 1"
	ReasonClockJump       = "clock not rising by 1"
	ReasonClockBackwards  = "clock going backwards"
	ReasonUnknownHost     = "unknown host in a clock"
	ReasonUnmatchedRecv   = "unmatched receive"
	ReasonNotDominating   = "receive not dominating its send"
	ReasonCycle           = "causal cycle"
	ReasonRule            = "rule not applicable"
	ReasonDuplicateMsg    = "message id sent twice"
	ReasonNoExecutions    = "separator matching nothing"
	ReasonClockMismatched = "clock not matching happens-before"
)

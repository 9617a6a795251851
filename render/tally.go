package render

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dmxlab/dmx/analyze/tally"
	"github.com/dmxlab/dmx/trace/plural"
)

// TallyFormats are the formats of Tally, as dmx check's.
var TallyFormats = []string{"table", "json", "junit"}

// Sweep is a tally with what it is the tally of.
type Sweep struct {
	// Title says what was swept ("ricart-agrawala, seeds 1..1000,
	// nemesis random"), or which traces were summed.
	Title  string   `json:"title"`
	Traces []string `json:"traces"`
	tally.Tally
}

// Tally writes s in format: table (the checks' table, the failing seeds'
// rerun lines, the fault kinds' table, the verdict), json (the tally
// whole) or junit (one test case per check: a failure when some run
// violated it, its message the rate and its text the failing seeds'
// rerun lines).
func Tally(w io.Writer, format string, s Sweep) error {
	switch format {
	case "table":
		return tallyTable(w, s)
	case "json":
		return JSON(w, s)
	case "junit":
		return tallyJUnit(w, s)
	}
	return unknownFormat(format, TallyFormats)
}

// Percent formats a proportion for a table: 0%, 0.4%, 12%, 100%.
func Percent(p float64) string {
	switch {
	case p == 0:
		return "0%"
	case p < 0.1:
		return strconv.FormatFloat(100*p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(100*p, 'f', 0, 64) + "%"
}

// RateText is "1.2% (0.6%-2.3%)": a check's rate and its 95% interval.
func RateText(c tally.Check) string {
	if c.Judged() == 0 {
		return "-"
	}
	return fmt.Sprintf("%s (%s-%s)", Percent(c.Rate), Percent(c.Low), Percent(c.High))
}

func tallyTable(w io.Writer, s Sweep) error {
	if s.Title != "" {
		fmt.Fprintf(w, "sweep: %s: %s", s.Title, plural.Count(s.Runs, "run"))
		if s.Incomplete > 0 {
			fmt.Fprintf(w, " (%d incomplete)", s.Incomplete)
		}
		fmt.Fprintln(w)
	}
	var rows [][]string
	for _, c := range s.Checks {
		first, smallest := "-", "-"
		if c.First != nil {
			first = strconv.FormatUint(c.First.Seed, 10)
			smallest = fmt.Sprintf("%d (%s)", c.Smallest.Seed, plural.Count(int(c.Smallest.Events), "event"))
		}
		rows = append(rows, []string{c.Check, strconv.Itoa(c.OK), strconv.Itoa(c.Violated), strconv.Itoa(c.Unknown),
			strconv.Itoa(c.NotApplicable + c.Skipped), RateText(c), first, smallest})
	}
	if err := Table(w, []string{"check", "ok", "violated", "inconclusive", "n/a", "violated: rate (95% CI)", "first seed", "smallest seed"}, rows); err != nil {
		return err
	}
	// Each failing run named by the table once: its rerun line, and the
	// checks it is the first or the smallest failing run of.
	type named struct {
		f    *tally.Failing
		what []string
	}
	var runs []*named
	name := func(f *tally.Failing, what string) {
		for _, n := range runs {
			if n.f.File == f.File && n.f.Run == f.Run {
				n.what = append(n.what, what)
				return
			}
		}
		runs = append(runs, &named{f, []string{what}})
	}
	for _, c := range s.Checks {
		if c.First != nil {
			name(c.First, "first "+c.Check)
			name(c.Smallest, "smallest "+c.Check)
		}
	}
	if len(runs) > 0 {
		fmt.Fprintln(w, "failing seeds:")
	}
	for _, n := range runs {
		fmt.Fprintf(w, "  seed %d (%s run %d, %s): %s\n    %s\n", n.f.Seed, n.f.File, n.f.Run, plural.Count(int(n.f.Events), "event"),
			strings.Join(n.what, ", "), n.f.Rerun)
	}
	for _, c := range s.Checks {
		if c.First != nil {
			fmt.Fprintf(w, "%s (seed %d): %s\n", c.Check, c.First.Seed, clip(c.First.Finding, MaxFinding))
		}
	}
	if len(s.Kinds) > 0 && len(s.Kinds[0].Checks) > 0 && !(len(s.Kinds) == 1 && s.Kinds[0].Kind == tally.None) {
		header := []string{"fault kind", "runs"}
		for _, kc := range s.Kinds[0].Checks {
			header = append(header, kc.Check+" violated")
		}
		rows = rows[:0]
		for _, k := range s.Kinds {
			row := []string{k.Kind, strconv.Itoa(k.Runs)}
			for _, kc := range k.Checks {
				row = append(row, fmt.Sprintf("%d/%d (%s)", kc.Violated, kc.Judged, Percent(kc.Rate)))
			}
			rows = append(rows, row)
		}
		fmt.Fprintln(w, "per fault kind (the runs each kind was injected into; none: the runs without faults):")
		if err := Table(w, header, rows); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "verdict: %s\n", s.Verdict)
	return err
}

func tallyJUnit(w io.Writer, s Sweep) error {
	name := "dmx sweep"
	if s.Title != "" {
		name += ": " + s.Title
	}
	suite := junitSuite{Name: name}
	for _, c := range s.Checks {
		tc := junitCase{Name: c.Check, Classname: name}
		msg := fmt.Sprintf("violated in %d of %s (%s)", c.Violated, plural.Count(c.Judged(), "judged run"), RateText(c))
		switch {
		case c.Violated > 0:
			var b strings.Builder
			fmt.Fprintf(&b, "first failing seed %d (%s run %d): %s\n%s\n", c.First.Seed, c.First.File, c.First.Run, c.First.Rerun, c.First.Finding)
			if *c.Smallest != *c.First {
				fmt.Fprintf(&b, "smallest failing seed %d (%s): %s\n%s\n", c.Smallest.Seed, plural.Count(int(c.Smallest.Events), "event"), c.Smallest.Rerun, c.Smallest.Finding)
			}
			tc.Failure = &junitFailure{Message: msg, Text: b.String()}
			suite.Failures++
		case c.Unknown > 0:
			tc.Skipped = &junitFailure{Message: fmt.Sprintf("inconclusive in %d of %s", c.Unknown, plural.Count(c.OK+c.Unknown, "run"))}
			suite.Skipped++
		case c.OK == 0:
			tc.Skipped = &junitFailure{Message: "not applicable: no run had anything it judges"}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, tc)
		suite.Tests++
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{suite}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

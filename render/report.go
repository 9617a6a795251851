package render

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/trace/plural"
)

// Report is the checks of one run of one trace file, as dmx check and dmx
// run report them. Its JSON form is the stable one of dmx check --format
// json (see Reports).
type Report struct {
	File   string `json:"file"`
	Run    int64  `json:"run"`
	Algo   string `json:"algorithm"`
	Mode   string `json:"mode"`
	Status string `json:"status"`
	// Incomplete: the run did not end normally, or the trace does not
	// hold all of it (interrupted, cut short, its recorder killed);
	// Status says how.
	Incomplete bool             `json:"incomplete,omitempty"`
	Verdict    analyze.Verdict  `json:"verdict"`
	Results    []analyze.Result `json:"results"`
}

// ReportFormats are the formats Reports writes, the default first.
var ReportFormats = []string{"table", "json", "junit"}

// Verdict is the verdict of reps taken together: violated if one run's is,
// else unknown if one run's is, else not applicable if one run's checks
// judged nothing (analyze.Summarize: a run that shows nothing is no
// evidence that all is well), else ok. No reports: not applicable.
func Verdict(reps []Report) analyze.Verdict {
	rank := map[analyze.Verdict]int{analyze.OK: 1, analyze.NotApplicable: 2, analyze.Skipped: 2, analyze.Unknown: 3, analyze.Violated: 4}
	out := analyze.NotApplicable
	if len(reps) > 0 {
		out = analyze.OK
	}
	for _, r := range reps {
		v := r.Verdict
		if v == analyze.Skipped {
			v = analyze.NotApplicable
		}
		if rank[v] > rank[out] {
			out = v
		}
	}
	return out
}

// Reports writes reps in format, one of ReportFormats: a table then the
// findings (at most maxShown per check), a summary of each trace file and
// their total when there are several, and the overall verdict; JSON,
// {"verdict": V, "runs": [REPORT...], "traces": [TRACESUMMARY...]}; or
// JUnit XML. The table is a summary that stays readable whatever the size
// of the run (one of 1000 processes has notes of 100,000 characters): a
// note longer than MaxNote is cut in its cell and shown below the table,
// and there, as findings are, cut at MaxFinding; JSON and JUnit have them
// whole.
func Reports(w io.Writer, format string, reps []Report, maxShown int) error {
	switch format {
	case "table":
		return reportTable(w, reps, maxShown)
	case "json":
		return reportJSON(w, reps)
	case "junit":
		return reportJUnit(w, reps)
	}
	return unknownFormat(format, ReportFormats)
}

func unknownFormat(format string, known []string) error {
	return fmt.Errorf("format %q: want one of %s", format, strings.Join(known, ", "))
}

// reportJSON writes reps, a summary of each trace file and their overall
// verdict as JSON.
func reportJSON(w io.Writer, reps []Report) error {
	return JSON(w, struct {
		Verdict analyze.Verdict `json:"verdict"`
		Runs    []Report        `json:"runs"`
		Traces  []TraceSummary  `json:"traces"`
	}{Verdict(reps), reps, Summaries(reps)})
}

// TraceSummary is what the checks of one trace file concluded: the verdict
// of its runs taken together, how many runs, and how many checks ended in
// each verdict (the checks that failed to run count as unknown).
type TraceSummary struct {
	File    string                  `json:"file"`
	Verdict analyze.Verdict         `json:"verdict"`
	Runs    int                     `json:"runs"`
	Checks  map[analyze.Verdict]int `json:"checks"`
	which   map[analyze.Verdict][]string
}

// Summaries returns a summary of each trace file of reps, in the order the
// files first appear.
func Summaries(reps []Report) []TraceSummary {
	var out []TraceSummary
	index := make(map[string]int)
	var files [][]Report
	for _, r := range reps {
		i, ok := index[r.File]
		if !ok {
			i = len(files)
			index[r.File] = i
			files = append(files, nil)
		}
		files[i] = append(files[i], r)
	}
	for _, rs := range files {
		s := TraceSummary{File: rs[0].File, Verdict: Verdict(rs), Runs: len(rs), Checks: make(map[analyze.Verdict]int), which: make(map[analyze.Verdict][]string)}
		for _, r := range rs {
			for _, res := range r.Results {
				v := res.Verdict
				if res.Err != nil {
					v = analyze.Unknown
				}
				s.Checks[v]++
				if !slices.Contains(s.which[v], res.Check) {
					s.which[v] = append(s.which[v], res.Check)
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// line formats the summary: "3 runs, 15 checks: 12 ok, 2 violated
// (mutex-causal, liveness), 1 skipped (mutex-realtime)".
func (s TraceSummary) line() string {
	total := 0
	var parts []string
	for _, v := range []analyze.Verdict{analyze.OK, analyze.Violated, analyze.Unknown, analyze.NotApplicable, analyze.Skipped} {
		n := s.Checks[v]
		total += n
		if n == 0 {
			continue
		}
		part := fmt.Sprintf("%d %s", n, v)
		if v != analyze.OK {
			part += " (" + strings.Join(s.which[v], ", ") + ")"
		}
		parts = append(parts, part)
	}
	return fmt.Sprintf("%s, %s: %s", plural.Count(s.Runs, "run"), plural.Count(total, "check"), strings.Join(parts, ", "))
}

// Bounds of what the table shows of one note in its cell and of one note
// or finding below it, in characters.
const (
	MaxNote    = 72
	MaxFinding = 500
)

// reportTable writes one row per check of each run (the runs named by a
// first column when there are several), then each check's findings, at
// most maxShown of them (JSON shows them all), then, when several trace
// files were checked, a summary line for each and their total, then the
// overall verdict. Long notes and findings are cut, and a line says so.
func reportTable(w io.Writer, reps []Report, maxShown int) error {
	cut := false
	shorten := func(s string, width int) string {
		short := clip(s, width)
		cut = cut || short != s
		return short
	}
	note := func(res analyze.Result) string {
		if res.Err != nil {
			return "error: " + res.Err.Error()
		}
		return res.Note
	}
	multi := len(reps) > 1
	where := func(rep Report) string { return fmt.Sprintf("%s#%d", rep.File, rep.Run) }
	var rows [][]string
	for _, rep := range reps {
		for _, res := range rep.Results {
			row := []string{res.Check, string(res.Verdict), strconv.Itoa(len(res.Findings)), clip(note(res), MaxNote)}
			if multi {
				row = append([]string{where(rep)}, row...)
			}
			rows = append(rows, row)
		}
	}
	header := []string{"check", "verdict", "findings", "note"}
	if multi {
		header = append([]string{"run"}, header...)
	}
	if err := Table(w, header, rows); err != nil {
		return err
	}
	for _, rep := range reps {
		prefix := ""
		if multi {
			prefix = where(rep) + " "
		}
		for _, res := range rep.Results {
			if n := note(res); clip(n, MaxNote) != n {
				fmt.Fprintf(w, "%s%s (note): %s\n", prefix, res.Check, shorten(n, MaxFinding))
			}
			for i, f := range res.Findings {
				if i == maxShown {
					fmt.Fprintf(w, "  ... and %s (--format json shows all)\n", plural.Count(len(res.Findings)-maxShown, "more "+res.Check+" finding"))
					break
				}
				fmt.Fprintf(w, "%s%s: %s\n", prefix, res.Check, shorten(f.Text(), MaxFinding))
			}
		}
	}
	for _, rep := range reps {
		if rep.Incomplete {
			fmt.Fprintf(w, "run %d of %s is incomplete: %s\n", rep.Run, rep.File, rep.Status)
		}
	}
	if cut {
		fmt.Fprintf(w, "(notes and findings cut at %d characters: --format json shows them whole)\n", MaxFinding)
	}
	if sums := Summaries(reps); len(sums) > 1 {
		total := TraceSummary{Checks: make(map[analyze.Verdict]int), which: make(map[analyze.Verdict][]string)}
		for _, s := range sums {
			fmt.Fprintf(w, "%s: %s: %s\n", s.File, s.Verdict, s.line())
			total.Runs += s.Runs
			for v, n := range s.Checks {
				total.Checks[v] += n
				for _, c := range s.which[v] {
					if !slices.Contains(total.which[v], c) {
						total.which[v] = append(total.which[v], c)
					}
				}
			}
		}
		fmt.Fprintf(w, "total: %d traces, %s\n", len(sums), total.line())
	}
	_, err := fmt.Fprintf(w, "verdict: %s\n", Verdict(reps))
	return err
}

// The JUnit XML schema, as CI test-report viewers read it.
type (
	junitSuites struct {
		XMLName xml.Name     `xml:"testsuites"`
		Suites  []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Failure   *junitFailure `xml:"failure,omitempty"`
		Error     *junitFailure `xml:"error,omitempty"`
		Skipped   *junitFailure `xml:"skipped,omitempty"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
)

// reportJUnit writes reps as JUnit XML: one test suite per run, one test
// case per check; a violation is a failure, an unknown or skipped verdict
// is skipped (its message says which), a check that could not run is an
// error.
func reportJUnit(w io.Writer, reps []Report) error {
	var out junitSuites
	for _, rep := range reps {
		name := fmt.Sprintf("%s run %d (%s)", rep.File, rep.Run, rep.Algo)
		s := junitSuite{Name: name}
		for _, res := range rep.Results {
			tc := junitCase{Name: res.Check, Classname: name}
			switch {
			case res.Err != nil:
				tc.Error = &junitFailure{Message: res.Err.Error()}
				s.Errors++
			case res.Verdict == analyze.Violated:
				msgs := make([]string, len(res.Findings))
				for i, f := range res.Findings {
					msgs[i] = f.Text()
				}
				tc.Failure = &junitFailure{Message: plural.Count(len(res.Findings), "finding"), Text: strings.Join(msgs, "\n")}
				s.Failures++
			case res.Verdict == analyze.Unknown, res.Verdict == analyze.Skipped, res.Verdict == analyze.NotApplicable:
				tc.Skipped = &junitFailure{Message: string(res.Verdict) + ": " + res.Note}
				s.Skipped++
			}
			s.Cases = append(s.Cases, tc)
			s.Tests++
		}
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

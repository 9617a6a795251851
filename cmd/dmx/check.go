package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/runner/algo/registry"
	"github.com/dmxlab/dmx/trace"
)

// report is the checks of one run of one trace file.
type report struct {
	File    string           `json:"file"`
	Run     int64            `json:"run"`
	Algo    string           `json:"algorithm"`
	Mode    string           `json:"mode"`
	Status  string           `json:"status"`
	Verdict analyze.Verdict  `json:"verdict"`
	Results []analyze.Result `json:"results"`
}

func newCheckCmd() *cobra.Command {
	var format, only string
	var runID int64
	var maxFindings int
	cmd := &cobra.Command{
		Use:   "check TRACE...",
		Short: "Check properties of recorded runs; the exit code is the verdict",
		Long: `check rebuilds happens-before from each run's program order and
send/receive pairs (recorded clocks are verified, not trusted) and checks:

` + checkList() + `
By default each run gets the checks its algorithm claims (dmx list shows
them) plus clocks; a trace of another program gets every check.
Verdicts: ok, violated (a finding names the events), unknown (e.g. the run
was cut short, so a pending request may still have been granted).
Exit code: 0 all ok, 1 some property violated, 3 inconclusive, 2 bad input.`,
		Example: `  dmx check run.db
  dmx check --format json run.db other.db
  dmx check --checks mutex-causal,liveness --run 2 run.db`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "table", "json", "junit"); err != nil {
				return &exitError{exitUsage, err}
			}
			checks, err := selectChecks(only) // nil: those that apply to each run
			if err != nil {
				return &exitError{exitUsage, err}
			}
			var all []report
			for _, path := range args {
				st, err := trace.Open(path)
				if err != nil {
					return &exitError{exitUsage, err}
				}
				runs, err := st.Runs()
				if err == nil && runID != 0 {
					var r trace.Run
					r, err = st.Run(runID)
					runs = []trace.Run{r}
				}
				if err != nil {
					st.Close()
					return &exitError{exitUsage, fmt.Errorf("%s: %w", path, err)}
				}
				if len(runs) == 0 {
					st.Close()
					return &exitError{exitUsage, fmt.Errorf("%s: the trace holds no runs", path)}
				}
				reps, err := checkRuns(st, runs, checks)
				st.Close()
				if err != nil {
					return &exitError{exitUsage, err}
				}
				all = append(all, reps...)
			}
			return verdictExit(printReports(cmd.OutOrStdout(), format, all, maxFindings))
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: table, json, or junit (JUnit XML for CI test reports)")
	cmd.Flags().StringVar(&only, "checks", "", "comma-separated checks to run (default: all)")
	cmd.Flags().Int64Var(&runID, "run", 0, "check only this run of each trace (default: every run)")
	cmd.Flags().IntVar(&maxFindings, "max-findings", defaultMaxShown, "findings shown per check in table output (json shows all)")
	return cmd
}

// defaultMaxShown is how many findings per check table output shows.
const defaultMaxShown = 10

func checkList() string {
	var b strings.Builder
	for _, c := range analyze.All {
		doc, _, _ := strings.Cut(c.Doc, "\n")
		fmt.Fprintf(&b, "  %-15s %s\n", c.Name, doc)
	}
	return b.String()
}

func selectChecks(only string) ([]*analyze.Check, error) {
	if only == "" {
		return nil, nil
	}
	names := strings.Split(only, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	checks, err := analyze.Select(names)
	if err != nil {
		return nil, fmt.Errorf("--checks: %w", err)
	}
	return checks, nil
}

// checksFor returns the checks that apply to run: those its algorithm
// claims (dmx list shows them) plus clocks, or every check for a trace dmx
// did not record or an algorithm it does not know.
func checksFor(run trace.Run) ([]*analyze.Check, error) {
	spec := registry.Lookup(run.Algorithm)
	if spec == nil || run.Mode == "import" {
		return analyze.All, nil
	}
	checks, err := analyze.For(spec.Properties)
	if err != nil {
		return nil, fmt.Errorf("%s's properties: %w", spec.Name, err)
	}
	return checks, nil
}

// checkRuns runs checks (nil: those that apply to each run) over runs of
// the open trace st.
func checkRuns(st *trace.Store, runs []trace.Run, only []*analyze.Check) ([]report, error) {
	var out []report
	for _, run := range runs {
		checks := only
		if checks == nil {
			var err error
			if checks, err = checksFor(run); err != nil {
				return nil, err
			}
		}
		r, err := st.Events(run.ID)
		if err != nil {
			return nil, fmt.Errorf("%s: run %d: %w", st.Path(), run.ID, err)
		}
		results, err := analyze.Evaluate(run, r, checks)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: run %d: %w", st.Path(), run.ID, err)
		}
		out = append(out, report{File: st.Path(), Run: run.ID, Algo: run.Algorithm, Mode: run.Mode, Status: run.Status,
			Verdict: analyze.Summarize(results), Results: results})
	}
	return out, nil
}

// printReports prints reports and returns the exit code of their verdict.
func printReports(w io.Writer, format string, reps []report, maxShown int) int {
	var vs []analyze.Verdict
	for _, r := range reps {
		vs = append(vs, r.Verdict)
	}
	overall := worst(vs)
	if format == "junit" {
		writeJUnit(w, reps)
		return exitCode(overall)
	}
	if format == "json" {
		render.JSON(w, struct {
			Verdict analyze.Verdict `json:"verdict"`
			Runs    []report        `json:"runs"`
		}{overall, reps})
		return exitCode(overall)
	}
	multi := len(reps) > 1
	var rows [][]string
	for _, rep := range reps {
		for _, res := range rep.Results {
			row := []string{res.Check, string(res.Verdict), strconv.Itoa(len(res.Findings)), res.Note}
			if res.Err != nil {
				row[3] = "error: " + res.Err.Error()
			}
			if multi {
				row = append([]string{fmt.Sprintf("%s#%d", rep.File, rep.Run)}, row...)
			}
			rows = append(rows, row)
		}
	}
	header := []string{"check", "verdict", "findings", "note"}
	if multi {
		header = append([]string{"run"}, header...)
	}
	render.Table(w, header, rows)
	for _, rep := range reps {
		for _, res := range rep.Results {
			for i, f := range res.Findings {
				if i == maxShown {
					fmt.Fprintf(w, "  ... and %d more %s findings (--format json shows all)\n", len(res.Findings)-maxShown, res.Check)
					break
				}
				where := ""
				if multi {
					where = fmt.Sprintf("%s#%d ", rep.File, rep.Run)
				}
				fmt.Fprintf(w, "%s%s: %s\n", where, res.Check, f.Message)
			}
		}
	}
	fmt.Fprintf(w, "verdict: %s\n", overall)
	return exitCode(overall)
}

func worst(vs []analyze.Verdict) analyze.Verdict {
	out := analyze.Verdict("ok")
	for _, v := range vs {
		switch v {
		case "violated":
			out = v
		case "unknown":
			if out != "violated" {
				out = v
			}
		}
	}
	return out
}

func exitCode(v analyze.Verdict) int {
	switch v {
	case "violated":
		return exitViolated
	case "unknown":
		return exitInconclusive
	}
	return exitOK
}

// writeJUnit writes the reports as JUnit XML: one test suite per run, one
// test case per check; a violation is a failure, an unknown verdict is
// skipped, a check that could not run is an error.
func writeJUnit(w io.Writer, reps []report) {
	type failure struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Error     *failure `xml:"error,omitempty"`
		Skipped   *failure `xml:"skipped,omitempty"`
	}
	type suite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Errors   int        `xml:"errors,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type suites struct {
		XMLName xml.Name `xml:"testsuites"`
		Suites  []suite  `xml:"testsuite"`
	}
	var out suites
	for _, rep := range reps {
		name := fmt.Sprintf("%s run %d (%s)", rep.File, rep.Run, rep.Algo)
		s := suite{Name: name}
		for _, res := range rep.Results {
			tc := testcase{Name: res.Check, Classname: name}
			var msgs []string
			for _, f := range res.Findings {
				msgs = append(msgs, f.Message)
			}
			text := strings.Join(msgs, "\n")
			switch {
			case res.Err != nil:
				tc.Error = &failure{Message: res.Err.Error()}
				s.Errors++
			case res.Verdict == analyze.Violated:
				tc.Failure = &failure{Message: fmt.Sprintf("%d findings", len(res.Findings)), Text: text}
				s.Failures++
			case res.Verdict == analyze.Unknown:
				tc.Skipped = &failure{Message: res.Note}
				s.Skipped++
			}
			s.Cases = append(s.Cases, tc)
			s.Tests++
		}
		out.Suites = append(out.Suites, s)
	}
	io.WriteString(w, xml.Header)
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	enc.Encode(out)
	io.WriteString(w, "\n")
}

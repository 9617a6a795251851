package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/analyze/stats"
	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/render/htmlreport"
	"github.com/dmxlab/dmx/render/plot"
	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/sweep"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// defaultReportPictures is how many findings of a run the report draws.
const defaultReportPictures = 12

func newReportCmd() *cobra.Command {
	var out string
	var pictures int
	var open openFlags
	cmd := &cobra.Command{
		Use:   "report TRACE... -o DIR",
		Short: "Write one self-contained HTML file: verdicts, findings with their pictures, plots, stats",
		Long: `report checks each run of the traces (as dmx check does) and writes
DIR/report.html, one file that needs nothing else (no network, no other
file: what CI publishes as one artifact). For each run it shows the verdict
table of the checks, each finding with its space-time picture (the window
of the finding, where it closes; a deadlock with its wait-for graph), the
picture of the faults or of the whole run when nothing was found, the
plots of critical sections per second, waiting time, who leads and message
latency over wall time, the measures beside the seeds' figures, and the
command that runs it again. dmx check --report DIR writes the same file
in a CI job.

Exit code: the verdict, as dmx check's (0 ok, 1 violated, 3 inconclusive);
2 bad input.`,
		Example: `  dmx report run.db -o report/
  dmx report a.db b.db -o ci-report --pictures 4`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return &exitError{exitUsage, errors.New("no output directory: give -o DIR (the report is DIR/report.html)")}
			}
			if pictures < 0 {
				return &exitError{exitUsage, fmt.Errorf("--pictures %d: want 0 or more", pictures)}
			}
			reps, runs, sweep, err := reportParts(&open, args, pictures)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			file, err := writeReport(out, args, reps, runs, sweep)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", file, reportSummary(reps, runs))
			return verdictExit(exitCode(render.Verdict(reps)))
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "the directory to write report.html into (made if missing)")
	cmd.Flags().IntVar(&pictures, "pictures", defaultReportPictures, "findings of a run drawn (the others are listed with the command that draws them)")
	open.registerRun(cmd, "report only this run of each trace (default: every run)")
	return cmd
}

// reportSummary says in a few words what a report holds.
func reportSummary(reps []render.Report, runs []htmlreport.Run) string {
	findings, drawn := 0, 0
	for _, r := range runs {
		findings += len(r.Findings)
		for _, f := range r.Findings {
			if f.Picture != nil {
				drawn++
			}
		}
	}
	return fmt.Sprintf("verdict %s, %s, %s (%d drawn)", render.Verdict(reps), plural.Count(len(runs), "run"), plural.Count(findings, "finding"), drawn)
}

// writeReport writes the report of runs into dir/report.html, refusing to
// write over any of the traces read; it returns the file's path.
func writeReport(dir string, traces []string, reps []render.Report, runs []htmlreport.Run, sweep *htmlreport.Sweep) (string, error) {
	path := filepath.Join(dir, "report.html")
	var inputs []file
	for _, t := range traces {
		inputs = append(inputs, file{"a trace read", t})
	}
	if err := checkOutput(file{"the report", path}, inputs...); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	title := "dmx report: " + strings.Join(traces, ", ")
	var b bytes.Buffer
	r := &htmlreport.Report{Title: title, Tool: "dmx " + toolVersion(), Verdict: string(render.Verdict(reps)), Runs: runs, Sweep: sweep}
	if err := htmlreport.Write(&b, r); err != nil {
		return "", err
	}
	if err := writeWhole(path, b.Bytes()); err != nil {
		return "", err
	}
	return path, nil
}

// reportRuns makes the report's part of each checked run of st, drawing
// at most pictures findings of each.
func reportRuns(st *trace.Store, reps []render.Report, pictures int) ([]htmlreport.Run, error) {
	var out []htmlreport.Run
	for _, rep := range reps {
		run, err := st.Run(rep.Run)
		if err != nil {
			return nil, err
		}
		r, err := reportRun(st, run, rep, pictures)
		if err != nil {
			return nil, fmt.Errorf("%s: run %d: %w", st.Path(), run.ID, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func reportRun(st *trace.Store, run trace.Run, rep render.Report, pictures int) (htmlreport.Run, error) {
	path := st.Path()
	r := htmlreport.Run{File: path, ID: run.ID, Algorithm: run.Algorithm, Mode: run.Mode, Nodes: run.Nodes, Status: run.Status,
		Verdict: string(rep.Verdict)}
	if r.Algorithm == "" {
		r.Algorithm = "trace"
	}
	if !run.NoSeed && run.Mode != "import" {
		r.Seed = fmt.Sprint(run.Seed)
	}
	var faults []string
	if len(run.Faults) > 0 && json.Unmarshal(run.Faults, &faults) == nil {
		r.Faults = strings.Join(faults, ", ")
	}
	if len(run.Params) > 2 && string(run.Params) != "null" {
		var b bytes.Buffer
		if json.Compact(&b, run.Params) == nil {
			r.Params = b.String()
		}
	}
	if run.Mode != "import" {
		if p, err := runner.PlanFromRun(run, lookupFor(run)); err == nil {
			if args, err := rerunWords(p); err == nil {
				r.Rerun = "dmx " + strings.Join(args, " ")
			}
		}
	}
	for _, res := range rep.Results {
		c := htmlreport.Check{Name: res.Check, Verdict: string(res.Verdict), Findings: len(res.Findings), Note: res.Note}
		if res.Err != nil {
			c.Note = strings.TrimSpace(c.Note + " " + res.Err.Error())
		}
		r.Checks = append(r.Checks, c)
	}
	findings := findingsOf(rep.Results)
	runFlag := ""
	if run.ID > 1 {
		runFlag = fmt.Sprintf(" --run %d", run.ID)
	}
	windows := map[string]int{} // a window drawn -> the finding drawn with it
	for i, f := range findings {
		hf := htmlreport.Finding{N: i + 1, Check: f.Check, Message: f.Message}
		if i < pictures {
			fig, win, err := reportPicture(st, run, spacetime.Options{Findings: findings, Finding: i + 1, Auto: spacetime.DefaultAuto, Trace: path})
			if err != nil {
				return r, err
			}
			fig.Command = fmt.Sprintf("dmx render %s%s --finding %d -o finding%d.svg", sweep.Quote(path), runFlag, i+1, i+1)
			if n, ok := windows[win]; ok {
				hf.SameAs = n // one picture of a window, whatever the findings in it
			} else {
				windows[win] = i + 1
				hf.Picture = fig
			}
		} else {
			r.Undrawn++
		}
		r.Findings = append(r.Findings, hf)
	}
	if len(findings) == 0 {
		fig, _, err := reportPicture(st, run, spacetime.Options{Auto: spacetime.DefaultAuto, Trace: path})
		if err != nil {
			return r, err
		}
		fig.Command = fmt.Sprintf("dmx render %s%s -o run.svg", sweep.Quote(path), runFlag)
		r.Picture = fig
	}
	pd, err := plotData(st, run, findings)
	if err != nil {
		return r, err
	}
	var svg bytes.Buffer
	if err := spacetime.WriteSVG(&svg, plot.Draw(pd)); err != nil {
		return r, err
	}
	r.Plot = &htmlreport.Figure{SVG: svg.Bytes(),
		Caption: fmt.Sprintf("%s, %s received, %s shaded, %s marked", plural.Count(len(pd.Entries), "critical section"),
			plural.Count(len(pd.Lat), "message"), plural.Count(len(pd.Bands), "fault"), plural.Count(len(pd.Marks), "finding")),
		Command: fmt.Sprintf("dmx plot %s%s -o plot.svg", sweep.Quote(path), runFlag)}
	s, err := measureRun(st, run)
	if err != nil {
		return r, err
	}
	for _, l := range render.StatsLines(s) {
		r.Stats = append(r.Stats, htmlreport.Stat(l))
	}
	r.Measure = fmt.Sprintf("%s in %v of %s (first to last event); dmx stats %s%s", plural.Count(s.Events, "event"),
		time.Duration(s.DurationNS), render.Clock(s.Mode), sweep.Quote(path), runFlag)
	return r, nil
}

// reportPicture draws the window opts describe as the report shows it:
// its first page, as SVG; win names the window.
func reportPicture(st *trace.Store, run trace.Run, opts spacetime.Options) (fig *htmlreport.Figure, win string, err error) {
	opts.MaxEvents = autoMax
	d, pages, err := drawDiagram(st, run, opts)
	if err != nil {
		return nil, "", err
	}
	var b bytes.Buffer
	if err := spacetime.WriteSVG(&b, pages[0]); err != nil {
		return nil, "", err
	}
	return &htmlreport.Figure{SVG: b.Bytes(), Caption: describeDiagram(d)}, d.Window(), nil
}

// measureRun computes run's measures beside its algorithm's costs, as
// dmx stats does.
func measureRun(st *trace.Store, run trace.Run) (*stats.Stats, error) {
	r, err := st.Events(run.ID)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var costs []theory.Cost // none for a trace of another program
	if spec := registry.ForRun(run); spec != nil {
		costs = spec.Costs
	}
	return stats.Compute(run, r, costs)
}

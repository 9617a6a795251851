package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/analyze/tally"
	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/render/htmlreport"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/exec"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

func newCheckCmd() *cobra.Command {
	var format, diagrams, report, conformTo string
	var only, require []string
	var maxFindings, overtakes int
	var summary, fullIntegrity bool
	var open openFlags
	cmd := &cobra.Command{
		Use:   "check TRACE...",
		Short: "Check properties of recorded runs; the exit code is the verdict",
		Long:  checkLong(),
		Example: `  dmx check run.db
  dmx check --format json run.db other.db
  dmx check --checks mutex-causal,liveness --run 2 run.db
  dmx check --diagram findings/ run.db   # one SVG per finding, for CI artifacts
  dmx check --report ci-report/ run.db   # one self-contained HTML file, for CI artifacts
  dmx check --require mutex-realtime --checks fairness,starvation --max-overtakes 3 run.db
  dmx check --summary all.db   # a sweep's table (dmx sweep, dmx merge)
  dmx check --conform ricart-agrawala dmx-ricart-1.db   # a program of your own against dmx's machine`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if conformTo != "" {
				code, err := checkConform(cmd.OutOrStdout(), conformTo, args, open, format)
				if err != nil {
					return &exitError{exitUsage, err}
				}
				return verdictExit(code)
			}
			if err := checkFormat(format, render.ReportFormats...); err != nil {
				return &exitError{exitUsage, err}
			}
			checks, err := selectChecks("--checks", only) // nil: those that apply to each run
			if err != nil {
				return &exitError{exitUsage, err}
			}
			required, err := selectChecks("--require", require)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			// By default what is read is verified as it is read; pictures
			// and reports read through the indexes: the whole file is
			// checked for them.
			open.verifyRead = !fullIntegrity && !open.noIntegrity && diagrams == "" && report == ""
			// A check allocates short-lived values for every event read
			// (the driver's), over a live heap that stays small and flat:
			// a collection every 4x growth rather than 2x saves a tenth
			// of the CPU for some 30 MB more (docs/performance.md).
			defer debug.SetGCPercent(debug.SetGCPercent(checkGCPercent))
			var all []render.Report
			var swept []tally.Run
			var parts []htmlreport.Run
			for _, path := range args {
				st, runs, err := open.runs(path)
				if err != nil {
					return &exitError{exitUsage, err}
				}
				reps, err := checkRuns(st, runs, checkOptions{only: checks, require: required, overtake: overtakes, verify: open.verifyRead})
				if err == nil {
					var more []tally.Run
					var p []htmlreport.Run
					more, p, err = checkExtras(cmd.ErrOrStderr(), st, path, runs, reps, summary || report != "", diagrams, report != "")
					swept, parts = append(swept, more...), append(parts, p...)
				}
				st.Close()
				if err != nil {
					return &exitError{exitUsage, err}
				}
				all = append(all, reps...)
			}
			if report != "" {
				file, err := writeReport(report, args, all, parts, sweepSection(swept))
				if err != nil {
					return &exitError{exitUsage, err}
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "report: %s (%s)\n", file, reportSummary(all, parts))
			}
			if summary {
				return printSummary(cmd, format, args, swept)
			}
			return verdictExit(printReports(cmd.OutOrStdout(), cmd.ErrOrStderr(), format, all, maxFindings))
		},
	}
	cmd.Flags().BoolVar(&summary, "summary", false, "print the table of dmx sweep instead of each run's: per check, runs ok, violated, inconclusive, the rate, the first and smallest failing seed with its rerun line; per fault kind")
	cmd.Flags().StringVar(&format, "format", "table", "output: table, json, or junit (JUnit XML for CI test reports)")
	cmd.Flags().StringSliceVar(&only, "checks", nil, "checks to run, comma-separated or repeated (default: those that apply to each run)")
	cmd.Flags().StringSliceVar(&require, "require", nil, "checks that must not be skipped for want of data (a skipped one makes the verdict inconclusive); they are run too")
	cmd.Flags().IntVar(&overtakes, "max-overtakes", 0, "check starvation: how many times a waiting request may be overtaken (default: once per other process, N-1)")
	cmd.Flags().IntVar(&maxFindings, "max-findings", defaultMaxShown, "findings shown per check in table output (json shows all)")
	cmd.Flags().StringVar(&conformTo, "conform", "", "compare a program of your own with dmx's machine of this algorithm, input by input (in place of the checks)")
	cmd.Flags().StringVar(&diagrams, "diagram", "", "write a space-time diagram of each finding into this directory (SVG, one per finding)")
	cmd.Flags().StringVar(&report, "report", "", "write the HTML report of the runs (as dmx report) into this directory: DIR/report.html")
	cmd.Flags().BoolVar(&fullIntegrity, "integrity-check", false,
		"check the whole file for damage first, every table and index (PRAGMA integrity_check, about 0.6s per million events); by default what is read is verified as it is read")
	open.registerRun(cmd, "check only this run of each trace (default: every run)")
	return cmd
}

// checkExtras does what check's flags ask beyond the verdicts of the runs
// of the trace st (at path): their tally (for --summary and --report),
// the diagrams of their findings (--diagram DIR), their report's parts.
func checkExtras(stderr io.Writer, st *trace.Store, path string, runs []trace.Run, reps []render.Report, tallied bool, diagrams string, report bool) ([]tally.Run, []htmlreport.Run, error) {
	var swept []tally.Run
	var parts []htmlreport.Run
	var err error
	if tallied {
		if swept, err = tallyRuns(st, path, runs, reps); err != nil {
			return nil, nil, err
		}
	}
	if diagrams != "" {
		paths, err := drawFindings(st, reps, diagrams)
		if len(paths) > 0 {
			fmt.Fprintf(stderr, "%s: %d diagrams of findings in %s\n", path, len(paths), diagrams)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if report {
		if parts, err = reportRuns(st, reps, defaultReportPictures); err != nil {
			return nil, nil, err
		}
	}
	return swept, parts, nil
}

// printSummary prints dmx check --summary: the table of dmx sweep over
// the runs swept of the traces args.
func printSummary(cmd *cobra.Command, format string, args []string, swept []tally.Run) error {
	s := render.Sweep{Title: strings.Join(args, " "), Traces: args, Tally: tally.Of(swept)}
	if err := render.Tally(cmd.OutOrStdout(), format, s); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "dmx: write the table: %v\n", err)
		return &exitError{code: exitUsage}
	}
	return verdictExit(exitCode(s.Verdict))
}

// checkLong is the long help of dmx check: what it does, in full.
func checkLong() string {
	return `check rebuilds happens-before from each run's program order and
send/receive pairs (recorded clocks are verified, not trusted) and checks:

` + checkList() + `
By default each run gets the checks its algorithm claims (dmx list shows
them) plus clocks; a trace of another program gets every check but those
only some algorithms promise (` + strings.Join(promised(), ", ") + `).
Verdicts: ok, violated (a finding names the events), unknown (the trace
cannot decide: the run was cut short, so a pending request may still have
been granted; a crash that nothing orders against an entry), not
applicable (nothing to judge: agreement on a lock log) and skipped (what
the check needs is missing, such as wall times); neither of the last two
is ok: --require makes one of them unknown. No check says ok of a run the
trace does not hold whole (cut short, interrupted, abandoned, still being
recorded). docs/checks.md says what each verdict rests on.
What a check reads is verified as it is read: every event of the run is
read through the events table, whose pages SQLite checks as it goes, and
the number read must be the number the table's (run, proc, seq) index
holds. --integrity-check checks the whole file first, every table and
index (PRAGMA integrity_check, about 0.6s per million events; what
--diagram and --report read too); --no-integrity-check neither. A damaged
trace is bad input.
Exit code: 0 all ok, 1 some property violated, 3 inconclusive (unknown, or
nothing judged), 2 bad input.

--conform ALGO compares, in place of the checks, a program of your own
(dmx run/sim --exec) with dmx's machine of ALGO, input by input: each
process's recorded inputs (start, deliveries, timers, requests, releases,
crashes and recoveries, with the clocks recorded) are fed to the machine,
and the first input after which the program's messages (receiver, type and
the fields stamp, id, term and vals of its bodies), critical sections
entered or leaders decided differ from the machine's is reported, with
the course notes' rule that decides it ([RH1], [RA2], ...). dmx list ALGO
gives the vocabulary to speak; docs/protocol.md says how close a program
must be. Exit code: 0 it conforms, 1 it differs.`
}

// tallyRuns returns the runs of the trace st at path with their reports,
// for a tally: their events counted, each with the command line that
// records it again (none for an import).
func tallyRuns(st *trace.Store, path string, runs []trace.Run, reps []render.Report) ([]tally.Run, error) {
	counts := map[int64]int64{}
	rows, err := st.DB().Query(`SELECT run, count(*) FROM events GROUP BY run`)
	if err != nil {
		return nil, fmt.Errorf("%s: count events: %w", path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var run, n int64
		if err := rows.Scan(&run, &n); err != nil {
			return nil, fmt.Errorf("%s: count events: %w", path, err)
		}
		counts[run] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: count events: %w", path, err)
	}
	out := make([]tally.Run, len(runs))
	for i, run := range runs {
		rerun := ""
		if p, err := runner.PlanFromRun(run, lookupFor(run)); err == nil && run.Mode != "import" {
			rerun = rerunLine(p)
		}
		out[i] = tally.Run{Run: run, File: path, Events: counts[run.ID], Rerun: rerun, Results: reps[i].Results}
	}
	return out, nil
}

// checkGCPercent is the garbage collector's target while dmx check reads.
const checkGCPercent = 400

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

// selectChecks returns the checks named by --checks (nil if none is), or
// the error of the flag that names a check dmx does not have.
func selectChecks(flag string, names []string) ([]*analyze.Check, error) {
	if len(names) == 0 {
		return nil, nil
	}
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	checks, err := analyze.Select(names)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return checks, nil
}

// promised returns the names of the checks only some algorithms promise.
func promised() []string {
	var out []string
	for _, c := range analyze.All {
		if c.Promise {
			out = append(out, c.Name)
		}
	}
	return out
}

// checkOptions are what dmx check was asked for beyond the traces.
type checkOptions struct {
	only     []*analyze.Check // --checks; nil: those that apply to each run
	require  []*analyze.Check // --require: run, and not to be skipped
	overtake int              // --max-overtakes; 0: the check's default
	verify   bool             // count the events read against the index
}

// checksFor returns the checks that apply to run and how to run them: those
// its algorithm claims (dmx list shows them) plus clocks, held to the
// validity rule the algorithm promises; or, for a trace dmx did not record
// or an algorithm it does not know, every check that holds of any trace
// (analyze.General). --checks replaces that choice; --require adds to it.
func checksFor(run trace.Run, o checkOptions) ([]*analyze.Check, []analyze.Option, error) {
	spec := registry.HeldTo(run)
	checks, opts, err := analyze.Applicable(runner.Claims(spec))
	if err != nil {
		return nil, nil, err
	}
	if o.only != nil {
		checks = o.only
	}
	if v := runParams(run)[exec.ParamValidity]; spec == nil && v != "" && exec.IsProgram(runParams(run)) {
		// A program of the user's own promises the rule its run says
		// (--param validity=RULE).
		opts = append(opts, analyze.WithValidity(v))
	}
	for _, c := range o.require {
		if !slices.Contains(checks, c) {
			checks = append(slices.Clip(checks), c)
		}
		opts = append(opts, analyze.WithRequire(c.Name))
	}
	if o.overtake > 0 {
		opts = append(opts, analyze.WithMaxOvertakes(o.overtake))
	}
	return checks, opts, nil
}

// checkRuns runs the checks o asks for over runs of the open trace st.
func checkRuns(st *trace.Store, runs []trace.Run, o checkOptions) ([]render.Report, error) {
	var out []render.Report
	for _, run := range runs {
		checks, opts, err := checksFor(run, o)
		if err != nil {
			return nil, err
		}
		r, err := st.EventsWith(run.ID, trace.ReadOptions{Lean: !analyze.ReadsMessages(run, checks)})
		if err != nil {
			return nil, fmt.Errorf("%s: run %d: %w", st.Path(), run.ID, err)
		}
		results, err := analyze.Evaluate(run, r, checks, opts...)
		read := r.Read()
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: run %d: %w", st.Path(), run.ID, err)
		}
		if o.verify {
			n, err := st.CountEvents(run.ID)
			if err != nil {
				return nil, fmt.Errorf("%s: run %d: %w", st.Path(), run.ID, err)
			}
			if n != read {
				return nil, fmt.Errorf("%s: trace is damaged: run %d: %d events read from the events table, but its (run, proc, seq) index holds %d (dmx check --integrity-check says more)",
					st.Path(), run.ID, read, n)
			}
		}
		out = append(out, render.Report{File: st.Path(), Run: run.ID, Algo: run.Algorithm, Mode: run.Mode, Status: run.Status,
			Incomplete: !run.Complete, Verdict: analyze.Summarize(results), Results: results})
	}
	return out, nil
}

// printReports renders reps in format and returns the exit code of their
// verdict; a report that could not be written (stdout closed) is exit 2.
func printReports(w, errw io.Writer, format string, reps []render.Report, maxShown int) int {
	if err := render.Reports(w, format, reps, maxShown); err != nil {
		// The verdict could not be written (a closed pipe, a full
		// disk): say so where it can still be read.
		fmt.Fprintf(errw, "dmx: write the report: %v\n", err)
		return exitUsage
	}
	return exitCode(render.Verdict(reps))
}

// exitCode is the exit code of a verdict: 0 ok, 1 violated, 3 unknown or
// not applicable (inconclusive: the checks judged nothing, so nothing
// shows that all is well).
func exitCode(v analyze.Verdict) int {
	switch v {
	case analyze.OK:
		return exitOK
	case analyze.Violated:
		return exitViolated
	}
	return exitInconclusive
}

// openFlags are the flags of the commands that read traces, and --run of
// those that read the runs it chooses (registerRun).
type openFlags struct {
	noIntegrity bool
	// verifyRead: dmx check verifies what it reads instead of the whole
	// file first (see checkRuns).
	verifyRead bool
	// run is --run: the one run to read of each trace, 0 every run.
	run int64
}

func (f *openFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.noIntegrity, "no-integrity-check", false,
		"do not check the whole file for damage before reading it (saves about 0.6s per million events)")
}

// registerRun registers --run, with help saying what the command does
// with that run only, and the flags of register.
func (f *openFlags) registerRun(cmd *cobra.Command, help string) {
	cmd.Flags().Int64Var(&f.run, "run", 0, help)
	f.register(cmd)
}

// open opens the trace at path read-only.
func (f *openFlags) open(path string) (*trace.Store, error) {
	return trace.OpenWith(path, trace.OpenOptions{NoIntegrityCheck: f.noIntegrity || f.verifyRead})
}

// runs opens the trace at path and lists its runs, or only run --run
// when it is not 0. A trace without runs is an error: there is nothing to
// report on. The caller closes the store.
func (f *openFlags) runs(path string) (*trace.Store, []trace.Run, error) {
	st, err := f.open(path)
	if err != nil {
		return nil, nil, err
	}
	runs, err := st.Runs()
	if err == nil && f.run != 0 {
		var r trace.Run
		r, err = st.Run(f.run)
		runs = []trace.Run{r}
	}
	if err == nil && len(runs) == 0 {
		err = errors.New("the trace holds no runs")
	}
	if err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return st, runs, nil
}

// oneRun is runs for a command that reads one run: a trace of several
// needs --run. The caller closes the store.
func (f *openFlags) oneRun(path string) (*trace.Store, trace.Run, error) {
	st, runs, err := f.runs(path)
	if err != nil {
		return nil, trace.Run{}, err
	}
	if len(runs) > 1 {
		st.Close()
		return nil, trace.Run{}, fmt.Errorf("%s holds %d runs; choose one with --run (1..%d)", path, len(runs), runs[len(runs)-1].ID)
	}
	return st, runs[0], nil
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// renderFlags are dmx render's flags: they map onto spacetime.Options.
type renderFlags struct {
	axis                 string
	from, to, procs      string
	around               string
	finding, maxEvents   int
	radius               string
	noCollapse           bool
	heartbeats, allPages bool
	page                 int
	pictureFlags
}

func newRenderCmd() *cobra.Command {
	f := &renderFlags{}
	cmd := &cobra.Command{
		Use:   "render TRACE -o FILE",
		Short: "Draw a run's space-time diagram (SVG, PNG, DOT, Mermaid)",
		Long: `render draws the space-time (Lamport) diagram of a recorded run: one lane
per process, events placed by Lamport time (or wall time with --time wall),
an arrow per message labelled with its type (a cross where one was dropped
or lost to a crash), critical sections as bars coloured by resource,
crashes, restarts, suspicions, elections and leaders marked, and the
findings of dmx check drawn in red: the two sections that overlap and the
ordering that is missing, a deadlock's wait-for cycle edge by edge, the two
leaders of a split brain, where two processes' delivery orders diverge.

The format is the output file's extension: .svg (drawn by Graphviz, built
into dmx), .png (painted by dmx, fonts built in), .dot (Graphviz source with
fixed positions: neato -n2 -Tsvg draws it), .md (a Mermaid sequence
diagram of a small window, for README files and pull requests).

Without --from, --to or --around, the window is chosen by what matters:
the first finding (or --finding N), else the run's faults (each crash,
pause and partition with what followed it), else the whole run if it is
short, else its start. Sections, reigns, pauses and partitions that began
before the window are drawn from its edge, and the picture says which
window it is and how to draw the rest. --from/--to take Lamport times, or
wall times since the run's start (120ms) on either axis; --procs, --around
an event, --finding N narrow it too. A long window wraps into rows, and
rows into pages (--page N, or --pages for all); runs of three or more
local events are collapsed into one node, and a failure detector's
heartbeats are left out (--heartbeats draws them). A window of more than
--max-events events is refused with the advice to narrow it.`,
		Example: `  dmx render run.db -o run.svg
  dmx render run.db -o run.png --around P3#120
  dmx render run.db -o deadlock.svg --finding 1
  dmx render run.db -o start.svg --from 0 --to 200 --procs 0,1,2
  dmx render run.db -o wall.svg --time wall --from 100ms --to 250ms
  dmx render run.db -o pause.png --from 480ms --to 1.2s
  dmx render run.db -o window.md --around P2#40 --radius 10`,
		Args: cobra.ExactArgs(1),
		RunE: f.run,
	}
	fs := cmd.Flags()
	fs.StringVar(&f.axis, "time", "lamport", "place events by lamport time or wall time")
	fs.StringVar(&f.from, "from", "", "start of the window: a Lamport time, or with --time wall a time since the run's start (120ms)")
	fs.StringVar(&f.to, "to", "", "end of the window, as --from")
	fs.StringVar(&f.procs, "procs", "", "only these processes: 0,2,5 or 1-3")
	fs.StringVar(&f.around, "around", "", "a window around this event, named as dmx names events: P3#120")
	fs.IntVar(&f.finding, "finding", 0, "a window around the Nth finding of dmx check (1 is the first)")
	fs.StringVar(&f.radius, "radius", "", "half the width of an --around or --finding window (Lamport units, or a duration with --time wall; default 30 Lamport units or a twentieth of the run)")
	fs.IntVar(&f.maxEvents, "max-events", spacetime.DefaultMaxEvents, "refuse a window of more events than this")
	fs.BoolVar(&f.noCollapse, "no-collapse", false, "draw every local event, even in long runs of them")
	fs.BoolVar(&f.heartbeats, "heartbeats", false, "draw a failure detector's heartbeats (left out by default, and counted)")
	fs.IntVar(&f.page, "page", 1, "the page to draw of a window too long for one")
	fs.BoolVar(&f.allPages, "pages", false, "draw every page of a long window, as FILE-p2.svg... after FILE")
	f.register(cmd, "picture", "draw", spacetime.Formats)
	return cmd
}

// run draws the picture render's flags ask for of the trace args[0].
func (f *renderFlags) run(cmd *cobra.Command, args []string) error {
	format, err := f.outFormat(spacetime.Formats)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	opts, err := f.options()
	if err != nil {
		return &exitError{exitUsage, err}
	}
	opts.Trace = args[0]
	st, run, fs, err := f.openRun(file{"the picture (-o)", f.out}, file{"the input trace", args[0]}, !f.noFindings || opts.Finding > 0)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer st.Close()
	opts.Findings = fs
	if format == "md" {
		d, err := buildDiagram(st, run, opts)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		if err := writeDiagram(f.out, format, d, opts); err != nil {
			return &exitError{exitUsage, err}
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", f.out, describeDiagram(d))
		return nil
	}
	return f.drawPages(cmd.OutOrStdout(), st, run, format, args[0], opts)
}

// drawPages draws the window opts chooses of run, fitted to one page if
// it was chosen by what matters, else page by page (never all of a long
// one in memory at once), and writes the pages the flags ask for.
func (f *renderFlags) drawPages(stdout io.Writer, st *trace.Store, run trace.Run, format, tracePath string, opts spacetime.Options) error {
	var d *spacetime.Diagram
	var fitted []*spacetime.Picture
	var err error
	if opts.Auto > 0 {
		d, fitted, err = drawDiagram(st, run, opts)
	} else {
		d, err = buildDiagram(st, run, opts)
	}
	if err != nil {
		return &exitError{exitUsage, err}
	}
	each := func(fn func(n, total int, p *spacetime.Picture) error) error {
		if fitted == nil {
			return spacetime.EachPage(d, !opts.NoCollapse, fn)
		}
		for i, p := range fitted {
			if err := fn(i+1, len(fitted), p); err != nil {
				return err
			}
		}
		return nil
	}
	err = each(func(n, total int, p *spacetime.Picture) error {
		if f.page > total {
			return fmt.Errorf("--page %d: the window is drawn on %s", f.page, plural.Count(total, "page"))
		}
		if !f.allPages && n != f.page {
			return nil
		}
		path := f.out
		if f.allPages && total > 1 {
			path = pagePath(f.out, n)
			if err := checkOutput(file{"the picture", path}, file{"the trace", tracePath}); err != nil {
				return err
			}
		}
		if err := writePicture(path, format, p); err != nil {
			return err
		}
		line := describeDiagram(d)
		if total > 1 {
			line += fmt.Sprintf(", page %d of %d", n, total)
			if !f.allPages {
				line += " (--page N draws another, --pages all of them)"
			}
		}
		fmt.Fprintf(stdout, "%s: %s\n", path, line)
		return nil
	})
	if err != nil {
		return &exitError{exitUsage, err}
	}
	return nil
}

// options maps the flags to spacetime.Options.
func (f *renderFlags) options() (spacetime.Options, error) {
	var o spacetime.Options
	var err error
	if o.Axis, err = spacetime.ParseAxis(f.axis); err != nil {
		return o, fmt.Errorf("--time: %w", err)
	}
	// A duration bounds the window in wall time on either axis: a
	// Lamport picture of 480ms..1.2s keeps the events a paused process
	// had after its pause, whose Lamport times are those of before.
	win := o.Axis
	for _, v := range []string{f.from, f.to, f.radius} {
		if spacetime.IsDuration(v) {
			win = spacetime.Wall
		}
	}
	o.WallWindow = win == spacetime.Wall && o.Axis == spacetime.Lamport
	if f.from != "" {
		if o.From, err = spacetime.ParseBound(win, f.from); err != nil {
			return o, fmt.Errorf("--from %w", err)
		}
		o.HasFrom = true
	}
	if f.to != "" {
		if o.To, err = spacetime.ParseBound(win, f.to); err != nil {
			return o, fmt.Errorf("--to %w", err)
		}
		o.HasTo = true
	}
	if f.radius != "" {
		if o.Radius, err = spacetime.ParseBound(win, f.radius); err != nil {
			return o, fmt.Errorf("--radius %w", err)
		}
	}
	if f.procs != "" {
		if o.Procs, err = spacetime.ParseProcs(f.procs); err != nil {
			return o, fmt.Errorf("--procs: %w", err)
		}
	}
	if f.around != "" {
		r, err := spacetime.ParseRef(f.around)
		if err != nil {
			return o, fmt.Errorf("--around: %w", err)
		}
		o.Around = &r
	}
	if f.finding < 0 {
		return o, fmt.Errorf("--finding %d: want 1 or more", f.finding)
	}
	if f.around != "" && f.finding > 0 {
		return o, errors.New("--around and --finding both choose the window; give one")
	}
	o.Finding = f.finding
	if f.maxEvents < 1 {
		return o, fmt.Errorf("--max-events %d: want 1 or more", f.maxEvents)
	}
	o.MaxEvents = f.maxEvents
	o.NoCollapse = f.noCollapse
	o.Heartbeats = f.heartbeats
	if f.page < 1 {
		return o, fmt.Errorf("--page %d: want 1 or more", f.page)
	}
	if f.allPages && f.page != 1 {
		return o, errors.New("--page and --pages both choose the pages; give one")
	}
	if !o.HasFrom && !o.HasTo && o.Around == nil && o.Radius == 0 {
		o.Auto = spacetime.DefaultAuto // the window by what matters
	}
	return o, nil
}

// evaluate runs the checks (nil: those that apply) over one run.
func evaluate(st *trace.Store, run trace.Run, only []*analyze.Check) ([]analyze.Result, error) {
	reps, err := checkRuns(st, []trace.Run{run}, checkOptions{only: only})
	if err != nil {
		return nil, err
	}
	return reps[0].Results, nil
}

// findingsIn lists the findings of the checks that apply to run, as
// findingsOf does.
func findingsIn(st *trace.Store, run trace.Run) ([]analyze.Finding, error) {
	results, err := evaluate(st, run, nil)
	if err != nil {
		return nil, err
	}
	return findingsOf(results), nil
}

// findingsOf lists the findings of results in the order dmx check prints
// them: the Nth is what --finding N draws.
func findingsOf(results []analyze.Result) []analyze.Finding {
	var out []analyze.Finding
	for _, r := range results {
		out = append(out, r.Findings...)
	}
	return out
}

// buildDiagram reads the window opts describe of run from st, with the
// processes' roles and the messages' fates.
func buildDiagram(st *trace.Store, run trace.Run, opts spacetime.Options) (*spacetime.Diagram, error) {
	if err := diagramOptions(st, run, &opts); err != nil {
		return nil, err
	}
	d, err := spacetime.Build(run, func() (trace.Reader, error) { return st.Events(run.ID) }, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: run %d: %w", st.Path(), run.ID, err)
	}
	return d, nil
}

// drawDiagram is buildDiagram laid out into pages: a window chosen by
// what matters is made to fit one page (spacetime.Draw).
func drawDiagram(st *trace.Store, run trace.Run, opts spacetime.Options) (*spacetime.Diagram, []*spacetime.Picture, error) {
	if err := diagramOptions(st, run, &opts); err != nil {
		return nil, nil, err
	}
	d, pages, err := spacetime.Draw(run, func() (trace.Reader, error) { return st.Events(run.ID) }, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: run %d: %w", st.Path(), run.ID, err)
	}
	return d, pages, nil
}

// diagramOptions adds what the trace and the registry know of run: the
// messages' fates, the processes' roles, the declared message types.
func diagramOptions(st *trace.Store, run trace.Run, opts *spacetime.Options) error {
	fates, err := st.Undelivered(run.ID)
	if err != nil {
		return err
	}
	opts.Fates = fates
	opts.Roles = registry.Roles(run)
	opts.MsgTypes = msgTypes(run)
	return nil
}

// msgTypes are the message types run's algorithm declares, in order
// (none for a trace of another program): they give the types their colours.
func msgTypes(run trace.Run) []string {
	if spec := registry.ForRun(run); spec != nil {
		return spec.MsgTypes
	}
	return nil
}

// pagePath is where --pages writes page n of a picture: FILE-pN.ext.
func pagePath(path string, n int) string {
	if n == 1 {
		return path
	}
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s-p%d%s", strings.TrimSuffix(path, ext), n, ext)
}

// writePicture writes one laid-out page into the file path, replacing it
// only once the picture is complete.
func writePicture(path, format string, p *spacetime.Picture) error {
	var buf bytes.Buffer
	var err error
	switch format {
	case "svg":
		err = spacetime.WriteSVG(&buf, p)
	case "png":
		err = spacetime.WritePNG(&buf, p)
	case "dot":
		err = spacetime.WriteDOT(&buf, p)
	default:
		err = fmt.Errorf("format %q: want svg, png or dot", format)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return writeWhole(path, buf.Bytes())
}

// writeDiagram draws d into the file path, replacing it only once the
// picture is complete.
func writeDiagram(path, format string, d *spacetime.Diagram, opts spacetime.Options) error {
	var buf bytes.Buffer
	if err := spacetime.Write(&buf, format, d, opts); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return writeWhole(path, buf.Bytes())
}

// describeDiagram says in a few words what a diagram shows.
func describeDiagram(d *spacetime.Diagram) string {
	s := plural.Count(len(d.Events), "event")
	if !d.Whole {
		s += fmt.Sprintf(" of %d (%s)", d.Total, d.Window())
	}
	if d.Why != "" && !d.Whole {
		s += ", " + d.Why
	}
	if n := len(d.Findings); n > 0 {
		s += fmt.Sprintf(", %s drawn in", plural.Count(n, "finding"))
	}
	return s
}

// diagramPath is where run and sim put the diagram of a run recorded into
// tracePath: beside it, named after it, never the trace itself (a trace
// named t.svg gets t-diagram.svg).
func diagramPath(tracePath string, runID int64) string {
	base := strings.TrimSuffix(tracePath, filepath.Ext(tracePath))
	if runID > 1 {
		base += fmt.Sprintf("-run%d", runID)
	}
	if base+".svg" == tracePath {
		base += "-diagram"
	}
	return base + ".svg"
}

// autoMax bounds the events of the diagram run and sim draw, so that
// drawing stays a fraction of a second whatever the size of the run.
const autoMax = 6000

// drawRun draws the diagram of a run just recorded (unless --no-diagram)
// and returns the line that points to it, or to why there is none. The
// window is chosen by what matters (spacetime.Options.Auto): the first
// finding, else the faults, else the whole run if short, else its start.
// A failure to draw does not fail the run: the line says what went wrong.
func (f *runFlags) drawRun(st *trace.Store, run trace.Run, results []analyze.Result, events int64) string {
	if f.noDiag {
		return ""
	}
	path := f.diagram
	if path == "" {
		path = diagramPath(f.out, run.ID)
	}
	// Checked again now that the trace exists (an explicit --diagram was
	// checked before the run; the default one is only known now).
	if err := checkOutput(file{"the diagram", path}, file{"the trace", f.out}, file{"the scenario read", f.scenario}); err != nil {
		return "diagram: none: " + err.Error() + " (--diagram FILE draws it elsewhere)"
	}
	format, err := spacetime.FormatOf(path)
	if err != nil {
		return "diagram: none: " + err.Error()
	}
	opts := spacetime.Options{Findings: findingsOf(results), MaxEvents: autoMax, Auto: spacetime.DefaultAuto, Trace: f.out}
	var d *spacetime.Diagram
	if format == "md" {
		if d, err = buildDiagram(st, run, opts); err == nil {
			err = writeDiagram(path, format, d, opts)
		}
	} else {
		var pages []*spacetime.Picture
		if d, pages, err = drawDiagram(st, run, opts); err == nil {
			err = writePicture(path, format, pages[0])
		}
	}
	if err != nil {
		return "diagram: none: " + err.Error()
	}
	what := d.Why
	if !d.Whole {
		what = fmt.Sprintf("%s: %d of %d events, %s; dmx render draws any window", what, len(d.Events), d.Total, d.Window())
	}
	return fmt.Sprintf("diagram: %s (%s)", path, what)
}

// drawFindings writes one picture per finding of each report into dir
// (dmx check --diagram): the window of the finding, or where it closes if
// its events lie too far apart. It returns the files written.
func drawFindings(st *trace.Store, reps []render.Report, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	base := strings.TrimSuffix(filepath.Base(st.Path()), filepath.Ext(st.Path()))
	for _, rep := range reps {
		findings := findingsOf(rep.Results)
		if len(findings) == 0 {
			continue
		}
		run, err := st.Run(rep.Run)
		if err != nil {
			return paths, err
		}
		for i, f := range findings {
			opts := spacetime.Options{Findings: findings, Finding: i + 1, Auto: spacetime.DefaultAuto, Trace: st.Path()}
			_, pages, err := drawDiagram(st, run, opts)
			if err != nil {
				return paths, err
			}
			path := filepath.Join(dir, fmt.Sprintf("%s-run%d-finding%d-%s.svg", base, run.ID, i+1, f.Check))
			if err := checkOutput(file{"the picture", path}, file{"the input trace", st.Path()}); err != nil {
				return paths, err
			}
			if err := writePicture(path, "svg", pages[0]); err != nil {
				return paths, err
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}

package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/render/plot"
	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// pictureFlags are the flags dmx plot and dmx render share: each draws
// one run of a trace into the file -o, in the format its extension names
// (or --format), with the findings of dmx check marked unless
// --no-findings. dmx plot has these flags only.
type pictureFlags struct {
	out, format string
	noFindings  bool
	open        openFlags
}

// register registers the flags, their help naming what the command makes
// (noun), what it does (verb) and the formats it writes.
func (f *pictureFlags) register(cmd *cobra.Command, noun, verb string, formats []string) {
	fs := cmd.Flags()
	fs.StringVarP(&f.out, "out", "o", "", fmt.Sprintf("the %s to write: %s", noun, orList(".", formats)))
	fs.StringVar(&f.format, "format", "", orList("", formats)+" (default: by the extension of -o)")
	fs.BoolVar(&f.noFindings, "no-findings", false, fmt.Sprintf("do not run the checks; %s the run only", verb))
	f.open.registerRun(cmd, fmt.Sprintf("the run to %s, when the trace holds several", verb))
}

// outFormat is the format to write, one of formats: --format, else the
// one -o's extension names.
func (f *pictureFlags) outFormat(formats []string) (string, error) {
	if f.out == "" {
		return "", fmt.Errorf("no output file: give -o FILE (%s)", orList(".", formats))
	}
	format := f.format
	if format == "" {
		var err error
		if format, err = spacetime.FormatOf(f.out); err != nil {
			return "", errors.New(strings.Replace(err.Error(), orList(".", spacetime.Formats), orList(".", formats), 1))
		}
	}
	return format, checkFormat(format, formats...)
}

// openRun opens the one run to draw of the trace in (after checking that
// writing out destroys nothing) and lists its findings when withFindings.
// The caller closes the store.
func (f *pictureFlags) openRun(out, in file, withFindings bool) (*trace.Store, trace.Run, []analyze.Finding, error) {
	if err := checkOutput(out, in); err != nil {
		return nil, trace.Run{}, nil, err
	}
	st, run, err := f.open.oneRun(in.path)
	if err != nil {
		return nil, trace.Run{}, nil, err
	}
	var fs []analyze.Finding
	if withFindings {
		if fs, err = findingsIn(st, run); err != nil {
			st.Close()
			return nil, trace.Run{}, nil, err
		}
	}
	return st, run, fs, nil
}

// orList is "a, b or c" of xs, each after prefix.
func orList(prefix string, xs []string) string {
	ws := make([]string, len(xs))
	for i, x := range xs {
		ws[i] = prefix + x
	}
	if len(ws) < 2 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " or " + ws[len(ws)-1]
}

// plotFormats are the formats dmx plot writes.
var plotFormats = []string{"svg", "png"}

func newPlotCmd() *cobra.Command {
	f := &pictureFlags{}
	cmd := &cobra.Command{
		Use:   "plot TRACE -o FILE",
		Short: "Plot throughput, waiting time and message latency over wall time (SVG, PNG)",
		Long: `plot draws a run's behaviour over wall time in three panels: critical
sections entered per second, the waiting time of each entry (from its
request) with its median, and message latency (send to receipt: the median
per receiving process and of all messages, and the 99th percentile). Each
process has its colour, the total is black; the stretches in which a fault
acted (a crashed process until it recovered, a partition, a pause) are
shaded across the panels, and the findings of dmx check are red lines at
their first event, numbered as dmx check numbers them.

The format is the output file's extension: .svg or .png.`,
		Example: `  dmx plot run.db -o run-plot.svg
  dmx plot failover.db -o plot.png --run 2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := f.outFormat(plotFormats)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			st, run, fs, err := f.openRun(file{"the plot", f.out}, file{"the trace", args[0]}, !f.noFindings)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer st.Close()
			d, err := plotData(st, run, fs)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			if err := writePicture(f.out, format, plot.Draw(d)); err != nil {
				return &exitError{exitUsage, err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, %s received, %s shaded, %s marked, over %v\n", f.out,
				plural.Count(len(d.Entries), "critical section"), plural.Count(len(d.Lat), "message"), plural.Count(len(d.Bands), "fault"),
				plural.Count(len(d.Marks), "finding"), time.Duration(d.Span).Round(time.Microsecond))
			return nil
		},
	}
	f.register(cmd, "plot", "plot", plotFormats)
	return cmd
}

// plotData reads run's plot, with the findings fs marked.
func plotData(st *trace.Store, run trace.Run, fs []analyze.Finding) (*plot.Data, error) {
	r, err := st.Events(run.ID)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	d, err := plot.Read(run, r, fs)
	if err != nil {
		return nil, fmt.Errorf("%s: run %d: %w", st.Path(), run.ID, err)
	}
	return d, nil
}

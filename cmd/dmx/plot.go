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

// plotFlags are dmx plot's flags.
type plotFlags struct {
	out, format string
	runID       int64
	noFindings  bool
	open        openFlags
}

func newPlotCmd() *cobra.Command {
	f := &plotFlags{}
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
			if f.out == "" {
				return &exitError{exitUsage, errors.New("no output file: give -o FILE (.svg or .png)")}
			}
			format := f.format
			if format == "" {
				var err error
				if format, err = spacetime.FormatOf(f.out); err != nil {
					return &exitError{exitUsage, errors.New(strings.Replace(err.Error(), ".svg, .png, .dot or .md", ".svg or .png", 1))}
				}
			}
			if err := checkFormat(format, "svg", "png"); err != nil {
				return &exitError{exitUsage, err}
			}
			if err := checkOutput(file{"the plot", f.out}, file{"the trace", args[0]}); err != nil {
				return &exitError{exitUsage, err}
			}
			st, run, err := f.open.oneRun(args[0], f.runID)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer st.Close()
			var fs []analyze.Finding
			if !f.noFindings {
				if fs, err = findingsIn(st, run); err != nil {
					return &exitError{exitUsage, err}
				}
			}
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
	fs := cmd.Flags()
	fs.StringVarP(&f.out, "out", "o", "", "the plot to write: .svg or .png")
	fs.StringVar(&f.format, "format", "", "svg or png (default: by the extension of -o)")
	fs.Int64Var(&f.runID, "run", 0, "the run to plot, when the trace holds several")
	fs.BoolVar(&f.noFindings, "no-findings", false, "do not run the checks; plot the run only")
	f.open.register(cmd)
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

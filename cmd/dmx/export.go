package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/trace/foreign"
	"github.com/dmxlab/dmx/trace/format"
)

// newExportCmd is dmx export: a trace in the formats of other tools.
func newExportCmd() *cobra.Command {
	var out string
	var runID int64
	var timestamps bool
	cmd := &cobra.Command{
		Use:   "export FORMAT TRACE [-o FILE|DIR]",
		Short: "Write a trace for other tools: ShiViz, GoVector, Perfetto",
		Long: `export writes the runs of a trace in another tool's format:

` + exporterList() + `
Clocks are rebuilt from happens-before (the recorded ones are not trusted)
and events are written in a causal order. Each event of dmx's own is a line
of text that dmx import --dmx reads back ("cs_enter cs", "send request to
P1 msg=4294967297 {...}", "leader P3 term 2"); an imported event keeps the
text of its log. A format that writes one file writes to stdout without -o.`,
		Example: `  dmx export shiviz run.db -o run.log          # open run.log in ShiViz
  dmx export govector run.db -o logs/           # logs/P0-Log.txt, logs/P1-Log.txt...
  dmx export perfetto run.db -o run.json        # open run.json in ui.perfetto.dev`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			exp := format.Exporter(args[0])
			if exp == nil {
				return &exitError{exitUsage, fmt.Errorf("export: no format %q (formats: %s)", args[0], strings.Join(format.ExporterNames(), ", "))}
			}
			if exp.Dir != nil && out == "" {
				return &exitError{exitUsage, fmt.Errorf("export %s: -o DIR is required (it writes a file per process)", exp.Name)}
			}
			st, runs, err := openRuns(args[1], runID)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer st.Close()
			ids := make([]int64, len(runs))
			for i, r := range runs {
				ids[i] = r.ID
			}
			xs, err := foreign.Load(st, ids)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			opt := foreign.ExportOptions{Timestamps: timestamps}
			if exp.Dir != nil {
				if err := exp.Dir(out, xs, opt); err != nil {
					return &exitError{exitUsage, err}
				}
				return nil
			}
			if err := writeTo(out, cmd.OutOrStdout(), func(w io.Writer) error { return exp.File(w, xs, opt) }); err != nil {
				return &exitError{exitUsage, err}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "the file (or directory, for govector) to write")
	cmd.Flags().Int64Var(&runID, "run", 0, "export only this run (default: every run)")
	cmd.Flags().BoolVar(&timestamps, "timestamps", false, "govector: start each clock line with the event's wall time in ns")
	return cmd
}

// writeTo runs write on the file path, or on stdout if path is empty.
func writeTo(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" {
		return write(stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = write(w)
	return errors.Join(err, w.Flush(), f.Close())
}

func exporterList() string {
	var b strings.Builder
	for _, exp := range format.Exporters {
		fmt.Fprintf(&b, "  %-9s %s\n", exp.Name, exp.Summary)
	}
	return b.String()
}

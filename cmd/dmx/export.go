package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/trace/foreign"
	"github.com/dmxlab/dmx/trace/format"
	"github.com/dmxlab/dmx/trace/parquet"
	"github.com/dmxlab/dmx/trace/plural"
)

// newExportCmd is dmx export: a trace in the formats of other tools.
func newExportCmd() *cobra.Command {
	var out string
	var timestamps bool
	var open openFlags
	cmd := &cobra.Command{
		Use:   "export FORMAT TRACE... [-o FILE|DIR]",
		Short: "Write a trace for other tools: ShiViz, GoVector, Perfetto, Mermaid, Parquet",
		Long: `export writes the runs of a trace in another tool's format:

` + exporterList() + `
Clocks are rebuilt from happens-before (the recorded ones are not trusted)
and events are written in a causal order. Each event of dmx's own is a line
of text that dmx import --dmx reads back ("cs_enter cs", "send request to
P1 (P0's message 1) {...}", "leader P3 term 2"); an imported event keeps the
text of its log. A format that writes one file writes to stdout without -o.`,
		Example: `  dmx export shiviz run.db -o run.log          # open run.log in ShiViz
  dmx export govector run.db -o logs/           # logs/P0-Log.txt, logs/P1-Log.txt...
  dmx export perfetto run.db -o run.json        # open run.json in ui.perfetto.dev
  dmx export mermaid run.db -o run.md           # a small run as a Mermaid sequence diagram
  dmx export parquet nightly/*.db -o warehouse/ # runs, verdicts, events, messages as Parquet`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "parquet" {
				return exportParquet(cmd, &open, args[1:], out)
			}
			if len(args) > 2 {
				return &exitError{exitUsage, fmt.Errorf("export %s: one trace at a time (parquet takes several)", args[0])}
			}
			if args[0] == "mermaid" {
				return exportMermaid(cmd, &open, args[1], out)
			}
			exp := format.Exporter(args[0])
			if exp == nil {
				return &exitError{exitUsage, fmt.Errorf("export: no format %q (formats: %s)", args[0], strings.Join(append(format.ExporterNames(), "mermaid", "parquet"), ", "))}
			}
			if exp.Dir != nil && out == "" {
				return &exitError{exitUsage, fmt.Errorf("export %s: -o DIR is required (it writes a file per process)", exp.Name)}
			}
			if exp.Dir == nil && out != "" {
				if err := checkOutput(file{"the export (-o)", out}, file{"the input trace", args[1]}); err != nil {
					return &exitError{exitUsage, err}
				}
			}
			st, runs, err := open.runs(args[1])
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer st.Close()
			ids := make([]int64, len(runs))
			for i, r := range runs {
				ids[i] = r.ID
			}
			xs, err := analyze.ExportRuns(st, ids)
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
			if err := writeTo(guardOf(cmd), out, cmd.OutOrStdout(), func(w io.Writer) error { return exp.File(w, xs, opt) }); err != nil {
				return &exitError{exitUsage, err}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "the file (or directory, for govector) to write")
	cmd.Flags().BoolVar(&timestamps, "timestamps", false, "govector: start each clock line with the event's wall time in ns")
	open.registerRun(cmd, "export only this run (default: every run)")
	return cmd
}

// exportParquet writes the runs of the traces at paths into the
// directory out as Parquet files (trace/parquet), each run checked as dmx
// check checks it for verdicts.parquet.
func exportParquet(cmd *cobra.Command, open *openFlags, paths []string, out string) error {
	if out == "" {
		return &exitError{exitUsage, errors.New("export parquet: -o DIR is required (it writes a directory of files)")}
	}
	if open.run != 0 && len(paths) > 1 {
		return &exitError{exitUsage, errors.New("export parquet: --run chooses a run of one trace; name one trace")}
	}
	for _, p := range paths {
		if sameFile(p, out) {
			return &exitError{exitUsage, fmt.Errorf("the output (-o) %s is also an input", out)}
		}
	}
	var sources []parquet.Source
	for _, path := range paths {
		st, runs, err := open.runs(path)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		defer st.Close()
		reps, err := checkRuns(st, runs, checkOptions{})
		if err != nil {
			return &exitError{exitUsage, err}
		}
		src := parquet.Source{Path: path, Store: st, Runs: runs, Verdicts: map[int64][]parquet.Verdict{}}
		for _, rep := range reps {
			for _, res := range rep.Results {
				v := parquet.Verdict{Check: res.Check, Verdict: string(res.Verdict), Findings: int64(len(res.Findings)), Note: res.Note}
				if res.Err != nil {
					v.Note = "error: " + res.Err.Error()
				}
				if len(res.Findings) > 0 {
					v.Finding = res.Findings[0].Text()
				}
				src.Verdicts[rep.Run] = append(src.Verdicts[rep.Run], v)
			}
		}
		sources = append(sources, src)
	}
	// An interrupt leaves the directory as it was: empty (Export refuses
	// one that is not).
	if ents, err := os.ReadDir(out); err != nil && errors.Is(err, fs.ErrNotExist) || err == nil && len(ents) == 0 {
		guardOf(cmd).onInterrupt(func() { parquet.Unmake(out) })
	}
	c, err := parquet.Export(out, sources)
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("export parquet: %w", err)}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, %s, %s, %s in %s (%s)\n", out, plural.Count(int(c.Runs), "run"), plural.Count(int(c.Verdicts), "verdict"),
		plural.Count(int(c.Events), "event"), plural.Count(int(c.Messages), "message"), plural.Count(int(c.Files), "file"), humanBytes(c.Bytes))
	return nil
}

// writeTo runs write on the file path, or on stdout if path is empty. A
// file not written whole (an error, an interrupt: g) is removed, not left
// truncated as if it were the whole export.
func writeTo(g *exitGuard, path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" {
		return write(stdout)
	}
	var f *os.File
	err := g.hold("creating "+path, func() (err error) {
		// Made and registered as one, so that no interrupt comes between.
		if f, err = os.Create(path); err == nil {
			g.removeOnInterrupt(path)
		}
		return err
	})
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = write(w)
	if err = errors.Join(err, w.Flush(), f.Close()); err != nil {
		os.Remove(path)
		return fmt.Errorf("%w (%s removed: it was not written whole)", err, path)
	}
	return nil
}

func exporterList() string {
	var b strings.Builder
	for _, exp := range format.Exporters {
		fmt.Fprintf(&b, "  %-9s %s\n", exp.Name, exp.Summary)
	}
	fmt.Fprintf(&b, "  %-9s %s\n", "mermaid", "a Mermaid sequenceDiagram of a small run, fenced for Markdown (dmx render -o x.md draws a window of a big one)")
	fmt.Fprintf(&b, "  %-9s %s\n", "parquet", "TRACE... -o DIR: runs.parquet, verdicts.parquet, events/run=K/ and messages/run=K/ (Hive partitions), zstd; for DuckDB, Spark, warehouses (docs/sweep.md)")
	return b.String()
}

// exportMermaid writes one run of a trace as a fenced Mermaid sequence
// diagram: the same drawing as dmx render -o x.md, of the whole run. A run
// too big for Mermaid is refused with the advice to draw a window.
func exportMermaid(cmd *cobra.Command, open *openFlags, path, out string) error {
	if out != "" {
		if err := checkOutput(file{"the export (-o)", out}, file{"the input trace", path}); err != nil {
			return &exitError{exitUsage, err}
		}
	}
	st, run, err := open.oneRun(path)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer st.Close()
	opts := spacetime.Options{MaxEvents: spacetime.MaxMermaidEvents, NoCollapse: true}
	if opts.Findings, err = findingsIn(st, run); err != nil {
		return &exitError{exitUsage, err}
	}
	d, err := buildDiagram(st, run, opts)
	if tb := (*spacetime.TooBigError)(nil); errors.As(err, &tb) {
		// export has no window flags (--from, --max-events are render's):
		// say what does draw a window, with a window that fits.
		to := tb.Lo + max(1, (tb.Hi-tb.Lo)*int64(tb.Max)/int64(max(1, tb.Events)))
		return &exitError{exitUsage, fmt.Errorf("%s: run %d holds %d events, more than the %d a Mermaid diagram shows; export mermaid writes a whole run, dmx render draws a window of it: dmx render %s -o run.md --from %d --to %d (or --procs 0,1, --around P0#1, --finding 1)",
			path, run.ID, tb.Events, tb.Max, path, tb.Lo, to)}
	}
	if err != nil {
		return &exitError{exitUsage, err}
	}
	if err := writeTo(guardOf(cmd), out, cmd.OutOrStdout(), func(w io.Writer) error { return spacetime.WriteMermaid(w, d, true) }); err != nil {
		return &exitError{exitUsage, err}
	}
	return nil
}

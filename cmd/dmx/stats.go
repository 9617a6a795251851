package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/analyze/stats"
	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/runner/registry"
)

// newStatsCmd is dmx stats. Its JSON output is {"file": PATH, "runs":
// [STATS...]} for one trace, {"traces": [{"file": PATH, "runs":
// [STATS...]}...]} for several, each STATS the stable form documented in
// package analyze/stats.
func newStatsCmd() *cobra.Command {
	var format string
	var open openFlags
	cmd := &cobra.Command{
		Use:   "stats TRACE...",
		Short: "Message complexity, delays and throughput of recorded runs, beside the theory",
		Long: `stats measures each run of a trace in one pass and puts every measure
beside the figure the course notes give for the algorithm:

  messages per critical section (in all and by type), and without contention
    the messages of each critical section; heartbeats are counted apart
  client delay (request to enter) and synchronization delay (an exit to the
    next enter by another process that was waiting), in message hops and in
    wall time (mean, p50, p99, max)
  throughput (critical sections per second) and contention (requests made
    while another process requested or held the resource: the seeds'
    figures are for requests without contention)
  messages per delivered multicast (tomcast)
  messages per election and completion time (elections)

Hops are counted along happens-before: client delay is the longest causal
chain of messages from the request to the enter, synchronization delay the
shortest from the exit to the enter. --format json gives the stable form
documented in package analyze/stats; csv gives one row per measure. With
several traces, each run's table is headed by its file, JSON is
{"traces": [{"file": PATH, "runs": [STATS...]}...]} and CSV has a file
column first.`,
		Example: `  dmx sim ricart-agrawala -n 5 --contention none -o ra.db && dmx stats ra.db
  dmx stats --format json run.db
  dmx stats --run 2 --format csv run.db
  dmx stats --format json traces/*.db`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, render.StatsFormats...); err != nil {
				return &exitError{exitUsage, err}
			}
			var files []render.StatsFile
			for _, path := range args {
				all, err := measure(&open, path)
				if err != nil {
					return &exitError{exitUsage, err}
				}
				files = append(files, render.StatsFile{File: path, Runs: all})
			}
			return render.StatsFiles(cmd.OutOrStdout(), format, files)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: table, json or csv")
	open.registerRun(cmd, "measure only this run (default: every run)")
	return cmd
}

// measure measures the runs of the trace at path, opened as open says
// (only run --run if it is not 0), each beside the costs of its algorithm.
func measure(open *openFlags, path string) ([]*stats.Stats, error) {
	st, runs, err := open.runs(path)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var all []*stats.Stats
	for _, run := range runs {
		r, err := st.Events(run.ID)
		if err != nil {
			return nil, fmt.Errorf("%s: run %d: %w", path, run.ID, err)
		}
		var costs []theory.Cost // none for a trace of another program
		if spec := registry.ForRun(run); spec != nil {
			costs = spec.Costs
		}
		s, err := stats.Compute(run, r, costs)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: run %d: %w", path, run.ID, err)
		}
		all = append(all, s)
	}
	return all, nil
}

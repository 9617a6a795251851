package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/runner/replay"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

func newReplayCmd() *cobra.Command {
	var (
		step      bool
		at, until string
		format    string
		open      openFlags
	)
	cmd := &cobra.Command{
		Use:   "replay TRACE",
		Short: "Re-execute a recorded run and compare every event; step through it",
		Long: `replay re-executes a run dmx recorded (by run over UDP, or by sim): the same
algorithm state machines, in the same node runtime, are fed per process the
inputs the trace recorded (start, deliveries in the recorded order with the
clocks of their sends, timer firings, requests and releases, crashes and
recoveries with what was persisted; random draws come from the streams the
run's seed and each incarnation give). Every event they produce is compared
with the recording: kind, sequence number, Lamport and vector clock, message,
peer, resource and detail (not wall time).

It prints that the replay matches, with the events reproduced per process,
or the first divergence: the process, the input it was handling, what was
recorded there, what the machine did now, and its state before the input.

--step walks the run one event at a time in a causal order (every event
after its process's previous one, every receive after its send) and prints,
after each input, the state of the process's machines (queue, votes,
token, deferred replies, clocks, leader, term: what each algorithm shows)
and what the input changed; outputs are printed with the input they come
from. --at P3#40 starts printing there (the replay runs silently up to
it); --until P3#60 ends the replay after that event. --format json prints
one JSON object a line: {"step": ...} for each step, then {"result": ...}.

The trace is first checked for damage anywhere in its file
(--no-integrity-check skips that); a damaged trace is bad input.

Exit code: 0 the replay matches; 1 it diverges; 3 it matches up to where
the run was cut short; 2 the trace cannot be replayed (imported from
another tool, an algorithm this dmx does not have, a broken trace), or it
diverges on a run another version of dmx recorded.`,
		Example: `  dmx replay run.db
  dmx replay run.db --step | less
  dmx replay run.db --run 2 --at P3#40 --until P3#60
  dmx replay run.db --step --format json | jq -c '.step.state.machines'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, render.ReplayFormats...); err != nil {
				return &exitError{exitUsage, err}
			}
			var from, to trace.Ref
			var err error
			if at != "" {
				if from, err = trace.ParseRef(at); err != nil {
					return &exitError{exitUsage, fmt.Errorf("--at: %w", err)}
				}
				step = true
			}
			if until != "" {
				if to, err = trace.ParseRef(until); err != nil {
					return &exitError{exitUsage, fmt.Errorf("--until: %w", err)}
				}
			}
			st, runs, err := open.runs(args[0])
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer st.Close()
			out := cmd.OutOrStdout()
			code := exitOK
			for _, run := range runs {
				c, err := replayRun(out, st, run, replayFlags{step: step, at: from, until: to, format: format})
				if err != nil {
					return &exitError{exitUsage, err}
				}
				code = worse(code, c)
			}
			return verdictExit(code)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&step, "step", false, "print every event with its process's state and what changed")
	fs.StringVar(&at, "at", "", "print steps from this event on, e.g. P3#40 (implies --step)")
	fs.StringVar(&until, "until", "", "end the replay after this event, e.g. P3#60")
	fs.StringVar(&format, "format", "text", "output: text or json (JSON lines with --step)")
	open.registerRun(cmd, "replay only this run of the trace (default: every run)")
	return cmd
}

type replayFlags struct {
	step      bool
	at, until trace.Ref
	format    string
}

// replayRun replays one run of st and prints it; it returns the run's exit
// code, or an error when the run cannot be replayed.
func replayRun(out interface{ Write([]byte) (int, error) }, st *trace.Store, run trace.Run, f replayFlags) (int, error) {
	src := func() (trace.Reader, error) { return st.Events(run.ID) }
	opt := replay.Options{Lookup: lookupFor(run), Until: f.until}
	var werr error
	showing := f.at == (trace.Ref{})
	if f.step {
		opt.Visit = func(s *replay.Step) bool {
			if !showing && s.Event.Ref() == f.at {
				showing = true
			}
			if showing {
				werr = render.ReplayStep(out, f.format, s)
			}
			return werr == nil
		}
	}
	res, err := replay.Run(run, src, opt)
	if err != nil {
		return exitUsage, fmt.Errorf("%s: run %d: %w", st.Path(), run.ID, err)
	}
	if werr != nil {
		return exitUsage, werr
	}
	// An event to start or stop at that the replay went past the whole
	// run without meeting is not in it: say so rather than print nothing
	// (or everything).
	if res.Divergence == nil {
		for _, x := range []struct {
			flag string
			ref  trace.Ref
			met  bool
		}{{"--at", f.at, showing}, {"--until", f.until, res.Stopped}} {
			if x.ref != (trace.Ref{}) && !x.met {
				return exitUsage, fmt.Errorf("%s %v: run %d of %s has no such event (%s replayed; --run chooses the run)",
					x.flag, x.ref, run.ID, st.Path(), plural.Count(res.Events, "event"))
			}
		}
	}
	info := render.ReplayInfo{File: st.Path(), Version: toolVersion()}
	if err := render.ReplayResult(out, f.format, res, info); err != nil {
		return exitUsage, err
	}
	switch {
	case res.Divergence != nil && run.ToolVersion != "" && run.ToolVersion != info.Version:
		return exitUsage, nil
	case res.Divergence != nil:
		return exitViolated, nil
	case res.Cut && !res.Stopped:
		return exitInconclusive, nil
	}
	return exitOK, nil
}

// worse returns the exit code that says more of two: bad input, then a
// violation, then inconclusive, then ok.
func worse(a, b int) int {
	rank := map[int]int{exitOK: 0, exitInconclusive: 1, exitViolated: 2, exitUsage: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/explore"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

func newExploreCmd() *cobra.Command {
	var (
		opt       explore.Options
		faults    string
		checks    []string
		out, scen string
		format    string
		timeout   time.Duration
		noShrink  bool
		appendRun bool     // --append: -o may name an existing trace
		program   runFlags // --exec, --name
	)
	plan := runner.NewPlan(runner.DriverSim)
	plan.N, plan.Workload.Entries, plan.Seed = 3, 2, 1
	cmd := &cobra.Command{
		Use:   "explore ALGO [flags]",
		Short: "Search schedules for a violation, shrink it, write it as a trace and a scenario",
		Long:  exploreLong(),
		Example: `  dmx explore maekawa -n 3 --entries 1            # basic Maekawa deadlocks
  dmx explore lamport --reorder                    # Lamport's algorithm needs FIFO channels
  dmx explore majority -n 2 --param forget=true --param coordinators=1 --faults crash,restart
  dmx explore central -n 2 --entries 1 --faults loss  # a lost grant: a process waits for ever
  dmx explore ricart-agrawala -n 3 --entries 1     # exhausts the space: no violation
  dmx explore tomcast -n 4 --entries 2 --reorder --walks 2000
  dmx explore --exec 'python3 examples/programs/central-buggy.py' --walks 50`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: algorithmNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if program.exec == "--help" || program.exec == "-h" {
				return cmd.Help() // dmx explore --exec --help: the flag took --help for its command
			}
			if err := checkFormat(format, render.ExploreFormats...); err != nil {
				return &exitError{exitUsage, err}
			}
			if err := exploreTarget(cmd, &program, &plan, &opt, &checks, args); err != nil {
				return &exitError{exitUsage, err}
			}
			if err := faultKinds(faults, &opt); err != nil {
				return &exitError{exitUsage, err}
			}
			cs, err := selectChecks("--checks", checks)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			opt.Plan, opt.Checks = plan, cs
			if timeout > 0 {
				opt.Deadline = time.Now().Add(timeout)
			}
			if out == "" {
				out = freeName("dmx-explore-"+plan.Spec.Name, ".db", ".json")
			}
			if scen == "" {
				// One scenario per run: a run added to a trace gets a
				// scenario of its own beside the first's.
				scen = freeName(strings.TrimSuffix(out, ".db"), ".json")
			}
			if err := checkOutput(file{"the scenario (--scenario-out)", scen}, file{"the trace (-o)", out}); err != nil {
				return &exitError{exitUsage, err}
			}
			if err := checkAppend(out, appendRun); err != nil {
				return &exitError{exitUsage, err}
			}
			rep, err := runExplore(cmd, opt, !noShrink, out, scen)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			if err := render.Explore(cmd.OutOrStdout(), format, rep); err != nil {
				return &exitError{exitUsage, err}
			}
			return verdictExit(map[string]int{"violated": exitViolated, "inconclusive": exitInconclusive}[render.ExploreVerdict(rep)])
		},
	}
	fs := cmd.Flags()
	fs.IntVarP(&plan.N, "nodes", "n", plan.N, "number of processes")
	fs.IntVar(&plan.Workload.Entries, "entries", plan.Workload.Entries, "critical-section entries (multicasts) per process")
	fs.StringSliceVar(&plan.Workload.Resources, "resources", plan.Workload.Resources, "resources each process locks")
	fs.Var(&paramsFlag{&plan.Params}, "param", "algorithm parameter KEY=VALUE (repeatable; see dmx list)")
	fs.BoolVar(&plan.Sim.Reorder, "reorder", false, "let messages between two processes overtake each other (channels are FIFO by default)")
	fs.Uint64Var(&plan.Seed, "seed", plan.Seed, "seed of the machines' random streams and of --walks")
	fs.IntVar(&opt.Walks, "walks", 0, "make this many seeded random walks instead of an exhaustive search")
	fs.Int64Var(&opt.MaxStates, "max-states", 5_000_000, "visit at most this many states (0: no bound)")
	fs.IntVar(&opt.MaxDepth, "depth", explore.DefaultMaxDepth, "explore schedules of at most this many steps")
	fs.DurationVar(&timeout, "timeout", 0, "end the search after this long (0: no limit)")
	fs.StringVar(&faults, "faults", "", "fault kinds the search may inject: crash, restart (a crash, then a recovery), loss (raw channels), comma-separated")
	fs.IntVar(&opt.MaxFaults, "max-faults", 1, "crashes and losses one schedule may have, with --faults")
	fs.StringSliceVar(&checks, "checks", nil, "checks a violation must violate, comma-separated or repeated (default: those the algorithm claims)")
	fs.BoolVar(&noShrink, "no-shrink", false, "report the violation as found, without shrinking it")
	fs.BoolVar(&opt.NoSleep, "no-reduce", false, "no partial-order reduction (sleep sets): for comparison")
	fs.BoolVar(&opt.NoHash, "no-hash", false, "no state hashing: walk the tree of all schedules (for comparison)")
	fs.BoolVar(&opt.NoShift, "no-shift", false, "count states that differ only by a shift of every Lamport timestamp apart (for comparison)")
	fs.StringVarP(&out, "out", "o", "", "trace file to write the violation into (default dmx-explore-ALGO.db, or -2, -3... when that exists)")
	fs.BoolVar(&appendRun, "append", false, "add the violation's run to the existing trace -o names (without it an existing trace is refused)")
	fs.StringVar(&scen, "scenario-out", "", "scenario file to write the violation's schedule into (default: the trace's name with .json, or -2, -3... when that exists)")
	fs.StringVar(&format, "format", "text", "output: text or json")
	fs.StringVar(&program.exec, "exec", "", "search a program of your own (docs/protocol.md) in place of ALGO: CMD through /bin/sh -c once per node; random walks only")
	fs.StringVar(&program.name, "name", "", "--exec: the program's name (default: the command's first word)")
	return cmd
}

// exploreTarget sets what plan explores: ALGO (args[0]), or the program
// of --exec, which is searched by random walks (100 unless --walks says)
// and held to the checks that hold of any trace (unless --checks).
func exploreTarget(cmd *cobra.Command, program *runFlags, plan *runner.Plan, opt *explore.Options, checks *[]string, args []string) error {
	switch {
	case program.exec != "":
		if err := program.setupProgram(cmd, plan, args, ""); err != nil {
			return err
		}
		if !cmd.Flags().Changed("walks") {
			opt.Walks = 100
		}
		if *checks == nil {
			*checks = generalChecks()
		}
	case len(args) == 0:
		return fmt.Errorf("no algorithm: name one (dmx explore ALGO) or run a program of your own (--exec CMD)")
	default:
		if plan.Spec = registry.Lookup(args[0]); plan.Spec == nil {
			return fmt.Errorf("unknown algorithm %q; the algorithms are: %s", args[0], strings.Join(registry.Names(), ", "))
		}
	}
	return nil
}

// exploreLong is the long help of dmx explore: what it does, in full.
func exploreLong() string {
	return `explore searches the schedules of a small run of ALGO: which message arrives
next, when a timer fires, when a process asks for or leaves the critical
section, and, with --faults, where processes crash or restart and which
messages are lost (the channels are then raw: a reliable channel would
send a lost message again, which is only a delay). The machines
are the algorithm's own, in the node runtime; time is left out (any step
that can happen may come next; channels deliver in order unless --reorder).

By default the search is exhaustive: depth first, with state hashing (a
state met again is not explored again) and sleep sets, a partial-order
reduction that is sound here (steps at different processes commute, and
every reachable state is still visited). It says how many states it
visited and whether it exhausted them. --walks N makes N seeded random
walks instead, for runs too large to exhaust.

Mutual exclusion, total order and final states where a process waits for
ever are watched on every state; a suspected violation is confirmed by the
checks the algorithm claims (--checks to choose), on the trace its schedule
records. The first one found is shrunk (fewer processes, entries, steps and
faults), then a breadth-first search looks for a shorter schedule of the
shrunk run. It is written as a trace (-o; dmx check, render and replay take
it) and a scenario with its schedule (dmx sim --scenario records it again).

Exit code: 1 a violation was found; 0 none, and the space was exhausted;
3 none found, but the search did not visit every state.

--exec CMD searches a program of your own (docs/protocol.md) in place of
ALGO: its state is the program's, which dmx can neither copy nor hash, so
the search is random walks only (--walks, 100 by default), each from a
fresh start of the programs; a violation is shrunk as for dmx's own
algorithms, and checked with every check that holds of any trace.`
}

// generalChecks names the checks that hold of any trace (analyze.General):
// those of a program of the user's own.
func generalChecks() []string {
	var out []string
	for _, c := range analyze.General() {
		out = append(out, c.Name)
	}
	return out
}

// faultKinds reads --faults: the kinds of faults the search may inject.
func faultKinds(spec string, opt *explore.Options) error {
	if spec == "" {
		opt.MaxFaults = 0
		return nil
	}
	for _, k := range strings.Split(spec, ",") {
		switch strings.TrimSpace(k) {
		case "crash":
			opt.Crash = true
		case "restart":
			opt.Crash, opt.Restart = true, true
		case "loss":
			opt.Lose = true
		default:
			return fmt.Errorf("--faults %q: explore injects crash, restart (a crash, then a recovery) and loss", k)
		}
	}
	if opt.MaxFaults < 1 {
		return fmt.Errorf("--max-faults %d: with --faults, at least 1", opt.MaxFaults)
	}
	return nil
}

// runExplore searches, shrinks the violation found and writes it. An
// interrupt ends the search (or the shrinking) as a deadline would: what
// was found so far is reported and written; a second one changes nothing
// (a third kills dmx, as for a recording).
func runExplore(cmd *cobra.Command, opt explore.Options, shrink bool, out, scen string) (*render.ExploreReport, error) {
	stderr := cmd.ErrOrStderr()
	it := catchInterruptsSaying(stderr, "ending the search and reporting what it found so far")
	defer it.stop()
	opt.Stop = it.ctx.Done()
	if isTerminal(stderr) {
		opt.Progress = func(s explore.Stats) {
			fmt.Fprintf(stderr, "\r  states %d  steps %d  depth %d ", s.States, s.Transitions, s.MaxDepth)
		}
	}
	res, err := explore.Search(opt)
	if opt.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		return nil, err
	}
	p := opt.Plan
	rep := &render.ExploreReport{Algorithm: p.Spec.Name, N: p.N, Entries: p.Workload.Entries, Reorder: p.Sim.Reorder, Raw: opt.Lose, Walks: opt.Walks, Stats: res.Stats}
	var kinds []string
	if opt.Crash {
		kinds = append(kinds, "crash")
	}
	if opt.Restart {
		kinds = append(kinds, "restart")
	}
	if opt.Lose {
		kinds = append(kinds, "loss")
	}
	if len(kinds) > 0 {
		rep.Faults = fmt.Sprintf("%s (at most %d)", strings.Join(kinds, ", "), opt.MaxFaults)
	}
	v := res.Violation
	if v == nil {
		return rep, nil
	}
	if shrink {
		if v, err = explore.Shrink(v, opt, 0); err != nil {
			return nil, err
		}
		rep.Shrunk = true
		if !explore.Opaque(v.Plan) {
			// A program's state cannot be hashed: no breadth-first
			// search for a shorter schedule.
			var proof explore.Proof
			if v, proof, err = explore.Shortest(v, opt, 0); err != nil {
				return nil, err
			}
			rep.Proof = &proof
		}
	}
	rep.Violation = v
	run, err := writeViolation(out, v)
	if err != nil {
		return nil, err
	}
	rep.Trace, rep.Run, rep.Scenario = out, run, scen
	sc := runner.NewScenario(v.Plan)
	sc.Doc = fmt.Sprintf("dmx explore %s found this schedule: %s (%s violated).", p.Spec.Name, v.Watched, v.Check)
	sc.Expect = &runner.Expectation{Verdict: "violated", Checks: []string{v.Check}}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "deliver P0>P1" as written
	enc.SetIndent("", "  ")
	if err := enc.Encode(sc); err != nil {
		return nil, err
	}
	if err := os.WriteFile(scen, b.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("write scenario: %w", err)
	}
	return rep, nil
}

// writeViolation records the violation's trace as one more run of the
// trace at path and returns the run's id.
func writeViolation(path string, v *explore.Violation) (int64, error) {
	row := v.Plan.RunRow()
	row.ToolVersion, row.Started = toolVersion(), time.Now().UnixNano()
	row.Ended, row.Complete, row.Status = row.Started, v.Run.Complete, "explore: "+v.Watched
	return trace.WriteRun(path, row, v.Events)
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/analyze/tally"
	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/exec"
	"github.com/dmxlab/dmx/runner/nemesis"
	"github.com/dmxlab/dmx/runner/netns"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/sweep"
	"github.com/dmxlab/dmx/runner/udp"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// sweepFlags are dmx sweep's own flags beside the plan's.
type sweepFlags struct {
	runFlags
	seeds   string
	runs    uint64
	shard   string
	nemesis string
	horizon time.Duration
	workers int
	real    bool
	only    []string
	require []string
}

func newSweepCmd() *cobra.Command {
	f := &sweepFlags{}
	f.randomFaults = true
	f.formats = render.TallyFormats
	cmd := &cobra.Command{
		Use:   "sweep ALGO [flags] | sweep --exec CMD [flags]",
		Short: "Run many seeds into one trace, check each, tally the verdicts",
		Long: `sweep runs the same run over many seeds (--seeds A..B, or --runs N for
1..N) in the simulator, or as real processes with --real, each seed a run
of one trace, and checks every run as dmx check would. Workers on every
core simulate and check; one writer records the runs in seed order.

--faults random gives each seed a random fault schedule of its own, drawn
from its seed alone (the same seed, the same schedule), recorded in
runs.faults like any faults: the rerun line of a failing seed names them.
--nemesis chooses the kinds and how often and how long (after Jepsen's
nemesis): ` + "`--nemesis pause:who=leader:for=300ms-600ms,partition`" + `. Without
every=, a run gets one fault on average, of any of the kinds given.
Nemesis kinds: ` + nemesisKinds() + `.
Options: every=D (the mean time between two faults of the kind),
for=DIST (how long one lasts), who=any|PROC|leader|coordinator|token|cs,
rate=R (loss, duplicate), by=DIST (delay, reorder, skew), max=K,
amnesia (restart). Faults are drawn over the run's horizon (--horizon;
default: an election's duration, else the run's estimated span).

The table says per check how many runs were ok, violated, inconclusive
or had nothing to judge (n/a), the violation rate with its 95% Wilson
interval, the first failing seed (the lowest) and the smallest (fewest
events) with the command line that records it again; then per fault
kind, how often the runs it was injected into violated each check.
--shard K/N runs the K-th of N equal parts of the seeds, so that a CI
matrix spreads a sweep over machines; dmx merge joins their traces, and
dmx check --summary prints the same table from any traces.

Ctrl-C ends the sweep with the runs done: the runs it cut short are left
out, and dmx says which seeds to run again (exit 3).
Exit code: as dmx check's: 0 every run ok, 1 some run violated a property,
3 inconclusive, 2 bad input.`,
		Example: `  dmx sweep ricart-agrawala --runs 1000 -n 5
  dmx sweep lamport --reorder --contention high --seeds 1..200   # how often without FIFO channels
  dmx sweep bully --faults random --runs 500                       # every kind of fault, one per run on average
  dmx sweep bully --nemesis pause:who=leader:for=100ms-600ms --runs 300
  dmx sweep ricart-agrawala --faults random --seeds 1..1000 --shard 2/4 -o part2.db
  dmx sweep --scenario examples/bully-paused-leader.json --real --runs 5
  dmx sweep --exec ./my-lock --faults random --runs 50   # a program of your own (docs/protocol.md)`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return registry.Names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error { return f.run(cmd, args) },
	}
	f.registerPlan(cmd, runner.DriverSim)
	f.registerExec(cmd)
	fs := cmd.Flags()
	fs.StringVar(&f.seeds, "seeds", "", "the seeds to run, A..B (default 1..N of --runs)")
	fs.Uint64Var(&f.runs, "runs", 100, "run seeds 1..N (--seeds chooses others)")
	fs.StringVar(&f.shard, "shard", "", "run the K-th of N equal parts of the seeds, K/N (a CI matrix's job)")
	fs.StringVar(&f.nemesis, "nemesis", "", "random fault schedules of these kinds, e.g. pause:who=leader:for=100ms-500ms,partition (random: every kind; implies --faults random)")
	fs.DurationVar(&f.horizon, "horizon", 0, "draw the random faults within this time from the start (default: an election's duration, else the run's estimated span)")
	fs.IntVar(&f.workers, "workers", 0, "runs at once (default: one per core; 1 with --real, whose nodes use the cores)")
	fs.BoolVar(&f.real, "real", false, "run real processes over UDP (dmx run) instead of the simulator")
	fs.StringVarP(&f.out, "out", "o", "", "trace to record into (default dmx-sweep-ALGO-A-B.db; an existing trace gets the runs besides its own)")
	fs.StringVar(&f.format, "format", "table", "output: table, json, or junit (one test case per check)")
	fs.StringSliceVar(&f.only, "checks", nil, "checks to run on each run (default: those that apply to it, as dmx check)")
	fs.StringSliceVar(&f.require, "require", nil, "checks that must not be skipped for want of data (as dmx check)")
	return cmd
}

func nemesisKinds() string {
	names := make([]string, len(nemesis.Kinds))
	for i, k := range nemesis.Kinds {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// setupSweep reads the flags into the sweep's options.
// sweepSeeds are the seeds --seeds or --runs (runsGiven: the flag was
// given) say, or the part of them --shard names.
func (f *sweepFlags) sweepSeeds(runsGiven bool) (sweep.Seeds, error) {
	var seeds sweep.Seeds
	var err error
	switch {
	case f.seeds != "" && runsGiven:
		return seeds, errors.New("--seeds and --runs both say which seeds to run: give one")
	case f.seeds != "":
		if seeds, err = sweep.ParseSeeds(f.seeds); err != nil {
			return seeds, fmt.Errorf("--%w", err)
		}
	case f.runs < 1:
		return seeds, fmt.Errorf("--runs %d: want 1 or more", f.runs)
	default:
		seeds = sweep.Seeds{From: 1, To: f.runs}
	}
	if f.shard != "" {
		k, n, err := sweep.ParseShard(f.shard)
		if err != nil {
			return seeds, fmt.Errorf("--%w", err)
		}
		part, ok := seeds.Shard(k, n)
		if !ok {
			return seeds, fmt.Errorf("--shard %s: seeds %v make %d parts at most: part %d is empty", f.shard, seeds, seeds.Len(), k)
		}
		seeds = part
	}
	return seeds, nil
}

func (f *sweepFlags) setupSweep(cmd *cobra.Command, args []string) (sweep.Options, error) {
	fs := cmd.Flags()
	userOut := f.out
	f.out = "-unused-" // setup's default name is a run's
	p, err := f.setup(cmd, args)
	f.out = userOut
	if err != nil {
		return sweep.Options{}, err
	}
	applies := runner.SimApplies
	o := sweep.Options{Plan: p, Workers: f.workers, Horizon: f.horizon, ToolVersion: toolVersion(), Rerun: rerunLine}
	if f.real {
		for _, name := range []string{"delay", "reorder", "limit", "max-events"} {
			if fs.Changed(name) {
				return o, fmt.Errorf("--%s is the simulator's: real processes (--real) have a real network (faults such as delay:D and reorder:D act on it)", name)
			}
		}
		q := runner.NewPlan(runner.DriverUDP)
		q.Spec, q.N, q.Params, q.Workload, q.Faults, q.Channels, q.Duration, q.Scenario = p.Spec, p.N, p.Params, p.Workload, p.Faults, p.Channels, p.Duration, p.Scenario
		if err := q.Validate(); err != nil {
			return o, f.flagError(cmd, err)
		}
		if err := q.CheckFaults(udp.Applies); err != nil {
			return o, f.flagError(cmd, err)
		}
		o.Plan, applies = q, udp.Applies
		if o.Workers == 0 {
			o.Workers = 1
		}
	}
	if o.Workers < 0 {
		return o, fmt.Errorf("--workers %d: want 1 or more (0: one per core)", o.Workers)
	}
	if o.Horizon < 0 {
		return o, fmt.Errorf("--horizon %v: must not be negative", o.Horizon)
	}
	if o.Seeds, err = f.sweepSeeds(fs.Changed("runs")); err != nil {
		return o, err
	}
	if f.nemesis != "" || f.random {
		spec := nemesis.Spec{Random: true}
		if f.nemesis != "" {
			if spec, err = nemesis.Parse(f.nemesis); err != nil {
				return o, fmt.Errorf("--nemesis: %w", err)
			}
		}
		if err := spec.Check(o.Plan, sweepHorizon(o)); err != nil {
			return o, fmt.Errorf("--nemesis %s: %w", spec, err)
		}
		o.Nemesis = &spec
		// What the driver cannot carry out is refused now (a kind of
		// fault a program of one's own cannot take, say), not at the
		// seed that first draws it.
		for seed := uint64(1); seed <= 16; seed++ {
			q, err := o.PlanOf(seed)
			if err == nil {
				err = q.CheckFaults(applies)
			}
			if err != nil {
				return o, fmt.Errorf("--nemesis %s: %w", spec, err)
			}
		}
	}
	checks, err := selectChecks("--checks", f.only)
	if err != nil {
		return o, err
	}
	required, err := selectChecks("--require", f.require)
	if err != nil {
		return o, err
	}
	copts := checkOptions{only: checks, require: required}
	o.Checks = func(run trace.Run) ([]*analyze.Check, []analyze.Option, error) { return checksFor(run, copts) }
	if f.out == "" {
		f.out = fmt.Sprintf("dmx-sweep-%s-%d-%d.db", p.Spec.Name, o.Seeds.From, o.Seeds.To)
	}
	if f.out == "-" {
		return o, errors.New("-o -: a trace is a file, not a stream; name one")
	}
	if f.scenario != "" && sameFile(f.out, f.scenario) {
		return o, fmt.Errorf("the trace (-o) %s is also the scenario read (--scenario): dmx does not write over its input; choose another name", f.out)
	}
	return o, nil
}

func sweepHorizon(o sweep.Options) time.Duration {
	if o.Horizon > 0 {
		return o.Horizon
	}
	return nemesis.Horizon(o.Plan)
}

// title says what a sweep runs, for its header and its table.
func (f *sweepFlags) title(o sweep.Options) string {
	p := o.Plan
	s := fmt.Sprintf("%s, seeds %v", p.Spec.Name, o.Seeds)
	if f.shard != "" {
		s += " (shard " + f.shard + ")"
	}
	if o.Nemesis != nil {
		s += ", nemesis " + o.Nemesis.String()
	}
	if len(p.Faults) > 0 {
		var fs []string
		for _, x := range p.Faults {
			fs = append(fs, x.String())
		}
		s += ", faults " + strings.Join(fs, ",")
	}
	if p.Driver == runner.DriverUDP {
		s += ", real processes"
	}
	return s
}

func (f *sweepFlags) run(cmd *cobra.Command, args []string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	o, err := f.setupSweep(cmd, args)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	it := catchInterruptsSaying(stderr, "ending the sweep with the runs done (the runs it cut short are left out)")
	defer it.stop()
	if it.interrupted() {
		return &exitError{exitInconclusive, errors.New("sweep: interrupted before the trace was made")}
	}
	st, err := trace.Create(f.out)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	workers := o.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = int(min(uint64(workers), o.Seeds.Len()))
	what := plural.Count(o.Plan.Workload.Entries, "entry") + " each"
	if o.Plan.Spec.Kind == algo.Election {
		what = fmt.Sprintf("for %v", o.Plan.WithDefaults().Duration)
	}
	title := f.title(o)
	fmt.Fprintf(stderr, "dmx sweep %s: %s, %s, %s, %s into %s\n", title, plural.Count(o.Plan.N, "node"), what,
		plural.Count(int(o.Seeds.Len()), "run"), plural.Count(workers, "worker"), f.out)
	if o.Nemesis != nil {
		fmt.Fprintf(stderr, "faults drawn per seed within %v of the start\n", sweepHorizon(o))
	}
	o.Stop = it.ctx.Done()
	o.Drive = f.driver(o, stderr)
	if isTerminal(stderr) {
		start := time.Now()
		var mu sync.Mutex
		last := time.Time{}
		o.Progress = func(written, violated int) {
			mu.Lock()
			defer mu.Unlock()
			if now := time.Now(); now.Sub(last) > 200*time.Millisecond || written == int(o.Seeds.Len()) {
				last = now
				fmt.Fprintf(stderr, "\r\033[K%d/%d runs, %d violated, %v", written, o.Seeds.Len(), violated, now.Sub(start).Round(100*time.Millisecond))
			}
		}
	}
	start := time.Now()
	res, runErr := sweep.Run(st, f.out, o)
	took := time.Since(start)
	if o.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err := st.Close(); err != nil {
		var side *trace.SideFilesError
		if !errors.As(err, &side) && runErr == nil {
			runErr = err
		}
	}
	rate := float64(len(res.Runs)) / took.Seconds()
	fmt.Fprintf(stderr, "recorded %s (%s) into %s in %v: %.0f runs/s\n", plural.Count(len(res.Runs), "run"),
		plural.Count(int(res.Events), "event"), f.out, took.Round(time.Millisecond), rate)
	if runErr != nil {
		return &exitError{exitUsage, fmt.Errorf("sweep: %w (the runs before it are in %s)", runErr, f.out)}
	}
	s := render.Sweep{Title: title, Traces: []string{f.out}, Tally: tally.Of(res.Runs)}
	code := exitCode(s.Verdict)
	if err := render.Tally(stdout, f.format, s); err != nil {
		fmt.Fprintf(stderr, "dmx: write the table: %v\n", err)
		return &exitError{code: exitUsage}
	}
	if res.Stopped {
		return &exitError{exitInconclusive, fmt.Errorf("sweep interrupted: %s of %d done; not run: seeds %s", plural.Count(len(res.Runs), "run"), o.Seeds.Len(), seedList(res.NotRun))}
	}
	return verdictExit(code)
}

// driver returns what carries out one run of the sweep: the simulator
// (bounded as dmx sim bounds its runs), or real processes.
func (f *sweepFlags) driver(o sweep.Options, stderr io.Writer) sweep.Driver {
	if o.Plan.Driver == runner.DriverUDP {
		return func(p runner.Plan, rec runner.Recorder, stop <-chan struct{}) (bool, string, error) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				select {
				case <-stop:
					cancel()
				case <-ctx.Done():
				}
			}()
			hooks := udp.LaunchHooks{Stderr: stderr}
			if exec.IsProgram(p.Params) {
				hooks.NodeArgs = exec.NodeArgs(p.Spec)
			}
			res, err := netns.LaunchPlan(ctx, p, rec, hooks)
			return res.Complete, res.Status, err
		}
	}
	return func(p runner.Plan, rec runner.Recorder, stop <-chan struct{}) (bool, string, error) {
		limit := maxEventsFor(p.Estimate(), f.maxEvents)
		res, err := runner.SimulateWith(p, rec, runner.SimHooks{Stop: stop, MaxEvents: limit})
		return res.Complete, res.Status, err
	}
}

// rerunLine is the command line that records p's run again, as run and
// sim print it (a program of one's own by --exec); a plan that no command
// line says whole gets the line that says the most, with what it leaves
// out.
func rerunLine(p runner.Plan) string {
	args, err := rerunWords(p)
	line := "dmx " + strings.Join(args, " ")
	if err != nil {
		line += " (" + err.Error() + ")"
	}
	return line
}

// rerunWords are the words after "dmx" of the command line that records
// p's run again (a program of one's own by --exec), quoted for a POSIX
// shell, and with them what that line leaves out of p (runner.Plan.Args):
// run and sim print them, sweep's table and the report show them.
func rerunWords(p runner.Plan) ([]string, error) {
	args, err := p.Args()
	args = programArgs(p, args)
	for i, a := range args {
		args[i] = sweep.Quote(a)
	}
	return args, err
}

// seedList prints seeds compactly: 3, 7..12, 20.
func seedList(seeds []uint64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d..%d", seeds[i], seeds[j]))
		} else {
			parts = append(parts, fmt.Sprint(seeds[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

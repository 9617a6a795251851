package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/registry"
	"github.com/dmxlab/dmx/trace"
)

// runFlags are the flags run and sim share (DESIGN.md, "Common flags").
type runFlags struct {
	nodes      int
	seed       uint64
	entries    int
	think      runner.Dist
	hold       runner.Dist
	contention string
	resources  []string
	params     []string
	out        string
	format     string
	noCheck    bool
	scenario   string
	nested     bool
	order      string
	faults     []string
	faultList  []runner.Fault

	// run only
	port     int
	duration time.Duration
	stall    time.Duration

	// sim only
	delay   runner.Dist
	reorder bool
	limit   time.Duration
}

func (f *runFlags) register(cmd *cobra.Command, sim bool) {
	fs := cmd.Flags()
	fs.IntVarP(&f.nodes, "nodes", "n", 5, "number of processes")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of every random choice (0: pick one and print it)")
	fs.IntVar(&f.entries, "entries", 10, "critical-section entries per process")
	f.think = runner.Dist{Min: 0, Max: 20 * time.Millisecond}
	f.hold = runner.Dist{Min: 1 * time.Millisecond, Max: 5 * time.Millisecond}
	fs.Var(&f.think, "think", "time between leaving the critical section and the next request: fixed (5ms) or uniform (0ms-20ms)")
	fs.Var(&f.hold, "hold", "time spent inside the critical section: fixed or uniform range")
	fs.StringVar(&f.contention, "contention", "random", "random: requests when --think says; none: one request at a time in the whole system (time slots); high: everyone asks again at once")
	fs.StringSliceVar(&f.resources, "resources", []string{runner.DefaultResource}, "resources each process locks (each has its own instance of the algorithm)")
	fs.StringVar(&f.scenario, "scenario", "", "read the run from a scenario file (JSON; see examples/); flags given too win")
	fs.BoolVar(&f.nested, "nested", false, "each entry takes every resource, one inside the other (nested locks; see --order)")
	fs.StringVar(&f.order, "order", runner.OrderSame, "lock order of --nested entries: same, reverse-odd (odd processes reverse it: can deadlock) or random")
	fs.StringArrayVar(&f.params, "param", nil, "algorithm parameter KEY=VALUE (see dmx list)")
	fs.StringVarP(&f.out, "out", "o", "", "trace file to record into (default dmx-ALGO-SEED.db; an existing trace gets one more run)")
	fs.StringVar(&f.format, "format", "table", "verdict output: table or json")
	fs.BoolVar(&f.noCheck, "no-check", false, "record only; do not check the trace")
	fs.StringArrayVar(&f.faults, "faults", nil, "inject faults: crash:P@TIME, recover:P@TIME, crash:leader@TIME (repeatable, or comma-separated)")
	if sim {
		f.delay = runner.Dist{Min: 100 * time.Microsecond, Max: 2 * time.Millisecond}
		fs.Var(&f.delay, "delay", "one-way message delay: fixed or uniform range")
		fs.BoolVar(&f.reorder, "reorder", false, "let messages between two processes overtake each other (channels are FIFO by default)")
		fs.DurationVar(&f.limit, "limit", 10*time.Minute, "simulated time after which the run is cut short")
		fs.DurationVar(&f.duration, "duration", 0, "how long an election run lasts in simulated time (default 2s)")
	} else {
		fs.IntVar(&f.port, "port", 0, "node i listens on UDP port PORT+i on 127.0.0.1 (0: free ports)")
		fs.DurationVar(&f.duration, "duration", 0, "mutual exclusion: cut the run short after this long (default 2m); elections: how long the run lasts (default 2s)")
		fs.DurationVar(&f.stall, "stall", 5*time.Second, "end the run when no event happened for this long (a deadlock or starvation)")
	}
}

// setup validates the flags and returns the algorithm, parameters and
// workload. Errors are usage errors.
func (f *runFlags) setup(cmd *cobra.Command, args []string) (*algo.Spec, map[string]string, runner.Workload, error) {
	var procs map[int]runner.ProcWorkload
	var scenarioParams map[string]string
	name := ""
	if len(args) > 0 {
		name = args[0]
	}
	if f.scenario != "" {
		sc, err := runner.LoadScenario(f.scenario)
		if err != nil {
			return nil, nil, runner.Workload{}, err
		}
		if err := f.apply(cmd, sc); err != nil {
			return nil, nil, runner.Workload{}, fmt.Errorf("%s: %w", f.scenario, err)
		}
		if name == "" {
			name = sc.Algorithm
		}
		if procs, err = sc.ProcOverrides(f.nodes); err != nil {
			return nil, nil, runner.Workload{}, fmt.Errorf("%s: %w", f.scenario, err)
		}
		scenarioParams = sc.Params
	}
	if name == "" {
		return nil, nil, runner.Workload{}, fmt.Errorf("no algorithm: name one (dmx %s ALGO) or give a --scenario that does", cmd.Name())
	}
	spec := registry.Lookup(name)
	if spec == nil {
		return nil, nil, runner.Workload{}, fmt.Errorf("unknown algorithm %q; the algorithms are: %s", name, strings.Join(registry.Names(), ", "))
	}
	if f.nodes < 1 {
		return nil, nil, runner.Workload{}, fmt.Errorf("--nodes %d: need at least 1 node", f.nodes)
	}
	if f.nodes > 1000 {
		return nil, nil, runner.Workload{}, fmt.Errorf("--nodes %d: at most 1000 nodes", f.nodes)
	}
	if err := checkFormat(f.format, "table", "json"); err != nil {
		return nil, nil, runner.Workload{}, err
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--duration", f.duration}, {"--stall", f.stall}, {"--limit", f.limit}} {
		if d.v < 0 {
			return nil, nil, runner.Workload{}, fmt.Errorf("%s %v: must not be negative", d.name, d.v)
		}
	}
	if f.delay.Max > runner.MaxDuration {
		// Checked here too, so that no trace is created for it.
		return nil, nil, runner.Workload{}, fmt.Errorf("--delay %v: at most %v (simulated time would overflow)", f.delay, runner.MaxDuration)
	}
	params := map[string]string{}
	for k, v := range scenarioParams {
		f.params = append([]string{k + "=" + v}, f.params...)
	}
	for _, p := range f.params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, nil, runner.Workload{}, fmt.Errorf("--param %q: want KEY=VALUE", p)
		}
		known := false
		for _, sp := range spec.Params {
			known = known || sp.Name == k
		}
		if !known {
			var names []string
			for _, sp := range spec.Params {
				names = append(names, sp.Name)
			}
			if len(names) == 0 {
				return nil, nil, runner.Workload{}, fmt.Errorf("--param %s: %s takes no parameters", k, spec.Name)
			}
			return nil, nil, runner.Workload{}, fmt.Errorf("--param %s: %s has no such parameter (it has: %s)", k, spec.Name, strings.Join(names, ", "))
		}
		params[k] = v
	}
	// A machine validates its parameters when it is built: build one now so
	// that a bad value is a usage error here, not a failure in every node.
	if _, err := spec.New(algo.Config{ID: 0, N: f.nodes, Resource: runner.DefaultResource, Params: params}); err != nil {
		return nil, nil, runner.Workload{}, fmt.Errorf("%s: %w", spec.Name, err)
	}
	wl := runner.Workload{Entries: f.entries, Resources: f.resources, Think: f.think, Hold: f.hold, Nested: f.nested, Order: f.order, Procs: procs}
	switch f.contention {
	case "random":
	case "high":
		wl.Think = runner.Fixed(0)
	case "none":
		wl.Contention = runner.ContentionNone
	default:
		return nil, nil, runner.Workload{}, fmt.Errorf("--contention %q: want random, none or high", f.contention)
	}
	if err := wl.Validate(); err != nil {
		return nil, nil, runner.Workload{}, err
	}
	f.faultList = nil
	for _, spec := range f.faults {
		fl, err := runner.ParseFaults(spec, f.nodes)
		if err != nil {
			return nil, nil, runner.Workload{}, err
		}
		f.faultList = append(f.faultList, fl...)
	}
	if f.seed == 0 {
		var b [8]byte
		rand.Read(b[:])
		f.seed = uint64(binary.LittleEndian.Uint32(b[:]))%1_000_000_000 + 1
	}
	if f.out == "" {
		f.out = fmt.Sprintf("dmx-%s-%d.db", spec.Name, f.seed)
	}
	return spec, params, wl, nil
}

// apply takes the scenario's values for every flag not given on the
// command line.
func (f *runFlags) apply(cmd *cobra.Command, sc *runner.Scenario) error {
	fs := cmd.Flags()
	set := func(name string, has bool, do func() error) error {
		if !has || fs.Lookup(name) == nil || fs.Changed(name) {
			return nil
		}
		if err := do(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	dist := func(d *runner.Dist, v string) func() error { return func() error { return d.Set(v) } }
	return errors.Join(
		set("nodes", sc.Nodes != 0, func() error { f.nodes = sc.Nodes; return nil }),
		set("seed", sc.Seed != 0, func() error { f.seed = sc.Seed; return nil }),
		set("entries", sc.Entries != nil, func() error { f.entries = *sc.Entries; return nil }),
		set("think", sc.Think != "", dist(&f.think, sc.Think)),
		set("hold", sc.Hold != "", dist(&f.hold, sc.Hold)),
		set("delay", sc.Delay != "", dist(&f.delay, sc.Delay)),
		set("contention", sc.Contention != "", func() error { f.contention = sc.Contention; return nil }),
		set("resources", len(sc.Resources) > 0, func() error { f.resources = sc.Resources; return nil }),
		set("nested", sc.Nested, func() error { f.nested = true; return nil }),
		set("order", sc.Order != "", func() error { f.order = sc.Order; return nil }),
		set("reorder", sc.Reorder, func() error { f.reorder = true; return nil }),
		set("faults", len(sc.Faults) > 0, func() error { f.faults = append(sc.Faults, f.faults...); return nil }),
		set("duration", sc.Duration != "", func() (err error) { f.duration, err = time.ParseDuration(sc.Duration); return }),
	)
}

func (f *runFlags) runRow(spec *algo.Spec, params map[string]string, wl runner.Workload, mode string) trace.Run {
	p := map[string]any{"procs": wl.Procs, "entries": wl.Entries, "resources": wl.Resources, "think": f.think.String(), "hold": f.hold.String(), "contention": f.contention}
	if wl.Nested {
		p["nested"], p["order"] = true, wl.Order
	}
	if len(params) > 0 {
		p["algorithm"] = params
	}
	if mode == "sim" {
		p["delay"] = f.delay.String()
		p["reorder"] = f.reorder
	} else {
		p["port"] = f.port
	}
	pj, _ := json.Marshal(p)
	fl := []string{}
	for _, x := range f.faultList {
		fl = append(fl, x.String())
	}
	fj, _ := json.Marshal(fl)
	return trace.Run{
		Algorithm: spec.Name, Nodes: f.nodes, Seed: f.seed, Mode: mode,
		Params: pj, Faults: fj, ToolVersion: toolVersion(),
		Started: time.Now().UnixNano(),
	}
}

func newRunCmd() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run ALGO [flags]",
		Short: "Run an algorithm as real processes over UDP, record the trace, check it",
		Long: `run starts one OS process per node (dmx re-executing itself), which talk
to each other over UDP on 127.0.0.1 with a per-run key, records every event
into a SQLite trace as it happens, then checks the trace and prints the
verdict. Ctrl-C stops the run and leaves a valid trace marked incomplete.

The exit code is the verdict: 0 ok, 1 a property is violated, 3 inconclusive.`,
		Example: `  dmx run ricart-agrawala
  dmx run central -n 8 --entries 20 --seed 42 -o central.db
  dmx run ricart-agrawala --contention none   # no contention: exactly 2(N-1) messages per CS`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return registry.Names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, params, wl, err := f.setup(cmd, args)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			return recordAndCheck(cmd, f, spec, f.runRow(spec, params, wl, "udp"), func(ctx context.Context, rec runner.Recorder, progress func(runner.Progress)) (bool, string, error) {
				res, err := runner.Launch(ctx, runner.LaunchConfig{
					Spec: spec, N: f.nodes, Seed: f.seed, Params: params, Workload: wl,
					BasePort: f.port, Stall: f.stall, Stderr: cmd.ErrOrStderr(), Progress: progress,
					Faults: f.faultList, Duration: f.duration,
				}, rec)
				status := res.Status
				if t := res.Transport; t.Total() > 0 {
					status += fmt.Sprintf("; transport rejected %d datagrams (%d bad key, %d malformed, %d wrong peer)", t.Total(), t.BadMAC, t.Malformed, t.WrongPeer)
				}
				if t := res.Transport; t.Retransmits > 0 {
					status += fmt.Sprintf("; %d datagrams retransmitted", t.Retransmits)
					if t.Abandoned > 0 {
						status += fmt.Sprintf(", %d abandoned to processes that were down", t.Abandoned)
					}
				}
				return res.Complete, status, err
			})
		},
	}
	f.register(cmd, false)
	return cmd
}

func newSimCmd() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "sim ALGO [flags]",
		Short: "Run an algorithm in the deterministic simulator, record the trace, check it",
		Long: `sim runs the same state machines and the same runtime as run, in one
process, on a simulated network with seeded random delays. The same seed
gives the same trace, event for event; wall_ns in its trace is simulated time.`,
		Example: `  dmx sim ricart-agrawala --seed 7
  dmx sim central -n 8 --entries 50 --delay 1ms-20ms --contention high`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return registry.Names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, params, wl, err := f.setup(cmd, args)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			return recordAndCheck(cmd, f, spec, f.runRow(spec, params, wl, "sim"), func(ctx context.Context, rec runner.Recorder, _ func(runner.Progress)) (bool, string, error) {
				res, err := runner.Simulate(runner.SimConfig{
					Spec: spec, N: f.nodes, Seed: f.seed, Params: params, Workload: wl,
					Delay: f.delay, Reorder: f.reorder, Limit: f.limit,
					Faults: f.faultList, Duration: f.duration, Stop: ctx.Done(),
				}, rec)
				return res.Complete, res.Status, err
			})
		},
	}
	f.register(cmd, true)
	return cmd
}

type recorderFunc func(*trace.Event) error

func (r recorderFunc) Record(ev *trace.Event) error { return r(ev) }

// recordAndCheck records one run into the trace f.out with do, then checks
// it and prints the verdict.
func recordAndCheck(cmd *cobra.Command, f *runFlags, spec *algo.Spec, row trace.Run,
	do func(context.Context, runner.Recorder, func(runner.Progress)) (complete bool, status string, err error)) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	st, err := trace.Create(f.out)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer st.Close()
	runID, err := st.BeginRun(row)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	row.ID = runID
	what := fmt.Sprintf("%d entries each", f.entries)
	if spec.Kind == algo.Election {
		d := f.duration
		if d == 0 {
			d = 2 * time.Second
		}
		what = fmt.Sprintf("for %v", d)
	}
	if len(f.faultList) > 0 {
		var fs []string
		for _, x := range f.faultList {
			fs = append(fs, x.String())
		}
		what += ", faults " + strings.Join(fs, ",")
	}
	fmt.Fprintf(stderr, "dmx %s %s: %d nodes, %s, seed %d\n", cmd.Name(), spec.Name, f.nodes, what, f.seed)

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if cmd.Name() == "run" && spec.Kind != algo.Election {
		// For mutual exclusion and multicast the workload ends the run;
		// --duration only caps it (an election run lasts --duration).
		limit := f.duration
		if limit == 0 {
			limit = 2 * time.Minute
		}
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeoutCause(ctx, limit, fmt.Errorf("--duration %v reached", limit))
		defer c2()
	}
	w := st.NewWriter(runID)
	var progress func(runner.Progress)
	if fd, ok := stderr.(interface{ Fd() uintptr }); ok && isatty.IsTerminal(fd.Fd()) {
		progress = func(p runner.Progress) {
			fmt.Fprintf(stderr, "\r  entries %d/%d  events %d ", p.Entries, p.Total, p.Events)
		}
	}
	start := time.Now()
	complete, status, runErr := do(ctx, recorderFunc(w.Add), progress)
	if progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	werr := w.Close()
	if runErr == nil && werr != nil {
		runErr = werr
		complete = false
	}
	if runErr != nil && !strings.HasPrefix(status, "failed") {
		status = "failed: " + runErr.Error()
		complete = false
	}
	if err := st.EndRun(runID, time.Now().UnixNano(), complete, status); err != nil && runErr == nil {
		runErr = err
	}
	fmt.Fprintf(stderr, "recorded run %d: %d events in %v (%s)\n", runID, w.Count(), time.Since(start).Round(time.Millisecond), status)
	if runErr != nil {
		return &exitError{exitUsage, fmt.Errorf("%s: %w (what was recorded is in %s, run %d)", cmd.Name(), runErr, f.out, runID)}
	}
	if f.noCheck {
		fmt.Fprintf(stdout, "trace: %s\n", f.out)
		return nil
	}
	run, err := st.Run(runID)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	reports, err := checkRuns(st, []trace.Run{run}, nil)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	code := printReports(stdout, f.format, reports, defaultMaxShown)
	if f.format == "table" {
		q := fmt.Sprintf("SELECT proc, resource, wait_ns, hold_ns FROM cs_intervals WHERE run = %d", runID)
		switch spec.Kind {
		case algo.Election:
			q = fmt.Sprintf("SELECT proc, kind, leader, term, wall_ns FROM elections WHERE run = %d", runID)
		case algo.Multicast:
			q = fmt.Sprintf("SELECT proc, seq, detail FROM events WHERE run = %d AND kind = 'deliver'", runID)
		}
		p := shellQuote(f.out)
		fmt.Fprintf(stdout, "\ntrace: %s (run %d)\n", f.out, runID)
		fmt.Fprintf(stdout, "look further:\n  dmx check %s\n  dmx stats %s\n  dmx sql %s \"%s\"\n", p, p, p, q)
	}
	return verdictExit(code)
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func checkFormat(f string, valid ...string) error {
	for _, v := range valid {
		if f == v {
			return nil
		}
	}
	return fmt.Errorf("--format %q: want one of %s", f, strings.Join(valid, ", "))
}

func newNodeCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "node",
		Short:  "One node of a run (started by dmx run; not for direct use)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := runner.NodeMain(registry.Lookup, cmd.InOrStdin(), cmd.OutOrStdout()); err != nil && !errors.Is(err, io.EOF) {
				return &exitError{exitUsage, err}
			}
			return nil
		},
	}
}

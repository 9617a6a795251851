package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/exec"
	"github.com/dmxlab/dmx/runner/netns"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/sweep"
	"github.com/dmxlab/dmx/runner/udp"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// runFlags are the flags run and sim share (DESIGN.md, "Common flags"):
// most of them write straight into the run's plan, the rest say where the
// trace goes and how the verdict is shown.
type runFlags struct {
	plan     runner.Plan
	scenario string
	out      string
	format   string
	noCheck  bool
	diagram  string // --diagram FILE; "" beside the trace
	noDiag   bool
	yes      bool
	exec     string // --exec CMD: a program of the user's own (program.go)
	// appendRun (--append) lets -o name an existing trace.
	appendRun bool
	name      string // --name: the program's name
	// maxEvents bounds a simulated run's events (--max-events): 0 for
	// maxEventsFor's bound, < 0 for none.
	maxEvents int64
	// formats are those --format takes (nil: table and json); random
	// lets --faults take "random" (dmx sweep), which sets random.
	formats      []string
	randomFaults bool
	random       bool
}

func (f *runFlags) register(cmd *cobra.Command, d runner.Driver) {
	f.registerPlan(cmd, d)
	fs := cmd.Flags()
	fs.Uint64Var(&f.plan.Seed, "seed", 0, "seed of every random choice (0: pick one and print it)")
	fs.StringVarP(&f.out, "out", "o", "", "trace file to record into (default dmx-ALGO-SEED.db, or dmx-SCENARIO-SEED.db with --scenario; never an existing one)")
	fs.BoolVar(&f.appendRun, "append", false, "add the run to the existing trace -o names (without it an existing trace is refused)")
	fs.StringVar(&f.format, "format", "table", "verdict output: table or json")
	fs.BoolVar(&f.noCheck, "no-check", false, "record only; do not check the trace")
	fs.StringVar(&f.diagram, "diagram", "", "write the run's space-time diagram here (.svg, .png, .dot, .md; default: beside the trace, as .svg)")
	fs.BoolVar(&f.noDiag, "no-diagram", false, "do not draw the run's diagram")
	fs.BoolVarP(&f.yes, "yes", "y", false, "record a very large run (a trace of over 1 GB, estimated) without asking")
	f.registerExec(cmd)
}

// registerExec registers --exec and --name (run, sim, sweep).
func (f *runFlags) registerExec(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.exec, "exec", "", "run a program of your own, speaking the node protocol on stdin/stdout (docs/protocol.md), in place of ALGO: CMD through /bin/sh -c once per node")
	fs.StringVar(&f.name, "name", "", "--exec: the program's name in the trace (default: the command's first word)")
}

// registerPlan registers the flags that describe a run (what run, sim
// and sweep share): the group, the workload, the algorithm's parameters,
// the faults, the channels and the driver's own.
func (f *runFlags) registerPlan(cmd *cobra.Command, d runner.Driver) {
	f.plan = runner.NewPlan(d)
	p, w := &f.plan, &f.plan.Workload
	fs := cmd.Flags()
	fs.IntVarP(&p.N, "nodes", "n", p.N, "number of processes")
	fs.IntVar(&w.Entries, "entries", w.Entries, "critical-section entries per process")
	fs.Var(&w.Think, "think", "time between leaving the critical section and the next request: fixed (5ms) or uniform (0ms-20ms)")
	fs.Var(&w.Hold, "hold", "time spent inside the critical section: fixed or uniform range")
	fs.Var(&w.Contention, "contention", "random: requests when --think says; none: one request at a time in the whole system (time slots); high: everyone asks again at once")
	fs.StringSliceVar(&w.Resources, "resources", w.Resources, "resources each process locks (each has its own instance of the algorithm)")
	fs.StringVar(&f.scenario, "scenario", "", "read the run from a scenario file (JSON; see examples/); flags given too win")
	fs.BoolVar(&w.Nested, "nested", false, "each entry takes every resource, one inside the other (nested locks; see --order)")
	fs.StringVar(&w.Order, "order", w.Order, "lock order of --nested entries: same, reverse-odd (odd processes reverse it: can deadlock) or random")
	fs.Var(&paramsFlag{&p.Params}, "param", "algorithm parameter KEY=VALUE (repeatable; see dmx list)")
	ff := &faultsFlag{fs: &p.Faults}
	// The kinds are listed in dmx run's description, which its help
	// prints above the flags.
	usage := "inject faults, e.g. crash:leader@600ms or loss:20%:to=2@1s-2s (repeatable, or comma-separated; every kind is listed above)"
	if d == runner.DriverSim {
		usage = "inject faults, e.g. crash:leader@600ms or loss:20%:to=2@1s-2s (repeatable, or comma-separated; dmx run --help lists every kind)"
	}
	if f.randomFaults {
		ff.random = &f.random
		usage = "random: each seed draws its own schedule (see --nemesis); or faults every run gets, e.g. pause:leader@600ms-1s (dmx run --help lists every kind)"
	}
	fs.Var(ff, "faults", usage)
	fs.Var(&p.Channels, "channels", "reliable: the transport retransmits, drops duplicates and delivers in order (what the seeds assume); raw: every message one datagram sent once, so injected loss, duplication and reordering reach the algorithm")
	if d == runner.DriverSim {
		fs.Var(&p.Sim.Delay, "delay", "one-way message delay: fixed or uniform range")
		fs.BoolVar(&p.Sim.Reorder, "reorder", false, "let messages between two processes overtake each other (channels are FIFO by default)")
		fs.DurationVar(&p.Sim.Limit, "limit", p.Sim.Limit, "simulated time after which the run is cut short (default: ten times the run's expected length, at least 10m)")
		fs.Int64Var(&f.maxEvents, "max-events", 0, "cut the run short after this many events (0: ten times the run's estimated size, at least 1,000,000, so that a livelock stops; -1: no bound but --limit)")
		fs.DurationVar(&p.Duration, "duration", 0, "how long an election run lasts in simulated time (default 2s)")
	} else {
		fs.IntVar(&p.UDP.BasePort, "port", 0, "node i listens on UDP port PORT+i on 127.0.0.1 (0: free ports)")
		fs.DurationVar(&p.Duration, "duration", 0, "mutual exclusion: cut the run short after this long (default 2m); elections: how long the run lasts (default 2s)")
		fs.DurationVar(&p.UDP.Stall, "stall", p.UDP.Stall, "end the run when no event happened for this long (a deadlock or starvation); a node stopped by SIGSTOP is waited for, not a stall")
		fs.Var(&p.UDP.Net, "net", "loopback: every node on 127.0.0.1; netns (root): each node in a network namespace of its own, at 198.18.0.N on a bridge with no route out, partitions and loss made by the kernel (nftables), delay by netem where the kernel has it")
	}
}

// paramsFlag is --param KEY=VALUE, repeatable.
type paramsFlag struct{ m *map[string]string }

func (v *paramsFlag) Set(s string) error {
	k, val, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE")
	}
	if *v.m == nil {
		*v.m = map[string]string{}
	}
	(*v.m)[k] = val
	return nil
}

func (v *paramsFlag) String() string {
	var kv []string
	for k, val := range *v.m {
		kv = append(kv, k+"="+val)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

func (v *paramsFlag) Type() string { return "KEY=VALUE" }

// faultsFlag is --faults SPEC, repeatable. With random set (dmx sweep),
// the item "random" sets it instead of naming a fault.
type faultsFlag struct {
	fs     *[]runner.Fault
	random *bool
}

func (v *faultsFlag) Set(s string) error {
	if v.random != nil {
		var rest []string
		for _, item := range strings.Split(s, ",") {
			if strings.TrimSpace(item) == "random" {
				*v.random = true
			} else {
				rest = append(rest, item)
			}
		}
		s = strings.Join(rest, ",")
	}
	fl, err := runner.ParseFaults(s)
	*v.fs = append(*v.fs, fl...)
	return err
}

func (v *faultsFlag) String() string {
	var out []string
	for _, f := range *v.fs {
		out = append(out, f.String())
	}
	return strings.Join(out, ",")
}

func (v *faultsFlag) Type() string { return "faults" }

// setup returns the plan the flags, the scenario file and the algorithm
// named on the command line describe, validated. Errors are usage errors.
func (f *runFlags) setup(cmd *cobra.Command, args []string) (runner.Plan, error) {
	if f.exec == "--help" || f.exec == "-h" {
		// dmx run --exec --help: the flag took --help for its command.
		return f.plan, errHelp
	}
	p := f.plan
	name, scenarioName := "", ""
	if len(args) > 0 {
		name = args[0]
	}
	if f.scenario != "" {
		sc, err := runner.LoadScenario(f.scenario)
		if err != nil {
			return p, err
		}
		if err := sc.Apply(&p, cmd.Flags().Changed); err != nil {
			return p, err
		}
		if name == "" {
			name, scenarioName = sc.Algorithm, sc.Algorithm
		}
	}
	switch {
	case f.exec != "" || len(args) == 0 && exec.IsProgram(p.Params):
		if f.exec != "" {
			// A scenario of one of dmx's algorithms run by a program of
			// the user's own: the scenario's name is the algorithm's.
			scenarioName = ""
		}
		if err := f.setupProgram(cmd, &p, args, scenarioName); err != nil {
			return p, f.flagError(cmd, err)
		}
	case f.name != "":
		return p, fmt.Errorf("--name names a program of your own: give its command with --exec")
	case name == "":
		return p, fmt.Errorf("no algorithm: name one (dmx %s ALGO), run a program of your own (--exec CMD), or give a --scenario that does", cmd.Name())
	default:
		if p.Spec = registry.Lookup(name); p.Spec == nil {
			return p, fmt.Errorf("unknown algorithm %q; the algorithms are: %s", name, strings.Join(registry.Names(), ", "))
		}
	}
	formats := f.formats
	if formats == nil {
		formats = []string{"table", "json"}
	}
	if err := checkFormat(f.format, formats...); err != nil {
		return p, err
	}
	if err := p.Validate(); err != nil {
		return p, f.flagError(cmd, err)
	}
	// What the plan's driver cannot carry out is refused now, before the
	// trace exists.
	applies := runner.SimApplies
	switch {
	case p.UDP.Net == runner.NetNS:
		applies = netns.Applies
		// Refused now, before the trace exists, with what it needs.
		if err := netns.Check(); err != nil {
			return p, err
		}
	case p.Driver == runner.DriverUDP:
		applies = udp.Applies
	}
	if err := p.CheckFaults(applies); err != nil {
		return p, f.flagError(cmd, err)
	}
	p.PickSeed()
	if len(p.Schedule) > 0 {
		// Carry the schedule out once, with the seed the run uses, before
		// the trace exists: a step that cannot happen is the scenario's
		// mistake, not a run.
		if _, err := runner.Simulate(p, nil, nil); err != nil {
			return p, fmt.Errorf("%s: %w", f.scenario, err)
		}
	}
	if f.out == "" {
		f.out = defaultTraceName(p.Spec.Name, f.scenario, p.Seed)
	}
	if f.out == "-" {
		return p, errors.New("-o -: a trace is a file, not a stream; name one")
	}
	if f.diagram != "" && !f.noDiag {
		if err := checkOutput(file{"the diagram (--diagram)", f.diagram}, file{"the trace (-o)", f.out}, file{"the scenario read (--scenario)", f.scenario}); err != nil {
			return p, err
		}
	}
	if f.scenario != "" && sameFile(f.out, f.scenario) {
		return p, fmt.Errorf("the trace (-o) %s is also the scenario read (--scenario): dmx does not write over its input; choose another name", f.out)
	}
	if err := checkAppend(f.out, f.appendRun); err != nil {
		return p, err
	}
	return p, nil
}

// flagError names where the wrong part of a plan came from: the flag
// ("--nodes 0: need at least 1", where the library says "nodes 0: ..."),
// or else the scenario file.
func (f *runFlags) flagError(cmd *cobra.Command, err error) error {
	var pe *runner.PlanError
	if !errors.As(err, &pe) {
		return err
	}
	name := pe.Field
	switch name {
	case "parameter":
		name = "param"
	case "fault":
		name = "faults"
	case "base port":
		name = "port"
	}
	fs := cmd.Flags()
	if f.scenario != "" && (fs.Lookup(name) == nil || !fs.Changed(name)) {
		return fmt.Errorf("%s: %w", f.scenario, err)
	}
	if fs.Lookup(name) == nil {
		return err
	}
	e := *pe
	e.Field = "--" + name
	return &e
}

func newRunCmd() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run ALGO [flags]",
		Short: "Run an algorithm as real processes over UDP, record the trace, check it",
		Long: `run starts one OS process per node (dmx re-executing itself), which talk
to each other over UDP on 127.0.0.1 with a per-run key, records every event
as it happens (into a spool file beside the trace, which a thread of the
lowest priority turns into the SQLite trace behind the run, so that the
recording takes no core the nodes want), then checks the trace and prints
the verdict. Ctrl-C stops the run and leaves a valid trace marked incomplete.

The exit code is the verdict: 0 ok, 1 a property is violated, 3 inconclusive.

Network faults act on the real datagrams between the processes: each node's
transport judges every datagram it sends against the faults in force, and
the runner opens and closes their windows over the control pipe. A dropped
message is a drop event of its sender. With reliable channels (the default)
the transport sends a lost datagram again, so the algorithm sees loss as
delay and the message is delivered in the end (fate delivered, a drop event
per lost copy); --channels raw shows loss as it is (fate dropped). A crash
triggered by an event (crash:cs, crash:2@enter#3) is a SIGKILL sent as soon
as the runner has recorded that event: the process may record a few more
before it dies. A pause stops the process with SIGSTOP and resumes it with
SIGCONT; both are fault events in the trace.

--exec CMD runs a program of your own in place of ALGO: dmx starts CMD
through /bin/sh -c once per node, speaks the node protocol (version 1, one
JSON object a line: docs/protocol.md) on its stdin and stdout, and does the
rest: real UDP between the nodes, the faults (a crash is SIGKILL of the
program, a pause SIGSTOP, a restart starts it again with "restart":true),
the clocks, the trace and the checks. Its stderr is kept (note events) and
shown here, each line after its node. --name names it in the trace
(default: the command's first word); --param KEY=VALUE reaches it in its
init line, but for dmx's own: kind=election (no workload; the run lasts
--duration), timeout=10s (how long it may take to answer one input),
validity=highest-id (the rule check validity holds its leaders to). A line
that is not valid protocol, a program that dies, hangs or floods is a
finding of check protocol naming the node and the line.

` + runner.FaultHelp(),
		Example: `  dmx run ricart-agrawala
  dmx run central -n 8 --entries 20 --seed 42 -o central.db
  dmx run ricart-agrawala --contention none   # no contention: exactly 2(N-1) messages per CS
  dmx run bully --faults pause:leader@600ms-1.2s   # the paused leader comes back to a new one
  dmx run ricart-agrawala --faults 'loss:20%' --channels raw   # raw loss: requests never answered
  dmx run --exec 'python3 examples/programs/central.py' -n 4   # your own program, one per node (docs/protocol.md)
  dmx run --exec ./ricart --faults crash:1@300ms,recover:1@600ms   # SIGKILL, then a start with "restart":true`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: algorithmNames,
		RunE: f.runE(func(cmd *cobra.Command, p runner.Plan, r recording) (bool, string, []string, error) {
			hooks := udp.LaunchHooks{Stderr: cmd.ErrOrStderr(), Hurry: r.hurry}
			if exec.IsProgram(p.Params) {
				hooks.NodeArgs = exec.NodeArgs(p.Spec)
			}
			res, err := netns.LaunchPlan(r.ctx, p, r.rec, hooks)
			return res.Complete, res.Status + transportNote(res.Transport), res.Notes, err
		}),
	}
	f.register(cmd, runner.DriverUDP)
	return cmd
}

// runE is the RunE of dmx run and dmx sim: the plan their flags say, then
// carry records it, checked and reported by recordAndCheck.
func (f *runFlags) runE(carry func(cmd *cobra.Command, p runner.Plan, r recording) (bool, string, []string, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		p, err := f.setup(cmd, args)
		if err == errHelp {
			return cmd.Help()
		}
		if err != nil {
			return &exitError{exitUsage, err}
		}
		return recordAndCheck(cmd, f, p, func(r recording) (bool, string, []string, error) { return carry(cmd, p, r) })
	}
}

// algorithmNames completes a command's ALGO argument.
func algorithmNames(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return registry.Names(), cobra.ShellCompDirectiveNoFileComp
}

// transportNote is what a run's status adds of what the nodes' transports
// counted: datagrams rejected, retransmitted, abandoned, given up, dropped
// by faults ("" for none).
func transportNote(t udp.Rejections) string {
	var status string
	if t.Total() > 0 {
		status += fmt.Sprintf("; transport rejected %s (%d bad key, %d malformed, %d wrong peer)", plural.Count(t.Total(), "datagram"), t.BadMAC, t.Malformed, t.WrongPeer)
	}
	if t.Retransmits > 0 {
		status += fmt.Sprintf("; %s retransmitted", plural.Count(t.Retransmits, "datagram"))
		if t.Abandoned > 0 {
			status += fmt.Sprintf(", %d abandoned to processes that were down", t.Abandoned)
		}
		if t.GivenUp > 0 {
			status += fmt.Sprintf(", %d given up after the faults dropped every copy (recorded as drops)", t.GivenUp)
		}
	}
	if t.FaultDrops > 0 {
		status += fmt.Sprintf("; faults dropped %d datagrams", t.FaultDrops)
	}
	return status
}

func newSimCmd() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "sim ALGO [flags]",
		Short: "Run an algorithm in the deterministic simulator, record the trace, check it",
		Long: `sim runs the same state machines and the same runtime as run, in one
process, on a simulated network with seeded random delays. The same seed
gives the same trace, event for event; wall_ns in its trace is simulated time.

--exec CMD runs a program of your own (dmx run --help says how): under sim
it gets its inputs one at a time, its timers fire in simulated time and its
init carries a seed, so that a program that uses only these gives the same
trace for the same seed, and dmx replay re-executes it.

Faults are those of dmx run (dmx run --help lists every kind). The simulator
models the transport: with reliable channels a message a fault drops is sent
again after the transport's time-out (a drop event per lost copy); with raw
channels it is lost.`,
		Example: `  dmx sim ricart-agrawala --seed 7
  dmx sim central -n 8 --entries 50 --delay 1ms-20ms --contention high
  dmx sim lamport --reorder --contention high --seed 1   # without FIFO channels: two in the CS
  dmx sim --scenario examples/nested-deadlock.json       # nested locks in opposite orders deadlock
  dmx sim ricart-agrawala -n 300 --entries 2 --yes       # a very large run, without asking
  dmx sim bully --faults partition:0+1:2+3+4@500ms-1s    # a partition: split brain
  dmx sim --scenario examples/majority-amnesia.json      # a restart without stable storage lets two in
  dmx sim --exec 'python3 examples/programs/central-buggy.py' --seed 1   # your own program: a grant given twice`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: algorithmNames,
		RunE: f.runE(func(cmd *cobra.Command, p runner.Plan, r recording) (bool, string, []string, error) {
			limit := maxEventsFor(p.Estimate(), f.maxEvents)
			res, err := runner.SimulateWith(p, r.rec, runner.SimHooks{Stop: r.ctx.Done(), MaxEvents: limit})
			if res.Events >= limit && limit > 0 && !res.Complete && f.maxEvents == 0 {
				res.Status = fmt.Sprintf("cut short: it grew to %s events where about %s were expected: a livelock? (--max-events N allows more, --limit bounds its simulated time)",
					humanCount(res.Events), humanCount(p.Estimate().Events))
			}
			return res.Complete, res.Status, res.Notes, err
		}),
	}
	f.register(cmd, runner.DriverSim)
	return cmd
}

// sink is where recordAndCheck's events go: a trace.Writer, or for real
// processes a trace.Spool.
type sink interface {
	Add(*trace.Event) error
	Close() error
	Count() int64
}

// newSink is where the events of run runID of p go: a run of real
// processes, whose runner shares the machine's cores with its nodes,
// records through a spool, so that the trace's SQLite work waits for a
// core the nodes leave idle (trace.Spool); a simulated run straight into
// the trace, its own pace.
func newSink(st *trace.Store, runID int64, p runner.Plan, stderr io.Writer) sink {
	if p.WithDefaults().Driver != runner.DriverUDP {
		return st.NewWriter(runID)
	}
	sp, err := st.NewSpool(runID)
	if err != nil {
		fmt.Fprintf(stderr, "dmx: note: events go straight into the trace, which competes with the nodes for CPU: %v\n", err)
		return st.NewWriter(runID)
	}
	return sp
}

// recording is what a driver (run, sim) gets from recordAndCheck.
type recording struct {
	ctx   context.Context // cancelled by the first interrupt: stop the run, keep what was recorded
	hurry <-chan struct{} // closed by the second: stop at once
	rec   runner.Recorder
}

// recordAndCheck records the run of p into the trace f.out with do, then
// checks it and prints the verdict.
//
// The order matters for the trace, which must be whole whenever dmx stops:
// interrupts are handled before the file exists; the run is ended (its
// row says how) and the store closed, which copies the WAL into the file,
// before anything is printed on stdout, so that a reader gone from a pipe
// cannot kill dmx with the trace half-settled; the check then reads the
// closed trace like any reader.
func recordAndCheck(cmd *cobra.Command, f *runFlags, p runner.Plan, do func(recording) (complete bool, status string, notes []string, err error)) error {
	stderr := cmd.ErrOrStderr()
	est := p.Estimate()
	if err := sizeOK(cmd.InOrStdin(), stderr, cmd.Name()+" "+p.Spec.Name, p, est, f.yes); err != nil {
		return &exitError{exitUsage, err}
	}
	// From here on, until the trace is closed, an interrupt is handled,
	// not obeyed (before, at the question above, Ctrl-C simply quits).
	it := catchInterrupts(stderr)
	defer it.stop()
	if it.interrupted() {
		return &exitError{exitInconclusive, fmt.Errorf("%s: interrupted before the trace was made", cmd.Name())}
	}
	st, err := trace.Create(f.out)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	row := p.RunRow()
	row.ToolVersion, row.Started = toolVersion(), time.Now().UnixNano()
	runID, err := st.BeginRun(row)
	if err != nil {
		closeStore(st, stderr)
		return &exitError{exitUsage, err}
	}
	res := holdReserve(f.out, runID)
	defer res.release()
	var extra []string // flags of the command that are no part of the plan
	if f.maxEvents != 0 && p.WithDefaults().Driver == runner.DriverSim {
		// Where a run is cut is part of it.
		extra = append(extra, "--max-events", fmt.Sprint(f.maxEvents))
	}
	announce(stderr, cmd.Name(), p, est, extra...)

	w := newSink(st, runID, p, stderr)
	m := &meter{rec: runner.RecorderFunc(w.Add)}
	stopProgress := func() {}
	if isTerminal(stderr) {
		stopProgress = progressLine(stderr, m, p, est, f.out)
	}
	start := time.Now()
	complete, status, notes, runErr := do(recording{ctx: it.ctx, hurry: it.hurry, rec: m})
	took := time.Since(start).Round(time.Millisecond).String()
	if took == "0s" {
		took = "<1ms" // a small simulated run: "in 0s" read as nothing done
	}
	stopProgress()
	// An interrupt that came while the run was stopping on its own still
	// marks it.
	if it.interrupted() && complete {
		complete, status = false, "interrupted"
	}
	status, failure, cause := endRecording(st, w, res, runID, complete, status, runErr, stderr)
	if p.WithDefaults().Driver == runner.DriverSim {
		// What a simulated run took to compute is not how long it lasted:
		// say both, the second as dmx stats does.
		took += " of real time, " + m.span().String() + " of " + render.Clock("sim")
	}
	shown := status
	if failure != "" {
		// The failure itself is the last line.
		shown = "failed" + strings.TrimPrefix(status, "failed: "+cause)
	}
	fmt.Fprintf(stderr, "recorded run %d: %s in %s (%s)\n", runID, plural.Count(w.Count(), "event"), took, shown)
	for _, n := range notes {
		fmt.Fprintf(stderr, "dmx: %s\n", n)
	}
	if failure != "" {
		return &exitError{exitUsage, fmt.Errorf("%s: %s (what was recorded is in %s, run %d)", cmd.Name(), failure, f.out, runID)}
	}
	if it.hurried() {
		return &exitError{exitInconclusive, fmt.Errorf("stopped at once (second interrupt): run %d of %s is marked interrupted; not checked", runID, f.out)}
	}
	return checkRecording(cmd, f, p, runID, w.Count(), it)
}

// closeStore closes a trace just written; what it leaves beside the trace
// is a note, not a failure.
func closeStore(st *trace.Store, stderr io.Writer) error {
	err := st.Close()
	var side *trace.SideFilesError
	if errors.As(err, &side) {
		fmt.Fprintf(stderr, "dmx: note: %v\n", err)
		return nil
	}
	return err
}

// announce says on stderr what run is about to start: the algorithm, the
// nodes, the workload or duration, the faults, the seed, the parameters
// real processes start from, the command line that reruns it and what to
// expect of its size. extra are flags the rerun line adds.
func announce(stderr io.Writer, name string, p runner.Plan, est runner.Size, extra ...string) {
	what := plural.Count(p.Workload.Entries, "entry") + " each"
	if p.Spec.Kind == algo.Election {
		what = fmt.Sprintf("for %v", p.WithDefaults().Duration)
	}
	if len(p.Faults) > 0 {
		var fs []string
		for _, x := range p.Faults {
			fs = append(fs, x.String())
		}
		what += ", faults " + strings.Join(fs, ",")
	}
	fmt.Fprintf(stderr, "dmx %s %s: %s, %s, seed %d\n", name, p.Spec.Name, plural.Count(p.N, "node"), what, p.Seed)
	if d := realDefaults(p); d != "" {
		fmt.Fprintf(stderr, "params: %s (the defaults of real processes; dmx sim keeps the algorithm's own)\n", d)
	}
	if args, err := rerunWords(p); err == nil {
		args = append(args, extra...)
		fmt.Fprintf(stderr, "rerun: dmx %s\n", strings.Join(args, " "))
	}
	if what := expect(p, est); what != "" {
		fmt.Fprintf(stderr, "expect %s\n", what)
	}
}

// reserve is disk space a recording holds for its end: a file of
// reserveBytes beside the trace (.NAME.dmx-reserve-RUN-*), removed just
// before the run's end is written. A recording that fills the disk could
// not write its run's status when the spool had taken the last of the
// space: the run read "running" (TestDiskFull, on a loaded machine). A
// recorder killed with SIGKILL leaves it, as it leaves its spool.
type reserve struct{ path string }

const reserveBytes = 256 << 10

// holdReserve makes the reserve of run runID of the trace at path, or
// returns nil where it cannot (the disk is full already: then nothing is
// held).
func holdReserve(path string, runID int64) *reserve {
	dir, base := filepath.Split(path)
	name := filepath.Join(dir, fmt.Sprintf(".%s.dmx-reserve-%d-%016x", base, runID, rand.Uint64()))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil
	}
	// Written, not sparse: the blocks are the reserve.
	_, err = f.Write(make([]byte, reserveBytes))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return nil
	}
	return &reserve{path: name}
}

// release gives the space back; again, or on nil, it does nothing.
func (r *reserve) release() {
	if r != nil && r.path != "" {
		os.Remove(r.path)
		r.path = ""
	}
}

// endRecording settles the recording of run runID: the sink is closed,
// the run ended with its status and the trace closed. It returns the
// run's status, what failed ("" if nothing), said once (a full disk fails
// the recorder, the spool and the writer alike, each saying "database or
// disk is full"), and what of it failed the run itself, the cause its
// status gives.
func endRecording(st *trace.Store, w sink, res *reserve, runID int64, complete bool, status string, runErr error, stderr io.Writer) (runStatus, failure, cause string) {
	werr := w.Close()
	if runErr != nil || werr != nil {
		cause = oneLine(runErr, werr)
		failure = cause
		status = "failed: " + failure
		complete = false
	}
	if werr != nil {
		// Say how much of the run the trace holds: a check reads it as
		// incomplete, and its note says so.
		var stored int64
		if err := st.DB().QueryRow(`SELECT count(*) FROM events WHERE run = ?`, runID).Scan(&stored); err == nil && stored < w.Count() {
			status += fmt.Sprintf("; %d of %d events stored", stored, w.Count())
		}
	}
	// The space held for this moment lets the run's end be written when
	// the disk is full.
	res.release()
	endErr := st.EndRun(runID, time.Now().UnixNano(), complete, status)
	closeErr := closeStore(st, stderr)
	if failure == "" && (endErr != nil || closeErr != nil) {
		failure = oneLine(endErr, closeErr)
	} else if failure != "" {
		// Ending the run or settling the file failed too (the disk is
		// still full): what that adds, such as a trace that is not whole
		// without its -wal, is said; what it repeats is not.
		failure = oneLine(errors.New(failure), endErr, closeErr)
	}
	return status, failure, cause
}

// checkRecording reads run runID back from the trace as any reader does,
// checks it (unless --no-check), prints the verdict, draws the diagram
// and says where to look further.
func checkRecording(cmd *cobra.Command, f *runFlags, p runner.Plan, runID, events int64, it *interrupts) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	rd, err := trace.OpenWith(f.out, trace.OpenOptions{NoIntegrityCheck: true}) // just written: no need
	if err != nil {
		return &exitError{exitUsage, err}
	}
	run, err := rd.Run(runID)
	if err != nil {
		rd.Close()
		return &exitError{exitUsage, err}
	}
	if f.noCheck {
		defer rd.Close()
		fmt.Fprintf(stdout, "trace: %s\n", f.out)
		if line := f.drawRun(rd, run, nil, events); line != "" {
			fmt.Fprintln(stdout, line)
		}
		if !run.Complete {
			// Unchecked, a run cut short (a limit, an interrupt) is
			// still one whose properties cannot all be decided: exit 3,
			// as its check would say, never 0.
			return &exitError{exitInconclusive, fmt.Errorf("run %d of %s is incomplete (%s): inconclusive, not checked", runID, f.out, run.Status)}
		}
		return nil
	}
	// The check stops at the second interrupt, or at the first if it comes
	// only now that the run is over.
	var stop <-chan struct{} = it.hurry
	if !it.interrupted() {
		stop = it.ctx.Done()
	}
	reports, err := checkRecorded(rd, run, stop)
	if errors.Is(err, errStopped) {
		// rd stays open: the abandoned check may still be reading it.
		return &exitError{exitInconclusive, fmt.Errorf("interrupted: run %d of %s is recorded; not checked", runID, f.out)}
	}
	defer rd.Close()
	if err != nil {
		return &exitError{exitUsage, err}
	}
	code := printReports(stdout, stderr, f.format, reports, defaultMaxShown)
	diag := "diagram: none: the run was interrupted (dmx render draws one)"
	if !it.interrupted() {
		// Drawing reads the trace again: after Ctrl-C, which asks dmx
		// to stop, the verdict is enough.
		diag = f.drawRun(rd, run, reports[0].Results, events)
	}
	if diag != "" && f.format != "table" {
		fmt.Fprintln(stderr, diag) // stdout holds the JSON report
	}
	if f.format == "table" {
		lookFurther(stdout, f.out, runID, p.Spec.Kind, diag)
	}
	return verdictExit(code)
}

// lookFurther prints, after a run's verdict, where its trace is, its
// diagram, and the commands that look further into it.
func lookFurther(stdout io.Writer, out string, runID int64, kind algo.Kind, diag string) {
	q := fmt.Sprintf("SELECT proc, resource, wait_ns, hold_ns FROM cs_intervals WHERE run = %d", runID)
	switch kind {
	case algo.Election:
		q = fmt.Sprintf("SELECT proc, kind, leader, term, wall_ns FROM elections WHERE run = %d", runID)
	case algo.Multicast:
		q = fmt.Sprintf("SELECT proc, seq, detail FROM events WHERE run = %d AND kind = 'deliver'", runID)
	}
	p := sweep.Quote(out)
	fmt.Fprintf(stdout, "\ntrace: %s (run %d)\n", out, runID)
	if diag != "" {
		fmt.Fprintln(stdout, diag)
	}
	fmt.Fprintf(stdout, "look further:\n  dmx check %s\n  dmx stats %s\n  dmx sql %s \"%s\"\n", p, p, p, q)
}

// errHelp: the command line asked for help where a value was due (dmx
// run --exec --help).
var errHelp = errors.New("help")

// oneLine says what errs say (the nil ones skipped) on one line, each
// thing once: a line of one that another repeats, or holds, is left out.
func oneLine(errs ...error) string {
	var lines []string
	for _, err := range errs {
		if err == nil {
			continue
		}
		for _, l := range strings.Split(err.Error(), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	var out []string
	for i, l := range lines {
		dup := false
		for j, m := range lines {
			// Held by a longer line, or by an earlier one like it.
			if j != i && strings.Contains(m, l) && (len(m) > len(l) || j < i) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, l)
		}
	}
	// A cause that ends several lines ("...: database or disk is full")
	// is said once, by the last.
	if len(out) > 1 {
		last := out[len(out)-1]
		for i, l := range out[:len(out)-1] {
			for k := 0; k+2 < len(l); k++ {
				if l[k:k+2] == ": " && strings.HasSuffix(last, l[k:]) {
					out[i] = l[:k]
					break
				}
			}
		}
	}
	return strings.Join(out, "; ")
}

// maxEventsFor is the most events a simulated run estimated at est may
// record before it is cut short: flag if the user chose (--max-events; <
// 0: no bound), else ten times the estimate and at least minMaxEvents. A
// livelocked simulation (majority -n 4 --entries 3 --seed 4 --faults
// crash:2@enter#3) ran to the 10-minute simulated limit: 3 to 7 million
// events, where about 300 were expected.
func maxEventsFor(est runner.Size, flag int64) int64 {
	switch {
	case flag > 0:
		return flag
	case flag < 0:
		return 0
	}
	return max(10*est.Events, minMaxEvents)
}

// minMaxEvents is the least bound maxEventsFor sets: a run this small
// records in seconds, whatever its estimate said. A variable for tests.
var minMaxEvents int64 = 1_000_000

// errStopped: the check was stopped by an interrupt.
var errStopped = errors.New("stopped")

// checkRecorded checks run of st, unless stop is closed first: then it
// returns errStopped at once, leaving the check to die with the process.
func checkRecorded(st *trace.Store, run trace.Run, stop <-chan struct{}) ([]render.Report, error) {
	type result struct {
		reps []render.Report
		err  error
	}
	done := make(chan result, 1)
	go func() {
		reps, err := checkRuns(st, []trace.Run{run}, checkOptions{})
		done <- result{reps, err}
	}()
	select {
	case r := <-done:
		return r.reps, r.err
	case <-stop:
		return nil, errStopped
	}
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
	var program, kind string
	cmd := &cobra.Command{
		Use:    "node",
		Short:  "One node of a run (started by dmx run when dmx-node is not beside dmx; not for direct use)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			lookup, err := exec.NodeLookup(nodeArgs(program, kind), cmd.ErrOrStderr(), registry.Lookup)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			if code := udp.NodeProcess(lookup, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&program, "program", "", "the node runs a program of the user's own, named so (dmx run --exec)")
	cmd.Flags().StringVar(&kind, "kind", "", "its kind")
	return cmd
}

// realDefaults lists, KEY=VALUE in name order, the algorithm parameters
// that p takes from the defaults of its driver (runner.Plan.DefaultParams)
// rather than from its flags or scenario: under run, roomier time-outs than
// dmx list shows.
func realDefaults(p runner.Plan) string {
	var kv []string
	for k, v := range p.DefaultParams() {
		if _, set := p.Params[k]; !set {
			kv = append(kv, k+"="+v)
		}
	}
	sort.Strings(kv)
	return strings.Join(kv, " ")
}

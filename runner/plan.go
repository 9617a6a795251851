package runner

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// Driver is what carries a plan out. Its value is the trace's runs.mode.
type Driver string

// The drivers.
const (
	DriverSim Driver = "sim" // the deterministic simulator: Simulate, dmx sim
	DriverUDP Driver = "udp" // one OS process per node over UDP: Launch, dmx run
)

// Plan is the description of one run: everything that decides what a run
// does. dmx run and dmx sim map their flags and scenario file onto a Plan
// (Scenario.Apply), Simulate and Launch carry one out, the trace's runs row
// is made from one (RunRow) and read back into one (PlanFromRun), and Args
// gives the command line that runs it again.
//
// A zero duration field means its default (see WithDefaults); NewPlan
// gives the values dmx run and dmx sim start from.
type Plan struct {
	Driver Driver     // zero means DriverSim
	Spec   *algo.Spec // the algorithm; its name is Spec.Name
	N      int        // processes, 0..N-1
	Seed   uint64     // every random choice of the run comes from it
	Params map[string]string
	// Workload is what each process's user does, with per-process
	// overrides in Workload.Procs.
	Workload Workload
	// Faults are injected at their times after the start (see fault.go).
	Faults []Fault
	// Channels is what the network promises the algorithm: ChannelsReliable
	// ("" means it) or ChannelsRaw.
	Channels Channels
	// Duration is how long an election run lasts (elections have no
	// workload that ends). Under DriverUDP it also cuts other runs short;
	// the simulator has Sim.Limit for that.
	Duration time.Duration
	Sim      SimOptions // DriverSim only
	UDP      UDPOptions // DriverUDP only
	// Schedule, if not empty, is the run step by step (a World): the
	// simulator carries the steps out in order instead of drawing delays
	// and think times, and ends when they are done. dmx explore writes the
	// schedule of the violation it finds into a scenario file. DriverSim
	// only; its crashes and recoveries are steps, so Faults must be empty.
	Schedule []Step
	// Scenario is the file the plan was read from, if any (Scenario.Apply
	// sets it): Args then reruns the plan with --scenario, for what no flag
	// can say (per-process workloads).
	Scenario *Scenario
}

// Channels is what the network promises the algorithms of a run.
type Channels string

// The kinds of channels.
const (
	// ChannelsReliable is what the seeds assume (seed 004, "Assumptions":
	// reliable communication; Lamport's algorithms add FIFO): the
	// transport numbers, acknowledges and retransmits every datagram, drops
	// duplicates and delivers in order. A lost datagram is sent again, so
	// an algorithm sees loss only as delay; reorder faults alone break the
	// order.
	ChannelsReliable Channels = "reliable"
	// ChannelsRaw is the network as UDP gives it: each message is one
	// datagram sent once, delivered as it arrives. Injected loss,
	// duplication and delay reach the algorithm as they are: a lost
	// message is never delivered (fate dropped), a duplicated one twice,
	// delayed ones out of order.
	ChannelsRaw Channels = "raw"
)

// Set implements pflag.Value.
func (c *Channels) Set(s string) error {
	switch Channels(s) {
	case ChannelsReliable, ChannelsRaw:
		*c = Channels(s)
		return nil
	}
	return fmt.Errorf("channels %q: want %s or %s", s, ChannelsReliable, ChannelsRaw)
}

// String implements pflag.Value.
func (c *Channels) String() string {
	if *c == "" {
		return string(ChannelsReliable)
	}
	return string(*c)
}

// Type implements pflag.Value.
func (c *Channels) Type() string { return "reliable|raw" }

// Raw reports whether p's channels are raw (ChannelsRaw).
func (p Plan) Raw() bool { return p.Channels == ChannelsRaw }

// SimOptions are the parts of a plan only the simulator has.
type SimOptions struct {
	// Delay is the one-way network delay of each message, drawn per message.
	Delay Dist
	// Reorder lets messages between two processes overtake each other; by
	// default channels are FIFO like dmx's UDP transport.
	Reorder bool
	// Limit is the simulated time after which the run is cut short (and
	// marked incomplete).
	Limit time.Duration
	// Linger is how long the simulation goes on after every workload is
	// done, so that the last messages arrive.
	Linger time.Duration
}

// UDPOptions are the parts of a plan only real processes have.
type UDPOptions struct {
	// BasePort, if not 0, makes node i listen on BasePort+i; otherwise each
	// node takes a free port and the runner tells everyone.
	BasePort int
	// Stall ends the run when no event has arrived for this long while some
	// workload is unfinished (a deadlock, or a starved request), unless a
	// node's process is stopped (SIGSTOP from outside, a debugger): a
	// stopped node is alive and waited for, and Stall counts again from
	// when it resumes.
	Stall time.Duration
	// Linger is how long the runner waits, after every workload is done and
	// the events have stopped, before it stops the nodes.
	Linger time.Duration
	// Net is the network the nodes talk over: loopback (NetLoopback), or
	// one network namespace per node on a bridge of its own, network
	// faults made by the kernel where it can (NetNS: runner/netns).
	Net Net
}

// Net is the network of real processes (dmx run --net).
type Net string

// The networks.
const (
	NetLoopback Net = ""      // every node on 127.0.0.1 ("loopback" on the command line)
	NetNS       Net = "netns" // a network namespace per node, on a bridge (runner/netns)
)

// Set implements pflag.Value.
func (n *Net) Set(s string) error {
	switch s {
	case "loopback", "":
		*n = NetLoopback
	case string(NetNS):
		*n = NetNS
	default:
		return fmt.Errorf("net %q: want loopback or netns", s)
	}
	return nil
}

// String implements pflag.Value.
func (n *Net) String() string {
	if *n == NetLoopback {
		return "loopback"
	}
	return string(*n)
}

// Type implements pflag.Value.
func (n *Net) Type() string { return "loopback|netns" }

// Defaults. Where the two drivers differ they are side by side: simulated
// time is exact and cheap, real time is neither.
const (
	DefaultNodes   = 5
	DefaultEntries = 10

	// An election run lasts this long, under both drivers.
	defaultElection = 2 * time.Second
	// Other runs end when their workloads are done; under udp a run that
	// does not is cut short after defaultUDPCap of real time, in the
	// simulator after defaultSimLimit of simulated time.
	defaultUDPCap   = 2 * time.Minute
	defaultSimLimit = 10 * time.Minute
	// udp: no event for this long while work is left ends the run.
	defaultStall = 5 * time.Second
	// udp: quiet time after the workloads are done before the nodes are
	// stopped. The simulator lingers 4 x Delay.Max (at least 1ms).
	defaultUDPLinger = 200 * time.Millisecond
	// The time slot of contention none: a request must be served within
	// one. Loopback delivers in well under a millisecond; the margin is for
	// the scheduler of a busy machine: 20ms + Hold.Max. The simulator's
	// slowest algorithm needs request, grant and release in turn:
	// 6 x Delay.Max + Hold.Max + 1ms.
	defaultUDPSlotMargin = 20 * time.Millisecond

	maxNodes = 1000
)

// DefaultParams returns the algorithm parameters the driver of p starts
// from where p does not set them: none in the simulator; over real UDP,
// what the algorithm's Spec.UDPParams gives for p's parameters.
//
// Real processes need time-outs with room. The algorithms' own defaults
// (a beat every 20ms and suspicion after 40ms of silence, bully's 50ms
// answer time-out, ring's 200ms, a 100ms lease) suit the simulator, whose
// delays are 0.1-2ms and whose processes are never off the CPU. On a
// loaded 2-core machine a process can wait a few hundred milliseconds for
// a core, and an algorithm whose safety rests on a time-out then rightly
// fails (seed 004: "D too small => inaccurate"; bully's "safety is broken
// if too tight deadline"). So each algorithm whose safety rests on one
// says what it runs with over UDP (fd.UDPParams, bully.UDPParams,
// ring.UDPParams, ...), in the variant the plan's own parameters choose.
// They are recorded in runs.params with the others, so that a rerun uses
// the same.
func (p Plan) DefaultParams() map[string]string {
	if p.driver() != DriverUDP || p.Spec == nil || p.Spec.UDPParams == nil {
		return nil
	}
	out := maps.Clone(p.Spec.UDPParams(p.Params))
	for k := range out {
		if !slices.ContainsFunc(p.Spec.Params, func(q algo.Param) bool { return q.Name == k }) {
			delete(out, k)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// The default distributions of NewPlan.
var (
	defaultThink = Dist{Min: 0, Max: 20 * time.Millisecond}
	defaultHold  = Dist{Min: time.Millisecond, Max: 5 * time.Millisecond}
	defaultDelay = Dist{Min: 100 * time.Microsecond, Max: 2 * time.Millisecond}
)

// NewPlan returns the plan dmx run (DriverUDP) or dmx sim (DriverSim) starts
// from before its flags and scenario: DefaultNodes processes making
// DefaultEntries entries each on DefaultResource, the default think, hold
// and network delay, the simulator's time limit and the stall time of
// real runs. What depends on other fields (Duration, linger, slot) stays
// zero for WithDefaults. Spec and Seed are left for the caller.
func NewPlan(d Driver) Plan {
	p := Plan{
		Driver: d,
		N:      DefaultNodes,
		Workload: Workload{
			Entries:   DefaultEntries,
			Resources: []string{DefaultResource},
			Think:     defaultThink,
			Hold:      defaultHold,
			Order:     OrderSame,
		},
	}
	switch d {
	case DriverSim:
		p.Sim.Delay = defaultDelay // Sim.Limit 0: defaultLimit, from the run's size
	case DriverUDP:
		p.UDP.Stall = defaultStall
	}
	return p
}

// WithDefaults returns p with every zero that means "the default" replaced
// by it: Duration, the driver's limit, stall and linger, the slot of a
// workload without contention, and the algorithm parameters real processes
// start from (DefaultParams). The drivers call it; so does Args, so that
// a default given explicitly is not repeated on the command line.
func (p Plan) WithDefaults() Plan {
	p.Driver = p.driver()
	if d := p.DefaultParams(); len(d) > 0 {
		for k, v := range p.Params {
			d[k] = v
		}
		p.Params = d
	}
	election := p.Spec != nil && p.Spec.Kind == algo.Election
	if p.Duration == 0 {
		switch {
		case election:
			p.Duration = defaultElection
		case p.Driver == DriverUDP:
			p.Duration = defaultUDPCap
		}
	}
	slot := time.Duration(0)
	switch p.Driver {
	case DriverSim:
		if p.Sim.Linger == 0 {
			p.Sim.Linger = 4 * p.Sim.Delay.Max
			if p.Sim.Linger == 0 {
				p.Sim.Linger = time.Millisecond
			}
			// The last messages may come later by what faults add.
			p.Sim.Linger += 2 * faultsDelay(p.Faults)
		}
		slot = 6*p.Sim.Delay.Max + p.Workload.Hold.Max + time.Millisecond
	case DriverUDP:
		if p.UDP.Stall == 0 {
			p.UDP.Stall = defaultStall
		}
		if p.UDP.Linger == 0 {
			p.UDP.Linger = defaultUDPLinger
		}
		slot = defaultUDPSlotMargin + p.Workload.Hold.Max
	}
	if p.Workload.Contention == ContentionNone && p.Workload.Slot == 0 {
		p.Workload.Slot = slot
	}
	if p.Driver == DriverSim && p.Sim.Limit == 0 {
		p.Sim.Limit = p.defaultLimit()
	}
	return p
}

// defaultLimit is the simulated time after which p's run is cut short when
// no limit is given: ten times the span its size estimate expects
// (Estimate), at least defaultSimLimit. A fixed 10 minutes cut a large run
// that was going well (ricart-agrawala, 5 x 30,000 entries, takes 10m38s
// simulated) and marked it inconclusive; a livelock
// still stops, here or at --max-events' bound, which grows with the
// estimate the same way.
func (p Plan) defaultLimit() time.Duration {
	if p.Spec == nil || p.N < 1 {
		return defaultSimLimit
	}
	span, _ := p.expected()
	if span > math.MaxInt64/10 {
		return time.Duration(math.MaxInt64)
	}
	return max(defaultSimLimit, 10*span)
}

// PickSeed gives p a random seed if it has none (0), to be printed so that
// the run can be reproduced.
func (p *Plan) PickSeed() {
	if p.Seed != 0 {
		return
	}
	var b [8]byte
	rand.Read(b[:])
	p.Seed = uint64(binary.LittleEndian.Uint32(b[:]))%1_000_000_000 + 1
}

// PlanError says which part of a plan is wrong: Field names it as a
// scenario file does ("nodes", "duration", "parameter", "fault", ...),
// Value is the value given.
type PlanError struct {
	Field string
	Value string
	Err   error
}

// Error says "field value: what is wrong", e.g. "nodes 0: need at least 1".
func (e *PlanError) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Err.Error()
	}
	return e.Field + " " + e.Value + ": " + e.Err.Error()
}

// Unwrap returns what is wrong.
func (e *PlanError) Unwrap() error { return e.Err }

func planErr(field string, value any, format string, args ...any) *PlanError {
	return &PlanError{Field: field, Value: fmt.Sprint(value), Err: fmt.Errorf(format, args...)}
}

// CheckFaults refuses, before anything starts, a fault of p that a driver
// cannot carry out: applies is the driver's word on one fault (nil: it can;
// else why not). Each driver's entry point calls it with its own after
// Validate (Simulate with SimApplies, runner/udp's Launch with
// udp.Applies), so that a plan asking for what its driver cannot do is an
// error naming the fault, never a fault silently left out.
func (p Plan) CheckFaults(applies func(f *Fault) error) error {
	for i := range p.Faults {
		if err := applies(&p.Faults[i]); err != nil {
			return &PlanError{Field: "fault", Value: p.Faults[i].String(), Err: err}
		}
	}
	return nil
}

// Validate checks everything a run needs of p before anything is started
// or recorded: the algorithm and its parameters (the algorithm builds a
// machine, so that a bad value is found here, not in every node), the
// group size, durations, the workload, the faults' processes and the
// driver's options. A *PlanError names the part that is wrong.
func (p Plan) Validate() error {
	if p.Spec == nil {
		return errors.New("no algorithm")
	}
	switch p.Driver {
	case "", DriverSim, DriverUDP:
	default:
		return planErr("driver", fmt.Sprintf("%q", p.Driver), "want %s or %s", DriverSim, DriverUDP)
	}
	if p.N < 1 {
		return planErr("nodes", p.N, "need at least 1")
	}
	if p.N > maxNodes {
		return planErr("nodes", p.N, "at most %d", maxNodes)
	}
	type named struct {
		name string
		v    time.Duration
	}
	durations := []named{{"duration", p.Duration}}
	if p.driver() == DriverSim {
		durations = append(durations, named{"limit", p.Sim.Limit}, named{"linger", p.Sim.Linger})
	} else {
		durations = append(durations, named{"stall", p.UDP.Stall}, named{"linger", p.UDP.Linger})
	}
	for _, d := range durations {
		if d.v < 0 {
			return planErr(d.name, d.v, "must not be negative")
		}
	}
	if p.driver() == DriverSim && p.Sim.Delay.Max > MaxDuration {
		return planErr("delay", p.Sim.Delay, "at most %v (simulated time would overflow)", MaxDuration)
	}
	if err := p.Workload.Validate(); err != nil {
		return err
	}
	if w := p.Workload; !w.Nested && w.Order != "" && w.Order != OrderSame {
		// Without nested entries a process holds one resource at a time:
		// no lock order to follow.
		return planErr("order", w.Order, "the lock order of nested entries: add nested (--nested), or leave the order out")
	}
	switch p.Channels {
	case "", ChannelsReliable, ChannelsRaw:
	default:
		return planErr("channels", p.Channels, "want %s or %s", ChannelsReliable, ChannelsRaw)
	}
	for _, id := range slices.Sorted(maps.Keys(p.Workload.Procs)) {
		if id < 0 || id >= p.N {
			return planErr("procs", fmt.Sprintf("P%d", id), "not a process of this run (0..%d)", p.N-1)
		}
	}
	if err := p.validateParams(); err != nil {
		return err
	}
	roles := p.Spec.PartsOf(p.Params)
	for _, f := range p.Faults {
		if err := f.validate(p.N, p.Spec, roles); err != nil {
			return &PlanError{Field: "fault", Value: f.String(), Err: err}
		}
	}
	if err := validateFaults(p.Faults); err != nil {
		return err
	}
	if len(p.Schedule) > 0 {
		if p.driver() != DriverSim {
			return &PlanError{Field: "schedule", Err: errors.New("a schedule of steps drives the simulator only")}
		}
		if len(p.Faults) > 0 {
			return &PlanError{Field: "schedule", Err: errors.New("a schedule has its crashes and recoveries as steps: give no faults with it")}
		}
		if p.Workload.Nested {
			return &PlanError{Field: "schedule", Err: errors.New("a schedule of steps does not drive nested workloads")}
		}
		for i, st := range p.Schedule {
			if st.Proc < 0 || st.Proc >= p.N || (st.Kind == StepDeliver && (st.From < 0 || st.From >= p.N)) {
				return planErr("schedule", fmt.Sprintf("step %d (%v)", i+1, st), "not a process of this run (0..%d)", p.N-1)
			}
		}
	}
	switch {
	case p.UDP.Net != NetLoopback && p.UDP.Net != NetNS:
		return planErr("net", p.UDP.Net, "want loopback or netns")
	case p.UDP.Net != NetLoopback && p.driver() != DriverUDP:
		return planErr("net", p.UDP.Net, "real processes only (dmx run)")
	}
	if p.Driver == DriverUDP && (p.UDP.BasePort < 0 || p.UDP.BasePort+p.N-1 > 65535) {
		return planErr("base port", p.UDP.BasePort, "nodes would listen on ports %d..%d, outside 1..65535", p.UDP.BasePort, p.UDP.BasePort+p.N-1)
	}
	return nil
}

// validateParams builds the machine of node 0: the algorithm checks its
// parameters' names and values itself (algo.Config.Validate and New).
func (p Plan) validateParams() error {
	_, err := p.Spec.New(algo.Config{ID: 0, N: p.N, Resource: DefaultResource, Params: p.Params})
	var unknown *algo.UnknownParamError
	if errors.As(err, &unknown) {
		if len(unknown.Known) == 0 {
			return planErr("parameter", unknown.Name, "%s takes no parameters", p.Spec.Name)
		}
		return planErr("parameter", unknown.Name, "%s has no such parameter (it has: %s)", p.Spec.Name, strings.Join(unknown.Known, ", "))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p.Spec.Name, err)
	}
	return nil
}

// runParams is the JSON of runs.params. Its fields are in alphabetical
// order and the driver's own are pointers, so that it encodes exactly as
// the map dmx first wrote it did (the checksums of recorded traces cover
// it).
type runParams struct {
	Algorithm  map[string]string    `json:"algorithm,omitempty"`
	Channels   Channels             `json:"channels,omitempty"` // raw only: reliable is the default
	Contention string               `json:"contention"`
	Delay      *string              `json:"delay,omitempty"`    // sim
	Duration   string               `json:"duration,omitempty"` // only when not the default
	Entries    int                  `json:"entries"`
	Hold       string               `json:"hold"`
	Nested     bool                 `json:"nested,omitempty"`
	Net        Net                  `json:"net,omitempty"`   // udp: "netns", or left out (loopback)
	Order      *string              `json:"order,omitempty"` // nested only
	Port       *int                 `json:"port,omitempty"`  // udp
	Procs      map[int]ProcWorkload `json:"procs"`
	Reorder    *bool                `json:"reorder,omitempty"` // sim
	Resources  []string             `json:"resources"`
	Schedule   []string             `json:"schedule,omitempty"` // sim, a run step by step
	Think      string               `json:"think"`
}

// RunRow returns the trace's runs row for p: algorithm, nodes, seed, mode,
// params and faults. The caller sets the tool version and start time.
// runs.params holds Duration when it is not the default (an election's
// length decides its trace: the line that runs it again must say it), and
// not the driver's limit, stall and linger.
func (p Plan) RunRow() trace.Run {
	w, full := p.Workload, p.WithDefaults()
	rp := runParams{
		Procs: w.Procs, Entries: w.Entries, Resources: w.Resources,
		Think: w.Think.String(), Hold: w.Hold.String(), Contention: w.Contention.String(),
		Algorithm: full.Params,
	}
	if full.Duration != (Plan{Spec: p.Spec, Driver: p.Driver}).WithDefaults().Duration {
		rp.Duration = full.Duration.String()
	}
	if p.Raw() {
		rp.Channels = ChannelsRaw
	}
	if w.Nested {
		rp.Nested, rp.Order = true, &w.Order
	}
	for _, st := range p.Schedule {
		rp.Schedule = append(rp.Schedule, st.String())
	}
	if p.driver() == DriverSim {
		delay := p.Sim.Delay.String()
		rp.Delay, rp.Reorder = &delay, &p.Sim.Reorder
	} else {
		rp.Port = &p.UDP.BasePort
		rp.Net = p.UDP.Net
	}
	params, _ := json.Marshal(rp)
	fl := []string{}
	for _, f := range p.Faults {
		fl = append(fl, f.String())
	}
	faults, _ := json.Marshal(fl)
	row := trace.Run{Nodes: p.N, Seed: p.Seed, Mode: string(p.driver()), Params: params, Faults: faults}
	if p.Spec != nil {
		row.Algorithm = p.Spec.Name
	}
	return row
}

// PlanFromRun reads a recorded runs row back into the plan that made it;
// lookup finds the algorithm by name. The fields runs.params does not hold
// (the driver's limit, stall and linger; Duration when it was the default)
// have their defaults.
func PlanFromRun(run trace.Run, lookup func(name string) *algo.Spec) (Plan, error) {
	d := Driver(run.Mode)
	if d != DriverSim && d != DriverUDP {
		return Plan{}, fmt.Errorf("run %d: mode %q: not a run dmx made (want %s or %s)", run.ID, run.Mode, DriverSim, DriverUDP)
	}
	p := Plan{Driver: d, N: run.Nodes, Seed: run.Seed, Spec: lookup(run.Algorithm)}
	if p.Spec == nil {
		return Plan{}, fmt.Errorf("run %d: unknown algorithm %q", run.ID, run.Algorithm)
	}
	var rp runParams
	if err := json.Unmarshal(run.Params, &rp); err != nil {
		return Plan{}, fmt.Errorf("run %d: params: %w", run.ID, err)
	}
	var err error
	p.Params = rp.Algorithm
	p.Channels = rp.Channels
	p.Workload = Workload{Entries: rp.Entries, Resources: rp.Resources, Procs: rp.Procs, Nested: rp.Nested}
	p.Workload.Order = OrderSame // recorded for nested workloads only, where it matters
	if rp.Order != nil {
		p.Workload.Order = *rp.Order
	}
	for _, f := range []struct {
		name string
		into func(string) error
		v    string
	}{
		{"think", p.Workload.Think.Set, rp.Think},
		{"hold", p.Workload.Hold.Set, rp.Hold},
		{"contention", p.Workload.Contention.Set, rp.Contention},
	} {
		if err = f.into(f.v); err != nil {
			return Plan{}, fmt.Errorf("run %d: params: %s: %w", run.ID, f.name, err)
		}
	}
	if rp.Delay != nil {
		if err := p.Sim.Delay.Set(*rp.Delay); err != nil {
			return Plan{}, fmt.Errorf("run %d: params: delay: %w", run.ID, err)
		}
	}
	if rp.Reorder != nil {
		p.Sim.Reorder = *rp.Reorder
	}
	if rp.Duration != "" {
		if p.Duration, err = time.ParseDuration(rp.Duration); err != nil || p.Duration <= 0 {
			return Plan{}, fmt.Errorf("run %d: params: duration %q: not a positive duration", run.ID, rp.Duration)
		}
	}
	if rp.Port != nil {
		p.UDP.BasePort = *rp.Port
	}
	if err := p.UDP.Net.Set(string(rp.Net)); err != nil {
		return Plan{}, fmt.Errorf("run %d: params: %w", run.ID, err)
	}
	if p.Schedule, err = ParseSteps(rp.Schedule); err != nil {
		return Plan{}, fmt.Errorf("run %d: params: %w", run.ID, err)
	}
	if len(p.Schedule) == 0 {
		p.Schedule = nil
	}
	var faults []string
	if len(run.Faults) > 0 {
		if err := json.Unmarshal(run.Faults, &faults); err != nil {
			return Plan{}, fmt.Errorf("run %d: faults: %w", run.ID, err)
		}
	}
	for _, s := range faults {
		fl, err := ParseFaults(s)
		if err != nil {
			return Plan{}, fmt.Errorf("run %d: %w", run.ID, err)
		}
		p.Faults = append(p.Faults, fl...)
	}
	return p.WithDefaults(), nil
}

// Command returns the dmx command (without "dmx") for a driver: the
// simulator is dmx sim, real processes dmx run.
func (d Driver) Command() string {
	if d == DriverUDP {
		return "run"
	}
	return "sim"
}

// Args returns the arguments of the dmx command line that carries p out
// again, e.g. [sim central --seed 42 -n 4 --faults crash:1@20ms]. It names
// only what differs from NewPlan (or, for a plan read from a scenario file,
// from that file), and always the seed. Its error says what of p no
// command line can say: per-process workloads outside a scenario file, a
// linger or slot of the library's own.
func (p Plan) Args() ([]string, error) {
	if p.Spec == nil {
		return nil, errors.New("no algorithm")
	}
	p.Driver = p.driver()
	base := NewPlan(p.Driver)
	base.Spec = p.Spec
	a := argList{p.Driver.Command(), p.Spec.Name}
	if p.Scenario != nil && p.Scenario.Path != "" {
		if err := p.Scenario.Apply(&base, nil); err != nil {
			return nil, err
		}
		a = append(a, "--scenario", p.Scenario.Path)
	}
	raw := p
	baseLimit := base.Sim.Limit
	p, base = p.WithDefaults(), base.WithDefaults()
	a.flag("--seed", true, strconv.FormatUint(p.Seed, 10))
	a.flag("-n", p.N != base.N, strconv.Itoa(p.N))
	a.workload(p.Workload, base.Workload)
	a.params(p.Params, base.Params, raw.DefaultParams())
	var fs, bfs []string
	for _, f := range p.Faults {
		fs = append(fs, f.String())
	}
	for _, f := range base.Faults {
		bfs = append(bfs, f.String())
	}
	a.flag("--faults", !slices.Equal(fs, bfs), strings.Join(fs, ","))
	a.flag("--duration", p.Duration != base.Duration, p.Duration.String())
	a.flag("--channels", p.Raw() != base.Raw(), p.Channels.String())
	if p.Driver == DriverSim {
		a.flag("--delay", p.Sim.Delay != base.Sim.Delay, p.Sim.Delay.String())
		a.boolFlag("reorder", p.Sim.Reorder, base.Sim.Reorder)
		// A limit left to its default is one the run's own size gives,
		// which the rerun computes again.
		limit := baseLimit
		if limit == 0 {
			limit = p.defaultLimit()
		}
		a.flag("--limit", p.Sim.Limit != limit, p.Sim.Limit.String())
	} else {
		a.flag("--port", p.UDP.BasePort != base.UDP.BasePort, strconv.Itoa(p.UDP.BasePort))
		a.flag("--stall", p.UDP.Stall != base.UDP.Stall, p.UDP.Stall.String())
		a.flag("--net", p.UDP.Net != base.UDP.Net, p.UDP.Net.String())
	}
	if unsaid := unsaid(raw, p, base); len(unsaid) > 0 {
		return a, fmt.Errorf("no flag says the plan's %s", strings.Join(unsaid, ", "))
	}
	return a, nil
}

// argList is a command line that Args builds.
type argList []string

// flag adds name and value if differs.
func (a *argList) flag(name string, differs bool, value string) {
	if differs {
		*a = append(*a, name, value)
	}
}

// boolFlag adds a bool flag, which takes no separate value: --nested, or
// --nested=false against a scenario that sets it.
func (a *argList) boolFlag(name string, v, base bool) {
	switch {
	case v && !base:
		*a = append(*a, "--"+name)
	case !v && base:
		*a = append(*a, "--"+name+"=false")
	}
}

// workload adds the flags that say w where it differs from bw.
func (a *argList) workload(w, bw Workload) {
	a.flag("--entries", w.Entries != bw.Entries, strconv.Itoa(w.Entries))
	a.flag("--think", w.Think != bw.Think, w.Think.String())
	a.flag("--hold", w.Hold != bw.Hold, w.Hold.String())
	a.flag("--contention", w.Contention != bw.Contention, w.Contention.String())
	// No resources means the default one, no order the same order.
	resources := func(w Workload) []string {
		if len(w.Resources) == 0 {
			return []string{DefaultResource}
		}
		return w.Resources
	}
	order := func(w Workload) string {
		if w.Order == "" {
			return OrderSame
		}
		return w.Order
	}
	a.flag("--resources", !slices.Equal(resources(w), resources(bw)), strings.Join(resources(w), ","))
	a.boolFlag("nested", w.Nested, bw.Nested)
	a.flag("--order", order(w) != order(bw), order(w))
}

// params adds a --param for each parameter of params that neither base
// nor the driver's defaults give the same value.
func (a *argList) params(params, base, defaults map[string]string) {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		bv, ok := base[k]
		if !ok {
			bv, ok = defaults[k]
		}
		a.flag("--param", !ok || bv != params[k], k+"="+params[k])
	}
}

// unsaid names what of p (raw: as given; p and base: with their defaults)
// no flag can say: linger and slot unless they are what the rest of the
// plan makes them, per-process workloads, a schedule.
func unsaid(raw, p, base Plan) []string {
	var out []string
	d := raw
	d.Sim.Linger, d.UDP.Linger, d.Workload.Slot = 0, 0, 0
	if d = d.WithDefaults(); d.Sim.Linger != p.Sim.Linger || d.UDP.Linger != p.UDP.Linger {
		out = append(out, "linger")
	}
	if d.Workload.Slot != p.Workload.Slot {
		out = append(out, "slot")
	}
	if !reflect.DeepEqual(p.Workload.Procs, base.Workload.Procs) {
		out = append(out, "per-process workloads (a scenario file's procs)")
	}
	if !slices.Equal(p.Schedule, base.Schedule) {
		out = append(out, "schedule (a scenario file's schedule)")
	}
	return out
}

func (p Plan) driver() Driver {
	if p.Driver == "" {
		return DriverSim
	}
	return p.Driver
}

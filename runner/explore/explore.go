package explore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/internal/cputime"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/deep"
	"github.com/dmxlab/dmx/trace"
)

// DefaultMaxDepth bounds a schedule's length when Options.MaxDepth is 0:
// runs whose algorithm retries on a timer (majority's back-off) or never
// rests (the token ring) have schedules without end.
const DefaultMaxDepth = 400

// Options say what to search and how.
type Options struct {
	// Plan is the run whose schedules are searched: algorithm and
	// parameters, processes, entries and resources, and whether channels
	// reorder (Sim.Reorder). Its seed seeds the machines' random streams.
	Plan runner.Plan
	// Checks confirm a violation on the trace of its schedule; by default
	// those the algorithm claims, with clocks (analyze.For).
	Checks []*analyze.Check
	// Walks, if above 0, makes the search that many seeded random walks
	// (Seed) instead of an exhaustive search.
	Walks int
	Seed  uint64
	// MaxStates bounds the states an exhaustive search visits (0: none);
	// MaxDepth a schedule's length (0: DefaultMaxDepth).
	MaxStates int64
	MaxDepth  int
	// Crash lets the search crash processes, Restart recover crashed
	// ones, Lose lose messages in flight (the channels become raw: a
	// reliable channel sends a lost message again); MaxFaults bounds the
	// crashes and losses of one schedule. A loss is of a message that
	// could arrive next: the oldest in flight on a FIFO channel.
	Crash, Restart, Lose bool
	MaxFaults            int
	// NoSleep turns the partial-order reduction (sleep sets) off, NoHash
	// the state hashing: the search then walks the tree of all schedules
	// (the baselines of the figures in the README).
	NoSleep, NoHash bool
	// NoShift turns the translation reduction off (runner.World.Shift):
	// states that differ by a shift of every Lamport timestamp are then
	// counted apart.
	NoShift bool
	// Deadline, if not zero, ends the search then (not exhausted); so
	// does closing Stop (an interrupt). Shrink and Shortest end early
	// too, with what they have.
	Deadline time.Time
	Stop     <-chan struct{}
	// Progress, if set, is called about every 100,000 states or steps.
	Progress func(Stats)
}

// over reports whether the deadline has passed or Stop was closed.
func (o *Options) over() bool {
	select {
	case <-o.Stop:
		return true
	default:
	}
	return !o.Deadline.IsZero() && time.Now().After(o.Deadline)
}

// Stats is how far a search went.
type Stats struct {
	// States is the distinct states the search visited: in its last
	// pass (see Passes), all the reachable ones when it is exhausted;
	// for walks, the steps taken.
	States int64
	// Visited counts the states visited in all passes, each pass's
	// distinct states once.
	Visited int64
	// Passes is how many depth-first passes the exhaustive search made:
	// it first explores the schedules of at most 8 steps, then 16, then
	// all, so that a short violation is found before a long one.
	Passes      int
	Transitions int64 // steps carried out
	Revisits    int64 // steps that led to a state visited already
	Finals      int64 // final states (nothing but a fault can happen) checked on their trace
	Walks       int64 // random walks done
	MaxDepth    int   // the longest schedule explored
	Exhausted   bool  // every reachable state was visited
	Truncated   bool  // some schedule reached MaxDepth
	// Shifted says states that differ only by one shift of every Lamport
	// timestamp were counted as one (runner.World.Shift).
	Shifted bool
	Elapsed time.Duration
	// CPU is the processor time the search took (user and system, all
	// threads: the garbage collector's included). On a busy machine it
	// says more of the search's speed than Elapsed.
	CPU time.Duration
	// FirstAt is the number of states visited (Visited) when the
	// violation was found (0: none).
	FirstAt int64
}

// Result is what a search found.
type Result struct {
	Stats
	Violation *Violation // nil: none found
}

// Violation is a schedule whose trace the checks find violated.
type Violation struct {
	Plan    runner.Plan      // with Schedule: dmx sim records the trace again from it
	Events  []trace.Event    // the trace
	Run     trace.Run        // its run row (ID 1)
	Results []analyze.Result // the checks on the trace
	// Check is the check the violation is about: the first violated of
	// mutex-causal, total-order, deadlock and liveness, else the first
	// violated. Shrink keeps it violated.
	Check    string
	Watched  string // what the search saw on the model, e.g. "P0 and P2 in cs at once"
	Original Size   // the violation as found, before Shrink
}

// Size is how big a violation is.
type Size struct {
	N, Entries, Steps, Faults int
}

// Size returns the violation's size.
func (v *Violation) Size() Size { return sizeOf(v.Plan) }

func sizeOf(p runner.Plan) Size {
	s := Size{N: p.N, Entries: p.Workload.Entries, Steps: len(p.Schedule)}
	for _, st := range p.Schedule {
		if isFault(st) {
			s.Faults++
		}
	}
	return s
}

// isFault reports whether st spends the fault budget: a crash or a loss
// (a recovery only follows a crash).
func isFault(st runner.Step) bool { return st.Kind == runner.StepCrash || st.Kind == runner.StepLose }

// Search searches the schedules of opt.Plan for a violation.
func Search(opt Options) (*Result, error) {
	s, err := newSearch(opt)
	if err != nil {
		return nil, err
	}
	start, cpu0 := time.Now(), cputime.Self()
	s.start = start
	if s.visited != nil {
		defer s.visited.free()
	}
	if opt.Walks > 0 {
		err = s.walks()
	} else {
		err = s.passes()
	}
	s.st.Elapsed, s.st.CPU = time.Since(start), cputime.Self()-cpu0
	if err == nil {
		err = s.err
	}
	if err != nil {
		return nil, err
	}
	return &Result{Stats: s.st, Violation: s.viol}, nil
}

type search struct {
	opt      Options
	plan     runner.Plan
	checks   []*analyze.Check
	maxDepth int
	st       Stats
	visited  *stateTable // the states of this pass
	bound    int         // this pass explores schedules of at most bound steps
	sleeps   sleepTable
	path     []runner.Step
	viol     *Violation
	stop     bool // a violation was found, or a budget ran out
	// exhausted stays true while no budget cut the search short.
	exhausted bool
	err       error
	h         deep.Hasher
	nextShow  int64
	bufs      []*level // per depth: dfs's buffers, reused
	start     time.Time
}

// level is what dfs needs at one depth, kept to spare allocations.
type level struct {
	all, todo []runner.Step
	keys      []key
}

func newSearch(opt Options) (*search, error) {
	p := opt.Plan
	if p.Spec == nil {
		return nil, errors.New("explore: no algorithm")
	}
	if p.Spec.Kind == algo.Election {
		return nil, fmt.Errorf("explore %s: elections run on time-outs, which a search without time fires in any order; explore searches mutual exclusion and multicast", p.Spec.Name)
	}
	if opt.Walks == 0 && Opaque(p) {
		return nil, fmt.Errorf("explore %s: its machines run a program of their own, whose state dmx can neither copy nor hash: search it with random walks (--walks N)", p.Spec.Name)
	}
	p.Driver, p.Faults, p.Schedule = runner.DriverSim, nil, nil
	if opt.Lose {
		p.Channels = runner.ChannelsRaw
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	checks := opt.Checks
	if checks == nil {
		var err error
		// Explore's algorithms decide no leaders: the validity rule does
		// not come into it.
		if checks, _, err = analyze.Applicable(runner.Claims(p.Spec)); err != nil {
			return nil, err
		}
	}
	s := &search{opt: opt, plan: p, checks: checks, maxDepth: opt.MaxDepth, nextShow: 100000}
	if s.maxDepth <= 0 {
		s.maxDepth = DefaultMaxDepth
	}
	if !opt.NoHash {
		s.visited = &stateTable{}
		s.sleeps = newSleepTable()
	}
	return s, nil
}

// seen is what a pass remembers of a state it visited: the sleep set it
// was last explored with (a number of sleepTable), and how many steps the
// pass allowed after it then.
type seen struct {
	sleep uint32
	left  int32
}

// passDepths are the bounds of the exhaustive search's first passes.
var passDepths = []int{8, 16}

// passes runs the exhaustive search: depth first with the bounds of
// passDepths, then without bound (up to maxDepth), until a pass finds a
// violation or explores every schedule without reaching its bound.
func (s *search) passes() error {
	bounds := []int{}
	for _, d := range passDepths {
		if d < s.maxDepth {
			bounds = append(bounds, d)
		}
	}
	bounds = append(bounds, s.maxDepth)
	for _, b := range bounds {
		w, err := s.world(nil)
		if err != nil {
			return err
		}
		s.bound, s.exhausted = b, true
		s.st.States, s.st.Truncated = 0, false
		if s.visited != nil {
			s.visited.free()
			s.sleeps = newSleepTable()
		}
		s.st.Passes++
		s.st.Shifted = s.visited != nil && w.Shifts()
		s.dfs(w, s.newMonitor(), nil, 0)
		if s.stop || !s.st.Truncated {
			break
		}
	}
	s.st.Exhausted = s.exhausted && s.viol == nil && !s.st.Truncated && s.err == nil
	return nil
}

// world builds the run's world from scratch, recording into rec if not nil.
func (s *search) world(rec runner.Recorder) (*runner.World, error) {
	w, err := runner.NewWorld(s.plan, rec)
	if err == nil {
		// A recovery may reset timestamps: the translation reduction
		// holds only where no process crashes.
		w.Shift = !s.opt.Crash && !s.opt.Restart && !s.opt.NoShift
	}
	return w, err
}

// key names a step across states: its kind, its process, the message it
// delivers or loses (by its place in its channel), the resource and timer
// it concerns. A place, not the message's id: two states with one
// fingerprint hold the same messages in every channel, but not always
// with the same ids (an id counts its sender's sends, which the
// fingerprint leaves out), and a sleep set stored at one must name the
// same steps at the other. A step of another process never moves a
// message in a channel (it only appends to channels from it), so a place
// names the same message for as long as a step sleeps.
type key struct {
	kind     StepKindCode
	proc     int32
	from     int32
	msg      int64
	resource string
	timer    string
}

// StepKindCode is a step kind as a small number.
type StepKindCode uint8

var kindCodes = map[runner.StepKind]StepKindCode{
	runner.StepDeliver: 1, runner.StepTimer: 2, runner.StepRequest: 3, runner.StepRelease: 4, runner.StepCrash: 5, runner.StepRecover: 6, runner.StepLose: 7,
}

func keyOf(st runner.Step) key {
	k := key{kind: kindCodes[st.Kind], proc: int32(st.Proc), from: int32(st.From)}
	switch st.Kind {
	case runner.StepDeliver, runner.StepLose:
		k.msg = int64(st.Index)
	case runner.StepTimer, runner.StepRequest, runner.StepRelease:
		k.resource, k.timer = st.Resource, st.Timer
	}
	return k
}

// independent reports whether two steps commute: they happen at different
// processes. A step changes only its own process and appends to channels
// from it; a delivery takes from a channel only its receiver takes from.
// A loss is at both ends: it takes from the receiver's channel and its
// sender records the drop.
func independent(a, b key) bool {
	return !b.at(a.proc) && !(a.kind == loseCode && b.at(a.from))
}

// loseCode is the code of a loss.
var loseCode = kindCodes[runner.StepLose]

// at reports whether the step of k happens at process p.
func (k key) at(p int32) bool { return k.proc == p || k.kind == loseCode && k.from == p }

// steps returns the steps that may come next at w: the enabled ones and,
// within the fault budget, crashes, recoveries and losses.
func (s *search) steps(w *runner.World, m *monitor, buf []runner.Step) []runner.Step {
	buf = w.Enabled(buf)
	n := len(buf)
	for p := 0; p < w.N(); p++ {
		nd := w.Node(p)
		switch {
		case nd.Crashed() && s.opt.Restart:
			buf = append(buf, runner.Step{Kind: runner.StepRecover, Proc: p})
		case !nd.Crashed() && !nd.Stopped() && s.opt.Crash && m.faults < s.opt.MaxFaults:
			buf = append(buf, runner.Step{Kind: runner.StepCrash, Proc: p})
		}
	}
	if s.opt.Lose && m.faults < s.opt.MaxFaults {
		// A message that can arrive next can be lost instead.
		for _, st := range buf[:n] {
			if st.Kind == runner.StepDeliver {
				st.Kind = runner.StepLose
				buf = append(buf, st)
			}
		}
	}
	return buf
}

func (s *search) fingerprint(w *runner.World, m *monitor) deep.Fingerprint {
	s.h = deep.Hasher{}
	w.Fingerprint(&s.h)
	m.fingerprint(&s.h)
	return s.h.Sum()
}

// dfs explores the schedules from w (whose monitor is m) that do not
// begin with a step of sleep.
func (s *search) dfs(w *runner.World, m *monitor, sleep []key, depth int) {
	if s.stop {
		return
	}
	for len(s.bufs) <= depth {
		s.bufs = append(s.bufs, &level{})
	}
	lv := s.bufs[depth]
	all := s.steps(w, m, lv.all[:0])
	lv.all = all
	keys := lv.keys[:0]
	for _, st := range all {
		keys = append(keys, keyOf(st))
	}
	lv.keys = keys
	todo := lv.todo[:0]
	defer func() { lv.todo = todo[:0] }()
	todo, first, more := s.revisit(w, m, all, keys, sleep, depth, todo)
	if !more {
		return
	}
	if first {
		if !s.count() {
			return
		}
		if quiescent(all) {
			s.final(w, m)
			if s.stop {
				return
			}
		}
		todo = s.awake(all, keys, sleep, todo)
	}
	if depth > s.st.MaxDepth {
		s.st.MaxDepth = depth
	}
	if depth >= s.bound {
		if len(todo) > 0 {
			s.st.Truncated = true
		}
		return
	}
	s.descend(w, m, todo, sleep, depth)
}

// revisit looks the state up in the visited table: a state met before
// with as many steps left explores only the steps that slept then and are
// awake now (appended to todo). first says that the state is new (or met
// with fewer steps left: explored as if new); more false, that there is
// nothing to explore from it (or the search failed).
func (s *search) revisit(w *runner.World, m *monitor, all []runner.Step, keys, sleep []key, depth int, todo []runner.Step) (_ []runner.Step, first, more bool) {
	if s.visited == nil {
		return todo, true, true
	}
	left := int32(s.bound - depth)
	fp := s.fingerprint(w, m)
	old, ok := s.visited.get(fp)
	if !ok || old.left < left {
		// New, or met before with fewer steps left in this pass:
		// explored as if new.
		if err := s.visited.put(fp, seen{s.sleeps.id(sleep), left}); err != nil {
			s.fail(err)
			return todo, false, false
		}
		if ok {
			return s.awake(all, keys, sleep, todo), false, true
		}
		return todo, true, true
	}
	stored := s.sleeps.get(old.sleep)
	// Explored before with the sleep set stored: what slept then and is
	// awake now is still to explore.
	var awake []key
	for _, k := range stored {
		if !slices.Contains(sleep, k) {
			awake = append(awake, k)
		}
	}
	if len(awake) == 0 {
		s.st.Revisits++
		return todo, false, false
	}
	if err := s.visited.put(fp, seen{s.sleeps.id(intersect(stored, sleep)), old.left}); err != nil {
		s.fail(err)
		return todo, false, false
	}
	for i, k := range keys {
		if slices.Contains(awake, k) {
			todo = append(todo, all[i])
		}
	}
	return todo, false, true
}

// count counts a new state, shows progress, and reports false if a limit
// (states, time) stops the search.
func (s *search) count() bool {
	s.st.States++
	s.st.Visited++
	if s.st.Visited >= s.nextShow && s.opt.Progress != nil {
		s.nextShow += 100000
		st := s.st
		st.Elapsed = time.Since(s.start)
		s.opt.Progress(st)
	}
	if s.opt.MaxStates > 0 && s.st.Visited >= s.opt.MaxStates || s.st.Visited%1024 == 0 && s.opt.over() {
		s.exhausted = false
		s.stop = true
		return false
	}
	return true
}

// descend takes each step of todo from w in turn and searches on from
// where it leads, the steps taken before it asleep where they are
// independent of it (sleep sets).
func (s *search) descend(w *runner.World, m *monitor, todo []runner.Step, sleep []key, depth int) {
	for i, st := range todo {
		k := keyOf(st)
		var childSleep []key
		if !s.opt.NoSleep {
			for _, z := range sleep {
				if independent(z, k) {
					childSleep = append(childSleep, z)
				}
			}
		}
		cw, cm := w, m
		if i < len(todo)-1 {
			var err error
			if cw, err = w.Clone(); err != nil {
				s.fail(err)
				return
			}
			cm = m.clone()
		}
		cm.attach(cw)
		s.path = append(s.path, st)
		s.st.Transitions++
		if err := cw.Apply(st); err != nil {
			s.fail(fmt.Errorf("explore: %w", err))
			return
		}
		if isFault(st) {
			cm.faults++
		}
		if cm.suspect != "" {
			s.suspected(cm.suspect)
			cm.suspect = ""
		}
		if !s.stop {
			s.dfs(cw, cm, childSleep, depth+1)
		}
		s.path = s.path[:len(s.path)-1]
		if s.stop {
			return
		}
		if !s.opt.NoSleep {
			sleep = append(sleep, k)
		}
	}
}

// quiescent reports whether steps (what s.steps returned) holds no step
// but the search's faults: w.Quiescent without listing the steps again.
func quiescent(steps []runner.Step) bool {
	for _, st := range steps {
		if !isFault(st) && st.Kind != runner.StepRecover {
			return false
		}
	}
	return true
}

// awake appends to todo the steps of all (whose keys are keys) not in
// sleep.
func (s *search) awake(all []runner.Step, keys, sleep []key, todo []runner.Step) []runner.Step {
	for i, st := range all {
		if s.opt.NoSleep || !slices.Contains(sleep, keys[i]) {
			todo = append(todo, st)
		}
	}
	return todo
}

func intersect(a, b []key) []key {
	var out []key
	for _, k := range a {
		if slices.Contains(b, k) {
			out = append(out, k)
		}
	}
	return out
}

func (s *search) fail(err error) {
	if s.err == nil {
		s.err = err
	}
	s.stop = true
}

// final checks a state where nothing but a fault can happen: a process
// that waits there waits for ever, and the checks judge the whole run.
func (s *search) final(w *runner.World, m *monitor) {
	s.st.Finals++
	waiting := w.Waiting()
	if len(waiting) == 0 {
		return // every workload is done: the monitors saw every step
	}
	s.confirm(waitText(waiting), true)
}

// waitText says that the processes wait for ever.
func waitText(waiting []int) string {
	verb := "wait"
	if len(waiting) == 1 {
		verb = "waits"
	}
	return fmt.Sprintf("nothing more can happen, but %s %s for the critical section", procs(waiting), verb)
}

// suspected confirms what a monitor saw after the last step.
func (s *search) suspected(what string) { s.confirm(what, false) }

// confirm records the trace of the current path and runs the checks on
// it; a violation they find ends the search.
func (s *search) confirm(watched string, final bool) {
	v, err := s.check(s.plan, s.path, watched)
	if err != nil {
		s.fail(err)
		return
	}
	if v != nil {
		s.viol = v
		s.st.FirstAt = s.st.Visited
		s.stop = true
	}
}

// check records the trace of sched in the world of p and runs the checks
// on it; it returns a violation if they find one.
func (s *search) check(p runner.Plan, sched []runner.Step, watched string) (*Violation, error) {
	p.Schedule = slices.Clone(sched)
	var c runner.Collector
	res, err := runner.Simulate(p, &c, nil)
	if err != nil {
		return nil, err
	}
	run := p.RunRow()
	run.ID, run.Complete, run.Status, run.ToolVersion = 1, res.Complete, res.Status, ""
	results, err := analyze.Evaluate(run, &trace.SliceReader{Events: c.Events}, s.checks)
	if err != nil {
		return nil, fmt.Errorf("explore: the trace of a schedule is broken (a bug in dmx): %w", err)
	}
	if analyze.Summarize(results) != analyze.Violated {
		return nil, nil
	}
	v := &Violation{Plan: p, Events: c.Events, Run: run, Results: results, Check: primary(results), Watched: watched}
	v.Original = v.Size()
	return v, nil
}

// primary returns the check a violation is about (Violation.Check).
func primary(results []analyze.Result) string {
	for _, name := range []string{"mutex-causal", "total-order", "deadlock", "liveness"} {
		for _, r := range results {
			if r.Check == name && r.Verdict == analyze.Violated {
				return name
			}
		}
	}
	for _, r := range results {
		if r.Verdict == analyze.Violated {
			return r.Check
		}
	}
	return ""
}

func procs(ps []int) string {
	var names []string
	for _, p := range ps {
		names = append(names, fmt.Sprintf("P%d", p))
	}
	switch len(names) {
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Opaque reports whether the machines of p's algorithm hold something
// outside the runtime (algo.Closer: a foreign program's process,
// runner/exec), whose state the search can neither copy nor hash: only
// random walks, each from a fresh start, search them.
func Opaque(p runner.Plan) bool {
	m, err := p.Spec.New(algo.Config{ID: 0, N: max(p.N, 1), Resource: runner.DefaultResource, Params: p.Params})
	if err != nil {
		return false
	}
	_, ok := m.(algo.Closer)
	return ok
}

// walks does opt.Walks seeded random walks, each to the end of its run or
// to MaxDepth, recording as it goes.
func (s *search) walks() error {
	r := rand.New(rand.NewPCG(s.opt.Seed, 0x6578706c6f7265))
	var buf []runner.Step
	for i := 0; i < s.opt.Walks && !s.stop; i++ {
		if s.opt.over() {
			break
		}
		w, err := s.world(nil)
		if err != nil {
			return err
		}
		err = s.walk(w, r, &buf)
		w.Close()
		if err != nil {
			return err
		}
		if s.opt.Progress != nil && s.st.Walks%1000 == 0 {
			s.opt.Progress(s.st)
		}
		if s.opt.MaxStates > 0 && s.st.States >= s.opt.MaxStates {
			break
		}
	}
	return nil
}

// walk is one random walk from w to the end of its run or to MaxDepth;
// *buf is the steps' buffer, reused.
func (s *search) walk(w *runner.World, r *rand.Rand, buf *[]runner.Step) error {
	m := s.newMonitor()
	m.attach(w)
	s.path = s.path[:0]
	for len(s.path) < s.maxDepth && !s.stop {
		*buf = s.steps(w, m, *buf)
		if w.Quiescent() {
			// Nothing but faults: the run is over.
			s.final(w, m)
			break
		}
		st := (*buf)[r.IntN(len(*buf))]
		s.path = append(s.path, st)
		s.st.Transitions++
		s.st.States++
		s.st.Visited++
		if err := w.Apply(st); err != nil {
			return fmt.Errorf("explore: %w", err)
		}
		if isFault(st) {
			m.faults++
		}
		if m.suspect != "" {
			s.suspected(m.suspect)
			m.suspect = ""
		}
	}
	if len(s.path) >= s.maxDepth {
		s.st.Truncated = true
	}
	if len(s.path) > s.st.MaxDepth {
		s.st.MaxDepth = len(s.path)
	}
	s.st.Walks++
	return nil
}

// sleepTable interns sleep sets: the visited states store a number each,
// and the many states that share a sleep set (most share the empty one)
// share its one copy.
type sleepTable struct {
	ids  map[string]uint32
	sets [][]key
	buf  []byte
}

func newSleepTable() sleepTable {
	return sleepTable{ids: map[string]uint32{"": 0}, sets: [][]key{nil}}
}

// id returns the number of the set of keys ks (in any order).
func (t *sleepTable) id(ks []key) uint32 {
	if len(ks) == 0 {
		return 0
	}
	sorted := slices.Clone(ks)
	slices.SortFunc(sorted, compareKeys)
	t.buf = t.buf[:0]
	for _, k := range sorted {
		t.buf = append(t.buf, byte(k.kind))
		t.buf = binary.AppendVarint(t.buf, int64(k.proc))
		t.buf = binary.AppendVarint(t.buf, int64(k.from))
		t.buf = binary.AppendVarint(t.buf, k.msg)
		t.buf = binary.AppendUvarint(t.buf, uint64(len(k.resource)))
		t.buf = append(t.buf, k.resource...)
		t.buf = binary.AppendUvarint(t.buf, uint64(len(k.timer)))
		t.buf = append(t.buf, k.timer...)
	}
	if id, ok := t.ids[string(t.buf)]; ok {
		return id
	}
	id := uint32(len(t.sets))
	t.ids[string(t.buf)] = id
	t.sets = append(t.sets, sorted)
	return id
}

func (t *sleepTable) get(id uint32) []key { return t.sets[id] }

func compareKeys(a, b key) int {
	switch {
	case a.kind != b.kind:
		return int(a.kind) - int(b.kind)
	case a.proc != b.proc:
		return int(a.proc - b.proc)
	case a.from != b.from:
		return int(a.from - b.from)
	case a.msg != b.msg:
		if a.msg < b.msg {
			return -1
		}
		return 1
	case a.resource != b.resource:
		return strings.Compare(a.resource, b.resource)
	}
	return strings.Compare(a.timer, b.timer)
}

package runner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// FaultDriver is what a driver does for the Injector: the injector
// decides which fault happens when and to whom, the driver carries out
// its effect on its processes (the simulator on its simulated nodes,
// runner/udp on OS processes and their datagrams). Every method runs on
// the driver's loop, the one that feeds the nodes their inputs.
type FaultDriver interface {
	// Elapsed is the time since the start of the run.
	Elapsed() time.Duration
	// After calls f on the loop d from now; with d 0, after the step that
	// is under way (a crash triggered by an event comes after the event).
	After(d time.Duration, f func())
	// Up reports whether process p is up: started and not crashed (a
	// process killed whose end is not seen yet is down).
	Up(p int) bool
	// Crash stops p, losing its state; its crash is recorded (by the
	// driver, on the process's behalf when the process cannot).
	Crash(p int, f *Fault)
	// Recover restarts crashed process p as a new incarnation, with what
	// it persisted unless f.Amnesia.
	Recover(p int, f *Fault)
	// Process carries out a process or clock fault other than a crash or
	// a recovery (a pause, a skew: f.Kind says which) on p, and records
	// it. A driver is given only the kinds its DriverSpec.Applies
	// accepts.
	Process(p int, f *Fault)
	// NetStart and NetEnd put network fault i of the plan (isolating
	// proc) in and out of force at every process; those it acts on
	// record it. A driver that applies network faults in user space
	// judges each message with a NetFaults.
	NetStart(i, proc int)
	NetEnd(i int)
	// NotApplied says (to the user, and as an event of the lowest live
	// process) that f could not be carried out, and why.
	NotApplied(f *Fault, reason string)
}

// FaultStep is one timed step of a schedule: at At after the run's start
// the driver calls Do on its loop (a fault starts, or a window ends).
type FaultStep struct {
	At time.Duration
	Do func()
}

// Injector carries out a plan's faults for a driver: it turns them into
// timed steps, follows from the events who plays which part (leader,
// coordinator, token holder, a process in the critical section) and how
// many entries and sends each process made, fires the faults that wait for
// a condition the moment it holds, restarts crashed processes after their
// delay, and at the end says which faults never applied. The drivers carry
// out the effects (FaultDriver), so that a fault means the same under dmx
// sim and dmx run.
type Injector struct {
	faults  []Fault
	d       FaultDriver
	n       int
	w       roleWatch
	armed   []int // faults waiting for a condition, in order of arming
	since   []time.Duration
	fired   []bool // carried out, or said not to apply
	crashed []bool // crashes carried out
	netOn   []bool // network faults in force
	pending int    // process faults still to come: the run waits for them
	// aimHook, if set, chooses the process of a crash, pause or recover
	// when it is due (SimHooks.Aim); -1 skips the fault.
	aimHook func(i int, f Fault) int
}

// NewInjector returns the injector of p's faults, carried out by d.
func NewInjector(p Plan, d FaultDriver) *Injector {
	inj := &Injector{faults: p.Faults, d: d, n: p.N,
		since:   make([]time.Duration, len(p.Faults)),
		fired:   make([]bool, len(p.Faults)),
		crashed: make([]bool, len(p.Faults)),
		netOn:   make([]bool, len(p.Faults))}
	inj.w = newRoleWatch(p.N, p.Spec.PartsOf(p.Params))
	return inj
}

// Steps returns the timed steps of the schedule in the order given (the
// drivers keep that order for steps due at the same time: a recover:1@T
// comes after the crash:1@T before it). Crashes triggered by events are
// armed from the start.
func (inj *Injector) Steps() []FaultStep {
	var out []FaultStep
	for i := range inj.faults {
		f := &inj.faults[i]
		switch {
		case f.Kind == FaultCrash && f.Trigger.Event != "":
			inj.armed = append(inj.armed, i)
		case f.Kind == FaultRecover && f.AfterCrash:
			// Scheduled when its crash happens.
		default:
			if f.process() {
				inj.pending++
			}
			out = append(out, FaultStep{At: f.At, Do: func() { inj.start(i) }})
			if f.Network() && f.End != 0 {
				out = append(out, FaultStep{At: f.End, Do: func() { inj.endNet(i) }})
			}
		}
	}
	return out
}

// process reports whether f acts on a process or its clock (the run
// waits for it).
func (f *Fault) process() bool {
	t := f.Kind.Target()
	return t == TargetProcess || t == TargetClock
}

// Waiting reports whether a process fault is still to come.
func (inj *Injector) Waiting() bool { return inj.pending > 0 }

// start carries out fault i at its time.
func (inj *Injector) start(i int) {
	f := &inj.faults[i]
	if f.process() {
		inj.pending--
	}
	if inj.aimHook != nil && f.Kind.Target() == TargetProcess {
		inj.fired[i] = true
		p := inj.aimHook(i, *f)
		switch {
		case p < 0:
		case f.Kind == FaultRecover:
			if !inj.d.Up(p) {
				inj.d.Recover(p, f)
			}
		default:
			inj.apply(i, p)
		}
		return
	}
	switch {
	case f.Kind == FaultRecover:
		inj.fired[i] = true
		if inj.d.Up(f.Proc) {
			inj.d.NotApplied(f, fmt.Sprintf("P%d is up", f.Proc))
			return
		}
		inj.d.Recover(f.Proc, f)
	case f.Kind.Target() == TargetProcess:
		// A crash, a pause: on the process that plays its part.
		inj.aim(i)
	case f.Kind.Target() == TargetClock:
		inj.fired[i] = true
		inj.d.Process(f.Proc, f)
	case f.Kind == FaultHeal:
		inj.fired[i] = true
		for j := range inj.faults {
			if inj.netOn[j] && inj.faults[j].severs() {
				inj.endNet(j)
			}
		}
	default: // network
		inj.startNet(i)
	}
}

// startNet puts network fault i in force, on the process that plays its
// part if it names one.
func (inj *Injector) startNet(i int) {
	f := &inj.faults[i]
	inj.fired[i] = true
	proc := f.Proc
	if f.Kind == FaultIsolate && proc < 0 {
		p, ok := inj.w.holder(proc)
		if !ok {
			inj.d.NotApplied(f, "no live "+roleName(proc)+" at "+inj.d.Elapsed().String())
			return
		}
		proc = p
	}
	inj.netOn[i] = true
	inj.d.NetStart(i, proc)
}

func (inj *Injector) endNet(i int) {
	if inj.netOn[i] {
		inj.netOn[i] = false
		inj.d.NetEnd(i)
	}
}

// aim carries out process fault i (a crash, a pause) on the process that
// plays its part now, or arms it until one does.
func (inj *Injector) aim(i int) {
	f := &inj.faults[i]
	p := f.Proc
	if p < 0 {
		var ok bool
		if p, ok = inj.w.holder(p); !ok {
			inj.since[i] = inj.d.Elapsed()
			inj.armed = append(inj.armed, i)
			return
		}
	}
	inj.apply(i, p)
}

// apply carries out process fault i (a crash, a pause) on process p.
func (inj *Injector) apply(i, p int) {
	f := &inj.faults[i]
	inj.fired[i] = true
	if !inj.d.Up(p) {
		inj.d.NotApplied(f, fmt.Sprintf("P%d is already down", p))
		return
	}
	if f.Kind != FaultCrash {
		inj.d.Process(p, f)
		return
	}
	inj.d.Crash(p, f)
	inj.crashed[i] = true
	// The restarts that count from this crash.
	for j := range inj.faults {
		r := &inj.faults[j]
		if r.Kind == FaultRecover && r.AfterCrash && crashBefore(inj.faults, j) == i {
			inj.pending++
			inj.d.After(r.At, func() {
				inj.pending--
				inj.fired[j] = true
				if inj.d.Up(p) {
					inj.d.NotApplied(r, fmt.Sprintf("P%d is up", p))
					return
				}
				inj.d.Recover(p, r)
			})
		}
	}
}

// Observe follows one recorded event: who plays which part, and the
// counts triggers wait for. A fault whose condition now holds fires after
// the step under way.
func (inj *Injector) Observe(ev *trace.Event) {
	inj.w.observe(ev)
	if len(inj.armed) == 0 {
		return
	}
	for k := 0; k < len(inj.armed); k++ {
		i := inj.armed[k]
		f := &inj.faults[i]
		p, ok := -1, false
		if f.Trigger.Event != "" {
			p, ok = f.Proc, ev.Proc == f.Proc && inj.w.reached(f.Proc, f.Trigger)
		} else {
			p, ok = inj.w.holder(f.Proc)
		}
		if !ok {
			continue
		}
		inj.armed = slices.Delete(inj.armed, k, k+1)
		k--
		inj.fired[i] = true // not twice, though it fires after this step
		inj.d.After(0, func() { inj.apply(i, p) })
	}
}

// Finish says which faults never applied: those still waiting for their
// condition, and those whose time the run did not reach.
func (inj *Injector) Finish() {
	end := inj.d.Elapsed()
	for i := range inj.faults {
		f := &inj.faults[i]
		if inj.fired[i] {
			continue
		}
		inj.fired[i] = true
		var why string
		switch {
		case f.Trigger.Event == "enter":
			why = fmt.Sprintf("P%d made %d of %d entries", f.Proc, inj.w.enters[f.Proc], f.Trigger.Count)
		case f.Trigger.Event == "send":
			why = fmt.Sprintf("P%d sent %d of %d %s messages", f.Proc, inj.w.sends[f.Proc][f.Trigger.Type], f.Trigger.Count, f.Trigger.Type)
		case slices.Contains(inj.armed, i):
			why = fmt.Sprintf("no live %s from %v to the end of the run (%v)", roleName(f.Proc), inj.since[i], end)
		case f.Kind == FaultRecover && f.AfterCrash:
			if c := crashBefore(inj.faults, i); !inj.crashed[c] {
				why = "its crash (" + inj.faults[c].String() + ") never happened"
			} else {
				why = "the run ended first"
			}
		default:
			why = fmt.Sprintf("the run ended at %v, before %v", end, f.At)
		}
		inj.d.NotApplied(f, why)
	}
}

// roleWatch follows, from a run's events, who plays which part and how
// many entries and sends of each type each process made.
type roleWatch struct {
	roles algo.Parts
	// belief[p] is the leader live process p decided last (-1: none, or p
	// is down), decided[p] when, and started[p] when p last started, each
	// as the count of events observed then.
	belief  []int
	decided []int64
	started []int64
	events  int64
	token   int   // the token's holder; -1 none known (in flight, or lost)
	inCS    []int // resources each process holds
	down    []bool
	enters  []int
	sends   []map[string]int
}

func newRoleWatch(n int, roles algo.Parts) roleWatch {
	w := roleWatch{roles: roles, token: -1, belief: make([]int, n), decided: make([]int64, n), started: make([]int64, n),
		inCS: make([]int, n), down: make([]bool, n), enters: make([]int, n), sends: make([]map[string]int, n)}
	for i := range w.belief {
		w.belief[i] = -1
	}
	if roles.Token != "" {
		w.token = roles.TokenHolder
	}
	for i := range w.sends {
		w.sends[i] = map[string]int{}
	}
	return w
}

func (w *roleWatch) observe(ev *trace.Event) {
	p := ev.Proc
	if p < 0 || p >= len(w.down) {
		return
	}
	w.events++
	switch ev.Kind {
	case trace.KindLeader:
		w.belief[p], w.decided[p] = ev.Peer, w.events
	case trace.KindCSEnter:
		w.inCS[p]++
		w.enters[p]++
	case trace.KindCSExit:
		if w.inCS[p] > 0 {
			w.inCS[p]--
		}
	case trace.KindSend:
		w.sends[p][ev.MsgType]++
		if ev.MsgType == w.roles.Token && w.roles.Token != "" && w.token == p {
			w.token = -1
		}
	case trace.KindReceive:
		if ev.MsgType == w.roles.Token && w.roles.Token != "" {
			w.token = p
		}
	case trace.KindCrash:
		w.down[p], w.inCS[p], w.belief[p] = true, 0, -1
		if w.token == p {
			w.token = -1 // lost with its holder
		}
	case trace.KindRecover, trace.KindStart:
		w.down[p], w.started[p] = false, w.events
	}
}

// leader is the live process that a live process most recently decided
// leads (since it last started), or -1. A decision naming a process that
// is down does not count, however recent: a process that lagged may still
// name a leader that the others have replaced (its coordinator message
// came late), and the leader is the one they follow.
func (w *roleWatch) leader() int {
	l, at := -1, int64(0)
	for p, q := range w.belief {
		if !w.down[p] && q >= 0 && q < len(w.down) && !w.down[q] && w.decided[p] > w.started[q] && w.decided[p] > at {
			l, at = q, w.decided[p]
		}
	}
	return l
}

// holder returns the live process that plays part role now.
func (w *roleWatch) holder(role int) (int, bool) {
	live := func(p int) (int, bool) { return p, p >= 0 && p < len(w.down) && !w.down[p] }
	switch role {
	case Leader:
		return live(w.leader())
	case Coordinator:
		if w.roles.Leader {
			return live(w.leader())
		}
		return live(w.roles.Coordinator)
	case TokenHolder:
		return live(w.token)
	case InCS:
		for p, k := range w.inCS {
			if k > 0 && !w.down[p] {
				return p, true
			}
		}
	}
	return -1, false
}

// reached reports whether p has made the events trigger t counts.
func (w *roleWatch) reached(p int, t Trigger) bool {
	switch t.Event {
	case "enter":
		return w.enters[p] >= t.Count
	case "send":
		return w.sends[p][t.Type] >= t.Count
	}
	return false
}

// FaultNote formats the faults that did not apply, for a run's result.
func FaultNote(f *Fault, reason string) string {
	return "fault " + f.String() + " not applied: " + strings.TrimSpace(reason)
}

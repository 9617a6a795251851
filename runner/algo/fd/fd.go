package fd

import (
	"fmt"
	"time"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner/algo"
)

// MsgHeartbeat is the type of the detector's one message, seed 004's "beat".
const MsgHeartbeat = "heartbeat"

// Timer names. A machine that embeds a Detector must not use them.
const (
	TimerBeat  = "fd-beat"  // send the next beat (every T)
	TimerCheck = "fd-check" // the earliest moment someone may become suspect
)

// Defaults of T and D, in ns.
const (
	DefaultPeriod    = 20_000_000
	DefaultAllowance = 20_000_000
)

// Params are the detector's parameters; every algorithm that embeds a
// Detector declares them among its own.
var Params = []algo.Param{
	{Name: "fd-period", Default: "20ms", Doc: "heartbeat failure detector: beat every T (seed 004); 0 turns the detector off"},
	{Name: "fd-allowance", Default: "20ms", Doc: "heartbeat failure detector: suspect a process silent for T+D; D too small gives false suspicions (seed 004)"},
	StallParam,
}

// UDPParams are the detector's parameters for a run over real UDP (see
// algo.Spec.UDPParams): a beat every 50ms and suspicion after T+D =
// 250ms of silence, since a loaded machine sees stalls of 100-400ms; and
// a process's own stall not counted as the others' silence (when every
// process was off the CPU at once, the first to run again would suspect
// all the others). With more parameters given as key, value pairs.
func UDPParams(kv ...string) map[string]string {
	out := map[string]string{"fd-period": "50ms", "fd-allowance": "200ms", "fd-stall": StallDiscount}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// HostedParams are the detector's parameters as a machine declares them
// that runs the detector only in one of its modes (central's failover,
// token-ring's regenerate): each doc begins with the mode, and note ends
// fd-allowance's, on what false suspicions do there.
func HostedParams(mode, note string) []algo.Param {
	return []algo.Param{
		{Name: "fd-period", Default: "20ms", Doc: mode + ": heartbeat failure detector period T (seed 004)"},
		{Name: "fd-allowance", Default: "20ms", Doc: mode + ": suspect a process silent for T+D (seed 004); " + note},
		{Name: StallParam.Name, Default: StallParam.Default, Doc: mode + ": " + StallParam.Doc},
	}
}

// StallParam is the parameter fd-stall.
var StallParam = algo.Param{Name: "fd-stall", Default: StallCount, Doc: "heartbeat failure detector: count (seed 004 as written) or discount the time this process itself was off the CPU or paused, seen as its own timers firing late, from the others' silence (dmx run's default)"}

// Values of fd-stall.
const (
	StallCount    = "count"
	StallDiscount = "discount"
)

// Detector is the failure detector of one process.
type Detector struct {
	self      int
	n         int
	period    int64   // T; 0: off
	allowance int64   // D
	last      []int64 // last[j]: when the last message from P_j arrived, moved on by this process's own stalls
	suspected []bool
	checkAt   int64 // when the armed check timer fires; -1 if none is armed
	beatAt    int64 // when the armed beat timer fires
	// discount is fd-stall=discount: this process's own stalls are not
	// the others' silence (see stalled); accounted is the time up to
	// which they are discounted.
	discount  bool
	accounted int64
}

// New builds the detector of process self in a group of n that beats every
// period ns and suspects after period+allowance ns of silence.
func New(self, n int, period, allowance int64) *Detector {
	return &Detector{self: self, n: n, period: period, allowance: allowance,
		last: make([]int64, n), suspected: make([]bool, n), checkAt: -1}
}

// FromConfig builds the detector of c.ID from the parameters fd-period and
// fd-allowance of c (the caller has already checked c with algo.Config.Check
// against a list that includes Params).
func FromConfig(c algo.Config) (*Detector, error) {
	t, err := c.DurationParam("fd-period", DefaultPeriod)
	if err != nil {
		return nil, err
	}
	d, err := c.DurationParam("fd-allowance", DefaultAllowance)
	if err != nil {
		return nil, err
	}
	det := New(c.ID, c.N, t, d)
	switch v := c.Param("fd-stall", StallCount); v {
	case StallCount:
	case StallDiscount:
		det.DiscountStalls()
	default:
		return nil, fmt.Errorf("parameter fd-stall=%q: want %s or %s", v, StallCount, StallDiscount)
	}
	return det, nil
}

// DiscountStalls makes the detector count silence only while its process
// runs (fd-stall=discount; see stalled).
func (d *Detector) DiscountStalls() { d.discount = true }

// Enabled reports whether the detector runs (fd-period > 0).
func (d *Detector) Enabled() bool { return d.period > 0 }

// Deadline is T+D: the silence after which a process is suspected.
func (d *Detector) Deadline() int64 { return d.period + d.allowance }

// Suspected reports whether P_j is currently suspected.
func (d *Detector) Suspected(j int) bool { return j >= 0 && j < d.n && d.suspected[j] }

// SuspectedSet returns the suspected processes in id order.
func (d *Detector) SuspectedSet() []int {
	var s []int
	for j, x := range d.suspected {
		if x {
			s = append(s, j)
		}
	}
	return s
}

// Start starts (or, after a crash, restarts) the detector at time now: it
// suspects nobody, counts every process as heard from now, sends the first
// beat at once (so that a restarted process is trusted again as soon as it
// can be) and arms the beat and check timers.
func (d *Detector) Start(now int64) []algo.Output {
	for j := range d.last {
		d.last[j] = now
		d.suspected[j] = false
	}
	d.checkAt, d.accounted = -1, now
	if !d.Enabled() || d.n < 2 {
		return nil
	}
	d.checkAt = now + d.Deadline()
	return append(d.beat(now), algo.SetTimerOut(TimerCheck, d.Deadline()))
}

// Step gives the detector one input of its machine. It returns the outputs
// the detector wants and whether the input was the detector's own (a
// heartbeat delivery or one of its timers), which the machine then ignores.
// Every delivery, of any type, is a sign of life of its sender.
func (d *Detector) Step(in algo.Input) (out []algo.Output, mine bool) {
	switch in.Kind {
	case algo.Receive:
		out = d.heard(in.Now, in.From)
		return out, in.Msg.Type == MsgHeartbeat
	case algo.Timer:
		switch in.TimerName {
		case TimerBeat:
			d.stalled(in.Now, d.beatAt)
			return d.beat(in.Now), true
		case TimerCheck:
			d.stalled(in.Now, d.checkAt)
			return d.check(in.Now), true
		}
	}
	return nil, false
}

// stalled discounts this process's own stall from everyone's silence
// (fd-stall=discount). A timer of the detector that fires at now, later
// than due, shows that the process was not running in between (a busy
// machine's scheduler, a paused process): it could hear nobody then, and
// the others' messages of that time may be waiting, unread, in its socket.
// Silence is then counted only while the process runs, so nobody is
// suspected for the time this one was away.
func (d *Detector) stalled(now, due int64) {
	if !d.discount || due < 0 {
		return
	}
	away := now - max(due, d.accounted)
	d.accounted = max(d.accounted, now)
	if away <= 0 {
		return
	}
	for j := range d.last {
		d.last[j] = min(d.last[j]+away, now)
	}
}

// heard records a sign of life of P_j at now, reversing a suspicion.
func (d *Detector) heard(now int64, j int) []algo.Output {
	if !d.Enabled() || j < 0 || j >= d.n || j == d.self {
		return nil
	}
	d.last[j] = max(d.last[j], now)
	if !d.suspected[j] {
		return nil
	}
	// Seed 004: "We can only suspect a crash!": a message from a suspected
	// process shows the suspicion was false.
	d.suspected[j] = false
	out := []algo.Output{{Kind: algo.Trust, To: j}}
	if d.checkAt < 0 {
		// Everyone else was suspected, so no check was armed.
		d.checkAt = now + d.Deadline()
		out = append(out, algo.SetTimerOut(TimerCheck, d.Deadline()))
	}
	return out
}

// beat is seed 004's "send beat every T": a heartbeat to every other
// process, suspected ones included (a falsely suspected process learns
// nothing from it, but the beat is what lets it trust us again if it
// suspects us).
func (d *Detector) beat(now int64) []algo.Output {
	if !d.Enabled() {
		return nil
	}
	d.beatAt = now + d.period
	var out []algo.Output
	for j := 0; j < d.n; j++ {
		if j != d.self {
			out = append(out, algo.SendTo(j, algo.Msg{Type: MsgHeartbeat}))
		}
	}
	return append(out, algo.SetTimerOut(TimerBeat, d.period))
}

// check is seed 004's "declared dead if not observed in last T+D": it
// suspects every process whose last message is T+D old or older, and arms
// the check for the next process that may become suspect.
func (d *Detector) check(now int64) []algo.Output {
	if !d.Enabled() {
		return nil
	}
	var out []algo.Output
	next := int64(-1)
	for j := 0; j < d.n; j++ {
		if j == d.self || d.suspected[j] {
			continue
		}
		due := d.last[j] + d.Deadline()
		if now >= due {
			d.suspected[j] = true
			out = append(out, algo.Output{Kind: algo.Suspect, To: j})
			continue
		}
		if next < 0 || due < next {
			next = due
		}
	}
	d.checkAt = next
	if next >= 0 {
		out = append(out, algo.SetTimerOut(TimerCheck, next-now))
	}
	return out
}

// String describes the detector, for machines' String methods.
func (d *Detector) String() string {
	if !d.Enabled() {
		return "fd=off"
	}
	return fmt.Sprintf("suspects=%v", d.SuspectedSet())
}

// Suspects returns the processes that outs newly suspect, in order.
func Suspects(outs []algo.Output) []int {
	var s []int
	for _, o := range outs {
		if o.Kind == algo.Suspect {
			s = append(s, o.To)
		}
	}
	return s
}

// Cost is the detector's traffic as a cost of the algorithm that embeds
// it: a heartbeat from every process to every other, N(N-1) messages,
// every T (fd-period). on says whether the detector runs in a setting
// (an algorithm may embed it only in a variant); note says when it does,
// or is empty.
func Cost(note string, on func(theory.Setting) bool) theory.Cost {
	return theory.Cost{
		Measure: theory.Heartbeats,
		Formula: "N(N-1) every T (fd-period)",
		Note:    note,
		Eval:    theory.InN(func(n float64) theory.Estimate { return theory.Exact(n * (n - 1)) }),
		Every: func(s theory.Setting) time.Duration {
			if on != nil && !on(s) {
				return 0
			}
			t, err := algo.Config{Params: s.Params}.DurationParam("fd-period", DefaultPeriod)
			if err != nil {
				t = DefaultPeriod
			}
			return time.Duration(t)
		},
	}
}

package fd

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algotest"
)

const ms = 1_000_000

// format formats the outputs of process id.
func format(id int, outs []algo.Output) []string {
	var s []string
	for _, o := range outs {
		s = append(s, algotest.FormatOutput(id, o))
	}
	return s
}

func want(t *testing.T, what string, got []algo.Output, w ...string) {
	t.Helper()
	id := 0 // the process, if what begins with "P<id>"
	fmt.Sscanf(what, "P%d", &id)
	if g := format(id, got); !slices.Equal(g, w) {
		t.Fatalf("%s: outputs %q, want %q", what, g, w)
	}
}

func deliver(now int64, from int, typ string) algo.Input {
	return algo.Input{Kind: algo.Receive, Now: now, From: from, Msg: algo.Msg{Type: typ}}
}

func timer(now int64, name string) algo.Input {
	return algo.Input{Kind: algo.Timer, Now: now, TimerName: name}
}

// TestSuspectAfterSilence: a process is suspected exactly when nothing has
// come from it for T+D, and not before; any message counts, not only
// heartbeats.
// Reference: seed 004 "Heartbeat": "Declared dead if not observed in last
// T+D seconds".
func TestSuspectAfterSilence(t *testing.T) {
	d := New(0, 3, 20*ms, 20*ms)
	want(t, "start", d.Start(0), "send 0->1 heartbeat", "send 0->2 heartbeat",
		"set-timer fd-beat 20ms", "set-timer fd-check 40ms")

	// P1 sends an algorithm message at 10ms: a sign of life, not the
	// detector's own input.
	out, mine := d.Step(deliver(10*ms, 1, "election"))
	if mine || len(out) != 0 {
		t.Fatalf("an election message: mine=%v outputs %v", mine, format(0, out))
	}
	// At 40ms P2 has been silent for T+D = 40ms: suspected. P1 has been
	// silent for 30ms only; the check is re-armed for its deadline (50ms).
	out, _ = d.Step(timer(40*ms, TimerCheck))
	want(t, "check at 40ms", out, "suspect 2", "set-timer fd-check 10ms")
	if !d.Suspected(2) || d.Suspected(1) {
		t.Fatalf("suspects %v, want [2]", d.SuspectedSet())
	}
	// A check that fires early suspects nobody and re-arms.
	out, _ = d.Step(timer(49*ms, TimerCheck))
	want(t, "check at 49ms", out, "set-timer fd-check 1ms")
	out, _ = d.Step(timer(50*ms, TimerCheck))
	want(t, "check at 50ms", out, "suspect 1")
	if got := d.SuspectedSet(); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("suspects %v, want [1 2]", got)
	}
}

// TestReversal: a message from a suspected process reverses the suspicion
// (Trust) and, since everyone was suspected and no check was armed, arms
// one for it.
// Reference: seed 004: "We can only suspect a crash!".
func TestReversal(t *testing.T) {
	d := New(0, 2, 20*ms, 20*ms)
	d.Start(0)
	out, _ := d.Step(timer(40*ms, TimerCheck))
	want(t, "check", out, "suspect 1")
	out, mine := d.Step(deliver(55*ms, 1, MsgHeartbeat))
	if !mine {
		t.Fatal("a heartbeat is the detector's own input")
	}
	want(t, "heartbeat from the suspect", out, "trust 1", "set-timer fd-check 40ms")
	if d.Suspected(1) {
		t.Fatal("P1 still suspected")
	}
	// Heard again: no output, the armed check stands.
	out, _ = d.Step(deliver(60*ms, 1, MsgHeartbeat))
	want(t, "heartbeat", out)
	out, _ = d.Step(timer(95*ms, TimerCheck))
	want(t, "check at 95ms", out, "set-timer fd-check 5ms")
}

// TestBeat: every T, a heartbeat to every other process, suspected ones
// included.
// Reference: seed 004: "Send 'beat' every T seconds".
func TestBeat(t *testing.T) {
	d := New(1, 3, 20*ms, 5*ms)
	d.Start(0)
	d.Step(timer(25*ms, TimerCheck)) // suspects 0 and 2
	out, mine := d.Step(timer(20*ms, TimerBeat))
	if !mine {
		t.Fatal("the beat timer is the detector's own")
	}
	want(t, "P1 beat", out, "send 1->0 heartbeat", "send 1->2 heartbeat", "set-timer fd-beat 20ms")
}

// TestOff: fd-period=0 turns the detector off.
func TestOff(t *testing.T) {
	d, err := FromConfig(algo.Config{ID: 0, N: 3, Params: map[string]string{"fd-period": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Enabled() {
		t.Fatal("enabled")
	}
	want(t, "start", d.Start(0))
	out, _ := d.Step(timer(time1s, TimerCheck))
	want(t, "check", out)
	if d.Suspected(1) {
		t.Fatal("suspects with the detector off")
	}
}

const time1s = 1000 * ms

// TestFalseSuspicionSlowDelivery is seed 004's "D too small => Inaccurate:
// alive reported dead", staged by hand: P1 beats every T = 20ms (first at
// its start), each beat takes 30ms to arrive, and P0 allows D = 5ms. P0
// suspects the live P1 at T+D = 25ms and trusts it again when the first beat
// arrives at 30ms.
func TestFalseSuspicionSlowDelivery(t *testing.T) {
	p0, p1 := New(0, 2, 20*ms, 5*ms), New(1, 2, 20*ms, 5*ms)
	p0.Start(0)
	want(t, "P1 starts", p1.Start(0), "send 1->0 heartbeat", "set-timer fd-beat 20ms", "set-timer fd-check 25ms")
	out, _ := p0.Step(timer(25*ms, TimerCheck))
	want(t, "P0 checks at 25ms", out, "suspect 1")
	out, _ = p0.Step(deliver(30*ms, 1, MsgHeartbeat)) // the beat of 0ms, 30ms late
	want(t, "the slow beat", out, "trust 1", "set-timer fd-check 25ms")
	// With D = 15ms the same schedule gives no suspicion: the check at
	// T+D = 35ms comes after the beat.
	q0 := New(0, 2, 20*ms, 15*ms)
	q0.Start(0)
	q0.Step(deliver(30*ms, 1, MsgHeartbeat))
	out, _ = q0.Step(timer(35*ms, TimerCheck))
	want(t, "check with D=15ms", out, "set-timer fd-check 30ms")
}

// watcher is a machine that only runs a detector (and names P(N-1) leader
// at once, so that the bench's end of an election settles).
type watcher struct{ d *Detector }

func (w watcher) Step(in algo.Input) []algo.Output {
	switch in.Kind {
	case algo.Start, algo.Recover:
		return append(w.d.Start(in.Now), algo.Output{Kind: algo.Leader, Leader: w.d.n - 1})
	}
	out, _ := w.d.Step(in)
	return out
}

var watcherSpec = algo.Spec{Name: "fd-watcher", Kind: algo.Election, Params: Params, Properties: []string{"termination"},
	New: func(c algo.Config) (algo.Machine, error) {
		if err := c.Validate(Params); err != nil {
			return nil, err
		}
		d, err := FromConfig(c)
		if err != nil {
			return nil, err
		}
		return watcher{d}, nil
	}}

// TestFalseSuspicionsInRuns runs detectors on the randomized network with
// delays of 10-30ms and T = 20ms. With D = 1ms, live processes are
// suspected (seed 004: "D too small => Inaccurate") in every seed, and every
// such suspicion is reversed by a later message. With D = 25ms, more than
// the spread of the delays (a beat may arrive up to T + 20ms after the one
// before), no live process is ever suspected.
func TestFalseSuspicionsInRuns(t *testing.T) {
	for _, tc := range []struct {
		allowance string
		false_    bool
	}{{"1ms", true}, {"25ms", false}} {
		t.Run("D="+tc.allowance, func(t *testing.T) {
			algotest.Sweep(t, watcherSpec, []int{2, 3, 5}, 50, algotest.Options{
				Params:   map[string]string{"fd-allowance": tc.allowance},
				MinDelay: 10 * ms, MaxDelay: 30 * ms, Settle: 500 * ms,
			}, func(r *algotest.Result) error {
				if tc.false_ && r.FalseSuspicions == 0 {
					return fmt.Errorf("no false suspicion with D=%s", tc.allowance)
				}
				if !tc.false_ && r.FalseSuspicions != 0 {
					return fmt.Errorf("%d false suspicions with D=%s", r.FalseSuspicions, tc.allowance)
				}
				if r.Suspicions != r.FalseSuspicions {
					return fmt.Errorf("%d suspicions, %d of live nodes: nobody crashed", r.Suspicions, r.FalseSuspicions)
				}
				return nil
			})
		})
	}
}

// TestCrashSuspected: a crashed process is suspected by every live one
// within T+D of its last message, and never trusted again; a recovered one
// is trusted again at its first message.
func TestCrashSuspected(t *testing.T) {
	res, err := algotest.Run(watcherSpec, algotest.Options{N: 4, Seed: 3,
		Crashes: []algotest.Crash{{Proc: 2, At: 100 * ms}}, Settle: 200 * ms})
	if err != nil {
		t.Fatal(err)
	}
	if res.Suspicions != 3 || res.FalseSuspicions != 0 {
		t.Fatalf("%d suspicions (%d false), want P2 suspected by the 3 others", res.Suspicions, res.FalseSuspicions)
	}
}

// TestOwnStallIsNotSilence: with fd-stall=discount, a process that was not
// running (a loaded machine's scheduler, a pause) finds its timers late; the
// silence of the others while it was away is its own, not theirs. P0
// (T = D = 20ms) is away from 10ms to 200ms: its beat due at 20ms and its
// check due at 40ms fire at 200ms, and P1's beat of 190ms waits unread in
// its socket. Counted in plain time, everyone has been silent for 200ms:
// both would be suspected, and P1 wrongly. Discounting the 180ms away, nobody is yet; P1's
// beat is read next, and P2, silent for good, is suspected T+D after the
// last message P0 could have heard.
func TestOwnStallIsNotSilence(t *testing.T) {
	d, err := FromConfig(algo.Config{ID: 0, N: 3, Params: map[string]string{"fd-stall": StallDiscount}})
	if err != nil {
		t.Fatal(err)
	}
	d.Start(0)
	d.Step(deliver(5*ms, 1, MsgHeartbeat))
	out, _ := d.Step(timer(200*ms, TimerBeat))
	want(t, "the late beat", out, "send 0->1 heartbeat", "send 0->2 heartbeat", "set-timer fd-beat 20ms")
	out, _ = d.Step(timer(200*ms, TimerCheck))
	want(t, "the late check", out, "set-timer fd-check 20ms")
	out, _ = d.Step(deliver(200*ms, 1, MsgHeartbeat))
	want(t, "P1's beat, read after the stall", out)
	out, _ = d.Step(timer(220*ms, TimerBeat))
	want(t, "the beat on time", out, "send 0->1 heartbeat", "send 0->2 heartbeat", "set-timer fd-beat 20ms")
	out, _ = d.Step(timer(220*ms, TimerCheck))
	want(t, "the check on time", out, "suspect 2", "set-timer fd-check 20ms")
	if got := d.SuspectedSet(); !slices.Equal(got, []int{2}) {
		t.Fatalf("suspects %v, want [2]", got)
	}
	// Seed 004 as written (fd-stall=count, the default): the same inputs
	// suspect both at the late check.
	c := New(0, 3, 20*ms, 20*ms)
	c.Start(0)
	c.Step(deliver(5*ms, 1, MsgHeartbeat))
	c.Step(timer(200*ms, TimerBeat))
	out, _ = c.Step(timer(200*ms, TimerCheck))
	want(t, "the late check, counted", out, "suspect 1", "suspect 2")
	if _, err := FromConfig(algo.Config{ID: 0, N: 3, Params: map[string]string{"fd-stall": "ignore"}}); err == nil {
		t.Error("fd-stall=ignore accepted")
	}
}

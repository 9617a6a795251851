package bully

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/fd"
	"github.com/dmxlab/dmx/runner/algotest"
)

// TestScripts runs the interaction scripts in testdata; each block cites the
// rule it exercises. Rewrite with go test -update.
func TestScripts(t *testing.T) {
	algotest.RunScripts(t, Spec, "testdata")
}

func allAre(leaders []int, want int, down ...int) bool {
	for i, l := range leaders {
		if slices.Contains(down, i) {
			continue
		}
		if l != want {
			return false
		}
	}
	return true
}

// TestWorstCaseCount: the lowest id starts, nobody has failed, no detector.
// Reference: seed 001 "The Bully Algorithm: Analysis", worst case: "(N-1)
// processes altogether begin elections ... i-th highest id process sends
// (i-1) election messages. Number of Election messages = N-1 + N-2 + ... +
// 1 = (N-1)*N/2 = O(N^2)"; seed 004 "Worst-case: O(N^2) messages".
// Asserted exactly: N(N-1)/2 elections, as many answers ([RH1] answers
// each), N-1 coordinator messages: N^2-1 in all.
func TestWorstCaseCount(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			b := algotest.NewBench(t, Spec, n, map[string]string{"fd-period": "0"})
			b.Start()
			b.Stabilize()
			// Only P(N-1) hears no answer; its time-out makes it the
			// coordinator.
			b.Fire(n-1, TimerAnswer)
			b.Stabilize()
			sent := b.Sent()
			e := n * (n - 1) / 2
			if sent[MsgElection] != e || sent[MsgAnswer] != e || sent[MsgCoordinator] != n-1 {
				t.Fatalf("sent %v, want election=%d answer=%d coordinator=%d", sent, e, e, n-1)
			}
			if total := sent[MsgElection] + sent[MsgAnswer] + sent[MsgCoordinator]; total != n*n-1 {
				t.Fatalf("%d messages, want N^2-1 = %d", total, n*n-1)
			}
			if l := b.Leaders(); !allAre(l, n-1) {
				t.Fatalf("leaders %v, want all %d", l, n-1)
			}
		})
	}
}

// TestBestCaseCount: P(N-1) leads and crashes; P(N-2) alone detects it.
// Reference: seed 001: "The best case: the process with the second highest
// identifier notices the coordinator's failure. It can immediately select
// itself and then send n-2 coordinator messages"; "Sends (N-2) Coordinator
// messages"; seed 004 "Best-case: N-2 messages per election". Asserted
// exactly: from the crash on, N-2 coordinator messages and no other
// election message (heartbeats aside).
func TestBestCaseCount(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			top, second := n-1, n-2
			b := algotest.NewBench(t, Spec, n, map[string]string{"initiators": fmt.Sprint(top)})
			b.Start()
			b.Fire(top, TimerAnswer)
			b.Stabilize()
			if l := b.Leaders(); !allAre(l, top) {
				t.Fatalf("leaders %v before the crash, want all %d", l, top)
			}
			before := b.Sent()
			b.Crash(top)
			// The survivors keep beating (so that they do not suspect each
			// other) until P(N-2)'s check suspects P(N-1); nobody else's
			// check fires.
			m := b.Machine(second).(*Machine)
			for k := 0; !m.fd.Suspected(top); k++ {
				if k > 10 {
					t.Fatal("P(N-2) never suspects P(N-1)")
				}
				for i := 0; i < top; i++ {
					b.Fire(i, fd.TimerBeat)
				}
				b.Stabilize()
				b.Fire(second, fd.TimerCheck)
			}
			if got := m.fd.SuspectedSet(); !slices.Equal(got, []int{top}) {
				t.Fatalf("P%d suspects %v, want only [%d]", second, got, top)
			}
			b.Fire(second, TimerAnswer)
			b.Stabilize()
			after := b.Sent()
			for _, typ := range []string{MsgElection, MsgAnswer, MsgCoordinator} {
				d := after[typ] - before[typ]
				w := 0
				if typ == MsgCoordinator {
					w = n - 2
				}
				if d != w {
					t.Fatalf("%d %s messages since the crash, want %d (sent before %v, after %v)", d, typ, w, before, after)
				}
			}
			if l := b.Leaders(); !allAre(l, second, top) {
				t.Fatalf("leaders %v, want all %d", l, second)
			}
		})
	}
}

// TestRH1RH2: whatever its state, a process answers an election message
// ([RH1]); it starts an election only if it is ELECTION-OFF ([RH2]).
// Reference: seed 001 [RH1], [RH2]; seed 000 "Send OK message back; Hold
// election (unless it is already holding one)".
func TestRH1RH2(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  []algo.Input
		phase  phase
		starts bool
	}{
		{"off", nil, off, true},
		{"waiting for answers", []algo.Input{{Kind: algo.Receive, From: 0, Msg: algo.Msg{Type: MsgElection}}}, waitAnswer, false},
		{"waiting for the coordinator", []algo.Input{
			{Kind: algo.Receive, From: 0, Msg: algo.Msg{Type: MsgElection}},
			{Kind: algo.Receive, From: 2, Msg: algo.Msg{Type: MsgAnswer}},
		}, waitCoordinator, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := algotest.Build[*Machine](t, Spec, algo.Config{ID: 1, N: 3, Params: map[string]string{"fd-period": "0", "initiators": "none"}})
			m.Step(algo.Input{Kind: algo.Start})
			for _, in := range tc.setup {
				m.Step(in)
			}
			if m.phase != tc.phase {
				t.Fatalf("set-up reached %v, want %v", m.phase, tc.phase)
			}
			out := m.Step(algo.Input{Kind: algo.Receive, From: 0, Msg: algo.Msg{Type: MsgElection, Term: 7}})
			if len(out) == 0 || out[0].Kind != algo.Send || out[0].To != 0 || out[0].Msg.Type != MsgAnswer {
				t.Fatalf("outputs %v: want an answer to P0 first", out)
			}
			started := slices.ContainsFunc(out, func(o algo.Output) bool { return o.Kind == algo.StartElection })
			toHigher := slices.ContainsFunc(out, func(o algo.Output) bool {
				return o.Kind == algo.Send && o.To == 2 && o.Msg.Type == MsgElection
			})
			if started != tc.starts || toHigher != tc.starts {
				t.Fatalf("outputs %v: election started %v, want %v", out, started, tc.starts)
			}
		})
	}
}

// TestSuspectedLeaderStartsElection: a process whose detector suspects the
// leader it knows starts an election; a suspicion of anyone else does not.
// Reference: seed 000 "When process P detects dead coordinator"; seed 001
// "a process that gets no response for a period of time suspects a failure
// and initiates an election process".
func TestSuspectedLeaderStartsElection(t *testing.T) {
	for _, tc := range []struct {
		silent int // the process heard from only at 0
		starts bool
	}{{2, true}, {1, false}} {
		m := algotest.Build[*Machine](t, Spec, algo.Config{ID: 0, N: 3, Params: map[string]string{"initiators": "none"}})
		m.Step(algo.Input{Kind: algo.Start})
		m.Step(algo.Input{Kind: algo.Receive, From: 2, Msg: algo.Msg{Type: MsgCoordinator, ID: 2, Term: 1}})
		// The other process is heard from at 30ms.
		m.Step(algo.Input{Kind: algo.Receive, Now: 30e6, From: 3 - tc.silent, Msg: algo.Msg{Type: fd.MsgHeartbeat}})
		out := m.Step(algo.Input{Kind: algo.Timer, Now: 40e6, TimerName: fd.TimerCheck})
		if got := fd.Suspects(out); !slices.Equal(got, []int{tc.silent}) {
			t.Fatalf("P%d silent: suspects %v", tc.silent, got)
		}
		started := slices.ContainsFunc(out, func(o algo.Output) bool { return o.Kind == algo.StartElection })
		if started != tc.starts {
			t.Fatalf("P%d suspected, leader P2, outputs %v: election %v, want %v", tc.silent, out, started, tc.starts)
		}
	}
}

var sizes = []int{2, 3, 5, 8}

// TestSweepNoFailure: with random delays and the default time-out and
// detector, every process ends knowing the highest id as leader, and never
// do two processes believe they lead at once; with one initiator (the
// lowest, the default), with all of them at once, and with the highest.
// Reference: seed 001 "The Leader Election Problem": safety and liveness;
// "Multiple processes are allowed to call an election simultaneously. All
// of them together must yield only a single leader."
func TestSweepNoFailure(t *testing.T) {
	algotest.SweepInitiators(t, Spec, sizes, algotest.Seeds(300), 300*time.Millisecond)
}

// TestSweepLeaderCrashes: the leader crashes at random times (once or
// twice) and stays down. The survivors' detectors suspect it ([RE1] is
// started by those that knew it as leader), and the run ends with every
// live process knowing the highest live id, with no split brain.
// Reference: seed 001 "When a process P_i detects a failure and a
// coordinator has to be elected"; "Any process could fail during the
// election procedure"; seed 004 heartbeat, "Safe and Live, assuming ...
// Failure detection is reliable".
//
// With recoveries (subtest recover): the crashed leader comes back after a
// random time and holds an election (seed 000). The run still ends with the
// highest live id known by all, but a recovered higher process leads
// alongside the old leader until its coordinator message arrives: seed
// 004's "Safety is broken if ... process ID's reappear". The sweep allows
// (and counts) those episodes; the subtests without recoveries show there
// are none without them.
func TestSweepLeaderCrashes(t *testing.T) {
	algotest.SweepLeaderCrashes(t, Spec, sizes, algotest.Seeds(300), 600*time.Millisecond)
}

// tightSeed is a seed whose run, with a time-out shorter than the message
// delays, ends up with two processes that both declared themselves leader
// at once (found by TestTightDeadlineSplitBrain's search; any change in the
// bench's draws may move it, and the test then names the new one).
const tightSeed = 1

// TestTightDeadlineSplitBrain: with a 1ms time-out and delays of up to 5ms,
// a process declares itself coordinator before the answers of the live
// higher processes arrive: two processes lead at once.
// Reference: seed 004 "Beware: Safety is broken if too tight deadline".
func TestTightDeadlineSplitBrain(t *testing.T) {
	opt := algotest.Options{N: 5, Seed: tightSeed, Settle: 300 * time.Millisecond,
		Params: map[string]string{"timeout": "1ms", "initiators": "all"}}
	algotest.Expect(t, Spec, opt, analyze.SplitBrain)
	// What happened: 1ms after the start, before the answers of the higher
	// processes arrived, P1, P2 and P3 all declared themselves coordinator
	// beside P4.
	opt.Allow = []string{"split-brain", "validity"}
	res, _ := algotest.Run(Spec, opt)
	var at1ms []int
	for _, e := range res.SplitBrains {
		if e.At == time.Millisecond {
			at1ms = append(at1ms, e.Leaders...)
		}
	}
	slices.Sort(at1ms)
	if len(res.SplitBrains) == 0 || res.SplitBrains[0].At != time.Millisecond || !slices.Equal(slices.Compact(at1ms), []int{1, 2, 3, 4}) {
		t.Fatalf("split-brain episodes %v, want the first at 1ms with P1, P2, P3 and P4", res.SplitBrains)
	}
	// The same seed with the default time-out is safe.
	opt.Allow = nil
	opt.Params = map[string]string{"initiators": "all"}
	if _, err := algotest.Run(Spec, opt); err != nil {
		t.Fatalf("seed %d with the default time-out: %v", tightSeed, err)
	}
}

// falseSuspicionSeed is a seed whose run, with detector allowance D = 0
// and delays of 5-30ms, makes live processes suspected and ends up with two
// processes that both lead.
const falseSuspicionSeed = 1

// TestFalseSuspicionSplitBrain: with D too small for the delays, the
// detector suspects live processes (seed 004 "D too small => Inaccurate:
// alive reported dead"); P3, suspecting the live leader P4, skips it and
// declares itself: two leaders at once (seed 004 "Safe and Live, assuming
// ... Failure detection is reliable"). With D and the time-out above the
// delays, the same seed is safe.
func TestFalseSuspicionSplitBrain(t *testing.T) {
	opt := algotest.Options{N: 5, Seed: falseSuspicionSeed, MinDelay: 5 * time.Millisecond, MaxDelay: 30 * time.Millisecond,
		Settle: 300 * time.Millisecond, Params: map[string]string{"fd-allowance": "0", "initiators": "4"}, Allow: []string{"split-brain"}}
	res, _ := algotest.Run(Spec, opt)
	if res.FalseSuspicions == 0 || len(res.SplitBrains) == 0 || !slices.Equal(res.SplitBrains[0].Leaders, []int{3, 4}) {
		t.Fatalf("seed %d: %d false suspicions, split brains %v; want false suspicions and P3, P4 leading at once",
			falseSuspicionSeed, res.FalseSuspicions, res.SplitBrains)
	}
	opt.Params = map[string]string{"fd-allowance": "30ms", "timeout": "100ms", "initiators": "4"}
	opt.Allow = nil
	res, err := algotest.Run(Spec, opt)
	if err != nil || res.FalseSuspicions != 0 {
		t.Fatalf("seed %d with D = 30ms: %v, %d false suspicions", falseSuspicionSeed, err, res.FalseSuspicions)
	}
}

func TestNewValidates(t *testing.T) {
	algotest.CheckParams(t, Spec, 3, nil, []map[string]string{
		{"x": "1"}, {"timeout": "soon"}, {"initiators": "7"}, {"initiators": "a"}, {"fd-period": "-1ms"},
	})
}

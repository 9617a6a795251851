package tokenring

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algotest"
)

// TestRegenScripts runs the interaction scripts of testdata/regen, each
// staging a step of token regeneration (doc.go "Regeneration"): the loss of
// the token with its holder, detection, election, single regeneration;
// an old-generation token discarded; a token in use found by the probe.
// Rewrite with go test -update.
func TestRegenScripts(t *testing.T) {
	algotest.RunScripts(t, Spec, "testdata/regen")
}

// tokenHolder is a Pick for crashes: the live process that holds a token
// (in the critical section or waiting for its pass timer), -1 if the token
// is in transit.
func tokenHolder(ms []algo.Machine, up []bool) int {
	for i, m := range ms {
		if r := m.(*regen); up[i] && r.hasToken {
			return i
		}
	}
	return -1
}

// byDetector are the checks whose violations runs with crashes or false
// suspicions allow. Regeneration starts from a failure detector's time-out,
// not from a message: the new token's first holder enters causally
// concurrently with the critical section the lost token's holder was in
// when it crashed (a crash sends no message), which check mutex-causal
// reports. Mutual exclusion is checked in wall time (mutex-realtime), and
// the tokens by the invariant below.
var byDetector = []string{"mutex-causal"}

// tokens is the invariant of regeneration, checked after every step: at
// most one live process holds a token of the newest generation held, and
// indeed at most one holds any token (an older copy is discarded on
// arrival, never held beside a newer one). It counts the generations it
// sees held.
type tokens struct {
	newest uint64
	gens   int
}

func (k *tokens) check(ms []algo.Machine, up []bool) error {
	var holders []int
	newest, atNewest := uint64(0), 0
	for i, m := range ms {
		r := m.(*regen)
		if !up[i] || !r.hasToken {
			continue
		}
		holders = append(holders, i)
		switch {
		case r.gen > newest:
			newest, atNewest = r.gen, 1
		case r.gen == newest:
			atNewest++
		}
	}
	if atNewest > 1 {
		return fmt.Errorf("%d processes hold a token of generation %d: %v", atNewest, newest, holders)
	}
	if len(holders) > 1 {
		return fmt.Errorf("processes %v all hold a token", holders)
	}
	if len(holders) == 1 && newest > k.newest {
		k.newest = newest
		k.gens++
	}
	return nil
}

// TestRegenHolderCrashes: the process holding the token crashes (when the
// crash comes, a process holding it; if the token is in transit, the crash
// does not happen), up to six times at random times, with or without
// recovery, with random delays. After every step at most one live process
// holds a token (of the newest generation or any) and no two are in the
// critical section; at the end every request of a live process was
// entered: progress resumed after each loss.
// Reference: seed 001 "If the process holding the token fails -> a unique
// process has to be picked to regenerate token and pass it along the ring
// (election algorithm)"; seed 000 "Token loss ... It will have to be
// regenerated"; "Process loss: what if you can't talk to your neighbor?".
func TestRegenHolderCrashes(t *testing.T) {
	for _, el := range []string{ElectionChangRoberts, ElectionRing} {
		for _, rec := range []time.Duration{0, 150 * time.Millisecond} {
			t.Run(fmt.Sprintf("election=%s/recover=%v", el, rec > 0), func(t *testing.T) {
				k := &tokens{}
				crashes, regens := 0, 0
				algotest.Sweep(t, Spec, []int{3, 5, 8}, algotest.Seeds(300), algotest.Options{
					Entries: 20, Params: map[string]string{"regenerate": "true", "election": el}, Allow: byDetector,
					Random: 6, Target: algotest.TargetPick, Pick: tokenHolder, CrashFrom: 20 * time.Millisecond, CrashTo: 300 * time.Millisecond,
					RecoverMin: time.Millisecond, RecoverMax: rec,
					Invariant: func(ms []algo.Machine, up []bool) error {
						if ms[0] == nil { // a fresh run: its machines are being built
							return nil
						}
						return k.check(ms, up)
					},
				}, func(r *algotest.Result) error {
					for _, f := range r.Faults {
						if strings.HasPrefix(f, "crash") {
							crashes++
						}
					}
					regens += k.gens
					*k = tokens{}
					return nil
				})
				if runs := 3 * algotest.Seeds(300); crashes < 3*runs/2 || regens < crashes/2 {
					t.Fatalf("%d holder crashes and %d new generations in %d runs: the sweep exercises too little", crashes, regens, runs)
				}
				t.Logf("%d holder crashes, %d new generations", crashes, regens)
			})
		}
	}
}

// TestRegenRandomCrashes: any process crashes (three times, recovering or
// not); the token is lost only sometimes, and crashed successors are
// skipped (seed 000 "If successor is down, skip over").
func TestRegenRandomCrashes(t *testing.T) {
	for _, rec := range []time.Duration{0, 150 * time.Millisecond} {
		t.Run(fmt.Sprintf("recover=%v", rec > 0), func(t *testing.T) {
			k := &tokens{}
			algotest.Sweep(t, Spec, []int{3, 5, 8}, algotest.Seeds(300), algotest.Options{
				Entries: 20, Params: map[string]string{"regenerate": "true"}, Allow: byDetector,
				Random: 3, Target: algotest.TargetRandom, CrashFrom: 20 * time.Millisecond, CrashTo: 300 * time.Millisecond,
				RecoverMin: time.Millisecond, RecoverMax: rec,
				Invariant: func(ms []algo.Machine, up []bool) error {
					if ms[0] == nil {
						return nil
					}
					return k.check(ms, up)
				},
			}, func(*algotest.Result) error { *k = tokens{}; return nil })
		})
	}
}

// TestRegenNoFailureSameRun: with the detector off and a token-timeout
// longer than the run, regenerate=true behaves exactly as the notes'
// algorithm: for every seed the same entries and the same token messages,
// nothing else.
func TestRegenNoFailureSameRun(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8} {
		for s := 1; s <= algotest.Seeds(300); s++ {
			opt := algotest.Options{N: n, Seed: uint64(s)}
			want, err := algotest.Run(Spec, opt)
			if err != nil {
				t.Fatal(err)
			}
			opt.Params = map[string]string{"regenerate": "true", "fd-period": "0", "token-timeout": "1h"}
			got, err := algotest.Run(Spec, opt)
			if err != nil {
				t.Fatalf("n=%d seed: %d: %v", n, s, err)
			}
			if !slices.Equal(got.Entered, want.Entered) || got.Messages != want.Sent[MsgToken] || got.Sent[MsgToken] != want.Sent[MsgToken] {
				t.Fatalf("n=%d seed: %d: entries %v, sent %v; the notes' algorithm: entries %v, sent %v", n, s, got.Entered, got.Sent, want.Entered, want.Sent)
			}
		}
	}
}

func TestNewValidatesRegen(t *testing.T) {
	algotest.CheckParams(t, Spec, 3, []map[string]string{
		{"regenerate": "true"},
		{"regenerate": "true", "election": "ring", "token-timeout": "1s", "timeout": "100ms", "fd-allowance": "30ms"},
		{"regenerate": "false"},
	}, []map[string]string{
		{"regenerate": "yes"},
		{"regenerate": "true", "election": "bully"},
		{"regenerate": "true", "token-timeout": "0"},
		{"election": "ring"},
		{"token-timeout": "1s"},
	})
}

// twoTokensSeed is a seed whose run (N = 5, D = 1ms, delays 1-15ms, no
// crash) ends with two processes in the critical section.
const twoTokensSeed = 8

// TestRegenFalseSuspicionTwoTokens: regeneration is safe only if the
// detector is right (seed 004 "We can only suspect a crash!"). With D far
// below the delays, live processes are suspected all the time: false
// alarms of loss start elections, several elected processes probe at once,
// and probes skip the falsely suspected. In seed 8, P3's probe of
// generation 8 comes back clean and P3 makes a token; P4's probe of
// generation 14, which P2 passed on to P4 skipping the suspected P3, comes
// back clean a millisecond later and P4 makes another: both enter. The
// same seed with D = 30ms makes no false suspicion and is safe.
func TestRegenFalseSuspicionTwoTokens(t *testing.T) {
	opt := algotest.Options{N: 5, Seed: twoTokensSeed, Entries: 12, MinDelay: time.Millisecond, MaxDelay: 15 * time.Millisecond,
		Params: map[string]string{"regenerate": "true", "fd-allowance": "1ms"}, Allow: byDetector}
	if res, _ := algotest.Expect(t, Spec, opt, analyze.MutexRealtime); res.FalseSuspicions == 0 {
		t.Fatalf("seed %d: two in the critical section without a false suspicion", twoTokensSeed)
	}
	opt.Params = map[string]string{"regenerate": "true", "fd-allowance": "30ms"}
	if res, err := algotest.Run(Spec, opt); err != nil || res.FalseSuspicions != 0 {
		t.Fatalf("seed %d with D = 30ms: %v, %d false suspicions", twoTokensSeed, err, res.FalseSuspicions)
	}
}

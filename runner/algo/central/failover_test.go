package central

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algotest"
)

// TestFailoverScripts runs the interaction scripts of testdata/failover,
// each staging one step of the failover (doc.go "Failover"): the election
// of the first coordinator, a coordinator crash with the state transfer and
// the resumed grants, a refused grant of a deposed coordinator, a holder
// crash with revoke=false and revoke=true. Rewrite with go test -update.
func TestFailoverScripts(t *testing.T) {
	algotest.RunScripts(t, Spec, "testdata/failover")
}

var failoverSizes = []int{3, 5, 8}

// byDetector are the checks whose violations runs with crashes or false
// suspicions allow. A coordinator elected after a crash learns whom the
// crashed one had granted, and one that revokes a suspected holder's
// grant decides to, from a failure detector: by a time-out, not from a
// message. Its grant is then causally concurrent with a critical section
// that may well have ended before it in real time (a crash sends no
// message), which check mutex-causal reports. Mutual exclusion is checked
// in wall time (mutex-realtime): one process at a time, as seed 003 asks.
var byDetector = []string{"mutex-causal"}

// TestFailoverCoordinatorCrashes: whoever is coordinator crashes, three
// times in a row at random times while the workload runs (so later crashes
// hit the coordinators elected after the first), with random delays. Run
// by run the trace shows no two processes in the critical section at once
// (mutex-realtime) and every request of a live process entered
// (liveness); with recoveries the crashed ids come back (and hold an
// election, seed 000).
// Reference: seed 003 slide 6: "If the coordinator crashes, a new
// coordinator must be created ... an election algorithm has to be run in
// order to choose one and only one new coordinator"; seed 001 "Election
// Algorithms ... Examples with mutual exclusion".
func TestFailoverCoordinatorCrashes(t *testing.T) {
	for _, mode := range []string{FailoverBully, FailoverRing} {
		for _, rec := range []time.Duration{0, 150 * time.Millisecond} {
			t.Run(fmt.Sprintf("failover=%s/recover=%v", mode, rec > 0), func(t *testing.T) {
				crashed, decided := 0, 0
				algotest.Sweep(t, Spec, failoverSizes, algotest.Seeds(300), algotest.Options{
					Entries: 20, Params: map[string]string{"failover": mode}, Allow: byDetector,
					Random: 3, Target: algotest.TargetLeader, CrashFrom: 60 * time.Millisecond, CrashTo: 300 * time.Millisecond,
					RecoverMin: time.Millisecond, RecoverMax: rec,
				}, func(r *algotest.Result) error {
					for _, f := range r.Faults {
						if f[:5] == "crash" {
							crashed++
						}
					}
					decided += r.Decisions
					return nil
				})
				// The sweep must exercise what it claims to.
				if runs := len(failoverSizes) * algotest.Seeds(300); crashed < runs {
					t.Fatalf("%d coordinator crashes in %d runs: the workload ends too early", crashed, runs)
				}
				t.Logf("%d coordinator crashes, %d leader decisions", crashed, decided)
			})
		}
	}
}

// TestFailoverHolderCrashes: a process crashes while in the critical
// section (or any process, if nobody is in it), three times, for good. With
// revoke=true the coordinator takes the grant of a suspected holder back
// and every live process's requests are still entered.
func TestFailoverHolderCrashes(t *testing.T) {
	for _, mode := range []string{FailoverBully, FailoverRing} {
		t.Run("failover="+mode, func(t *testing.T) {
			algotest.Sweep(t, Spec, failoverSizes, algotest.Seeds(300), algotest.Options{
				Entries: 12, Params: map[string]string{"failover": mode, "revoke": "true"}, Allow: byDetector,
				Random: 3, Target: algotest.TargetInCS, CrashFrom: 20 * time.Millisecond, CrashTo: 250 * time.Millisecond,
			}, nil)
		})
	}
}

// TestFailoverHolderCrashesRecovering: the same crashes of holders, each
// followed by the holder's recovery, with the default revoke=false: the
// grant of a crashed holder stands until it is back, and then its
// recovery frees it (doc.go).
func TestFailoverHolderCrashesRecovering(t *testing.T) {
	algotest.Sweep(t, Spec, failoverSizes, algotest.Seeds(300), algotest.Options{
		Entries: 12, Params: map[string]string{"failover": FailoverBully}, Allow: byDetector,
		Random: 3, Target: algotest.TargetInCS, CrashFrom: 20 * time.Millisecond, CrashTo: 250 * time.Millisecond,
		RecoverMin: time.Millisecond, RecoverMax: 150 * time.Millisecond,
	}, nil)
}

// holderDeadlockSeed is a seed whose run crashes the holder for good.
const holderDeadlockSeed = 1

// TestFailoverHolderCrashDeadlock: with the default revoke=false, a holder
// (not the coordinator) that crashes for good is never released: the
// others wait for ever (seed 004 "Deadlock if Coordinator fails", here the
// holder's). The same seed with revoke=true finishes. (A single initiator:
// a later election would start an epoch whose collection does not wait for
// the suspected holder, and forget it; doc.go.)
func TestFailoverHolderCrashDeadlock(t *testing.T) {
	crashed := false
	clientInCS := func(ms []algo.Machine, up []bool) int {
		for i, m := range ms {
			if f := m.(*failover); up[i] && !crashed && f.state == algo.Held && !f.isCoord() {
				crashed = true
				return i
			}
		}
		return -1
	}
	opt := algotest.Options{N: 4, Seed: holderDeadlockSeed, Entries: 12, Limit: 2 * time.Second,
		Params: map[string]string{"failover": FailoverBully, "initiators": "3"}, Pick: clientInCS, Allow: byDetector}
	for at := 80 * time.Millisecond; at < 200*time.Millisecond; at += time.Millisecond {
		opt.Crashes = append(opt.Crashes, algotest.Crash{At: at, Proc: algotest.TargetPick})
	}
	res, err := algotest.Run(Spec, opt)
	var f *algotest.Failure
	if !errors.As(err, &f) || !f.Violates(analyze.Liveness) {
		t.Fatalf("seed %d, revoke=false, faults %v: %v; want a liveness failure", holderDeadlockSeed, res.Faults, err)
	}
	t.Logf("revoke=false, faults %v: %v", res.Faults, err)
	crashed = false
	opt.Params = map[string]string{"failover": FailoverBully, "initiators": "3", "revoke": "true"}
	if res, err := algotest.Run(Spec, opt); err != nil || len(res.Faults) != 1 {
		t.Fatalf("seed %d, revoke=true, faults %v: %v", holderDeadlockSeed, res.Faults, err)
	}
}

// TestFailoverFalseSuspicions shows what the failover rests on (seed 004
// "We can only suspect a crash!"; "D too small => Inaccurate: alive
// reported dead"). With delays of 1-15ms and an allowance D of 1ms, live
// processes are suspected all the time, and nobody crashes:
//
//   - revoke=true: the coordinator takes back the grant of a holder that is
//     still in the critical section: two holders, in most runs;
//   - revoke=false: far fewer runs break, but some still do (a process that
//     suspects everyone else elects itself and grants to itself; a new
//     coordinator skips a falsely suspected holder);
//   - with D = 30ms, above the delays' spread, no suspicion is false and
//     every run is safe.
func TestFalseSuspicions(t *testing.T) {
	// Not fewer by default: with ring failover revoke=false breaks 99 of
	// these 100 runs against 100, and 30 runs break all 30 both ways.
	runs := 100
	if testing.Short() {
		runs = 20
	}
	count := func(params map[string]string) (broken, falseSusp int, first uint64) {
		for s := 1; s <= runs; s++ {
			res, err := algotest.Run(Spec, algotest.Options{
				N: 5, Seed: uint64(s), Entries: 12, MinDelay: time.Millisecond, MaxDelay: 15 * time.Millisecond, Params: params, Allow: byDetector,
				Limit: 2 * time.Second})
			var f *algotest.Failure
			switch {
			case errors.As(err, &f) && f.Violates(analyze.MutexRealtime):
				broken++
				if first == 0 {
					first = uint64(s)
				}
			case errors.As(err, &f) && f.Violates(analyze.Liveness):
				// An inaccurate detector may also keep a run from finishing
				// (seed 001: "Inaccuracy in FD => new election runs
				// initiated forever => Violation of Liveness"); only
				// safety is counted here.
			case err != nil:
				t.Fatalf("seed: %d, %v: %v", s, params, err)
			}
			falseSusp += res.FalseSuspicions
		}
		return broken, falseSusp, first
	}
	for _, mode := range []string{FailoverBully, FailoverRing} {
		revoking, fs, first := count(map[string]string{"failover": mode, "fd-allowance": "1ms", "revoke": "true"})
		if fs == 0 || revoking < runs/2 {
			t.Errorf("%s revoke=true D=1ms: %d of %d runs broke mutual exclusion (%d false suspicions); want most", mode, revoking, runs, fs)
		}
		standing, _, firstStanding := count(map[string]string{"failover": mode, "fd-allowance": "1ms"})
		if standing >= revoking {
			t.Errorf("%s revoke=false D=1ms: %d of %d runs broke mutual exclusion, no fewer than with revoke=true (%d)", mode, standing, runs, revoking)
		}
		safe, fs30, _ := count(map[string]string{"failover": mode, "fd-allowance": "30ms", "revoke": "true"})
		if safe != 0 || fs30 != 0 {
			t.Errorf("%s D=30ms: %d runs broke mutual exclusion, %d false suspicions; want none", mode, safe, fs30)
		}
		t.Logf("%s, %d runs, D=1ms: revoke=true %d broken (first seed %d), revoke=false %d broken (first seed %d); D=30ms: none",
			mode, runs, revoking, first, standing, firstStanding)
	}
}

// TestFailoverCost: without failures (and with the detector off, so that
// no heartbeat is counted), failover=bully with the highest id as the only
// initiator costs the seeds' 3 messages per client entry (fewer when a
// request is collected by the state query instead of a request message),
// plus N-1 coordinator messages and, once, a state query and a state
// reply per other process.
func TestFailoverCost(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8} {
		algotest.Sweep(t, Spec, []int{n}, algotest.Seeds(300), algotest.Options{Params: map[string]string{
			"failover": FailoverBully, "fd-period": "0", "initiators": fmt.Sprint(n - 1)}},
			func(r *algotest.Result) error {
				client := 0
				for id, e := range r.Entered {
					if id != n-1 {
						client += e
					}
				}
				replies := r.Sent[MsgStateIdle] + r.Sent[MsgStateRequesting] + r.Sent[MsgStateHolding]
				switch {
				case r.Sent["coordinator"] != n-1 || r.Sent["election"] != 0 || r.Sent["answer"] != 0:
					return fmt.Errorf("election messages %v, want %d coordinator messages only", r.Sent, n-1)
				case r.Sent[MsgStateQuery] != n-1 || replies != n-1:
					return fmt.Errorf("%d state queries and %d replies, want %d each", r.Sent[MsgStateQuery], replies, n-1)
				case r.Sent[MsgGrant] != client || r.Sent[MsgRelease] != client || r.Sent[MsgRequest] > client:
					return fmt.Errorf("sent %v for %d client entries, want a grant and a release each and at most one request", r.Sent, client)
				case r.Sent[MsgRequest]+r.Sent[MsgStateRequesting] < client:
					return fmt.Errorf("sent %v for %d client entries: some request was never made", r.Sent, client)
				}
				return nil
			})
	}
}

func TestNewValidatesFailover(t *testing.T) {
	algotest.CheckParams(t, Spec, 3, []map[string]string{
		{"failover": "bully"},
		{"failover": "ring", "timeout": "100ms", "fd-allowance": "30ms", "revoke": "true"},
		{"failover": "none"},
	}, []map[string]string{
		{"failover": "paxos"},
		{"failover": "bully", "coordinator": "1"},
		{"timeout": "100ms"},
		{"revoke": "true"},
		{"failover": "bully", "revoke": "yes"},
		{"failover": "bully", "initiators": "7"},
	})
}

// loneCoordinatorSeed is a seed whose run (failover=ring, revoke=false,
// D = 1ms, delays 1-15ms) breaks mutual exclusion without any crash.
const loneCoordinatorSeed = 57

// TestFalseSuspicionLoneCoordinator names a run in which revoke=false does
// not save mutual exclusion: a process that falsely suspects every other
// one (the ring algorithm, seed 000: "If successor is down, skip over";
// here everyone is skipped) collects the state of nobody and grants to
// itself while a grant is on its way to another process. In seed 57, P4
// as the coordinator of epoch 144 grants P0; the ring election then names
// P4 again, which collects for epoch 154 while it suspects all four others
// and grants to itself, 0.7ms after P0 entered with the grant of epoch
// 144. The same seed with D = 30ms is safe.
func TestFalseSuspicionLoneCoordinator(t *testing.T) {
	opt := algotest.Options{N: 5, Seed: loneCoordinatorSeed, Entries: 12,
		MinDelay: time.Millisecond, MaxDelay: 15 * time.Millisecond, Params: map[string]string{"failover": FailoverRing, "fd-allowance": "1ms"},
		Allow: byDetector}
	algotest.Expect(t, Spec, opt, analyze.MutexRealtime)
	opt.Params = map[string]string{"failover": FailoverRing, "fd-allowance": "30ms"}
	if res, err := algotest.Run(Spec, opt); err != nil || res.FalseSuspicions != 0 {
		t.Fatalf("seed %d with D = 30ms: %v, %d false suspicions", loneCoordinatorSeed, err, res.FalseSuspicions)
	}
}

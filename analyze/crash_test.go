package analyze

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// Crash-ended critical sections and leaderships are judged in wall time
// (nothing follows a crash causally), whatever order the reader delivers
// the events in. Each case crashes P0 at crashAt ms, after the other
// process's entry or leadership at 20ms (a violation) or before it (ok).

// crashCase builds the trace of one case, and order reorders its events as a
// reader may deliver them (nil: recording order).
type crashCase struct {
	check *Check
	n     int
	build func(b *builder, crashAt int64)
	order func(evs []trace.Event)
}

func (cc crashCase) run(t *testing.T, okName, violatedName string) {
	t.Helper()
	for _, c := range []struct {
		name    string
		crashAt int64
		verdict Verdict
	}{{okName, 10, OK}, {violatedName, 30, Violated}} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(cc.n)
			cc.build(b, c.crashAt)
			evs := slices.Clone(b.events)
			if cc.order != nil {
				cc.order(evs)
			}
			r := checkOne(t, b.Run(true), &trace.SliceReader{Events: evs}, cc.check)
			if r.Verdict != c.verdict {
				t.Fatalf("verdict %s, want %s: %v", r.Verdict, c.verdict, r.Findings)
			}
		})
	}
}

// twoSections: P0 enters at 1ms and crashes; P1 holds r from 20ms to 40ms.
func twoSections(b *builder, crashAt int64) {
	b.At(1).Enter(0, "r")
	b.At(crashAt).Crash(0)
	b.At(20).Enter(1, "r")
	b.At(40).Exit(1, "r")
}

// procsLastFirst reads the highest process's events first.
func procsLastFirst(evs []trace.Event) {
	slices.SortStableFunc(evs, func(x, y trace.Event) int { return y.Proc - x.Proc })
}

// A section ended by its process's crash is followed in wall time, since
// nothing can follow a crash causally: a failover that lets the next
// process in after the crash is correct; one that lets it in before is not.
func TestMutexCausalAfterCrash(t *testing.T) {
	crashCase{check: MutexCausal, n: 2, build: twoSections}.run(t, "entry after the crash", "entry before the crash")
}

// The verdict on a section ended by a crash must not depend on the reader's
// order: here P0's crash (at 10ms) is read after P1's entry (at 20ms), which
// is concurrent with it, so P0's section is still open in the walk when P1
// enters. P1 entered after the crash in wall time: ok, as in recording
// order. Entering before the crash stays a violation.
func TestMutexCausalCrashReadLate(t *testing.T) {
	crashCase{check: MutexCausal, n: 3,
		build: func(b *builder, crashAt int64) {
			twoSections(b, crashAt)
			m := b.At(41).Send(1, 2, "token")
			b.At(42).Recv(2, m)
			b.At(43).Enter(2, "r")
			b.At(44).Exit(2, "r")
		},
		// Read P0's entry, then P1 and P2, then P0's crash.
		order: func(evs []trace.Event) {
			crashLast := func(e trace.Event) int {
				if e.Kind == trace.KindCrash {
					return 1
				}
				return 0
			}
			slices.SortStableFunc(evs, func(x, y trace.Event) int { return crashLast(x) - crashLast(y) })
		},
	}.run(t, "entry after the crash", "entry before the crash")
}

// TestMutexCausalCrashReadFirst: the reverse order of TestMutexCausalCrashReadLate.
// The reader delivers all of P1's section before P0's entry, and P0's
// section ended in a crash. The pair is judged by wall time whatever the
// order: no overlap is ok, an overlap is a violation.
func TestMutexCausalCrashReadFirst(t *testing.T) {
	crashCase{check: MutexCausal, n: 2, build: twoSections, order: procsLastFirst}.
		run(t, "crash before the other entry", "crash after the other entry")
}

// TestSplitBrainCrashReadFirst: a leader that crashed is judged in wall
// time against the next one, whatever order the reader delivers them in.
// Reference: seed 001: no two processes may believe they lead at once; a
// crashed process believes nothing.
func TestSplitBrainCrashReadFirst(t *testing.T) {
	crashCase{check: SplitBrain, n: 2,
		build: func(b *builder, crashAt int64) {
			lead := func(p, l int) {
				b.emit(p, trace.KindLeader, func(ev *trace.Event) {
					ev.Peer = l
					ev.Detail = []byte(fmt.Sprintf(`{"leader":%d}`, l))
				})
			}
			b.At(1)
			lead(0, 0)
			b.At(crashAt).Crash(0)
			b.At(20)
			lead(1, 1)
			b.At(40)
			lead(1, 0) // P1 steps down
		},
		order: procsLastFirst,
	}.run(t, "crash before the next leader", "crash after the next leader")
}

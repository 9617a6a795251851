package analyze

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// Crash-ended critical sections and leaderships are judged in wall time
// (nothing follows a crash causally), whatever order the reader delivers
// the events in.

// A section ended by its process's crash is followed in wall time, since
// nothing can follow a crash causally: a failover that lets the next
// process in after the crash is correct; one that lets it in before is not.
func TestMutexCausalAfterCrash(t *testing.T) {
	for _, c := range []struct {
		name    string
		crashAt int64
		verdict Verdict
	}{
		{"entry after the crash", 10, OK},
		{"entry before the crash", 30, Violated},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(2)
			b.At(1).Enter(0, "r")
			b.At(c.crashAt).Crash(0)
			b.At(20).Enter(1, "r")
			b.At(40).Exit(1, "r")
			res, err := Run(b.Run(true), b.Reader(), []*Check{MutexCausal})
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Verdict != c.verdict {
				t.Fatalf("verdict %s, want %s: %v", res[0].Verdict, c.verdict, res[0].Findings)
			}
		})
	}
}

// The verdict on a section ended by a crash must not depend on the reader's
// order: here P0's crash (at 10ms) is read after P1's entry (at 20ms), which
// is concurrent with it, so P0's section is still open in the walk when P1
// enters. P1 entered after the crash in wall time: ok, as in recording
// order. Entering before the crash stays a violation.
func TestMutexCausalCrashReadLate(t *testing.T) {
	for _, c := range []struct {
		name    string
		crashAt int64
		verdict Verdict
	}{
		{"entry after the crash", 10, OK},
		{"entry before the crash", 30, Violated},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(3)
			b.At(1).Enter(0, "r")
			b.At(c.crashAt).Crash(0)
			b.At(20).Enter(1, "r")
			b.At(40).Exit(1, "r")
			m := b.At(41).Send(1, 2, "token")
			b.At(42).Recv(2, m)
			b.At(43).Enter(2, "r")
			b.At(44).Exit(2, "r")
			// Read P0's entry, then P1 and P2, then P0's crash.
			evs := slices.Clone(b.events)
			slices.SortStableFunc(evs, func(x, y trace.Event) int {
				k := func(e trace.Event) int {
					if e.Kind == trace.KindCrash {
						return 1
					}
					return 0
				}
				return k(x) - k(y)
			})
			res, err := Run(b.Run(true), &trace.SliceReader{Events: evs}, []*Check{MutexCausal})
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Verdict != c.verdict {
				t.Fatalf("verdict %s, want %s: %v", res[0].Verdict, c.verdict, res[0].Findings)
			}
		})
	}
}

// TestMutexCausalCrashReadFirst: the reverse order of TestMutexCausalCrashReadLate.
// The reader delivers all of P1's section before P0's entry, and P0's
// section ended in a crash. The pair is judged by wall time whatever the
// order: no overlap is ok, an overlap is a violation.
func TestMutexCausalCrashReadFirst(t *testing.T) {
	for _, c := range []struct {
		name    string
		crashAt int64
		verdict Verdict
	}{
		{"crash before the other entry", 10, OK},
		{"crash after the other entry", 30, Violated},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(2)
			b.At(1).Enter(0, "r")
			b.At(c.crashAt).Crash(0)
			b.At(20).Enter(1, "r")
			b.At(40).Exit(1, "r")
			// Read P1's section first, then P0's entry and crash.
			evs := slices.Clone(b.events)
			slices.SortStableFunc(evs, func(x, y trace.Event) int { return y.Proc - x.Proc })
			res, err := Run(b.Run(true), &trace.SliceReader{Events: evs}, []*Check{MutexCausal})
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Verdict != c.verdict {
				t.Fatalf("verdict %s, want %s: %v", res[0].Verdict, c.verdict, res[0].Findings)
			}
		})
	}
}

// TestSplitBrainCrashReadFirst: a leader that crashed is judged in wall
// time against the next one, whatever order the reader delivers them in.
// Reference: seed 001: no two processes may believe they lead at once; a
// crashed process believes nothing.
func TestSplitBrainCrashReadFirst(t *testing.T) {
	for _, c := range []struct {
		name    string
		crashAt int64
		verdict Verdict
	}{
		{"crash before the next leader", 10, OK},
		{"crash after the next leader", 30, Violated},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(2)
			lead := func(p, l int) {
				b.emit(p, trace.KindLeader, func(ev *trace.Event) {
					ev.Peer = l
					ev.Detail = []byte(fmt.Sprintf(`{"leader":%d}`, l))
				})
			}
			b.At(1)
			lead(0, 0)
			b.At(c.crashAt).Crash(0)
			b.At(20)
			lead(1, 1)
			b.At(40)
			lead(1, 0) // P1 steps down
			// Read P1's events first, then P0's.
			evs := slices.Clone(b.events)
			slices.SortStableFunc(evs, func(x, y trace.Event) int { return y.Proc - x.Proc })
			res, err := Run(b.Run(true), &trace.SliceReader{Events: evs}, []*Check{SplitBrain})
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Verdict != c.verdict {
				t.Fatalf("verdict %s, want %s: %v", res[0].Verdict, c.verdict, res[0].Findings)
			}
		})
	}
}

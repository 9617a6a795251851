package analyze

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// deliver records that p delivered from's multicast with stamp.
func (b *builder) deliver(p, from int, stamp uint64) trace.Ref {
	return b.emit(p, trace.KindDeliver, func(ev *trace.Event) {
		ev.Peer = from
		ev.Detail = []byte(fmt.Sprintf(`{"from":%d,"stamp":%d,"id":%d}`, from, stamp, stamp))
	})
}

// Reference: seed 002, totally-ordered multicasting: every receiver
// delivers the messages in the same order.
func TestTotalOrder(t *testing.T) {
	for _, c := range []struct {
		name     string
		build    func(b *builder)
		complete bool
		verdict  Verdict
		want     string
	}{
		{"same order", func(b *builder) {
			for p := range 3 {
				b.deliver(p, 0, 1)
				b.deliver(p, 1, 2)
			}
		}, true, OK, ""},
		{"opposite order", func(b *builder) {
			b.deliver(0, 0, 1)
			b.deliver(0, 1, 2)
			b.deliver(1, 1, 2)
			b.deliver(1, 0, 1)
		}, true, Violated, "P0 delivered P0's multicast (stamp 1, id 1) (P0#1) before P1's multicast (stamp 2, id 2) (P0#2), but P1 delivered them the other way round (P1#1, then P1#2)"},
		{"twice", func(b *builder) {
			b.deliver(0, 0, 1)
			b.deliver(0, 0, 1)
		}, true, Violated, "P0 delivered P0's multicast (stamp 1, id 1) twice: P0#1 and P0#2"},
		{"missing", func(b *builder) {
			b.deliver(0, 0, 1)
			b.deliver(1, 0, 1)
		}, true, Violated, "P2 never delivered P0's multicast (stamp 1, id 1), which P0 delivered at P0#1"},
		{"missing, incomplete run", func(b *builder) {
			b.deliver(0, 0, 1)
			b.deliver(1, 0, 1)
		}, false, Unknown, ""},
		{"missing at a crashed process", func(b *builder) {
			b.deliver(0, 0, 1)
			b.deliver(1, 0, 1)
			b.Crash(2)
		}, true, OK, ""},
		{"no multicast", func(b *builder) { b.Internal(0) }, true, OK, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(3)
			c.build(b)
			res, err := Run(b.Run(c.complete), b.Reader(), []*Check{TotalOrder})
			if err != nil {
				t.Fatal(err)
			}
			r := res[0]
			if r.Verdict != c.verdict {
				t.Fatalf("verdict %s, want %s (%v; %s)", r.Verdict, c.verdict, r.Findings, r.Note)
			}
			if c.want != "" && (len(r.Findings) == 0 || !strings.Contains(r.Findings[0].Message, c.want)) {
				t.Fatalf("findings %v, want %q", r.Findings, c.want)
			}
		})
	}
}

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

package analyze

import (
	"fmt"
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
	p2Misses := func(b *builder) { // P0 and P1 deliver P0's multicast, P2 does not
		b.deliver(0, 0, 1)
		b.deliver(1, 0, 1)
	}
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
		{"missing", p2Misses, true, Violated, "P2 never delivered P0's multicast (stamp 1, id 1), which P0 delivered at P0#1"},
		{"missing, incomplete run", p2Misses, false, Unknown, ""},
		{"missing at a crashed process", func(b *builder) {
			p2Misses(b)
			b.Crash(2)
		}, true, OK, ""},
		{"no multicast", func(b *builder) { b.Internal(0) }, true, NotApplicable, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(3)
			c.build(b)
			r := runOne(t, b, c.complete, TotalOrder)
			if r.Verdict != c.verdict {
				t.Fatalf("verdict %s, want %s (%v; %s)", r.Verdict, c.verdict, r.Findings, r.Note)
			}
			if c.want != "" && (len(r.Findings) == 0 || !strings.Contains(r.Findings[0].Message, c.want)) {
				t.Fatalf("findings %v, want %q", r.Findings, c.want)
			}
		})
	}
}

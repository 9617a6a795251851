package analyze

import (
	"fmt"
	"testing"
)

// TestParts checks the structure the checks give their findings: which
// events are sections, which ordering is missing, the edges of a wait-for
// cycle, the two reigns of a split brain, the crossing deliveries of a
// total-order divergence.
func TestParts(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		check *Check
		build func(b *builder)
		want  string // the first finding's parts, formatted by formatParts
	}{
		{
			name: "concurrent sections", n: 2, check: MutexCausal,
			build: concurrentSections,
			want:  "section[P0#1 P0#2] section[P1#1 P1#2] not-before[P0#2 P1#1]",
		},
		{
			name: "overlap in wall time", n: 2, check: MutexRealtime,
			build: concurrentSections,
			want:  "section[P0#1 P0#2] section[P1#1 P1#2](overlap 1ms)",
		},
		{
			name: "resource deadlock", n: 2, check: Deadlock, build: nestedDeadlock,
			want: "waits-for[P0#3 P1#2](P0->P1 holds scanner) waits-for[P1#3 P0#2](P1->P0 holds printer)",
		},
		{
			name: "wait-set deadlock", n: 2, check: Deadlock,
			build: func(b *builder) {
				b.Request(0, "cs")
				b.Wait(0, "cs", 1)
				b.Request(1, "cs")
				b.Wait(1, "cs", 0)
			},
			want: "waits-for[P0#2 P1#1](P0->P1 wait [1]) waits-for[P1#2 P0#1](P1->P0 wait [0])",
		},
		{
			name: "split brain", n: 2, check: SplitBrain,
			build: func(b *builder) {
				b.Leader(0, 0, 1)
				b.Leader(1, 1, 2)
			},
			want: "reign[P0#1](P0 leads) reign[P1#1](P1 leads)",
		},
		{
			name: "total order diverges", n: 2, check: TotalOrder,
			build: func(b *builder) {
				b.deliver(0, 0, 1)
				b.deliver(0, 1, 1)
				b.deliver(1, 1, 1)
				b.deliver(1, 0, 1)
			},
			want: "same[P0#1 P1#2](P0:1) same[P0#2 P1#1](P1:1)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder(tt.n)
			tt.build(b)
			res := runOne(t, b, true, tt.check)
			if len(res.Findings) == 0 {
				t.Fatalf("no finding: %+v", res)
			}
			if got := formatParts(res.Findings[0].Parts); got != tt.want {
				t.Errorf("parts:\n got %s\nwant %s\nfinding: %s", got, tt.want, res.Findings[0].Message)
			}
		})
	}
}

func formatParts(parts []Part) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s%v", p.Role, p.Events)
		var extra string
		if p.Role == RoleWaitsFor {
			extra = fmt.Sprintf("P%d->P%d ", p.From, p.To)
		}
		if extra != "" || p.Label != "" {
			s += "(" + extra + p.Label + ")"
		}
	}
	return s
}

// concurrentSections: P0 and P1 in the critical section at once, neither
// knowing of the other.
func concurrentSections(b *builder) { enterBothThenLeave(b, 0, "cs", 1, "cs") }

// enterBothThenLeave: p enters r and q enters s; then p leaves r and q
// leaves s, with no message between them.
func enterBothThenLeave(b *builder, p int, r string, q int, s string) {
	b.Enter(p, r)
	b.Enter(q, s)
	b.Exit(p, r)
	b.Exit(q, s)
}

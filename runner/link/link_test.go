package link

import (
	"slices"
	"testing"
)

// TestInOrder: messages are delivered once, in the order sent, whatever
// order they come in; an unordered one goes at once; a given-up gap no
// longer holds what follows it; duplicates are refused.
func TestInOrder(t *testing.T) {
	type arrival struct {
		seq       uint64
		unordered bool
		giveUp    bool // the sender gave it up instead
		skipTo    bool // a base: everything below seq was given up
		dup       bool // Accept must report a duplicate
	}
	for _, tc := range []struct {
		name string
		in   []arrival
		want []uint64
		acks uint64 // Delivered at the end
	}{
		{"in order", []arrival{{seq: 1}, {seq: 2}, {seq: 3}}, []uint64{1, 2, 3}, 3},
		{"held until the gap fills", []arrival{{seq: 3}, {seq: 2}, {seq: 1}}, []uint64{1, 2, 3}, 3},
		{"duplicates refused", []arrival{{seq: 1}, {seq: 1, dup: true}, {seq: 3}, {seq: 3, dup: true}}, []uint64{1}, 1},
		{"unordered overtakes", []arrival{{seq: 2, unordered: true}, {seq: 1}, {seq: 3}}, []uint64{2, 1, 3}, 3},
		{"unordered not twice", []arrival{{seq: 2, unordered: true}, {seq: 2, dup: true}, {seq: 1}}, []uint64{2, 1}, 2},
		{"given up at the head", []arrival{{seq: 2}, {seq: 1, giveUp: true}}, []uint64{2}, 2},
		{"given up ahead", []arrival{{seq: 2, giveUp: true}, {seq: 1}, {seq: 3}}, []uint64{1, 3}, 3},
		{"base skips the gap", []arrival{{seq: 3}, {seq: 4, skipTo: true}, {seq: 4}}, []uint64{3, 4}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewInOrder[uint64]()
			var got []uint64
			deliver := func(m uint64) { got = append(got, m) }
			for _, a := range tc.in {
				switch {
				case a.giveUp:
					c.GiveUp(a.seq, deliver)
				case a.skipTo:
					c.SkipTo(a.seq, deliver)
				default:
					if ok := c.Accept(a.seq, a.unordered, a.seq, deliver); ok == a.dup {
						t.Errorf("Accept(%d) = %v, want %v", a.seq, ok, !a.dup)
					}
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("delivered %v, want %v", got, tc.want)
			}
			if d := c.Delivered(); d != tc.acks {
				t.Errorf("Delivered() = %d, want %d", d, tc.acks)
			}
		})
	}
}

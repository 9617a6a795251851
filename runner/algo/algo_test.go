package algo

import (
	"slices"
	"testing"
)

// TestStampedRequestOrder is the total order of requests that lamport,
// ricart-agrawala, maekawa, majority and tomcast's queue keep.
// Reference: seed 003 slide 7: by timestamp; "if timestamps are equal,
// process identifiers are compared"; seed 004 "(T,p_j) < (T_i,p_i)";
// seed 002: the queue is "ordered by the messages' timestamps", distinct
// processes' clocks told apart by id, L(e) = M*Li(e) + i.
func TestStampedRequestOrder(t *testing.T) {
	for _, tc := range []struct {
		a, b StampedRequest
		want bool
	}{
		{StampedRequest{3, 2}, StampedRequest{7, 0}, true},  // earlier timestamp wins whatever the ids
		{StampedRequest{7, 0}, StampedRequest{3, 2}, false}, // later timestamp loses whatever the ids
		{StampedRequest{5, 0}, StampedRequest{5, 2}, true},  // tie: the smaller id wins
		{StampedRequest{5, 2}, StampedRequest{5, 0}, false}, // tie: the larger id loses
		{StampedRequest{5, 1}, StampedRequest{5, 1}, false}, // a request does not precede itself
	} {
		// The seed's single number L = M*L_i + i orders the same way.
		const m = 10
		lin := func(r StampedRequest) uint64 { return m*r.T + uint64(r.ID) }
		if got := tc.a.Before(tc.b); got != tc.want || got != (lin(tc.a) < lin(tc.b)) {
			t.Errorf("%v before %v = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestEnqueue: a request goes after those before it, ties by id; a
// struct that embeds a StampedRequest queues the same way.
func TestEnqueue(t *testing.T) {
	var q []StampedRequest
	var at []int
	for _, r := range []StampedRequest{{5, 1}, {3, 2}, {5, 0}, {9, 0}, {3, 1}} {
		var i int
		q, i = Enqueue(q, r)
		at = append(at, i)
	}
	if want := []StampedRequest{{3, 1}, {3, 2}, {5, 0}, {5, 1}, {9, 0}}; !slices.Equal(q, want) {
		t.Fatalf("queue %v, want %v", q, want)
	}
	if want := []int{0, 0, 1, 3, 0}; !slices.Equal(at, want) {
		t.Fatalf("places %v, want %v", at, want)
	}
	if got := (StampedRequest{3, 1}).String(); got != "(3,1)" {
		t.Fatalf("String = %q, want (3,1)", got)
	}
	type flagged struct {
		StampedRequest
		failed bool
	}
	fq, i := Enqueue([]flagged{{StampedRequest{2, 0}, true}, {StampedRequest{4, 0}, false}}, flagged{StampedRequest: StampedRequest{3, 5}})
	if i != 1 || fq[1].T != 3 || !fq[0].failed {
		t.Fatalf("embedded: place %d, queue %v", i, fq)
	}
}

package analyze

import (
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// overtake: P0 asks, tells P1, P1 asks and is granted first; P1 hands over
// to P0 when it leaves (seed 004's "Ordering: No" of a central coordinator
// that serves requests in the order they reach it).
func overtake(b *builder) {
	askedSecondEntersFirst(b)
	b.Exit(1, "cs")
	b.Recv(0, b.Send(1, 0, "token"))
	b.Enter(0, "cs")
	b.Exit(0, "cs")
}

// askedSecondEntersFirst: P0 asks and tells P1, which then asks and enters
// (P1's request happened after P0's).
func askedSecondEntersFirst(b *builder) {
	b.Request(0, "cs")
	b.Recv(1, b.Send(0, 1, "hello"))
	b.Request(1, "cs")
	b.Enter(1, "cs")
}

// starve: P0 asks; P1 and P2 take turns twice each, never hearing of P0's
// request; then P2 hands over to P0.
func starve(b *builder) {
	b.Request(0, "cs")
	tok := b.Send(2, 1, "token")
	for range 2 {
		b.Recv(1, tok)
		b.Request(1, "cs")
		b.Enter(1, "cs")
		b.Exit(1, "cs")
		tok = b.Send(1, 2, "token")
		b.Recv(2, tok)
		b.Request(2, "cs")
		b.Enter(2, "cs")
		b.Exit(2, "cs")
		tok = b.Send(2, 1, "token")
	}
	b.Recv(0, b.Send(2, 0, "token"))
	b.Enter(0, "cs")
	b.Exit(0, "cs")
}

// Reference: seed 004, requirements of mutual exclusion: "Ordering/Fairness:
// a request A happened-before request B => grant A before B".
func TestFairnessAndStarvation(t *testing.T) {
	runCases(t, []checkCase{
		{name: "ricart-agrawala", n: 3, build: raRun, want: fairAndStarving(OK, OK)},
		{
			name: "younger request granted first", n: 2, build: overtake, want: fairAndStarving(Violated, OK),
			finding: map[string]string{
				"fairness":   "P0#1 cs_request(cs) happened before P1#2 cs_request(cs), but P1 was granted first: P1#3 cs_enter(cs) happened before P0#4 cs_enter(cs)",
				"starvation": "2 requests granted; a request overtaken at most once (P0#1; bound 1)",
			},
		},
		{
			name: "older request never granted", n: 2, want: fairAndStarving(Violated, OK),
			build: func(b *builder) {
				askedSecondEntersFirst(b)
				b.Exit(1, "cs")
			},
			incomplete: true,
			finding:    map[string]string{"fairness": "but P1 was granted first: P1#3 cs_enter(cs) and P0 was never granted"},
		},
		{
			name: "a crash cancels the older request", n: 2, want: fairAndStarving(OK, OK),
			build: func(b *builder) {
				askedSecondEntersFirst(b)
				b.Crash(0)
				b.Exit(1, "cs")
			},
		},
		{
			// Concurrent grants (mutex-causal's finding) order nothing.
			name: "concurrent grants", n: 2, want: fairAndStarving(OK, OK),
			build: func(b *builder) {
				askedSecondEntersFirst(b)
				b.Enter(0, "cs")
				b.Exit(1, "cs")
				b.Exit(0, "cs")
			},
		},
		{
			name: "overtaken four times", n: 3, build: starve, want: fairAndStarving(OK, Violated),
			finding: map[string]string{"starvation": "P0#1 cs_request(cs) was overtaken 4 times, more than 2, by P1#3, P2#4, P1#8, P2#9 cs_enter(cs), until P0#3 cs_enter(cs)"},
		},
		{
			// Without wall times, entries concurrent with the request
			// may have come before it: only those that knew of it count.
			name: "overtaken four times, no wall times", n: 3, want: fairAndStarving(OK, OK),
			build: withoutWall(starve),
		},
		{
			// The bounds hold in runs without failures: P3 crashed while
			// P0 waited (a lost token is made anew, and the order
			// restarts).
			name: "overtaken four times while a process crashed", n: 4, want: fairAndStarving(OK, OK),
			build: func(b *builder) {
				starve(b)
				// P3 crashes while P0 waits.
				ev := trace.Event{Proc: 3, Seq: 1, Kind: trace.KindCrash, Peer: trace.NoPeer, Wall: b.events[5].Wall}
				b.events = append(b.events, ev)
			},
			finding: map[string]string{"starvation": "not held to the bound: 1 request overtaken more often after a process crashed"},
		},
		{
			// P3 was down when P0 asked and came back while it waited.
			name: "overtaken four times while a process was down", n: 4, want: fairAndStarving(OK, OK),
			build: func(b *builder) {
				crash := b.Crash(3)
				starve(b)
				b.Event(crash).Wall = b.events[0].Wall - 1
				ev := trace.Event{Proc: 3, Seq: 2, Kind: trace.KindRecover, Peer: trace.NoPeer, Wall: b.events[8].Wall}
				b.events = append(b.events, ev)
			},
		},
		{name: "overtaken four times, bound 4", n: 3, build: starve, opts: []Option{WithMaxOvertakes(4)}, want: fairAndStarving(OK, OK)},
		{
			// Entries concurrent with the request, read before it, count
			// too: the verdict does not depend on the reader's order.
			name: "overtaken by entries read before the request", n: 3, want: fairAndStarving(OK, Violated),
			build: func(b *builder) {
				starve(b)
				// Move P0's request to the end of the reader's order.
				ev := b.events[0]
				b.events = append(b.events[1:], ev)
			},
		},
	}, []*Check{Fairness, Starvation})
}

// fairAndStarving is the verdicts of fairness and of starvation.
func fairAndStarving(fairness, starvation Verdict) want {
	return want{"fairness": fairness, "starvation": starvation}
}

// TestStarvationBoundFromProcesses: without a process count in the run,
// the bound is N-1 of the processes seen.
func TestStarvationBoundFromProcesses(t *testing.T) {
	b := newBuilder(3)
	starve(b)
	run := b.Run(true)
	run.Nodes = 0
	if r := checkOne(t, run, b.Reader(), Starvation); r.Verdict != Violated || !strings.Contains(r.Findings[0].Message, "more than 2") {
		t.Errorf("%s %v", r.Verdict, r.Findings)
	}
}

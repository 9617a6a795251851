package analyze

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

var (
	propSeed  = flag.Uint64("seed", 0, "run the property tests with this seed only")
	propCount = flag.Int("seeds", 1000, "number of seeds the property tests try")
)

// randomTrace scripts a random run of 2..5 processes: internal events,
// sends, receives (in any order, some never, some twice) and critical
// sections on two resources guarded by a token that is passed in messages,
// with a few processes cheating (entering without the token, passing it
// while inside). The clocks are stamped correctly by the builder.
func randomTrace(rng *rand.Rand) *builder {
	n := 2 + rng.IntN(4)
	b := newBuilder(n)
	b.step = 1 + rng.Int64N(3) // wall times: strictly increasing in builder order
	type flight struct {
		id int64
		to int
	}
	var inflight []flight
	var received []flight
	resources := []string{"a", "b"}
	holder := map[string]int{"a": 0, "b": n - 1}
	inside := make(map[csKey]int) // open sections per process and resource
	steps := 20 + rng.IntN(100)
	for range steps {
		p := rng.IntN(n)
		res := resources[rng.IntN(2)]
		k := csKey{p, res}
		switch x := rng.IntN(100); {
		case x < 15:
			b.Internal(p)
		case x < 35:
			to := rng.IntN(n)
			if to == p {
				to = (to + 1) % n
			}
			inflight = append(inflight, flight{b.Send(p, to, "m"), to})
		case x < 60:
			// receive a message addressed to p, any of them: not FIFO
			var mine []int
			for i, f := range inflight {
				if f.to == p {
					mine = append(mine, i)
				}
			}
			if len(mine) == 0 {
				b.Internal(p)
				continue
			}
			i := mine[rng.IntN(len(mine))]
			f := inflight[i]
			inflight = append(inflight[:i], inflight[i+1:]...)
			b.Recv(p, f.id)
			received = append(received, f)
			for r, h := range holder {
				if h == int(-1-f.id) { // a token arrived
					holder[r] = p
				}
			}
		case x < 63 && len(received) > 0:
			f := received[rng.IntN(len(received))]
			b.Recv(f.to, f.id) // duplicated delivery
		case x < 80:
			if inside[k] > 0 && rng.IntN(10) > 0 {
				continue
			}
			if holder[res] == p || rng.IntN(25) == 0 { // the token, or a cheat
				b.Request(p, res)
				b.Enter(p, res)
				inside[k]++
			} else if rng.IntN(3) == 0 {
				b.Request(p, res) // may never be granted
			}
		case x < 92:
			if inside[k] > 0 {
				b.Exit(p, res)
				inside[k]--
			}
		default:
			// pass the token on, usually after leaving
			if holder[res] != p || (inside[k] > 0 && rng.IntN(8) > 0) {
				continue
			}
			to := (p + 1 + rng.IntN(n-1)) % n
			id := b.Send(p, to, "token")
			inflight = append(inflight, flight{id, to})
			holder[res] = int(-1 - id)
		}
	}
	return b
}

// shuffle interleaves the processes' events at random, each process's in
// program order: receives often come before their sends.
func shuffle(rng *rand.Rand, b *builder) []trace.Event {
	per := make([][]trace.Event, b.n)
	for _, ev := range b.events {
		per[ev.Proc] = append(per[ev.Proc], ev)
	}
	var out []trace.Event
	for len(out) < len(b.events) {
		p := rng.IntN(b.n)
		if len(per[p]) == 0 {
			continue
		}
		out = append(out, per[p][0])
		per[p] = per[p][1:]
	}
	return out
}

// closure is the naive reference: for every event (in builder order, which
// is causal) the set of events that happened before it, as a bitset over
// builder indexes, from program order and send -> every receive.
type closure struct {
	index  map[trace.Ref]int
	before [][]uint64
}

func newClosure(events []trace.Event) *closure {
	c := &closure{index: make(map[trace.Ref]int)}
	words := (len(events) + 63) / 64
	last := map[int]int{}
	send := map[int64]int{}
	for i, ev := range events {
		c.index[ev.Ref()] = i
		set := make([]uint64, words)
		add := func(j int) {
			set[j/64] |= 1 << (j % 64)
			for w := range set {
				set[w] |= c.before[j][w]
			}
		}
		if j, ok := last[ev.Proc]; ok {
			add(j)
		}
		if ev.Kind == trace.KindReceive {
			add(send[ev.Msg])
		}
		if ev.Kind == trace.KindSend {
			send[ev.Msg] = i
		}
		last[ev.Proc] = i
		c.before = append(c.before, set)
	}
	return c
}

func (c *closure) hb(a, b trace.Ref) bool {
	i, j := c.index[a], c.index[b]
	return c.before[j][i/64]&(1<<(i%64)) != 0
}

func seeds(t *testing.T) []uint64 {
	if *propSeed != 0 {
		return []uint64{*propSeed}
	}
	n := *propCount
	if testing.Short() {
		n /= 10
	}
	s := make([]uint64, n)
	for i := range s {
		s[i] = uint64(i + 1)
	}
	return s
}

// TestHBAgainstClosure compares the streaming happens-before with the
// transitive closure over all events, on random traces read in random
// order, and checks that the delivery order is causal.
func TestHBAgainstClosure(t *testing.T) {
	for _, seed := range seeds(t) {
		rng := rand.New(rand.NewPCG(seed, 0xd3c))
		b := randomTrace(rng)
		ref := newClosure(b.events)
		run := b.Run(true)
		if rng.IntN(2) == 0 {
			run.Nodes = 0
		}
		delivered := make([]bool, len(b.events))
		last := make([]int, b.n) // per process: the index of its last event delivered, -1 none
		for p := range last {
			last[p] = -1
		}
		var fail string
		_, err := Walk(run, &trace.SliceReader{Events: shuffle(rng, b)}, func(ev *trace.Event, hb *HB) {
			cur := ev.Ref()
			i := ref.index[cur]
			// causal delivery: everything before it was delivered
			for j := range b.events {
				if ref.hb(b.events[j].Ref(), cur) && !delivered[j] && fail == "" {
					fail = fmt.Sprintf("%v delivered before %v, which happened before it", cur, b.events[j].Ref())
				}
			}
			delivered[i] = true
			last[ev.Proc] = i
			// every process knows of the same events of q as the closure
			// says its last event does
			if run.Nodes > 0 {
				for q := range b.n {
					least := int64(-1)
					for p := range b.n {
						var k int64
						for j := range b.events {
							if last[p] >= 0 && b.events[j].Proc == q && (j == last[p] || ref.hb(b.events[j].Ref(), b.events[last[p]].Ref())) {
								k++
							}
						}
						if least < 0 || k < least {
							least = k
						}
					}
					if got := hb.KnownByAll(q); got != least && fail == "" {
						fail = fmt.Sprintf("at %v: KnownByAll(P%d) = %d, closure says %d", cur, q, got, least)
					}
				}
			}
			// all pairs (a, current): the traces are small
			for j := range b.events {
				a := b.events[j].Ref()
				if got, want := hb.HappenedBefore(a), ref.hb(a, cur); got != want && fail == "" {
					fail = fmt.Sprintf("HappenedBefore(%v) at %v = %v, closure says %v", a, cur, got, want)
				}
			}
			// the wall bound is the latest wall time before it
			var wall int64
			for j := range b.events {
				if ref.hb(b.events[j].Ref(), cur) {
					wall = max(wall, b.events[j].Wall)
				}
			}
			if got, at := hb.WallBound(); (got != wall || (wall != 0 && !ref.hb(at, cur))) && fail == "" {
				fail = fmt.Sprintf("at %v: WallBound = %d at %v, closure says %d", cur, got, at, wall)
			}
			// the rebuilt clock counts the events before it
			for p := range b.n {
				var cnt int64
				for j := range b.events {
					if b.events[j].Proc == p && (j == i || ref.hb(b.events[j].Ref(), cur)) {
						cnt++
					}
				}
				if hb.Knows(p) != cnt && fail == "" {
					fail = fmt.Sprintf("at %v: Knows(P%d) = %d, closure counts %d", cur, p, hb.Knows(p), cnt)
				}
			}
		})
		if err != nil {
			t.Fatalf("seed %d: Walk: %v", seed, err)
		}
		if fail != "" {
			t.Fatalf("seed %d: %s", seed, fail)
		}
		for j, d := range delivered {
			if !d {
				t.Fatalf("seed %d: %v never delivered", seed, b.events[j].Ref())
			}
		}
	}
}

// TestChecksAgainstBruteForce compares the verdicts of the streaming checks
// with brute force over all pairs of critical sections.
func TestChecksAgainstBruteForce(t *testing.T) {
	var count [2][2]int // [causal violated][realtime violated], to see that both sides are covered
	for _, seed := range seeds(t) {
		rng := rand.New(rand.NewPCG(seed, 0x5ec))
		b := randomTrace(rng)
		ref := newClosure(b.events)
		results, err := Evaluate(b.Run(true), &trace.SliceReader{Events: shuffle(rng, b)}, All)
		if err != nil {
			t.Fatalf("seed %d: Run: %v", seed, err)
		}
		got := map[string]Verdict{}
		for _, r := range results {
			got[r.Check] = r.Verdict
		}
		if got["clocks"] != OK {
			t.Fatalf("seed %d: clocks %s on a correctly stamped trace: %v", seed, got["clocks"], results[0].Findings)
		}

		spans, _ := bruteSpans(b.events)
		causal, realtime := OK, OK
		for i, x := range spans {
			for _, y := range spans[i+1:] {
				if x.res != y.res {
					continue
				}
				ordered := (x.exit.Seq != 0 && ref.hb(x.exit, y.enter)) || (y.exit.Seq != 0 && ref.hb(y.exit, x.enter))
				if !ordered {
					causal = Violated
				}
				if x.proc != y.proc && x.t0 < y.t1 && y.t0 < x.t1 {
					realtime = Violated
				}
			}
		}
		// A pending request is still in progress if a message it sent
		// after asking, or one sent to it, was never received (the random
		// traces have no crashes, waits or drops to name a cause).
		live := OK
		for _, r := range pendingRequests(b.events) {
			going := false
			for _, m := range unreceived(b.events) {
				if m.Proc == r.Proc && m.Seq > r.Seq || m.Peer == r.Proc {
					going = true
				}
			}
			switch {
			case !going:
				live = Violated
			case live == OK:
				live = Unknown
			}
		}
		if len(spans) == 0 { // nothing to judge
			causal, realtime = NotApplicable, NotApplicable
		}
		if !slices.ContainsFunc(b.events, func(ev trace.Event) bool { return ev.Kind == trace.KindCSRequest }) {
			live = NotApplicable
		}
		for check, want := range map[string]Verdict{"mutex-causal": causal, "mutex-realtime": realtime, "liveness": live} {
			if got[check] != want {
				t.Fatalf("seed %d: %s says %s, brute force %s; results %+v", seed, check, got[check], want, results)
			}
		}
		count[b2i(causal == Violated)][b2i(realtime == Violated)]++
	}
	t.Logf("causal/realtime verdicts (ok-ok, ok-viol, viol-ok, viol-viol): %v", count)
	if len(seeds(t)) >= 100 && (count[0][0] == 0 || count[1][0] == 0 || count[1][1] == 0) {
		t.Errorf("the random traces do not cover all cases: %v", count)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

type bruteSpan struct {
	res         string
	proc        int
	enter, exit trace.Ref
	t0, t1      int64
}

// bruteSpans pairs the k-th enter with the k-th exit of each process and
// resource, and counts the requests never followed by their enter.
// pendingRequests returns the requests never granted: of the k requests of
// a process on a resource and its j entries, the last k-j.
func pendingRequests(events []trace.Event) []trace.Ref {
	reqs := map[csKey][]trace.Ref{}
	enters := map[csKey]int{}
	for _, ev := range events {
		k := csKey{ev.Proc, ev.Resource}
		switch ev.Kind {
		case trace.KindCSRequest:
			reqs[k] = append(reqs[k], ev.Ref())
		case trace.KindCSEnter:
			enters[k]++
		}
	}
	var out []trace.Ref
	for k, rs := range reqs {
		if n := min(enters[k], len(rs)); n < len(rs) {
			out = append(out, rs[n:]...)
		}
	}
	return out
}

// unreceived returns the sends whose message no event receives.
func unreceived(events []trace.Event) []trace.Event {
	got := map[int64]bool{}
	for _, ev := range events {
		if ev.Kind == trace.KindReceive {
			got[ev.Msg] = true
		}
	}
	var out []trace.Event
	for _, ev := range events {
		if ev.Kind == trace.KindSend && !got[ev.Msg] {
			out = append(out, ev)
		}
	}
	return out
}

func bruteSpans(events []trace.Event) (spans []bruteSpan, pending int) {
	var end int64
	for _, ev := range events {
		end = max(end, ev.Wall)
	}
	enters := map[csKey][]int{}
	exits := map[csKey]int{}
	requests := map[csKey]int{}
	entered := map[csKey]int{}
	for _, ev := range events {
		k := csKey{ev.Proc, ev.Resource}
		switch ev.Kind {
		case trace.KindCSRequest:
			requests[k]++
		case trace.KindCSEnter:
			enters[k] = append(enters[k], len(spans))
			spans = append(spans, bruteSpan{ev.Resource, ev.Proc, ev.Ref(), trace.Ref{}, ev.Wall, end})
			if entered[k] < requests[k] {
				entered[k]++
			}
		case trace.KindCSExit:
			if exits[k] < len(enters[k]) {
				s := &spans[enters[k][exits[k]]]
				s.exit, s.t1 = ev.Ref(), ev.Wall
			}
			exits[k]++
		}
	}
	for k, r := range requests {
		pending += r - entered[k]
	}
	return spans, pending
}

// TestMsgSet compares the packed record of receivers with a map, for
// widths that do and do not divide 64 (entries that straddle two words).
func TestMsgSet(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 5, 16, 17, 64, 100} {
		rng := rand.New(rand.NewPCG(uint64(n), 0x5e7))
		s := newMsgSet(n)
		ref := map[int64]int{}
		procs := n
		if procs == 0 {
			procs = MaxProcs
		}
		for range 2000 {
			var id int64
			switch rng.IntN(4) {
			case 0:
				id = rng.Int64() // foreign ids: the map
			default:
				id = trace.MsgID(rng.IntN(min(procs, 8)), 1+rng.Int64N(500))
			}
			if _, ok := ref[id]; ok {
				continue
			}
			to := rng.IntN(procs)
			s.add(id, to)
			ref[id] = to
		}
		for id, to := range ref {
			if got := s.receiver(id); got != to {
				t.Fatalf("n=%d: receiver(%d) = %d, want %d", n, id, got, to)
			}
		}
		for range 1000 {
			id := trace.MsgID(rng.IntN(min(procs, 8)), 1+rng.Int64N(1000))
			if _, ok := ref[id]; !ok && s.has(id) {
				t.Fatalf("n=%d: has(%d) for an id never added", n, id)
			}
		}
	}
}

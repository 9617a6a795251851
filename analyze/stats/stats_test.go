package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/changroberts"
	"github.com/dmxlab/dmx/runner/algo/maekawa"
	"github.com/dmxlab/dmx/runner/algo/ring"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// TestHist checks the histogram's quantiles against the exact ones: equal
// below 64, within 1/32 above.
func TestHist(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		var h hist
		var all []int64
		n := 1 + rng.IntN(5000)
		scale := int64(1) << rng.IntN(40)
		for range n {
			v := rng.Int64N(scale + 1)
			h.add(v)
			all = append(all, v)
		}
		slices.Sort(all)
		d := h.dist()
		if d.Count != int64(n) || d.Max != all[n-1] {
			t.Fatalf("seed %d: count %d max %d, want %d %d", seed, d.Count, d.Max, n, all[n-1])
		}
		for _, q := range []struct {
			q   float64
			got int64
		}{{0.5, d.P50}, {0.99, d.P99}} {
			want := all[int(math.Ceil(q.q*float64(n)))-1]
			tol := float64(want) / 32
			if want < 64 {
				tol = 0
			}
			if math.Abs(float64(q.got-want)) > tol {
				t.Errorf("seed %d: q%v = %d, exact %d (n=%d)", seed, q.q, q.got, want, n)
			}
		}
	}
	// Every value falls in the bucket whose bounds hold it.
	for _, v := range []int64{0, 1, 63, 64, 65, 127, 128, 1000, 1 << 40, math.MaxInt64} {
		lo, hi := bounds(bucket(v))
		if v < lo || v > hi {
			t.Errorf("%d in bucket %d [%d, %d]", v, bucket(v), lo, hi)
		}
	}
}

// events builds a trace by hand: each call appends one event of p.
type events struct {
	ev   []trace.Event
	seq  map[int]int64
	sent map[int]int64
	wall int64
}

func (e *events) add(p int, k trace.Kind, f func(*trace.Event)) {
	if e.seq == nil {
		e.seq, e.sent = map[int]int64{}, map[int]int64{}
	}
	e.seq[p]++
	e.wall += int64(time.Millisecond)
	ev := trace.Event{Proc: p, Seq: e.seq[p], Kind: k, Wall: e.wall, Peer: trace.NoPeer}
	if f != nil {
		f(&ev)
	}
	e.ev = append(e.ev, ev)
}

func (e *events) send(from, to int, typ string) int64 {
	e.add(from, trace.KindSend, nil)
	e.sent[from]++
	id := trace.MsgID(from, e.sent[from])
	ev := &e.ev[len(e.ev)-1]
	ev.Msg, ev.Peer, ev.MsgType = id, to, typ
	return id
}

func (e *events) recv(to int, id int64, typ string) {
	e.add(to, trace.KindReceive, func(ev *trace.Event) { ev.Msg, ev.Peer, ev.MsgType = id, int(id>>32), typ })
}

func (e *events) cs(p int, k trace.Kind) {
	e.add(p, k, func(ev *trace.Event) { ev.Resource = "cs" })
}

func compute(t *testing.T, run trace.Run, ev []trace.Event) *Stats {
	t.Helper()
	var costs []theory.Cost
	if spec := registry.Lookup(run.Algorithm); spec != nil {
		costs = spec.Costs
	}
	s, err := Compute(run, &trace.SliceReader{Events: ev}, costs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestHops: client delay is the longest chain from the request, sync delay
// the shortest from the exit.
func TestHops(t *testing.T) {
	var e events
	// P0 and P1 request; P1 is deferred by P0 (Ricart-Agrawala).
	e.cs(0, trace.KindCSRequest)
	e.cs(1, trace.KindCSRequest)
	r0 := e.send(0, 1, "request")
	r1 := e.send(1, 0, "request")
	e.recv(1, r0, "request")
	ok10 := e.send(1, 0, "reply")
	e.recv(0, r1, "request") // deferred
	e.recv(0, ok10, "reply")
	e.cs(0, trace.KindCSEnter) // chain request -> P1 -> reply: 2 hops
	e.cs(0, trace.KindCSExit)
	// Two chains from the exit to P1: the direct reply (1 hop) and one
	// through P2 (2 hops): the shortest counts.
	ok01 := e.send(0, 1, "reply")
	x := e.send(0, 2, "note")
	e.recv(2, x, "note")
	y := e.send(2, 1, "note")
	e.recv(1, y, "note")
	e.recv(1, ok01, "reply")
	e.cs(1, trace.KindCSEnter)
	e.cs(1, trace.KindCSExit)
	s := compute(t, trace.Run{Algorithm: "ricart-agrawala", Nodes: 3, Complete: true}, e.ev)
	m := s.Mutex
	if m == nil || m.CriticalSections != 2 || m.Requests != 2 || m.Contended != 1 {
		t.Fatalf("mutex %+v", m)
	}
	// P1's request: P1 -> P0 (request) ... P0 exits, sends to P2, P2 to
	// P1: the longest chain from P1's request is request, note, note: 3.
	if d := m.ClientDelay.Hops; d.Count != 2 || d.Max != 3 || d.P50 != 2 {
		t.Errorf("client hops %+v, want 2 and 3", d)
	}
	if d := m.SyncDelay.Hops; d.Count != 1 || d.Max != 1 {
		t.Errorf("sync hops %+v, want one sample of 1", d)
	}
	if d := m.SyncDelay.WallNS; d.Count != 1 || d.Max != int64(7*time.Millisecond) {
		t.Errorf("sync wall %+v, want 7ms", d)
	}
	if s.Messages.Total != 6 || s.Messages.ByType["note"] != 2 || s.Messages.Lost != 0 {
		t.Errorf("messages %+v", s.Messages)
	}
	if f := m.MessagesPerCS.Seeds; f == nil || *f.Value != 4 {
		t.Errorf("seeds figure %+v, want 2(N-1) = 4", f)
	}
}

// TestMulticastAndHeartbeats: a multicast counts once however many deliver
// it; heartbeats are apart; an unreceived message is lost.
func TestMulticastAndHeartbeats(t *testing.T) {
	var e events
	ids := []int64{e.send(0, 1, "msg"), e.send(0, 2, "msg")}
	e.add(0, trace.KindDeliver, nil)
	for i, id := range ids {
		e.recv(i+1, id, "msg")
		e.add(i+1, trace.KindDeliver, nil)
	}
	e.send(1, 0, "heartbeat")
	s := compute(t, trace.Run{Algorithm: "tomcast", Nodes: 3, Complete: true}, e.ev)
	if mc := s.Multicast; mc == nil || mc.Multicasts != 1 || mc.Deliveries != 3 || mc.MessagesPerMulticast != 2 {
		t.Fatalf("multicast %+v", s.Multicast)
	}
	if s.Messages.Total != 2 || s.Messages.Heartbeat != 1 || s.Messages.Lost != 1 || s.Mutex != nil || s.Election != nil {
		t.Errorf("stats %+v", s)
	}
}

// simulate runs spec in the simulator.
func simulate(t *testing.T, spec *algo.Spec, n int, seed uint64, params map[string]string, wl runner.Workload) *Stats {
	t.Helper()
	var c runner.Collector
	res, err := runner.Simulate(runner.Plan{Spec: spec, N: n, Seed: seed, Params: params, Workload: wl, Sim: runner.SimOptions{Delay: runner.Dist{Min: 100 * time.Microsecond, Max: 2 * time.Millisecond}}}, &c, nil)
	if err != nil || !res.Complete {
		t.Fatalf("%s N=%d seed %d: %v %s", spec.Name, n, seed, err, res.Status)
	}
	return compute(t, trace.Run{Algorithm: spec.Name, Nodes: n, Seed: seed, Complete: true}, c.Events)
}

// TestContentionFree: without contention every algorithm costs exactly
// what the seeds say, critical section by critical section (DESIGN.md,
// "Message complexity the seeds give"): central 3 for a client (0 for the
// coordinator's own), ricart-agrawala 2(N-1), ra-token N or 0, lamport
// 3(N-1), maekawa 3(K-1) for a voting set of K.
func TestContentionFree(t *testing.T) {
	const entries = 3
	for _, name := range []string{"central", "ricart-agrawala", "ra-token", "lamport", "maekawa"} {
		for _, n := range []int{2, 3, 4, 5, 8, 9} {
			t.Run(fmt.Sprintf("%s/N=%d", name, n), func(t *testing.T) {
				wl := runner.Workload{Entries: entries, Contention: runner.ContentionNone, Hold: runner.Dist{Max: time.Millisecond}}
				s := simulate(t, registry.Lookup(name), n, 1, nil, wl)
				m := s.Mutex
				if m.Contended != 0 || m.CriticalSections != int64(n*entries) {
					t.Fatalf("%d contended, %d critical sections", m.Contended, m.CriticalSections)
				}
				each := m.MessagesPerCS.Each
				var want map[int64]int64
				switch name {
				case "central": // the coordinator P0's own cost nothing
					want = map[int64]int64{0: entries, 3: int64((n - 1) * entries)}
				case "ricart-agrawala":
					want = map[int64]int64{int64(2 * (n - 1)): int64(n * entries)}
				case "lamport":
					want = map[int64]int64{int64(3 * (n - 1)): int64(n * entries)}
				case "ra-token": // P0 holds the token at first
					want = map[int64]int64{0: 1, int64(n): int64(n*entries - 1)}
				case "maekawa":
					want = map[int64]int64{}
					for p := range n {
						want[int64(3*(len(maekawa.VotingSet(p, n))-1))] += entries
					}
				}
				if fmt.Sprint(each) != fmt.Sprint(want) {
					t.Errorf("messages of each critical section %v, want %v", each, want)
				}
				if f := m.MessagesPerCS.Seeds; f.Value != nil && math.Abs(*f.Value-m.MessagesPerCS.Measured) > 1e-9 {
					t.Errorf("measured %v, seeds %v", m.MessagesPerCS.Measured, f)
				}
				if name == "ricart-agrawala" && (m.ClientDelay.Hops.P50 != 2 || m.ClientDelay.Hops.Max != 2) {
					t.Errorf("client delay %+v, want 2 hops (seed 004: multicast + replies)", m.ClientDelay.Hops)
				}
			})
		}
	}
}

// TestSyncDelay: under high contention (everyone asks again at once) the
// synchronization delay in hops is what the seeds give where it holds
// exactly: ricart-agrawala 1 (the deferred reply); central 2 (release,
// grant) between two clients and 1 when the coordinator is one of them;
// maekawa (the deadlock-free inquire variant) 2, release to the common
// voter and its vote, or 1 when the process that leaves is that voter;
// token-ring 1 when the next process on the ring is waiting; lamport 1
// (the release).
func TestSyncDelay(t *testing.T) {
	high := runner.Workload{Entries: 4, Think: runner.Fixed(0), Hold: runner.Dist{Min: time.Millisecond, Max: 5 * time.Millisecond}}
	for _, tt := range []struct {
		algo     string
		params   map[string]string
		min, max int64
	}{
		{"ricart-agrawala", nil, 1, 1},
		{"central", nil, 1, 2},
		{"token-ring", nil, 1, 1},
		{"lamport", nil, 1, 1},
		{"maekawa", map[string]string{"variant": "inquire"}, 1, 2},
	} {
		for _, n := range []int{3, 5, 8} {
			for seed := uint64(1); seed <= 5; seed++ {
				s := simulate(t, registry.Lookup(tt.algo), n, seed, tt.params, high)
				d := s.Mutex.SyncDelay.Hops
				if d.Count == 0 || d.Max != tt.max || float64(tt.min) > d.Mean {
					t.Errorf("%s N=%d seed %d: sync delay %+v, want %d..%d hops", tt.algo, n, seed, d, tt.min, tt.max)
				}
				if tt.max == 2 && d.Mean <= 1 {
					t.Errorf("%s N=%d seed %d: sync delay %+v: never 2", tt.algo, n, seed, d)
				}
			}
		}
	}
}

// TestElectionStats: one election among N without failures costs what
// seed 001 gives: the ring algorithm 2N; Chang-Roberts 3N-1 when the
// initiator is the successor of the would-be leader, 2N when it is the
// would-be leader.
func TestElectionStats(t *testing.T) {
	for _, n := range []int{3, 5, 8} {
		for _, tt := range []struct {
			spec       *algo.Spec
			initiators string
			want       int
		}{
			{&ring.Spec, "0", 2 * n},
			{&changroberts.Spec, "0", 3*n - 1},
			{&changroberts.Spec, fmt.Sprint(n - 1), 2 * n},
		} {
			s := simulate(t, tt.spec, n, 1, map[string]string{"initiators": tt.initiators}, runner.Workload{})
			e := s.Election
			if e == nil || e.Elections != 1 || e.Unfinished != 0 || e.MessagesOutside != 0 || e.MessagesPerElection.Measured != float64(tt.want) {
				t.Errorf("%s N=%d initiators=%s: %+v, want one election of %d messages", tt.spec.Name, n, tt.initiators, e, tt.want)
			}
			if s.Messages.Heartbeat == 0 {
				t.Errorf("%s: heartbeats not counted apart: %+v", tt.spec.Name, s.Messages)
			}
		}
	}
}

// TestCosts: a run without contention and without failures costs each
// figure of its algorithm's Spec that has a single value, the seeds' and
// dmx's own counts alike: messages per critical section, client delay in
// hops, messages per election from one initiator, messages per multicast.
// (A range, as "1..inf" or "best 2N, worst 3N-1", is not one value to
// compare with.)
func TestCosts(t *testing.T) {
	const entries = 3
	mutex := runner.Workload{Entries: entries, Contention: runner.ContentionNone, Hold: runner.Dist{Max: time.Millisecond}}
	skip := map[string]theory.Measure{}
	compared := 0
	for _, spec := range registry.All() {
		for _, n := range []int{3, 5, 9} {
			var s *Stats
			switch spec.Kind {
			case algo.MutualExclusion:
				s = simulate(t, spec, n, 1, nil, mutex)
			case algo.Multicast:
				s = simulate(t, spec, n, 1, nil, runner.Workload{Entries: entries, Contention: runner.ContentionNone})
			case algo.Election:
				var params map[string]string
				if slices.ContainsFunc(spec.Params, func(p algo.Param) bool { return p.Name == "initiators" }) {
					params = map[string]string{"initiators": "0"}
				}
				s = simulate(t, spec, n, 1, params, runner.Workload{})
			}
			setting := theory.Setting{N: n, CS: slices.Repeat([]int64{entries}, n)}
			for _, c := range spec.Costs {
				e := c.Evaluate(setting)
				if e.Value == nil || e.Min != nil || e.Max != nil || skip[spec.Name] == c.Measure {
					continue
				}
				got, ok := measured(s, c.Measure)
				if !ok {
					continue
				}
				compared++
				if math.Abs(got-*e.Value) > 1e-9 {
					t.Errorf("%s N=%d: %s measured %v, its cost %q (seed %q) says %v", spec.Name, n, c.Measure, got, e.Formula, c.Seed, *e.Value)
				}
			}
		}
	}
	if compared < 20 {
		t.Errorf("%d costs compared with a run: which were left out?", compared)
	}
}

// measured is what s measured of m, if stats measures m and s has it.
func measured(s *Stats, m theory.Measure) (float64, bool) {
	switch {
	case m == theory.MessagesPerCS && s.Mutex != nil:
		return s.Mutex.MessagesPerCS.Measured, true
	case m == theory.ClientDelay && s.Mutex != nil && s.Mutex.ClientDelay.Hops.Count > 0:
		return float64(s.Mutex.ClientDelay.Hops.Max), true
	case m == theory.MessagesPerElection && s.Election != nil && s.Election.Elections > 0:
		return s.Election.MessagesPerElection.Measured, true
	case m == theory.MessagesPerMulticast && s.Multicast != nil:
		return s.Multicast.MessagesPerMulticast, true
	}
	return 0, false
}

package analyze

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// The generator of planted violations. world scripts a clean run of 3 to
// 64 processes that every check passes: a lock served by a coordinator
// (P0) in the order requests reach it, clients that say whom they wait
// for, application messages, an election won by the highest id, and
// multicasts to groups, each delivered by its whole group in one order.
// A plant then breaks exactly one property, the way a faulty system would,
// and says which events the finding must name. The trace is read with or
// without recorded clocks, with or without wall times, its rows shuffled.

// world is the state of a scripted run.
type world struct {
	b       *builder
	rng     *rand.Rand
	n       int
	queue   []int       // clients whose request reached the coordinator, in order
	waiting []bool      // the client has a request out
	holder  int         // the client in the critical section, or -1
	leader  int         // the elected leader
	term    uint64      // the election's term
	stamp   uint64      // the last multicast's stamp
	groups  [][]int     // the multicasts' groups, by stamp-1
	strict  bool        // validity by the highest id (declared in the run's params)
	named   []trace.Ref // what the planted violation's finding must name
}

func newWorld(rng *rand.Rand, n int) *world {
	w := &world{b: newBuilder(n), rng: rng, n: n, waiting: make([]bool, n), holder: -1}
	w.b.step = 1 + rng.Int64N(3_000_000)
	return w
}

// request has client c ask for the lock: its request reaches the
// coordinator at once, so the queue holds requests in the order they were
// made (a request that happened before another is served first).
func (w *world) request(c int) trace.Ref {
	ref := w.b.Request(c, "cs")
	w.b.Recv(0, w.b.Send(c, 0, "request"))
	w.b.Wait(c, "cs", 0)
	w.queue = append(w.queue, c)
	w.waiting[c] = true
	return ref
}

// grant lets the head of the queue in.
func (w *world) grant() {
	h := w.queue[0]
	w.queue = w.queue[1:]
	w.b.Recv(h, w.b.Send(0, h, "grant"))
	w.b.Wait(h, "cs")
	w.b.Enter(h, "cs")
	w.holder, w.waiting[h] = h, false
}

// release ends the critical section of the holder.
func (w *world) release() {
	h := w.holder
	w.b.Exit(h, "cs")
	w.b.Recv(0, w.b.Send(h, 0, "release"))
	w.holder = -1
}

// idle returns a client with no request out, other than not, or -1.
func (w *world) idle(not ...int) int {
	var cs []int
	for c := 1; c < w.n; c++ {
		if !w.waiting[c] && w.holder != c && !slices.Contains(not, c) {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return -1
	}
	return cs[w.rng.IntN(len(cs))]
}

// drain serves every request out.
func (w *world) drain() {
	for w.holder >= 0 || len(w.queue) > 0 {
		if w.holder >= 0 {
			w.release()
		} else {
			w.grant()
		}
	}
}

// elect: a process starts an election, the highest id hears of it and
// tells everybody that it leads.
func (w *world) elect() {
	w.term++
	s, l := w.rng.IntN(w.n), w.n-1
	w.b.ElectionStart(s, w.term)
	w.b.on("lead")
	if s != l {
		w.b.Recv(l, w.b.Send(s, l, "election"))
	}
	w.b.Leader(l, l, w.term)
	w.b.on("lead")
	for p := range w.n {
		if p != l {
			w.b.Recv(p, w.b.Send(l, p, "coordinator"))
			w.b.Leader(p, l, w.term)
			w.b.on("lead")
		}
	}
	w.leader = l
}

// multicast sends a multicast from a random origin to a random group,
// every member of which delivers it at once: all deliver the multicasts
// in the order of their stamps.
func (w *world) multicast() {
	o := w.rng.IntN(w.n)
	group := []int{o}
	for p := range w.n {
		if p != o && w.rng.IntN(3) == 0 {
			group = append(group, p)
		}
	}
	if len(group) == 1 { // a multicast goes to somebody: the sends show to whom
		group = append(group, (o+1)%w.n)
	}
	w.stamp++
	w.groups = append(w.groups, group)
	detail := trace.EncodeDetail(trace.Message{Stamp: w.stamp, ID: int(w.stamp)})
	for _, p := range group[1:] {
		id := w.b.Send(o, p, "mcast")
		w.b.events[len(w.b.events)-1].Detail = detail
		w.b.Recv(p, id)
	}
	for _, p := range group {
		w.b.deliver(p, o, w.stamp)
	}
}

// step does one random thing that keeps the run clean.
func (w *world) step() {
	switch x := w.rng.IntN(100); {
	case x < 30:
		if c := w.idle(); c >= 0 {
			w.request(c)
		}
	case x < 50:
		if w.holder >= 0 {
			w.release()
		} else if len(w.queue) > 0 {
			w.grant()
		}
	case x < 60:
		w.multicast()
	case x < 75:
		p, q := w.rng.IntN(w.n), w.rng.IntN(w.n)
		if p != q {
			w.b.Recv(q, w.b.Send(p, q, "app"))
		}
	case x < 80:
		// A process waits for the first of two answers, and gets one.
		p := w.rng.IntN(w.n)
		a, c := (p+1)%w.n, (p+2)%w.n
		w.b.WaitAny(p, "query", a, c)
		w.b.Recv(p, w.b.Send(a, p, "answer"))
		w.b.WaitAny(p, "query")
	default:
		w.b.Internal(w.rng.IntN(w.n))
	}
}

// A plant breaks one property. now runs in the middle of the script, with
// the lock free and nobody waiting; end after the script; post on the
// finished events (after clocks and wall times are stripped). Each records
// in w.named the events the finding must name.
type plant struct {
	check    string
	now, end func(w *world)
	post     func(w *world, events []trace.Event)
	wall     bool // the violation shows in wall time only
}

var plants = []plant{
	{check: "clocks", post: func(w *world, events []trace.Event) {
		i := w.rng.IntN(len(events))
		ev := &events[i]
		if ev.VC == nil {
			ev.VC = make(trace.VC, w.n)
		} else {
			ev.VC = ev.VC.Clone()
		}
		ev.VC[w.rng.IntN(w.n)] += 7
		w.named = []trace.Ref{ev.Ref()}
	}},
	{check: "clock-skew", post: func(w *world, events []trace.Event) {
		// A receive stamped 5ms before its send: the receiver's clock is
		// behind.
		var recvs []int
		for i := range events {
			if events[i].Kind == trace.KindReceive {
				recvs = append(recvs, i)
			}
		}
		r := &events[recvs[w.rng.IntN(len(recvs))]]
		s := slices.IndexFunc(events, func(e trace.Event) bool { return e.Kind == trace.KindSend && e.Msg == r.Msg })
		if events[s].Wall == 0 {
			events[s].Wall = startWall
		}
		r.Wall = events[s].Wall - 5_000_000
		w.named = []trace.Ref{r.Ref()}
	}},
	{check: "mutex-causal", now: func(w *world) {
		// A client enters while another holds the lock, without a grant.
		w.request(w.idle())
		w.grant()
		q := w.idle()
		w.named = []trace.Ref{w.b.Enter(q, "cs"), w.b.Exit(q, "cs")}
		w.release()
	}},
	{check: "mutex-realtime", wall: true, now: func(w *world) {
		w.request(w.idle())
		w.grant()
		q := w.idle()
		w.named = []trace.Ref{w.b.Enter(q, "cs")}
		w.release()
		w.b.Exit(q, "cs")
	}},
	{check: "liveness", end: func(w *world) {
		w.named = []trace.Ref{w.b.Request(w.idle(), "cs")}
	}},
	{check: "fairness", now: func(w *world) {
		// P asks; its request is slow to reach the coordinator; Q hears
		// from P, asks, and its request arrives first.
		p := w.idle()
		q := w.idle(p)
		a := w.b.Request(p, "cs")
		slow := w.b.Send(p, 0, "request")
		w.b.Recv(q, w.b.Send(p, q, "app"))
		bq := w.b.Request(q, "cs")
		w.b.Recv(0, w.b.Send(q, 0, "request"))
		w.b.Recv(0, slow)
		w.queue = append(w.queue, q, p)
		w.waiting[p], w.waiting[q] = true, true
		w.named = []trace.Ref{a, bq}
		w.drain()
	}},
	{check: "starvation", now: func(w *world) {
		// The coordinator knows of P's request and serves N others first.
		p := w.idle()
		a := w.request(p)
		w.queue = nil
		for range w.n {
			c := w.idle(p)
			w.request(c)
			w.queue = []int{c}
			w.grant()
			w.release()
		}
		w.queue = []int{p}
		w.grant()
		w.release()
		w.named = []trace.Ref{a}
	}},
	{check: "deadlock", end: func(w *world) {
		a := w.idle()
		c := w.idle(a)
		w.b.Request(a, "r1")
		w.b.Enter(a, "r1")
		w.b.Request(c, "r2")
		w.b.Enter(c, "r2")
		w.named = []trace.Ref{w.b.Request(a, "r2"), w.b.Request(c, "r1")}
	}},
	{check: "deadlock-or", end: func(w *world) {
		a := w.rng.IntN(w.n)
		c, d := (a+1)%w.n, (a+2)%w.n
		w.named = []trace.Ref{w.b.WaitAny(a, "x", c, d), w.b.WaitAny(c, "x", a, d), w.b.WaitAny(d, "x", a, c)}
	}},
	{check: "agreement", end: func(w *world) {
		// A process decides another leader in the term already decided.
		p := w.rng.IntN(w.n - 1)
		q := (p + 1) % (w.n - 1)
		w.named = []trace.Ref{w.b.Leader(p, q, w.term)}
		w.b.on("lead")
	}},
	{check: "validity", end: func(w *world) {
		// A process decides for a leader its detector suspects (the weak
		// rule), or a lower id than the live highest (the strict one).
		p := w.rng.IntN(w.n - 1)
		if w.strict {
			w.named = []trace.Ref{w.b.Leader(p, w.n-2, w.term)}
		} else {
			w.b.emit(p, trace.KindSuspect, func(ev *trace.Event) { ev.Peer = w.leader })
			w.named = []trace.Ref{w.b.Leader(p, w.leader, w.term)}
		}
		w.b.on("lead")
	}},
	{check: "split-brain", end: func(w *world) {
		p := w.rng.IntN(w.n - 1)
		w.named = []trace.Ref{w.b.Leader(p, p, w.term+1)}
		w.b.on("lead")
	}},
	{check: "termination", end: func(w *world) {
		p := w.rng.IntN(w.n - 1)
		w.named = []trace.Ref{w.b.ElectionStart(p, w.term+1)}
		w.b.on("lead")
		w.b.Recv(w.leader, w.b.Send(p, w.leader, "election"))
		// The run goes on for longer than any election took: this one
		// is stuck, not in progress.
		w.b.wall += 100_000_000_000
		w.b.Internal(w.leader)
	}},
	{check: "total-order", now: func(w *world) {
		// Two multicasts to the same two members, delivered in opposite
		// orders.
		p := w.rng.IntN(w.n)
		q := (p + 1) % w.n
		var named []trace.Ref
		for k := range 2 {
			w.stamp++
			w.groups = append(w.groups, []int{p, q})
			detail := trace.EncodeDetail(trace.Message{Stamp: w.stamp, ID: int(w.stamp)})
			w.b.Recv(q, w.b.Send(p, q, "mcast"))
			w.b.events[len(w.b.events)-2].Detail = detail
			if k == 1 {
				named = append(named, w.b.deliver(q, p, w.stamp), w.b.deliver(q, p, w.stamp-1))
				named = append(named, w.b.deliver(p, p, w.stamp-1), w.b.deliver(p, p, w.stamp))
			}
		}
		w.named = named
	}},
	{check: "protocol", now: func(w *world) {
		// A program's line that is not valid node protocol.
		p := w.rng.IntN(w.n)
		ref := w.b.Internal(p)
		w.b.Event(ref).Detail = trace.EncodeDetail(trace.Failure{Text: fmt.Sprintf(`P%d: output line 3 {"type":"sned"}: unknown type "sned"`, p)})
		w.named = []trace.Ref{ref}
	}},
}

// generated is a run of the generator.
type generated struct {
	run    trace.Run
	events []trace.Event // in the order the reader gives them
	named  []trace.Ref
	what   string // how it was made, for failure messages
}

// generate scripts a run from seed, plants p in it (nil: a clean run),
// and strips and shuffles it.
func generate(seed uint64, p *plant) generated {
	rng := rand.New(rand.NewPCG(seed, 0x91a47))
	n := 3 + rng.IntN(62)
	w := newWorld(rng, n)
	w.strict = rng.IntN(2) == 0
	clocks, walls := rng.IntN(3) > 0, rng.IntN(3) > 0
	if p != nil && p.wall {
		walls = true
	}
	w.elect()
	steps := 40 + rng.IntN(200)
	at := rng.IntN(steps)
	for i := range steps {
		if i == at && p != nil && p.now != nil {
			w.drain()
			p.now(w)
		}
		w.step()
	}
	w.drain()
	if p != nil && p.end != nil {
		p.end(w)
	}
	events := slices.Clone(w.b.events)
	for i := range events {
		if !clocks {
			events[i].VC, events[i].Lamport = nil, 0
		}
		if !walls {
			events[i].Wall = 0
		}
	}
	if p != nil && p.post != nil {
		p.post(w, events)
	}
	// The rows in any order: the walk orders each process's by seq.
	rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
	run := w.b.Run(true)
	if w.strict {
		run.Params = []byte(`{"validity":"highest-id"}`)
	}
	what := fmt.Sprintf("seed %d: %d processes, %d events, clocks %v, wall times %v, validity strict %v", seed, n, len(events), clocks, walls, w.strict)
	return generated{run: run, events: events, named: w.named, what: what}
}

var plantCount = flag.Int("plants", 40, "runs the generator of planted violations makes per check (a tenth with -short)")

// plantSeeds is how many runs the generator makes per check.
func plantSeeds() int {
	if testing.Short() {
		return max(*plantCount/10, 1)
	}
	return *plantCount
}

// TestPlantedViolations: every violation planted is found by its check,
// and the finding names the planted events; the same runs without the
// plant are clean for every check.
func TestPlantedViolations(t *testing.T) {
	names := map[string]bool{}
	for _, p := range plants {
		names[p.check] = true
	}
	for _, c := range All {
		if !names[c.Name] {
			t.Errorf("no plant breaks %s", c.Name)
		}
	}
	var summary []string
	for _, p := range plants {
		found := 0
		for seed := uint64(1); seed <= uint64(plantSeeds()); seed++ {
			g := generate(seed, &p)
			results, err := Evaluate(g.run, &trace.SliceReader{Events: g.events}, All)
			if err != nil {
				t.Fatalf("%s, %s: %v", p.check, g.what, err)
			}
			r := results[slices.IndexFunc(results, func(r Result) bool { return r.Check == p.check })]
			if r.Verdict != Violated {
				t.Errorf("%s, %s: %s, want violated: %s", p.check, g.what, r.Verdict, r.Note)
				continue
			}
			if !slices.ContainsFunc(r.Findings, func(f Finding) bool { return containsAll(f.Events, g.named) }) {
				t.Errorf("%s, %s: no finding names %v: %v", p.check, g.what, g.named, r.Findings)
				continue
			}
			found++
		}
		summary = append(summary, fmt.Sprintf("%s %d/%d", p.check, found, plantSeeds()))
	}
	t.Logf("planted violations found and named: %s", strings.Join(summary, ", "))
}

// TestCleanGenerated: the generator's clean runs pass every check (a check
// without the wall times it needs is skipped).
func TestCleanGenerated(t *testing.T) {
	for seed := uint64(1); seed <= uint64(2*plantSeeds()); seed++ {
		g := generate(seed, nil)
		results, err := Evaluate(g.run, &trace.SliceReader{Events: g.events}, All)
		if err != nil {
			t.Fatalf("%s: %v", g.what, err)
		}
		for _, r := range results {
			if r.Verdict != OK && r.Verdict != Skipped && r.Verdict != NotApplicable {
				t.Errorf("%s: false alarm: %s %s: %v %s", g.what, r.Check, r.Verdict, r.Findings, r.Note)
			}
		}
	}
}

func containsAll(have, want []trace.Ref) bool {
	for _, r := range want {
		if !slices.Contains(have, r) {
			return false
		}
	}
	return true
}

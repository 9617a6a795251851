package algotest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// The bench's own tests run it on machines that break one property each:
// it must report each with the check (or the contract) that names it.

var mutexChecks = []string{"mutex-causal", "mutex-realtime", "liveness", "deadlock"}

func spec(name string, kind algo.Kind, props []string, f func(algo.Config) algo.Machine) algo.Spec {
	return algo.Spec{Name: name, Kind: kind, Properties: props,
		New: func(c algo.Config) (algo.Machine, error) { return f(c), nil }}
}

// failure returns err's *Failure, failing t if it is none.
func failure(t *testing.T, err error) *Failure {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v, want a *Failure", err)
	}
	return f
}

// greedy enters as soon as it is asked: no mutual exclusion at all.
type greedy struct{}

func (greedy) Step(in algo.Input) []algo.Output {
	if in.Kind == algo.Request {
		return []algo.Output{algo.EnterCS()}
	}
	return nil
}

func TestRunFindsSafetyViolation(t *testing.T) {
	_, err := Run(spec("greedy", algo.MutualExclusion, mutexChecks, func(algo.Config) algo.Machine { return greedy{} }),
		Options{N: 3, Seed: 1, Think: 1, Hold: 10 * time.Millisecond})
	if f := failure(t, err); !f.Violates(analyze.MutexCausal) || !f.Violates(analyze.MutexRealtime) || f.Kind != "mutex-causal" {
		t.Fatalf("err = %v, want mutual exclusion violated", err)
	}
}

func TestRunOneNodeGreedyIsFine(t *testing.T) {
	res, err := Run(spec("greedy", algo.MutualExclusion, mutexChecks, func(algo.Config) algo.Machine { return greedy{} }), Options{N: 1, Seed: 7, Entries: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Entered[0] != 5 || res.Messages != 0 {
		t.Fatalf("entered %v, messages %d", res.Entered, res.Messages)
	}
}

// sulky asks its right neighbour for permission and never grants any: every
// request blocks, and the wait-for graph is the ring.
type sulky struct{ id, n int }

func (s sulky) Step(in algo.Input) []algo.Output {
	if in.Kind == algo.Request {
		return []algo.Output{algo.SendTo((s.id+1)%s.n, algo.Msg{Type: "ask"}), algo.WaitFor([]int{(s.id + 1) % s.n})}
	}
	return nil
}

func TestRunFindsDeadlockCycle(t *testing.T) {
	_, err := Run(spec("sulky", algo.MutualExclusion, mutexChecks, func(c algo.Config) algo.Machine { return sulky{c.ID, c.N} }),
		Options{N: 4, Seed: 1})
	f := failure(t, err)
	if !f.Violates(analyze.Liveness) || !f.Stuck || !f.Violates(analyze.Deadlock) {
		t.Fatalf("err = %v, want a stuck run with a deadlock", err)
	}
	if !slices.Equal(f.Cycle, []int{0, 1, 2, 3}) {
		t.Fatalf("cycle %v, want the 4-ring", f.Cycle)
	}
}

// cheat enters without a request: the contract, not a property, is broken.
type cheat struct{}

func (cheat) Step(in algo.Input) []algo.Output {
	if in.Kind == algo.Start {
		return []algo.Output{algo.EnterCS()}
	}
	return nil
}

func TestRunFindsContractBreach(t *testing.T) {
	_, err := Run(spec("cheat", algo.MutualExclusion, mutexChecks, func(algo.Config) algo.Machine { return cheat{} }), Options{N: 2, Seed: 1})
	if f := failure(t, err); f.Kind != Contract || !strings.Contains(f.Msg, "without a pending request") {
		t.Fatalf("err = %v, want a contract failure", err)
	}
}

// amnesiac enters whenever asked and persists a count of its entries; on
// Recover it takes back the count it persisted.
type amnesiac struct {
	entries   uint64
	recovered []uint64
}

func (a *amnesiac) Step(in algo.Input) []algo.Output {
	switch in.Kind {
	case algo.Recover:
		a.entries = in.Msg.Stamp
		a.recovered = append(a.recovered, in.Msg.Stamp)
	case algo.Request:
		a.entries++
		return []algo.Output{{Kind: algo.Persist, Msg: algo.Msg{Type: "count", Stamp: a.entries}}, algo.EnterCS()}
	}
	return nil
}

func TestRunCrashRecoversPersisted(t *testing.T) {
	var machines []*amnesiac
	s := spec("amnesiac", algo.MutualExclusion, mutexChecks, func(c algo.Config) algo.Machine {
		m := &amnesiac{}
		if c.Rand != nil { // not a machine built to validate parameters
			machines = append(machines, m)
		}
		return m
	})
	res, err := Run(s, Options{N: 1, Seed: 5, Entries: 6, Think: 10 * time.Millisecond, Hold: 1,
		Crashes: []Crash{{Proc: 0, At: 25 * time.Millisecond, RecoverAfter: time.Millisecond}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(machines) != 2 {
		t.Fatalf("%d machines built, want 2 (one fresh after the restart)", len(machines))
	}
	got := machines[1].recovered
	if len(got) != 1 || got[0] == 0 || got[0] != machines[0].entries {
		t.Fatalf("recovered %v, want the first machine's last persisted count %d", got, machines[0].entries)
	}
	if !slices.Equal(res.Faults, []string{"crash:0@25ms", "recover:0@26ms"}) {
		t.Fatalf("faults %v", res.Faults)
	}
}

// pinger sends a ping to P0 with each entry; P0 counts the pings it gets.
type pinger struct{ got *int }

func (p pinger) Step(in algo.Input) []algo.Output {
	switch in.Kind {
	case algo.Receive:
		*p.got++
	case algo.Request:
		return []algo.Output{algo.SendTo(0, algo.Msg{Type: "ping"}), algo.EnterCS()}
	}
	return nil
}

// TestRunCrashLosesMessages: what is sent to a node that is down is lost,
// and a node that never recovers stops counting for liveness.
func TestRunCrashLosesMessages(t *testing.T) {
	for _, tc := range []struct {
		crashes []Crash
		want    int
	}{
		{nil, 3},
		{[]Crash{{Proc: 0, At: 0}}, 0},
		{[]Crash{{Proc: 0, At: 0, RecoverAfter: time.Second}}, 0}, // back after the pings
	} {
		got := 0
		s := spec("pinger", algo.MutualExclusion, mutexChecks, func(algo.Config) algo.Machine { return pinger{&got} })
		res, err := Run(s, Options{N: 2, Seed: 1, Requesters: []int{1}, Crashes: tc.crashes})
		if err != nil {
			t.Fatalf("%v: %v", tc.crashes, err)
		}
		if got != tc.want || res.Lost != 3-tc.want {
			t.Errorf("%v: P0 got %d pings (%d lost), want %d", tc.crashes, got, res.Lost, tc.want)
		}
	}
	s := spec("greedy", algo.MutualExclusion, mutexChecks, func(algo.Config) algo.Machine { return greedy{} })
	if _, err := Run(s, Options{N: 2, Seed: 1, Crashes: []Crash{{Proc: 2, At: 5}}}); err == nil {
		t.Fatal("a crash of a node that does not exist was accepted")
	}
}

var electionChecks = []string{"agreement", "validity", "split-brain", "termination"}

// crowned names a fixed leader at Start and Recover; on Recover it also
// reports (as a Note) the value it got back.
type crowned struct{ leader, id int }

func (c crowned) Step(in algo.Input) []algo.Output {
	switch in.Kind {
	case algo.Start:
		return []algo.Output{
			{Kind: algo.Leader, Leader: c.leader},
			{Kind: algo.Persist, Msg: algo.Msg{Type: "mark", ID: c.id + 100}},
			algo.SendTo((c.id+1)%3, algo.Msg{Type: "hello"}),
		}
	case algo.Recover:
		return []algo.Output{{Kind: algo.Leader, Leader: c.leader}, algo.NoteOut("got %s", FormatMsg(in.Msg))}
	}
	return nil
}

func crownedSpec(leader func(id, n int) int) algo.Spec {
	s := spec("crowned", algo.Election, electionChecks, func(c algo.Config) algo.Machine { return crowned{leader(c.ID, c.N), c.ID} })
	s.Validity = analyze.ValidityHighestID // the highest live id leads, as bully's
	return s
}

func TestRunElectionChecks(t *testing.T) {
	top := crownedSpec(func(_, n int) int { return n - 1 })
	opt := Options{N: 3, Seed: 1, Settle: time.Millisecond}
	if _, err := Run(top, opt); err != nil {
		t.Fatalf("a fixed highest leader: %v", err)
	}
	for _, tc := range []struct {
		name   string
		spec   algo.Spec
		faults []Crash
		want   *analyze.Check
	}{
		{"everyone leads itself", crownedSpec(func(id, _ int) int { return id }), nil, analyze.SplitBrain},
		{"P0 leads", crownedSpec(func(_, _ int) int { return 0 }), nil, analyze.Validity},
		// The leader crashes and nobody elects another: the others still
		// follow it.
		{"crashed leader", top, []Crash{{Proc: TargetLeader, At: 5 * time.Millisecond}}, nil},
		{"P2 follows P1", crownedSpec(func(id, _ int) int { return []int{2, 2, 1}[id] }), nil, analyze.Agreement},
	} {
		o := opt
		o.Crashes = tc.faults
		_, err := Run(tc.spec, o)
		f := failure(t, err)
		if tc.want == nil && f.Kind != Settled || tc.want != nil && !f.Violates(tc.want) {
			t.Errorf("%s: err = %v, want %v violated", tc.name, err, tc.want)
		}
	}
	// Validity allowed, the run must still settle on the highest live
	// process.
	o := opt
	o.Allow = []string{"validity"}
	if _, err := Run(crownedSpec(func(_, _ int) int { return 0 }), o); failure(t, err).Kind != Settled {
		t.Fatalf("P0 leads, validity allowed: %v, want the run not settled", err)
	}
}

func TestRunElectionCrashRecover(t *testing.T) {
	res, err := Run(crownedSpec(func(_, n int) int { return n - 1 }), Options{N: 3, Seed: 2, Settle: time.Millisecond,
		Crashes: []Crash{{Proc: 1, At: 0, RecoverAfter: 2 * time.Millisecond}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost != 1 || !slices.Equal(res.Faults, []string{"crash:1@0s", "recover:1@2ms"}) {
		t.Fatalf("lost %d, faults %v: want P0's hello to P1 lost", res.Lost, res.Faults)
	}
	if !slices.ContainsFunc(res.Events, func(ev trace.Event) bool {
		return ev.Proc == 1 && strings.Contains(string(ev.Detail), "got mark id=101")
	}) {
		t.Fatalf("P1 did not get back what it persisted")
	}
}

func TestBench(t *testing.T) {
	b := NewBench(t, crownedSpec(func(_, n int) int { return n - 1 }), 3, nil)
	b.Start()
	b.Crash(1)
	b.Output()
	b.Stabilize()
	if got := b.Output(); !slices.Contains(got, "lost 0->1 hello (P1 is down)") {
		t.Fatalf("output %q: want the message to P1 lost", got)
	}
	b.Step(runner.Step{Kind: runner.StepRecover, Proc: 1})
	if got := b.Output(); !slices.Equal(got, []string{"P1 recover stored=[mark id=101] @6", "  leader 2", "  note: got mark id=101"}) {
		t.Fatalf("recover: %q", got)
	}
	if l := b.Leaders(); !slices.Equal(l, []int{2, 2, 2}) {
		t.Fatalf("leaders %v", l)
	}
	s := &script{spec: crownedSpec(func(_, n int) int { return n - 1 }), b: newBenchOrFail(t)}
	if got := s.exec("timer P0 - nothing"); !slices.Equal(got, []string{`error: step 1 (timer P0 - nothing): P0 has no timer "nothing" set`}) {
		t.Fatalf("fired a timer that is not armed: %q", got)
	}
	if got := s.exec("frobnicate"); len(got) != 1 || !strings.HasPrefix(got[0], `error: unknown command "frobnicate" (known: new, advance, beat,`) {
		t.Fatalf("unknown command: %q", got)
	}
	// The steps are runner.World's, read by runner.ParseStep: a
	// counterexample of dmx explore reads as a script.
	for cmd, want := range map[string]string{
		"timer x y":              `error: step "timer x y": want timer PROCESS RESOURCE NAME (RESOURCE - for none) (usage: timer P<i> RESOURCE NAME)`,
		"deliver P0>P1 bogus=1":  "error: deliver: unknown argument bogus= (usage: deliver P<i>>P<j> [#K])",
		"deliver P0>P1":          "error: step 1 (deliver P0>P1): 0 messages in flight from P0 to P1",
		"crash P0 P1":            `error: step "crash P0 P1": want crash PROCESS (usage: crash P<i>)`,
		"start P9":               "error: no process P9 (0..2)",
		"request P7 cs":          "error: step 1 (request P7 cs): no process P7 (0..2)",
		"inject P0-P1 hello":     `error: step "deliver P0-P1": want deliver FROM>TO, e.g. deliver P0>P1 (usage: inject P<i>>P<j> TYPE [stamp=S] [id=I] [term=T] [vals=a,b,...] [clock=C])`,
		"inject-timer P0 - wake": "",
	} {
		got := s.exec(cmd)
		if want == "" && !slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, "error") }) {
			continue
		}
		if !slices.Equal(got, []string{want}) {
			t.Errorf("%s: %q, want %q", cmd, got, want)
		}
	}
	// A schedule as explore prints it, step by step.
	s = &script{spec: crownedSpec(func(_, n int) int { return n - 1 }), b: newBenchOrFail(t)}
	s.exec("start")
	if got := s.exec("pending"); !slices.Equal(got, []string{"deliver P0>P1: hello", "deliver P1>P2: hello", "deliver P2>P0: hello"}) {
		t.Fatalf("pending: %q", got)
	}
	for _, step := range []string{"deliver P2>P0", "deliver P0>P1", "crash P1", "recover P1"} {
		if got := s.exec(step); len(got) == 0 || strings.HasPrefix(got[len(got)-1], "error") {
			t.Fatalf("%s: %q", step, got)
		}
	}
}

func newBenchOrFail(t *testing.T) *Bench {
	b, err := newBench(crownedSpec(func(_, n int) int { return n - 1 }), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// eager multicasts to everyone, itself included, and delivers each message
// the moment it arrives: no agreement on the order at all.
type eager struct{ id, n, seq int }

func (e *eager) Step(in algo.Input) []algo.Output {
	switch in.Kind {
	case algo.Request:
		e.seq++
		var out []algo.Output
		for j := 0; j < e.n; j++ {
			out = append(out, algo.SendTo(j, algo.Msg{Type: "m", Stamp: in.Clock, ID: e.seq}))
		}
		return out
	case algo.Receive:
		return []algo.Output{{Kind: algo.MulticastDelivered, From: in.From, Msg: in.Msg}}
	}
	return nil
}

// mute multicasts and never delivers.
type mute struct{ eager }

func (m *mute) Step(in algo.Input) []algo.Output {
	if in.Kind == algo.Receive {
		return nil
	}
	return m.eager.Step(in)
}

var multicastChecks = []string{"total-order"}

func TestRunMulticastFindsOrderViolation(t *testing.T) {
	s := spec("eager", algo.Multicast, multicastChecks, func(c algo.Config) algo.Machine { return &eager{id: c.ID, n: c.N} })
	for seed := uint64(1); seed <= 20; seed++ {
		_, err := Run(s, Options{N: 3, Seed: seed, FIFO: true, Think: 1})
		var f *Failure
		if errors.As(err, &f) && f.Violates(analyze.TotalOrder) {
			return
		}
	}
	t.Fatal("eager delivery never broke the order in 20 seeds")
}

func TestRunMulticastCountsAndDelivery(t *testing.T) {
	s := spec("eager", algo.Multicast, multicastChecks, func(c algo.Config) algo.Machine { return &eager{id: c.ID, n: c.N} })
	res, err := Run(s, Options{N: 1, Seed: 3, Entries: 4})
	if err != nil {
		t.Fatal(err)
	}
	if res.Multicasts[0] != 4 || len(res.Delivered[0]) != 4 || res.Messages != 4 || res.SelfSends != 4 {
		t.Fatalf("result %+v", res)
	}
	s = spec("mute", algo.Multicast, multicastChecks, func(c algo.Config) algo.Machine { return &mute{eager{id: c.ID, n: c.N}} })
	_, err = Run(s, Options{N: 2, Seed: 3})
	if f := failure(t, err); f.Kind != Contract || !strings.Contains(f.Msg, "delivered by any process") {
		t.Fatalf("err = %v, want multicasts delivered by nobody", err)
	}
}

func TestParseScript(t *testing.T) {
	blocks, trailer, err := parseScript("# c\n\nnew n=2\n----\nok\n\nstate\n----\n\n# end\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0].cmd != "new n=2" || !slices.Equal(blocks[0].want, []string{"ok"}) ||
		blocks[1].want != nil || !slices.Equal(trailer, []string{"", "# end"}) {
		t.Fatalf("blocks %+v trailer %q", blocks, trailer)
	}
	if _, _, err := parseScript("new n=2\nok\n"); err == nil {
		t.Fatal("a command without ---- parsed")
	}
}

// TestCounterexampleAsScript: the schedule dmx explore prints for
// Lamport's algorithm on channels that reorder (docs/tour.md) is a script
// as it stands, line by line: step 4, P0's reply overtaking its own
// request, lets both processes enter (the algorithm assumes FIFO
// channels: package lamport's testdata/not_fifo.txt).
func TestCounterexampleAsScript(t *testing.T) {
	s := &script{spec: *registry.Lookup("lamport")}
	s.exec("new n=2")
	s.exec("start")
	var entered []string
	for _, step := range []string{"request P0 cs", "request P1 cs", "deliver P1>P0", "deliver P0>P1 #1", "deliver P0>P1", "deliver P1>P0"} {
		for _, l := range s.exec(step) {
			if strings.HasPrefix(l, "error") {
				t.Fatalf("%s: %s", step, l)
			}
			if l == "  enter" {
				entered = append(entered, step)
			}
		}
	}
	if len(entered) != 2 {
		t.Fatalf("entries at %q: want both processes in the critical section", entered)
	}
}

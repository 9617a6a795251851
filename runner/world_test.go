package runner_test

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/deep"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/replay"
	"github.com/dmxlab/dmx/trace"
)

func worldPlan(name string, n, entries int, params map[string]string) runner.Plan {
	p := runner.NewPlan(runner.DriverSim)
	p.Spec, p.N, p.Seed, p.Params = registry.Lookup(name), n, 3, params
	p.Workload.Entries = entries
	return p
}

// walk takes random enabled steps (and, with crashes, a crash and a
// recovery of P1; on raw channels, a loss instead of every fourth
// delivery) until nothing more can happen or limit steps.
func walk(t *testing.T, p runner.Plan, seed uint64, limit int, crashes bool) []runner.Step {
	t.Helper()
	w, err := runner.NewWorld(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 0))
	var sched, buf []runner.Step
	for len(sched) < limit {
		buf = w.Enabled(buf)
		if crashes && len(sched) == 5 {
			buf = append(buf[:0], runner.Step{Kind: runner.StepCrash, Proc: 1})
		}
		if crashes && len(sched) == 9 {
			buf = append(buf[:0], runner.Step{Kind: runner.StepRecover, Proc: 1})
		}
		if len(buf) == 0 {
			break
		}
		s := buf[r.IntN(len(buf))]
		if s.Kind == runner.StepDeliver && p.Channels == runner.ChannelsRaw && len(sched)%4 == 3 {
			s.Kind = runner.StepLose
		}
		if err := w.Apply(s); err != nil {
			t.Fatalf("step %v: %v", s, err)
		}
		sched = append(sched, s)
	}
	return sched
}

// TestScheduleReproduces: a schedule taken at random through a World,
// given to the simulator (Plan.Schedule), records the same trace each time,
// a trace whose steps' text form reads back, that dmx replay reproduces,
// and whose run row gives the schedule back.
func TestScheduleReproduces(t *testing.T) {
	for _, tc := range []struct {
		algo    string
		params  map[string]string
		crashes bool
		raw     bool
	}{
		{"ricart-agrawala", nil, false, false},
		{"lamport", nil, true, false},
		{"majority", map[string]string{"forget": "true"}, true, false},
		{"tomcast", nil, false, false},
		{"bully", nil, false, false},
		{"central", nil, false, true},
		{"maekawa", nil, true, true},
	} {
		name := tc.algo
		if tc.raw {
			name += "/losses"
		}
		t.Run(name, func(t *testing.T) {
			p := worldPlan(tc.algo, 3, 2, tc.params)
			if tc.raw {
				p.Channels = runner.ChannelsRaw
			}
			sched := walk(t, p, 1, 200, tc.crashes)
			lost := 0
			for _, s := range sched {
				if s.Kind == runner.StepLose {
					lost++
				}
			}
			if tc.raw && lost == 0 {
				t.Fatalf("no message lost in %v", sched)
			}
			var texts []string
			for _, s := range sched {
				texts = append(texts, s.String())
			}
			back, err := runner.ParseSteps(texts)
			if err != nil || !reflect.DeepEqual(back, sched) {
				t.Fatalf("steps read back as %v (%v), want %v", back, err, sched)
			}
			p.Schedule = sched
			var a, b runner.Collector
			res, err := runner.Simulate(p, &a, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := runner.Simulate(p, &b, nil); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.Events, b.Events) || res.Events != int64(len(a.Events)) {
				t.Fatal("the same schedule recorded two traces")
			}
			row := p.RunRow()
			row.ID, row.Complete = 1, res.Complete
			rr, err := replay.Run(row, replay.Events(a.Events), replay.Options{Lookup: registry.Lookup})
			if err != nil || !rr.Matches() || rr.Events != int64(len(a.Events)) {
				t.Fatalf("replay of the scheduled run: %v %+v", err, rr)
			}
			got, err := runner.PlanFromRun(row, registry.Lookup)
			if err != nil || !reflect.DeepEqual(got.Schedule, sched) {
				t.Fatalf("run row gives schedule %v (%v)", got.Schedule, err)
			}
		})
	}
}

// TestWorldClone: a clone goes its own way: the same steps give the same
// fingerprint in both, a step in one leaves the other as it was.
func TestWorldClone(t *testing.T) {
	p := worldPlan("maekawa", 4, 2, nil)
	w, err := runner.NewWorld(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	fp := func(w *runner.World) deep.Fingerprint {
		var h deep.Hasher
		w.Fingerprint(&h)
		return h.Sum()
	}
	var buf []runner.Step
	for i := 0; i < 6; i++ {
		buf = w.Enabled(buf)
		if err := w.Apply(buf[len(buf)-1]); err != nil {
			t.Fatal(err)
		}
	}
	c, err := w.Clone()
	if err != nil {
		t.Fatal(err)
	}
	base := fp(w)
	if fp(c) != base {
		t.Fatal("a clone hashes differently")
	}
	buf = c.Enabled(buf)
	s := buf[0]
	if err := c.Apply(s); err != nil {
		t.Fatal(err)
	}
	if fp(w) != base || fp(c) == base {
		t.Fatalf("after %v in the clone: original changed %v, clone changed %v", s, fp(w) != base, fp(c) != base)
	}
	if err := w.Apply(s); err != nil {
		t.Fatal(err)
	}
	if fp(w) != fp(c) {
		t.Fatalf("the same step %v in both: fingerprints differ", s)
	}
}

// TestWorldShift: a Lamport run whose every clock starts d higher is the
// same run shifted by d; with Shift the two hash alike at every step of
// the same schedule (the translation reduction of dmx explore), without it
// they do not. Random schedules, one printed seed.
func TestWorldShift(t *testing.T) {
	const seed = 7
	r := rand.New(rand.NewPCG(seed, 0))
	p := worldPlan("lamport", 3, 2, nil)
	fp := func(w *runner.World, shift bool) deep.Fingerprint {
		var h deep.Hasher
		w.Shift = shift
		w.Fingerprint(&h)
		return h.Sum()
	}
	var bufA, bufB []runner.Step
	for walk := 0; walk < 20; walk++ {
		a, err := runner.NewWorld(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := runner.NewWorld(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := 1 + r.Uint64N(100)
		for i := range p.N {
			b.Node(i).RaiseLamport(b.Node(i).Lamport() + d)
		}
		for step := 0; ; step++ {
			if fp(a, true) != fp(b, true) {
				t.Fatalf("seed %d walk %d step %d: a run shifted by %d hashes differently", seed, walk, step, d)
			}
			if fp(a, false) == fp(b, false) {
				t.Fatalf("seed %d walk %d step %d: without Shift, a run shifted by %d hashes alike", seed, walk, step, d)
			}
			bufA, bufB = a.Enabled(bufA), b.Enabled(bufB)
			if !reflect.DeepEqual(bufA, bufB) {
				t.Fatalf("seed %d walk %d step %d: shifted runs enable %v and %v", seed, walk, step, bufA, bufB)
			}
			if len(bufA) == 0 {
				break
			}
			s := bufA[r.IntN(len(bufA))]
			if err := a.Apply(s); err != nil {
				t.Fatal(err)
			}
			if err := b.Apply(s); err != nil {
				t.Fatal(err)
			}
		}
		if !a.Quiescent() {
			t.Fatalf("seed %d walk %d: the run did not end", seed, walk)
		}
	}
}

// TestScheduleErrors: a schedule that cannot be carried out says which
// step and why.
func TestScheduleErrors(t *testing.T) {
	for _, tc := range []struct {
		steps []string
		want  string
	}{
		{[]string{"deliver P0>P1"}, "step 1 (deliver P0>P1): 0 messages in flight from P0 to P1"},
		{[]string{"request P1 cs", "request P1 cs"}, "step 2 (request P1 cs): P1 has asked for cs already"},
		{[]string{"release P2 cs"}, "P2 does not hold cs"},
		{[]string{"recover P0"}, "not down"},
		{[]string{"request P0 printer"}, `no resource "printer"`},
		{[]string{"timer P0 cs backoff"}, "no timer"},
		{[]string{"request P0 cs", "lose P0>P1"}, "step 2 (lose P0>P1): channels are reliable"},
	} {
		p := worldPlan("ricart-agrawala", 3, 1, nil)
		steps, err := runner.ParseSteps(tc.steps)
		if err != nil {
			t.Fatal(err)
		}
		p.Schedule = steps
		_, err = runner.Simulate(p, &runner.Collector{}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.steps, err, tc.want)
		}
	}
	for _, bad := range []string{"deliver P0-P1", "deliver P0>P1 2", "timer P1 backoff", "jump P1", "crash Px", "request P1", "lose P0", "lose P0>P1 x"} {
		if _, err := runner.ParseStep(bad); err == nil {
			t.Errorf("ParseStep(%q) accepted", bad)
		}
	}
}

// TestNewScenario: the scenario of a plan applies back to the same plan,
// schedule included.
func TestNewScenario(t *testing.T) {
	p := worldPlan("lamport", 3, 2, map[string]string{"x": "y"})
	p.Sim.Reorder = true
	p.Channels = runner.ChannelsRaw
	p.Workload.Resources = []string{"a", "b"}
	p.Schedule = walk(t, worldPlan("lamport", 3, 2, nil), 4, 20, false)
	p.Params = nil
	sc := runner.NewScenario(p)
	q := runner.NewPlan(runner.DriverSim)
	q.Spec = p.Spec
	if err := sc.Apply(&q, nil); err != nil {
		t.Fatal(err)
	}
	q.Scenario = nil
	// With a schedule, the times are the scenario's to leave out.
	q.Workload.Think, q.Workload.Hold, q.Sim.Delay = p.Workload.Think, p.Workload.Hold, p.Sim.Delay
	if !reflect.DeepEqual(p.WithDefaults(), q.WithDefaults()) {
		t.Fatalf("scenario %+v applies to\n%+v, want\n%+v", sc, q.WithDefaults(), p.WithDefaults())
	}
}

// TestHandWorld: a world stepped by hand starts only the processes told,
// keeps its clock until a timer fires (at its due time) or Advance moves
// it, takes requests outside any workload, lets any message in flight
// arrive, and takes what only a test gives; a plan's world refuses those.
func TestHandWorld(t *testing.T) {
	w, err := runner.NewHandWorld(*registry.Lookup("bully"), 3, map[string]string{"fd-period": "0", "initiators": "2"})
	if err != nil {
		t.Fatal(err)
	}
	var sends int
	w.Observe = func(ev *trace.Event) {
		if ev.Kind == trace.KindSend {
			sends++
		}
	}
	crash := runner.Step{Kind: runner.StepCrash, Proc: 1}
	if err := w.Can(crash); err == nil || !strings.Contains(err.Error(), "has not started") {
		t.Fatalf("crash before the start: %v", err)
	}
	for p := range 3 {
		if err := w.Start(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Start(0); err == nil {
		t.Fatal("P0 started twice")
	}
	answer := runner.TimerRef{Name: "answer"}
	due, ok := w.Due(2, answer)
	if !ok || due <= 0 || w.Now() != 0 {
		t.Fatalf("P2's answer timer due %v (%v), now %v", due, ok, w.Now())
	}
	if err := w.InjectTimer(2, answer); err == nil {
		t.Fatal("a set timer injected")
	}
	if err := w.Apply(runner.Step{Kind: runner.StepTimer, Proc: 2, Timer: "answer"}); err != nil {
		t.Fatal(err)
	}
	if w.Now() != due || sends != 2 || len(w.InFlight(2, 0)) != 1 {
		t.Fatalf("now %v (want %v), %d sends", w.Now(), due, sends)
	}
	if err := w.Advance(time.Millisecond); err != nil || w.Now() != due+time.Millisecond {
		t.Fatalf("advance: %v, now %v", err, w.Now())
	}
	if err := w.InjectTimer(1, answer); err != nil {
		t.Fatal(err)
	}
	if err := w.Inject(&runner.Envelope{ID: -1, From: 0, To: 1, VC: make(trace.VC, 3), Msg: algo.Msg{Type: "election", Term: 1}}); err != nil {
		t.Fatal(err)
	}
	plan, err := runner.NewWorld(worldPlan("central", 2, 1, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Start(0); err == nil || plan.Advance(time.Second) == nil || plan.InjectTimer(0, answer) == nil {
		t.Fatal("a plan's world took what only a world stepped by hand takes")
	}
}

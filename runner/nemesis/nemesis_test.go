package nemesis

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
)

func plan(t *testing.T, name string, n int) runner.Plan {
	t.Helper()
	p := runner.NewPlan(runner.DriverSim)
	p.Spec = registry.Lookup(name)
	if p.Spec == nil {
		t.Fatalf("no algorithm %s", name)
	}
	p.N = n
	return p
}

func texts(fs []runner.Fault) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

// TestSameSeedSameSchedule: a seed's schedule depends on the seed, the
// plan and the spec alone; other seeds draw others.
func TestSameSeedSameSchedule(t *testing.T) {
	p := plan(t, "bully", 5)
	sp, err := Parse("random")
	if err != nil {
		t.Fatal(err)
	}
	h := Horizon(p)
	distinct, nonEmpty := map[string]bool{}, 0
	for seed := uint64(1); seed <= 50; seed++ {
		a, err := sp.Draw(p, h, seed)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := sp.Draw(p, h, seed)
		if !slices.Equal(texts(a), texts(b)) {
			t.Fatalf("seed %d: two draws differ:\n%v\n%v", seed, texts(a), texts(b))
		}
		if len(a) > 0 {
			nonEmpty++
			distinct[strings.Join(texts(a), ",")] = true
		}
		q := p
		q.Faults = a
		if err := q.Validate(); err != nil {
			t.Errorf("seed %d: schedule %v: %v", seed, texts(a), err)
		}
		// What runs.faults stores parses back to the same schedule.
		back, err := runner.ParseFaults(strings.Join(texts(a), ","))
		if err != nil || !slices.Equal(texts(back), texts(a)) {
			t.Errorf("seed %d: %v does not read back (%v): %v", seed, texts(a), err, texts(back))
		}
	}
	if len(distinct) != nonEmpty || nonEmpty < 20 {
		t.Errorf("50 seeds drew %d schedules with faults, %d distinct", nonEmpty, len(distinct))
	}
}

// TestGolden pins the schedules of a few seeds: a change of the drawing
// changes what every recorded sweep's seeds mean, and must be seen.
func TestGolden(t *testing.T) {
	p := plan(t, "ricart-agrawala", 5)
	sp, err := Parse("pause:every=20ms:for=5ms,partition:every=40ms,loss:rate=30%:every=50ms")
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for seed := uint64(1); seed <= 3; seed++ {
		fs, err := sp.Draw(p, 100*time.Millisecond, seed)
		if err != nil {
			t.Fatal(err)
		}
		got += fmt.Sprintf("%d: %s\n", seed, strings.Join(texts(fs), ","))
	}
	want := `1: pause:3@7.5ms-12.5ms,pause:2@13.3ms-18.3ms,pause:0@20.9ms-25.9ms,pause:3@23.2ms-28.2ms,pause:0@37.8ms-42.8ms,pause:4@40.7ms-45.7ms,pause:2@75.4ms-80.4ms,pause:4@80.2ms-85.2ms,pause:2@81.5ms-86.5ms,loss:30%@12.4ms-25.6ms
2: pause:3@7.9ms-12.9ms,pause:4@16.4ms-21.4ms,pause:4@20.5ms-25.5ms,pause:3@43.8ms-48.8ms,pause:2@98.4ms-103.4ms
3: pause:4@23.5ms-28.5ms,pause:0@60.7ms-65.7ms,pause:1@63.7ms-68.7ms,pause:3@71.3ms-76.3ms,pause:0@76.8ms-81.8ms,pause:0@84.2ms-89.2ms,partition:0+1+3@9.3ms-33.3ms,partition:2+3@38.4ms-58.3ms,partition:0@41.1ms-46.7ms,partition:0+2+3@91.1ms-98.8ms,loss:30%@16.9ms-22ms,loss:30%@24.6ms-38.7ms,loss:30%@30.2ms-40.3ms,loss:30%@51.4ms-66.7ms
`
	if got != want {
		t.Errorf("schedules:\n%s\nwant:\n%s", got, want)
	}
}

// TestMeanRate: without every=, a run gets one fault on average over the
// spec's kinds (a Poisson process of mean gap horizon x kinds each).
func TestMeanRate(t *testing.T) {
	p := plan(t, "ricart-agrawala", 5)
	sp, _ := Parse("pause,loss")
	h := Horizon(p)
	total, none := 0, 0
	const seeds = 2000
	for seed := uint64(1); seed <= seeds; seed++ {
		fs, _ := sp.Draw(p, h, seed)
		total += len(fs)
		if len(fs) == 0 {
			none++
		}
	}
	// Mean 1 (two kinds of mean 1/2 each); no fault with probability 1/e.
	if m := float64(total) / seeds; m < 0.9 || m > 1.1 {
		t.Errorf("mean %.3f faults per run, want about 1", m)
	}
	if f := float64(none) / seeds; f < 0.33 || f > 0.41 {
		t.Errorf("%.3f of runs without a fault, want about 0.37", f)
	}
}

func TestParseAndString(t *testing.T) {
	for _, s := range []string{
		"random",
		"pause",
		"pause:every=1s:for=100ms-500ms:who=leader,partition:for=200ms",
		"restart:who=2:max=3:amnesia",
		"loss:rate=5%,duplicate:rate=50%,delay:by=1ms-5ms,reorder:by=exp=2ms,skew:by=5ms",
		"crash:who=cs,isolate:who=token,cut",
	} {
		sp, err := Parse(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		if sp.String() != s {
			t.Errorf("%s prints as %s", s, sp.String())
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "empty nemesis"},
		{"flood", `unknown kind "flood"`},
		{"pause,random", "random stands alone"},
		{"pause,pause", "pause named twice"},
		{"crash:for=1s", "a crash fault has no duration"},
		{"partition:who=2", "no target process"},
		{"skew:who=leader", "names a process (a number), not a part"},
		{"loss:rate=0", "want a probability above 0"},
		{"pause:every=0s", "want a positive duration"},
		{"pause:every", "want NAME=VALUE"},
		{"pause:max=1000", "want a count from 1 to 100"},
		{"pause:amnesia", "amnesia is restart's"},
		{"pause:colour=red", `unknown option "colour"`},
	} {
		_, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q): %v, want an error with %q", c.in, err, c.want)
		}
	}
}

// TestCheck: a nemesis that cannot apply to the run is refused before a
// sweep, naming why; every kind of "random" applies to every algorithm.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		algo, spec string
		n          int
		want       string
	}{
		{"ricart-agrawala", "pause:who=leader", 5, "elects no leader"},
		{"ricart-agrawala", "crash:who=7", 5, "process 7 does not exist"},
		{"ricart-agrawala", "partition", 1, "a run of one process has none"},
		{"bully", "pause:who=cs", 5, "has no critical section"},
	} {
		sp, err := Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		p := plan(t, c.algo, c.n)
		if err := sp.Check(p, Horizon(p)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s -n %d: %v, want %q", c.algo, c.spec, c.n, err, c.want)
		}
	}
	for _, spec := range registry.All() {
		p := plan(t, spec.Name, 5)
		if err := (Spec{Random: true}).Check(p, Horizon(p)); err != nil {
			t.Errorf("%s: random: %v", spec.Name, err)
		}
	}
}

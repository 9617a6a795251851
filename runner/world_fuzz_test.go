package runner_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/internal/fuzzseed"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
)

// worldSeeds are schedules of every kind of step, valid and not, that
// seed FuzzWorldSteps (testdata/fuzz/FuzzWorldSteps holds them and the
// fuzzer's finds).
var worldSeeds = []struct {
	algo     string
	n        uint8
	schedule string
}{
	{"central", 3, "request P1 cs\ndeliver P1>P0\ndeliver P0>P1\nrelease P1 cs\ndeliver P1>P0"},
	{"ricart-agrawala", 2, "request P0 cs\nrequest P1 cs\ndeliver P0>P1\ndeliver P1>P0 #0\ncrash P1\nrecover P1"},
	{"lamport", 3, "request P0 cs\nlose P0>P1\ndeliver P0>P2 #1\ntimer P0 cs retry\nrelease P0 cs"},
	{"bully", 3, "timer P0 - start\ndeliver P0>P2\ncrash P2\ntimer P1 - timeout\nrecover P2"},
	{"token-ring", 4, "deliver P3>P0 #9\nrequest P9 cs\nrelease P0 nope\ndeliver P0>P0\nlose P-1>P2"},
	{"tomcast", 2, "request P0 cs\ndeliver P0>P1\n  deliver   P1>P0  \nbogus\n\nrequest p1 cs"},
}

// FuzzWorldSteps feeds arbitrary schedules, one step a line, to
// ParseStep and to a World of an algorithm of 1 to 4 processes. Nothing
// panics; a step that does not parse says which step; one that does reads
// back the same from its text (String); a step the World refuses changes
// nothing; every step the World says is enabled can happen.
func FuzzWorldSteps(f *testing.F) {
	for _, s := range worldSeeds {
		f.Add(s.algo, s.n, s.schedule)
	}
	names := registry.Names()
	f.Fuzz(func(t *testing.T, name string, n uint8, schedule string) {
		spec := registry.Lookup(name)
		if spec == nil {
			spec = registry.Lookup(names[len(name)%len(names)])
		}
		p := runner.NewPlan(runner.DriverSim)
		p.Spec, p.N, p.Seed, p.Workload.Entries = spec, 1+int(n)%4, 1, 2
		w, err := runner.NewWorld(p, nil)
		if err != nil {
			return
		}
		defer w.Close()
		lines := strings.Split(schedule, "\n")
		if len(lines) > 300 {
			lines = lines[:300]
		}
		for _, line := range lines {
			s, err := runner.ParseStep(line)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "step "+strconv.Quote(line)) {
					t.Fatalf("error %q does not name the step %q", err, line)
				}
				continue
			}
			back, err := runner.ParseStep(s.String())
			if err != nil || back != s {
				t.Fatalf("%q parsed as %+v, whose text %q reads back as %+v (%v)", line, s, s.String(), back, err)
			}
			before := w.Steps()
			if err := w.Apply(s); err != nil && w.Steps() != before {
				t.Fatalf("%v was refused (%v) but counted", s, err)
			}
		}
		for _, s := range w.Enabled(nil) {
			if err := w.Can(s); err != nil {
				t.Fatalf("enabled step %v cannot happen: %v", s, err)
			}
		}
	})
}

// TestWriteWorldSeeds writes the seed corpus of FuzzWorldSteps into
// testdata/fuzz (DMX_FUZZ_SEEDS=1), in the form go test -fuzz reads.
func TestWriteWorldSeeds(t *testing.T) {
	if os.Getenv("DMX_FUZZ_SEEDS") == "" {
		t.Skip("DMX_FUZZ_SEEDS=1 writes the seed corpus")
	}
	write := fuzzseed.Writer(t, "FuzzWorldSteps")
	for i, s := range worldSeeds {
		write(fmt.Sprintf("seed-%d-%s", i, s.algo), fmt.Sprintf("string(%q)", s.algo), fmt.Sprintf("byte(%q)", rune(s.n)), fmt.Sprintf("string(%q)", s.schedule))
	}
}

package tokenring

import (
	"fmt"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner/algotest"
)

// TestScripts runs the interaction scripts in testdata; each block cites the
// note it exercises. Rewrite with go test -update.
func TestScripts(t *testing.T) {
	algotest.RunScripts(t, Spec, "testdata")
}

// TestSweep runs the ring in the simulator for many seeds and group
// sizes and checks mutual exclusion ("Only one process at a time has token;
// mutual exclusion guaranteed", seed 000) and that every request enters
// ("Starvation cannot occur", seed 000). It also checks that every token
// message moved the token one step round the ring.
func TestSweep(t *testing.T) {
	delay := func(d string) algotest.Options { return algotest.Options{Params: map[string]string{"pass-delay": d}} }
	algotest.SweepCases(t, Spec, []int{1, 2, 3, 5, 8}, 300, []algotest.Case{
		{Name: "pass-delay-1ms"}, {Name: "pass-delay-0", Opt: delay("0")}, {Name: "pass-delay-100us", Opt: delay("100us")},
	}, func(r *algotest.Result) error {
		if len(r.Entered) == 1 && r.Messages != 0 {
			return fmt.Errorf("N = 1 sent %d messages", r.Messages)
		}
		return nil
	})
}

// TestLoadedRingCost checks the notes' cost under heavy load: when every
// process always wants the CS each token message brings the next process in,
// so the count approaches one message per entry (seed 001 "Works well in
// heavily loaded situations"; seed 004 "Entry: n/2 avg").
func TestLoadedRingCost(t *testing.T) {
	res, err := algotest.Run(Spec, algotest.Options{N: 5, Seed: 1, Entries: 20, Think: 1, Hold: time.Millisecond,
		MinDelay: time.Microsecond, MaxDelay: 2 * time.Microsecond, Params: map[string]string{"pass-delay": "10ms"}})
	if err != nil {
		t.Fatal(err)
	}
	entries := 0
	for _, e := range res.Entered {
		entries += e
	}
	if res.Messages > entries+5 {
		t.Fatalf("%d token messages for %d entries, want about one per entry", res.Messages, entries)
	}
}

func TestNewValidates(t *testing.T) {
	algotest.CheckParams(t, Spec, 3,
		[]map[string]string{{"pass-delay": "1ms"}, {"pass-delay": "0"}, {"pass-delay": "250000"}},
		[]map[string]string{{"pass-delay": "-1ms"}, {"pass-delay": "soon"}, {"delay": "1ms"}})
}

package runner

import (
	"strings"
	"testing"
	"time"
)

func TestParseFaults(t *testing.T) {
	got, err := ParseFaults("crash:2@500ms, recover:P2@1s crash:leader@2s")
	if err != nil {
		t.Fatal(err)
	}
	want := []Fault{{FaultCrash, 2, 500 * time.Millisecond}, {FaultRecover, 2, time.Second}, {FaultCrash, Leader, 2 * time.Second}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("fault %d: got %v want %v", i, got[i], want[i])
		}
		back, err := ParseFaults(got[i].String())
		if err != nil || back[0] != got[i] {
			t.Errorf("%v does not round-trip: %v %v", got[i], back, err)
		}
	}
	for spec, msg := range map[string]string{
		"crash":             "KIND:PROCESS@TIME",
		"explode:1@1s":      "unknown fault \"explode\" (known: crash, recover)",
		"crash:1":           "no time",
		"crash:x@1s":        "process \"x\"",
		"crash:-2@1s":       "process \"-2\"",
		"crash:1@soon":      "time \"soon\"",
		"recover:leader@1s": "a recover cannot aim at the leader (only crash can)",
	} {
		if _, err := ParseFaults(spec); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: err %v, want %q", spec, err, msg)
		}
	}
}

// TestFaultValidate: a fault's process must exist in the group; Plan.Validate
// checks it once the group size is known.
func TestFaultValidate(t *testing.T) {
	for _, c := range []struct {
		f    Fault
		n    int
		want string
	}{
		{Fault{FaultCrash, 2, 0}, 3, ""},
		{Fault{FaultCrash, 3, 0}, 3, "process 3 does not exist (there are 3: 0..2)"},
		{Fault{FaultCrash, Leader, 0}, 3, ""},
		{Fault{FaultRecover, Leader, 0}, 3, "cannot aim at the leader"},
		{Fault{FaultCrash, -5, 0}, 3, "process -5"},
		{Fault{FaultCrash, 1, -time.Second}, 3, "must not be negative"},
		{Fault{"pause", 1, 0}, 3, "unknown fault \"pause\""},
	} {
		err := c.f.validate(c.n)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v in %d: %v, want %q", c.f, c.n, err, c.want)
		}
	}
}

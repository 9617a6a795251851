package runner

import (
	"strings"
	"testing"
	"time"
)

func TestParseFaults(t *testing.T) {
	got, err := ParseFaults("crash:2@500ms, recover:P2@1s crash:leader@2s", 3)
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
		back, err := ParseFaults(got[i].String(), 3)
		if err != nil || back[0] != got[i] {
			t.Errorf("%v does not round-trip: %v %v", got[i], back, err)
		}
	}
	for spec, msg := range map[string]string{
		"crash":             "KIND:PROCESS@TIME",
		"explode:1@1s":      "unknown fault",
		"crash:1":           "no time",
		"crash:9@1s":        "does not exist",
		"crash:x@1s":        "process \"x\"",
		"crash:1@soon":      "time \"soon\"",
		"recover:leader@1s": "only a crash",
	} {
		if _, err := ParseFaults(spec, 3); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: err %v, want %q", spec, err, msg)
		}
	}
}

package palette

import (
	"fmt"
	"strings"
	"testing"
)

// TestTypesByName: a type's colour depends on its name and the declared
// list alone, never on the order a window met the types in.
func TestTypesByName(t *testing.T) {
	declared := []string{"request", "grant", "release", "heartbeat"}
	a := Types(declared, []string{"release", "zeta", "grant", "alpha", "heartbeat", "request"})
	b := Types(declared, []string{"alpha", "heartbeat", "zeta", "request", "grant", "release", "zeta"})
	for _, typ := range []string{"request", "grant", "release", "alpha", "zeta", "heartbeat"} {
		if a[typ] == "" || a[typ] != b[typ] {
			t.Errorf("%s: %q in one window, %q in another", typ, a[typ], b[typ])
		}
	}
	if a["request"] != Messages[0] || a["release"] != Messages[2] || a["alpha"] != Messages[3] || a["zeta"] != Messages[4] {
		t.Errorf("declared types first, then the others by name: %v", a)
	}
	// A declared type the run never sent takes no colour.
	if c := Types(declared, []string{"grant", "zeta"}); c["grant"] != Messages[0] || c["zeta"] != Messages[1] {
		t.Errorf("the run's types only: %v", c)
	}
	if a["heartbeat"] != Background {
		t.Errorf("heartbeat is %s, want the background grey", a["heartbeat"])
	}
}

// TestOnlyFindingsRed: no colour but Finding is a red (a hue near 0 with
// some saturation), and sections never share a message's colour.
func TestOnlyFindingsRed(t *testing.T) {
	all := append(append([]string{Text, Note, Lane, Down, Event, Minor, Background, Crash, Lost, Recover, Leader, LeaderInk,
		Election, Suspect, Trust, Deliver, Fault, Pause, Partition, Reign, Highlight, Past, Future}, Messages...), Resources...)
	for _, c := range all {
		if red(c) {
			t.Errorf("%s is a red; only findings are red", c)
		}
	}
	if !red(Finding) {
		t.Errorf("Finding %s is not red", Finding)
	}
	for _, r := range Resources {
		for _, m := range Messages {
			if strings.EqualFold(r, m) {
				t.Errorf("resource colour %s is a message colour", r)
			}
		}
	}
}

// red: hue within 15 degrees of pure red, saturation and value high
// enough to read as red.
func red(hex string) bool {
	var r, g, b int
	if _, err := fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b); err != nil {
		return false
	}
	mx, mn := max(r, g, b), min(r, g, b)
	if mx < 120 || mx-mn < 90 || mx != r {
		return false
	}
	h := 60 * float64(g-b) / float64(mx-mn)
	if h < 0 {
		h = -h
	}
	return h < 15
}

func TestJS(t *testing.T) {
	js := JS()
	for _, want := range []string{"const PALETTE", `finding: "` + Finding + `"`, Messages[0], Resources[0], `crash: "#000000"`} {
		if !strings.Contains(js, want) {
			t.Errorf("palette.js lacks %q", want)
		}
	}
}

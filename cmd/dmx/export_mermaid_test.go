package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExportMermaid: dmx export mermaid writes a small run as a fenced
// sequence diagram, and refuses a run Mermaid cannot draw legibly, saying
// how to draw a window instead.
func TestExportMermaid(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.db")
	if code, _, errs := dmx(t, "sim", "ricart-agrawala", "-n", "3", "--entries", "2", "--seed", "3", "-o", small, "--no-diagram", "--no-check"); code != 0 {
		t.Fatalf("sim: exit %d: %s", code, errs)
	}
	code, out, errs := dmx(t, "export", "mermaid", small)
	if code != 0 {
		t.Fatalf("export mermaid: exit %d: %s", code, errs)
	}
	for _, want := range []string{"```mermaid\nsequenceDiagram\n", "participant P2", "P2->>P0: request", "Note right of P2: enter cs"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	big := filepath.Join(dir, "big.db")
	if code, _, errs := dmx(t, "sim", "ricart-agrawala", "-n", "5", "--seed", "3", "-o", big, "--no-diagram", "--no-check"); code != 0 {
		t.Fatalf("sim: exit %d: %s", code, errs)
	}
	code, _, errs = dmx(t, "export", "mermaid", big)
	if code != 2 || !strings.Contains(errs, "dmx render") {
		t.Fatalf("export mermaid of a big run: exit %d, want 2 with advice to render a window:\n%s", code, errs)
	}
}

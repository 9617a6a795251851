package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunDrawsDiagram: sim writes the run's diagram beside the trace and
// prints its path with the verdict; --diagram chooses the file and
// --no-diagram skips it.
func TestRunDrawsDiagram(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ra.db")
	code, out, errs := dmx(t, "sim", "ricart-agrawala", "-n", "3", "--entries", "2", "--seed", "4", "-o", db)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	svg := filepath.Join(dir, "ra.svg")
	if !strings.Contains(out, "diagram: "+svg+" (the whole run)") {
		t.Errorf("the output does not point to the diagram:\n%s", out)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("no SVG beside the trace: %v", err)
	}

	pngPath := filepath.Join(dir, "chosen.png")
	code, out, errs = dmx(t, "sim", "central", "-n", "3", "--entries", "2", "--seed", "4", "-o", filepath.Join(dir, "c.db"), "--diagram", pngPath)
	if code != 0 || !strings.Contains(out, "diagram: "+pngPath) {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("--diagram x.png: %v", err)
	}

	code, out, _ = dmx(t, "sim", "central", "-n", "3", "--entries", "2", "--seed", "4", "-o", filepath.Join(dir, "none.db"), "--no-diagram")
	if code != 0 || strings.Contains(out, "diagram:") {
		t.Errorf("--no-diagram: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.svg")); err == nil {
		t.Error("--no-diagram wrote a diagram")
	}

	// A run too big to draw whole is drawn by window, and says so.
	code, out, _ = dmx(t, "sim", "ricart-agrawala", "--seed", "4", "--entries", "40", "-o", filepath.Join(dir, "big.db"))
	if code != 0 || !strings.Contains(out, "(the start of the run: ") || !strings.Contains(out, "wall time +") {
		t.Errorf("a big run: exit %d\n%s", code, out)
	}
}

// TestRender draws a recorded run in every format, and refuses bad
// requests with a message that says what to do.
func TestRender(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "dead.db")
	if code, out, errs := dmx(t, "sim", "--scenario", "../../examples/nested-deadlock.json", "-o", db, "--no-diagram"); code != 1 {
		t.Fatalf("exit %d, want 1 (a deadlock)\n%s%s", code, out, errs)
	}
	for _, ext := range []string{"svg", "png", "dot", "md"} {
		out := filepath.Join(dir, "d."+ext)
		code, stdout, errs := dmx(t, "render", db, "-o", out)
		if code != 0 {
			t.Fatalf("render -o d.%s: exit %d\n%s%s", ext, code, stdout, errs)
		}
		if !strings.Contains(stdout, "92 events, 5 findings drawn in") {
			t.Errorf("render -o d.%s says %q", ext, stdout)
		}
		b, err := os.ReadFile(out)
		if err != nil || len(b) < 100 {
			t.Fatalf("render -o d.%s: %v, %d bytes", ext, err, len(b))
		}
		want := map[string]string{"svg": "<svg", "png": "\x89PNG", "dot": "digraph spacetime", "md": "```mermaid\nsequenceDiagram"}[ext]
		if !bytes.Contains(b[:min(len(b), 600)], []byte(want)) {
			t.Errorf("d.%s does not start like one: %q", ext, b[:min(len(b), 80)])
		}
	}
	code, out, errs := dmx(t, "render", db, "-o", filepath.Join(dir, "w.svg"), "--finding", "5", "--time", "wall")
	if code != 0 || !strings.Contains(out, "findings drawn in") {
		t.Errorf("--finding 5 --time wall: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = dmx(t, "render", db, "-o", filepath.Join(dir, "a.svg"), "--around", "P2#20", "--procs", "1-2", "--radius", "5")
	if code != 0 || !strings.Contains(out, "(Lamport ") {
		t.Errorf("--around --procs: exit %d\n%s%s", code, out, errs)
	}

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no output", []string{"render", db}, "give -o FILE"},
		{"unknown extension", []string{"render", db, "-o", "x.jpg"}, "use .svg, .png, .dot or .md"},
		{"bad format", []string{"render", db, "-o", "x", "--format", "gif"}, "want one of svg, png, dot, md"},
		{"bad event", []string{"render", db, "-o", "x.svg", "--around", "P2-20"}, "P<process>#<seq>"},
		{"no such event", []string{"render", db, "-o", "x.svg", "--around", "P2#2000"}, "no event P2#2000"},
		{"bad time axis", []string{"render", db, "-o", "x.svg", "--time", "vector"}, "want lamport or wall"},
		{"empty window", []string{"render", db, "-o", "x.svg", "--from", "5000"}, "the window is empty"},
		{"no such finding", []string{"render", db, "-o", "x.svg", "--finding", "9"}, "no finding 9"},
		{"too many events", []string{"render", db, "-o", "x.svg", "--max-events", "10"}, "narrow it: --from 0s --to"},
		{"too many events, Lamport", []string{"render", db, "-o", "x.svg", "--max-events", "10", "--from", "1"}, "narrow it: --from 1 --to"},
		{"no such page", []string{"render", db, "-o", "x.svg", "--page", "3"}, "drawn on 1 page"},
		{"mermaid of a small window", []string{"render", db, "-o", "x.md", "--no-findings", "--from", "0"}, ""},
		{"not a trace", []string{"render", "cli_test.go", "-o", "x.svg"}, "not a dmx trace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string(nil), tt.args...)
			for i, a := range args {
				if strings.HasPrefix(a, "x") {
					args[i] = filepath.Join(dir, a)
				}
			}
			code, out, errs := dmx(t, args...)
			if tt.want == "" {
				if code != 0 {
					t.Errorf("exit %d\n%s%s", code, out, errs)
				}
				return
			}
			if code != exitUsage || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errs, tt.want)
			}
		})
	}
}

// TestMermaidRefusesBigWindows: Mermaid cannot draw hundreds of events
// legibly; render says so and how to narrow the window.
func TestMermaidRefusesBigWindows(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ra.db")
	if code, out, errs := dmx(t, "sim", "ricart-agrawala", "--seed", "1", "-o", db, "--no-diagram"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	code, _, errs := dmx(t, "render", db, "-o", filepath.Join(t.TempDir(), "x.md"))
	if code != exitUsage || !strings.Contains(errs, "not legible") || !strings.Contains(errs, "--around") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestCheckDrawsFindings: check --diagram DIR writes one picture per
// finding.
func TestCheckDrawsFindings(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "dead.db")
	if code, _, _ := dmx(t, "sim", "--scenario", "../../examples/nested-deadlock.json", "-o", db, "--no-diagram"); code != 1 {
		t.Fatal("the deadlock scenario did not deadlock")
	}
	out := filepath.Join(dir, "findings")
	code, _, errs := dmx(t, "check", db, "--diagram", out)
	if code != 1 || !strings.Contains(errs, "5 diagrams of findings in "+out) {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.svg"))
	if len(files) != 5 || filepath.Base(files[4]) != "dead-run1-finding5-deadlock.svg" {
		t.Errorf("files: %v", files)
	}
}

// TestPlot: dmx plot writes SVG and PNG, and refuses other formats.
func TestPlot(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "failover.db")
	dmxOK(t, "sim", "--scenario", "../../examples/central-failover.json", "--no-diagram", "-o", db)
	for _, ext := range []string{"svg", "png"} {
		out := filepath.Join(dir, "plot."+ext)
		code, stdout, errs := dmx(t, "plot", db, "-o", out)
		if code != 0 || !strings.Contains(stdout, "critical sections") || !strings.Contains(stdout, "2 faults shaded") {
			t.Fatalf("plot -o plot.%s: exit %d\n%s%s", ext, code, stdout, errs)
		}
		b, err := os.ReadFile(out)
		want := map[string]string{"svg": "<svg", "png": "\x89PNG"}[ext]
		if err != nil || !bytes.HasPrefix(b, []byte(want)) {
			t.Errorf("plot.%s: %v, starts %q", ext, err, b[:min(len(b), 20)])
		}
	}
	for _, c := range []struct{ args []string }{
		{[]string{"plot", db, "-o", filepath.Join(dir, "p.dot")}},
		{[]string{"plot", db}},
		{[]string{"plot", filepath.Join(dir, "none.db"), "-o", filepath.Join(dir, "p.svg")}},
	} {
		if code, _, errs := dmx(t, c.args...); code != exitUsage || errs == "" {
			t.Errorf("dmx %s: exit %d, stderr %q; want 2 and why", strings.Join(c.args, " "), code, errs)
		}
	}
}

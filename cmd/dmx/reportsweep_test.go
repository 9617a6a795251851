package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReportSweep: the report of a swept trace starts with the sweep's
// table, each failing seed a link to the part of its run; past
// maxDetailed runs only the runs the table names get a part, the others
// a line each.
func TestReportSweep(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "s.db")
	if code, _, errs := dmx(t, "sweep", "bully", "--nemesis", "pause:who=leader", "--seeds", "1..24", "-o", tr); code != exitViolated {
		t.Fatalf("sweep: exit %d\n%s", code, errs)
	}
	out := filepath.Join(dir, "rep")
	if code, _, errs := dmx(t, "report", tr, "-o", out); code != exitViolated {
		t.Fatalf("report: exit %d\n%s", code, errs)
	}
	data, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	for _, want := range []string{"24 runs: the verdicts per check", "per fault kind", "the other runs", "smallest failing seed"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	links := regexp.MustCompile(`<a href="#(run-[^"]+)">seed \d+</a>`).FindAllStringSubmatch(page, -1)
	if len(links) == 0 {
		t.Fatalf("no failing seed links to its run")
	}
	for _, l := range links {
		if !strings.Contains(page, `id="`+l[1]+`"`) {
			t.Errorf("link #%s leads nowhere", l[1])
		}
	}
	parts := strings.Count(page, "run it again: <code>dmx sim bully")
	if parts == 0 || parts > 10 {
		t.Errorf("%d runs in full, want those the table names", parts)
	}
	if n := strings.Count(page, "<tr><td>"+tr+"</td>"); n+parts != 24 {
		t.Errorf("%d runs listed and %d in full, want 24 in all", n, parts)
	}
}

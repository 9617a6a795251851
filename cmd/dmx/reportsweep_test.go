package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/render/htmlreport"
	"github.com/dmxlab/dmx/render/viewer"
	"github.com/dmxlab/dmx/trace"
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

// TestServeSweep: dmx serve of a swept trace shows the sweep's table at
// /sweep, each failing seed a link that opens its run in the viewer.
func TestServeSweep(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "s.db")
	dmx(t, "sweep", "bully", "--nemesis", "pause:who=leader", "--seeds", "1..6", "-o", tr)
	st, err := trace.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stores := []*trace.Store{st}
	srv, err := viewer.New(stores, viewer.Options{Sweep: func() (*htmlreport.Sweep, error) { return serveSweep(stores) }})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/sweep", nil)
	req.Host = "127.0.0.1:80"
	srv.Handler().ServeHTTP(rec, req)
	page := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(page, "6 runs: the verdicts per check") || !strings.Contains(page, "split-brain") {
		t.Fatalf("/sweep: %d\n%s", rec.Code, page)
	}
	links := regexp.MustCompile(`href="/#run=([^"]+)"[^>]*>seed (\d+)</a>`).FindAllStringSubmatch(page, -1)
	if len(links) == 0 {
		t.Fatalf("no failing seed links to its run:\n%s", page)
	}
	for _, l := range links {
		// The key is the store's index and the run id; run k is seed k.
		if l[1] != "0%3A"+l[2] {
			t.Errorf("seed %s links to run %s", l[2], l[1])
		}
	}
}

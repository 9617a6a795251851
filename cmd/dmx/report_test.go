package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/dmxlab/dmx/render/htmlreport"
	"github.com/dmxlab/dmx/render/viewer"
	"github.com/dmxlab/dmx/trace"
)

// reportTraces records the runs a report is tried on: a deadlock (a
// verdict of violated, a wait-for graph) and a failover (ok, faults).
func reportTraces(t *testing.T) (dir, deadlock, failover string) {
	t.Helper()
	dir = t.TempDir()
	deadlock, failover = filepath.Join(dir, "deadlock.db"), filepath.Join(dir, "failover.db")
	for db, sc := range map[string]string{deadlock: "maekawa-deadlock.json", failover: "central-failover.json"} {
		if code, _, errs := dmx(t, "sim", "--scenario", filepath.Join("..", "..", "examples", sc), "--no-diagram", "-o", db); code > 1 {
			t.Fatalf("sim %s: %s", sc, errs)
		}
	}
	return dir, deadlock, failover
}

// TestReport: dmx report writes one HTML file that needs nothing else,
// with every part the issue asks for; check --report writes it too; its
// exit code is the verdict.
func TestReport(t *testing.T) {
	dir, deadlock, failover := reportTraces(t)
	out := filepath.Join(dir, "report")
	code, stdout, errs := dmx(t, "report", deadlock, failover, "-o", out)
	if code != exitViolated || !strings.Contains(stdout, "verdict violated, 2 runs") {
		t.Fatalf("exit %d, want 1 (a deadlock)\n%s%s", code, stdout, errs)
	}
	b := readFile(t, filepath.Join(out, "report.html"))
	html := string(b)
	for _, want := range []string{
		"<svg",                                 // pictures inline
		`class="v-violated">violated`,          // the verdict table
		"<td>deadlock</td>",                    // a check of the deadlocked run
		"<td>mutex-causal</td>",                // and of the failover
		"wait-for graph",                       // the deadlock as a graph
		"run it again: <code>dmx sim",          // the rerun line
		"measured, beside the seeds",           // stats
		"messages per CS",                      // a measure
		"who believes it leads",                // not in a mutex run without failover... the failover has one
		"critical sections entered per second", // the plot
		"the picture of the run",               // the failover: no finding, its faults drawn
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report has no %q", want)
		}
	}
	checkSelfContained(t, html)

	// check --report: the same report, check's exit code and output.
	out2 := filepath.Join(dir, "ci")
	code, stdout, errs = dmx(t, "check", "--report", out2, deadlock)
	if code != exitViolated || !strings.Contains(errs, "report: "+filepath.Join(out2, "report.html")) || !strings.Contains(stdout, "deadlock") {
		t.Fatalf("check --report: exit %d\n%s%s", code, stdout, errs)
	}
	if b, err := os.ReadFile(filepath.Join(out2, "report.html")); err != nil || !strings.Contains(string(b), "wait-for graph") {
		t.Errorf("check --report wrote no report with the deadlock: %v", err)
	}

	// A report of an ok run exits 0; bad requests exit 2.
	if code, stdout, errs := dmx(t, "report", failover, "-o", filepath.Join(dir, "ok")); code != exitOK {
		t.Errorf("report of an ok run: exit %d\n%s%s", code, stdout, errs)
	}
	for _, args := range [][]string{
		{"report", deadlock},
		{"report", filepath.Join(dir, "none.db"), "-o", out},
		{"report", deadlock, "-o", out, "--pictures", "-1"},
	} {
		if code, _, errs := dmx(t, args...); code != exitUsage || errs == "" {
			t.Errorf("dmx %s: exit %d, stderr %q; want 2 and why", strings.Join(args, " "), code, errs)
		}
	}
}

// checkSelfContained: nothing in the page is fetched: no script, no style
// sheet, no image or frame source, no URL but SVG's namespace.
func checkSelfContained(t *testing.T, html string) {
	t.Helper()
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "@import", "url("} {
		if strings.Contains(html, bad) {
			t.Errorf("the report has %q: it must need nothing else", bad)
		}
	}
	for _, u := range regexp.MustCompile(`(?:https?|ftp)://[^\s"'<>)]+`).FindAllString(html, -1) {
		if u != "http://www.w3.org/2000/svg" {
			t.Errorf("the report names %s", u)
		}
	}
	for _, m := range regexp.MustCompile(`(?i)\b(?:src|href)="([^"#][^"]*)"`).FindAllStringSubmatch(html, -1) {
		t.Errorf("the report links to %s", m[1])
	}
}

// TestReportInBrowser: Chromium shows the report with every picture drawn,
// and fetches nothing from anywhere. DMX_SCREENSHOTS=DIR keeps the
// screenshot.
func TestReportInBrowser(t *testing.T) {
	path := chromium(t)
	dir, deadlock, failover := reportTraces(t)
	out := filepath.Join(dir, "report")
	if code, _, errs := dmx(t, "report", deadlock, failover, "-o", out); code > 1 {
		t.Fatal(errs)
	}
	ctx := browser(t, path, 1500, 2400)
	var mu sync.Mutex
	var fetched []string
	requests := 0 // the page's own among them: the listener hears
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests++
			if !strings.HasPrefix(e.Request.URL, "file:") && !strings.HasPrefix(e.Request.URL, "data:") {
				fetched = append(fetched, e.Request.URL)
			}
			mu.Unlock()
		}
	})
	var shown struct {
		SVGs, Drawn, Rows int
		Title             string
	}
	err := chromedp.Run(ctx, network.Enable(), chromedp.Navigate("file://"+filepath.Join(out, "report.html")),
		chromedp.Evaluate(`(() => {
			const svgs = [...document.querySelectorAll('svg')];
			return {SVGs: svgs.length, Drawn: svgs.filter((s) => s.getBoundingClientRect().width > 300 && s.querySelectorAll('path').length > 10).length,
				Rows: document.querySelectorAll('tr').length, Title: document.title};
		})()`, &shown))
	if err != nil {
		t.Fatal(err)
	}
	// Pictures: the deadlock's, the failover's, a plot each.
	if shown.SVGs < 4 || shown.Drawn != shown.SVGs || shown.Rows < 10 || !strings.HasPrefix(shown.Title, "dmx report") {
		t.Errorf("the page shows %+v", shown)
	}
	time.Sleep(200 * time.Millisecond) // events of the load still on their way
	mu.Lock()
	defer mu.Unlock()
	if len(fetched) > 0 || requests == 0 {
		t.Errorf("the report fetched %v (%d requests heard, the page's own included)", fetched, requests)
	}
	img := screenshot(t, ctx, "report.png")
	if n, colours := inked(img, img.Bounds()); n < 20000 || colours < 8 {
		t.Errorf("the screenshot is nearly blank: %d pixels inked, %d colours", n, colours)
	}
}

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
	data := readFile(t, filepath.Join(out, "report.html"))
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
	rec := viewerGet(srv.Handler(), "/sweep")
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

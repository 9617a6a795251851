package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dmxlab/dmx/analyze"
)

// TestReportSummarises: a run of 1000 processes gave a verdict table with
// a line of 111,613 characters. The table cuts notes and findings and says
// so; JSON keeps them whole.
func TestReportSummarises(t *testing.T) {
	var procs []string
	for i := 0; i < 1000; i++ {
		procs = append(procs, fmt.Sprintf("P%d (P%d#3 cs_request(cs)) waits for P%d", i, i, (i+1)%1000))
	}
	long := "deadlock on cs among 1000 processes: " + strings.Join(procs, "; ")
	var findings []analyze.Finding
	for i := 0; i < 30; i++ {
		findings = append(findings, analyze.Finding{Check: "deadlock", Message: long})
	}
	rep := Report{File: "big.db", Run: 1, Algo: "ricart-agrawala", Mode: "sim", Status: "interrupted", Verdict: analyze.Unknown,
		Results: []analyze.Result{
			{Check: "clocks", Verdict: analyze.OK, Note: "5000000 vector and 5000000 Lamport clocks verified"},
			{Check: "deadlock", Verdict: analyze.Unknown, Note: "the run is incomplete: a message in flight may have broken the cycle: " + long},
			{Check: "liveness", Verdict: analyze.Violated, Findings: findings, Note: "970 requests granted"},
		}}
	out := string(render(t, func(b *bytes.Buffer) error { return Reports(b, "table", []Report{rep}, 10) }))
	goldenFile(t, "report-long.table", []byte(out))
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > MaxFinding+40 {
			t.Errorf("a line of %d characters: %.80s...", n, line)
		}
	}
	if !strings.Contains(out, "and 20 more liveness findings") || !strings.Contains(out, "--format json shows them whole") {
		t.Errorf("the table does not say what it left out:\n%s", out)
	}
	var back struct {
		Runs []struct {
			Results []struct {
				Note     string `json:"note"`
				Findings []struct {
					Message string `json:"message"`
				} `json:"findings"`
			} `json:"results"`
		} `json:"runs"`
	}
	js := render(t, func(b *bytes.Buffer) error { return Reports(b, "json", []Report{rep}, 10) })
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	res := back.Runs[0].Results
	if res[1].Note != rep.Results[1].Note || len(res[2].Findings) != 30 || res[2].Findings[29].Message != long {
		t.Errorf("JSON does not keep notes and findings whole")
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		s     string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"cut at a word, not inside one", 20, "cut at a word..."},
		{strings.Repeat("x", 30), 10, "xxxxxxx..."},
		{"ééééééééééé", 6, "ééé..."},
	} {
		if got := clip(c.s, c.width); got != c.want {
			t.Errorf("clip(%q, %d) = %q, want %q", c.s, c.width, got, c.want)
		}
	}
}

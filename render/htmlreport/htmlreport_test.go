package htmlreport

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteEscapes: what a run says (a finding's message, a note, an
// imported log's names) is text in the page, never markup; the pictures
// dmx wrote are inline; findings that share a picture point to it.
func TestWriteEscapes(t *testing.T) {
	r := &Report{Title: "dmx report: a.db", Tool: "dmx test", Verdict: "violated", Runs: []Run{{
		File: "a.db", ID: 2, Algorithm: "trace", Mode: "import", Nodes: 2, Status: "complete", Verdict: "violated",
		Checks: []Check{{Name: "mutex-causal", Verdict: "violated", Findings: 2, Note: `<img src="x">`}},
		Findings: []Finding{
			{N: 1, Check: "mutex-causal", Message: `<script>alert(1)</script> & more`, Picture: &Figure{SVG: []byte(`<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0L1 1"/></svg>`), Caption: "a & b"}},
			{N: 2, Check: "mutex-causal", Message: "the same window", SameAs: 1},
		},
		Plot: &Figure{SVG: []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`), Caption: "plot"},
	}}}
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script>", `<img src="x">`} {
		if strings.Contains(page, bad) {
			t.Errorf("the page has %q as markup", bad)
		}
	}
	for _, want := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt; &amp; more",
		`<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0L1 1"/></svg>`,
		`id="run-a-db-2-finding-1"`, `href="#run-a-db-2-finding-1"`,
		"an imported log: no command runs it again",
		`class="v-violated"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
}

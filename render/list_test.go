package render

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/registry"
)

// TestListFits: the short table of dmx list fits a terminal of 80 columns
// (it was 524 wide) and names every algorithm.
func TestListFits(t *testing.T) {
	out := string(render(t, func(b *bytes.Buffer) error { return List(b, "table", registry.All()) }))
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("line of %d columns, want at most 80: %s", n, line)
		}
	}
	for _, name := range registry.Names() {
		if !strings.Contains(out, "│ "+name+" ") {
			t.Errorf("the table does not name %s", name)
		}
	}
	// What each does is wrapped, never cut short.
	if strings.Contains(out, "...") {
		t.Errorf("the table cuts a summary short:\n%s", out)
	}
	flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ").Replace(out)), " ")
	for _, s := range registry.All() {
		what, _, _ := strings.Cut(s.Summary, "; ")
		for _, w := range strings.Fields(what) {
			if !strings.Contains(flat, w) {
				t.Errorf("%s: %q of its summary is not in the table", s.Name, w)
			}
		}
	}
}

// TestAlgorithm: dmx list ALGO shows every algorithm in full: its rules
// by their seed names, message types, checks, every parameter with its
// default and meaning, its variants as commands, and costs; its JSON form
// holds all of it.
func TestAlgorithm(t *testing.T) {
	goldenFile(t, "algorithm-ricart-agrawala.table", render(t, func(b *bytes.Buffer) error {
		return Algorithm(b, "table", registry.Lookup("ricart-agrawala"))
	}))
	goldenFile(t, "algorithm-maekawa.json", render(t, func(b *bytes.Buffer) error {
		return Algorithm(b, "json", registry.Lookup("maekawa"))
	}))
	rule := regexp.MustCompile(`\[[A-Z]{1,3}[0-9]\]`)
	for _, s := range registry.All() {
		text := string(render(t, func(b *bytes.Buffer) error { return Algorithm(b, "table", s) }))
		// Words are wrapped, so compare with the whitespace folded.
		flat := strings.Join(strings.Fields(text), " ")
		want := rule.FindAllString(s.Doc, -1)
		want = append(want, s.Seeds...)
		want = append(want, s.MsgTypes...)
		checks, _, err := analyze.Applicable(runner.Claims(s))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range checks {
			want = append(want, c.Name)
		}
		for _, p := range s.Params {
			want = append(want, p.Name+" (default "+p.Default+")", strings.Join(strings.Fields(p.Doc), " "))
		}
		for _, v := range s.Variants {
			want = append(want, strings.Join(append([]string{"dmx sim", s.Name}, paramArgs(v.Params)...), " "))
		}
		for _, c := range s.Costs {
			want = append(want, string(c.Measure)+": "+c.Formula)
		}
		for _, w := range want {
			if !strings.Contains(flat, w) {
				t.Errorf("dmx list %s does not show %q", s.Name, w)
			}
		}
		// The rules its seeds line cites are the ones its documentation
		// quotes, so that dmx list shows what each name says.
		for _, r := range rule.FindAllString(strings.Join(s.Seeds, " "), -1) {
			if !strings.Contains(s.Doc, r) {
				t.Errorf("%s: seeds cite %s, which its documentation does not quote", s.Name, r)
			}
		}

		// The documentation shown is the file the path names.
		src, err := os.ReadFile(filepath.Join("..", DocPath(s)))
		if err != nil || algo.PackageDoc(string(src)) != s.Doc {
			t.Errorf("%s: Doc is not the package documentation of %s (%v)", s.Name, DocPath(s), err)
		}

		var e listEntry
		if err := json.Unmarshal(render(t, func(b *bytes.Buffer) error { return Algorithm(b, "json", s) }), &e); err != nil {
			t.Fatalf("%s: json: %v", s.Name, err)
		}
		if e.Name != s.Name || e.Doc != s.Doc || len(e.Params) != len(s.Params) || len(e.Variants) != len(s.Variants) || len(e.Costs) != len(s.Costs) {
			t.Errorf("%s: the JSON form is not complete: %+v", s.Name, e)
		}
	}
}

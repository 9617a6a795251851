package render

import (
	"cmp"
	"fmt"
	"go/doc/comment"
	"io"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
)

// ListFormats are the formats List and Algorithm write, the default first.
var ListFormats = []string{"table", "json", "csv"}

// List writes the algorithms in format, one of ListFormats: a short table
// that fits a terminal of 80 columns (name, kind, the first clause of the
// summary) followed by how to see one in full; CSV with every column; or
// JSON, a list of the objects Algorithm writes.
func List(w io.Writer, format string, specs []*algo.Spec) error {
	switch format {
	case "table":
		if err := Table(w, []string{"algorithm", "kind", "what"}, shortRows(specs)); err != nil {
			return err
		}
		_, err := fmt.Fprintln(w, "dmx list ALGO shows one in full: rules, messages, checks, costs, parameters.")
		return err
	case "json":
		es := make([]listEntry, len(specs))
		for i, s := range specs {
			es[i] = entry(s)
		}
		return JSON(w, es)
	case "csv":
		return CSV(w, listHeader, listRows(specs))
	}
	return unknownFormat(format, ListFormats)
}

// Algorithm writes one algorithm in full, in format: as text (table) with
// its summary, seeds, messages, the checks dmx check runs on its traces,
// its costs, every parameter with its default and meaning, its variants,
// example commands, and its package documentation, which quotes the
// seeds' rules; as one JSON object, {"name", "kind", "summary", "seeds",
// "message_types", "properties", "validity" (the rule of check validity,
// for elections), "complexity", "costs": [{"measure",
// "formula", "note", "seed"}], "params": [{"name", "default", "doc"}],
// "variants": [{"params", "doc", "flawed"}], "doc"}, "complexity" the
// costs as Costs writes them, "seed" "" for dmx's own count, "doc" the Go
// doc comment text of its package; or as CSV, the row List writes.
func Algorithm(w io.Writer, format string, s *algo.Spec) error {
	switch format {
	case "table":
		return algorithmText(w, s)
	case "json":
		return JSON(w, entry(s))
	case "csv":
		return CSV(w, listHeader, listRows([]*algo.Spec{s}))
	}
	return unknownFormat(format, ListFormats)
}

// whatWidth bounds the short table's last column, so that the table fits
// in 80 columns: the other columns and the borders take 34. A longer
// summary is wrapped onto more lines, never cut ("..." hid the end of
// what an algorithm does).
const whatWidth = 46

// shortKinds are the kinds as the short table names them.
var shortKinds = map[algo.Kind]string{algo.MutualExclusion: "mutex"}

// shortRows are the rows of the short table.
func shortRows(specs []*algo.Spec) [][]string {
	rows := make([][]string, len(specs))
	for i, s := range specs {
		what, _, _ := strings.Cut(s.Summary, "; ")
		kind := cmp.Or(shortKinds[s.Kind], string(s.Kind))
		rows[i] = []string{s.Name, kind, wrapWords(what, whatWidth)}
	}
	return rows
}

var listHeader = []string{"algorithm", "kind", "messages", "properties", "complexity (seeds)", "params"}

func listRows(specs []*algo.Spec) [][]string {
	rows := make([][]string, len(specs))
	for i, s := range specs {
		ps := make([]string, len(s.Params))
		for j, p := range s.Params {
			ps[j] = p.Name + "=" + p.Default
		}
		rows[i] = []string{s.Name, string(s.Kind), strings.Join(s.MsgTypes, ","), strings.Join(properties(s), ","), Costs(s.Costs), strings.Join(ps, " ")}
	}
	return rows
}

// properties returns the checks an algorithm claims, validity with the
// rule it promises: "validity(highest-id)".
func properties(s *algo.Spec) []string {
	out := make([]string, len(s.Properties))
	for i, p := range s.Properties {
		out[i] = p
		if p == "validity" && s.Validity != "" {
			out[i] += "(" + s.Validity + ")"
		}
	}
	return out
}

type listParam struct {
	Name    string `json:"name"`
	Default string `json:"default"`
	Doc     string `json:"doc"`
}

type listEntry struct {
	Name       string        `json:"name"`
	Kind       string        `json:"kind"`
	Summary    string        `json:"summary"`
	Seeds      []string      `json:"seeds"`
	Messages   []string      `json:"message_types"`
	Properties []string      `json:"properties"`
	Validity   string        `json:"validity,omitempty"`
	Complexity string        `json:"complexity"`
	Costs      []listCost    `json:"costs"`
	Params     []listParam   `json:"params"`
	Variants   []listVariant `json:"variants"`
	Doc        string        `json:"doc"`
}

type listCost struct {
	Measure string `json:"measure"`
	Formula string `json:"formula"`
	Note    string `json:"note"`
	Seed    string `json:"seed"`
}

type listVariant struct {
	Params map[string]string `json:"params"`
	Doc    string            `json:"doc"`
	Flawed string            `json:"flawed,omitempty"`
}

// entry is the JSON form of one algorithm.
func entry(s *algo.Spec) listEntry {
	e := listEntry{Name: s.Name, Kind: string(s.Kind), Summary: s.Summary, Seeds: s.Seeds, Messages: s.MsgTypes,
		Properties: s.Properties, Validity: s.Validity, Complexity: Costs(s.Costs), Costs: []listCost{}, Params: []listParam{},
		Variants: []listVariant{}, Doc: s.Doc}
	for _, c := range s.Costs {
		e.Costs = append(e.Costs, listCost{string(c.Measure), c.Formula, c.Note, c.Seed})
	}
	for _, p := range s.Params {
		e.Params = append(e.Params, listParam{p.Name, p.Default, p.Doc})
	}
	for _, v := range s.Variants {
		params := v.Params
		if params == nil {
			params = map[string]string{}
		}
		e.Variants = append(e.Variants, listVariant{params, v.Doc, v.Flawed})
	}
	return e
}

// textWidth is the width algorithmText wraps its prose to.
const textWidth = 80

// algorithmText writes one algorithm in full as text: a section per part,
// each wrapped to textWidth.
func algorithmText(w io.Writer, s *algo.Spec) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\n", s.Name, s.Kind)
	b.WriteString(wrap(s.Summary, "  ", "  "))

	b.WriteString("\nseeds (the course notes it follows):\n")
	for _, sd := range s.Seeds {
		b.WriteString(wrap(sd, "  ", "      "))
	}

	b.WriteString("\n" + wrap(strings.Join(s.MsgTypes, ", "), "messages: ", "  "))

	b.WriteString("\nchecked by dmx check:\n")
	checks, _, err := analyze.Applicable(runner.Claims(s))
	if err != nil {
		return err
	}
	for _, c := range checks {
		doc, _, _ := strings.Cut(c.Doc, "\n")
		if c == analyze.Validity && s.Validity != "" {
			doc += " (rule " + s.Validity + ")"
		}
		b.WriteString(wrap(doc, fmt.Sprintf("  %-15s ", c.Name), strings.Repeat(" ", 18)))
	}

	b.WriteString("\ncosts (the seeds' figures, and dmx's own counts where the seeds give none):\n")
	for _, c := range s.Costs {
		b.WriteString(wrap(string(c.Measure)+": "+c.Formula, "  ", "    "))
		var more []string
		if c.Note != "" {
			more = append(more, c.Note)
		}
		if c.Seed != "" {
			more = append(more, "seed "+c.Seed)
		} else {
			more = append(more, "dmx's count")
		}
		b.WriteString(wrap(strings.Join(more, "; "), "      ", "      "))
	}

	if len(s.Params) == 0 {
		b.WriteString("\nparameters: none\n")
	} else {
		b.WriteString("\nparameters (--param NAME=VALUE):\n")
		for _, p := range s.Params {
			fmt.Fprintf(&b, "  %s (default %s)\n", p.Name, p.Default)
			b.WriteString(wrap(p.Doc, "      ", "      "))
		}
	}

	if len(s.Variants) > 0 {
		b.WriteString("\nvariants:\n")
		for _, v := range s.Variants {
			b.WriteString(wrap(v.Doc, "  ", "  "))
			fmt.Fprintf(&b, "      dmx sim %s\n", strings.Join(append([]string{s.Name}, paramArgs(v.Params)...), " "))
			if v.Flawed != "" {
				b.WriteString(wrap("flawed: "+v.Flawed, "      ", "      "))
			}
		}
	}

	b.WriteString("\nexamples:\n")
	for _, ex := range examples(s) {
		fmt.Fprintf(&b, "  # %s\n  %s\n", ex[1], ex[0])
	}

	if s.Doc != "" {
		fmt.Fprintf(&b, "\nhow it works, rule by rule (%s):\n\n", DocPath(s))
		var p comment.Parser
		pr := comment.Printer{TextWidth: textWidth - 2, TextPrefix: "  ", TextCodePrefix: "    "}
		b.Write(pr.Text(p.Parse(s.Doc)))
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// DocPath is where s's package documentation is in dmx's source tree,
// "runner/algo/ricart/doc.go": the package of its New, which is the
// package whose doc.go Spec.Doc embeds. It is "its package
// documentation" for a Spec built elsewhere (tests).
func DocPath(s *algo.Spec) string {
	const module = "github.com/dmxlab/dmx/"
	if s.New != nil {
		name := runtime.FuncForPC(reflect.ValueOf(s.New).Pointer()).Name()
		if pkg, ok := strings.CutPrefix(name, module); ok {
			if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
				if j := strings.IndexByte(pkg[i:], '.'); j >= 0 {
					return pkg[:i+j] + "/doc.go"
				}
			}
		}
	}
	return "its package documentation"
}

// paramArgs returns the --param flags of params, sorted by name.
func paramArgs(params map[string]string) []string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, "--param", k+"="+params[k])
	}
	return out
}

// examples are command lines that show s at work, each with what it
// shows.
func examples(s *algo.Spec) [][2]string {
	var sim [2]string
	switch s.Kind {
	case algo.Election:
		sim = [2]string{"dmx sim " + s.Name + " --seed 1 --faults crash:leader@500ms", "kill the leader, watch the next election"}
	case algo.Multicast:
		sim = [2]string{"dmx sim " + s.Name + " --seed 1", "every process multicasts; total order is checked"}
	default:
		sim = [2]string{"dmx sim " + s.Name + " --seed 1 --contention none -o run.db", "no contention: the seeds' message counts"}
	}
	out := [][2]string{sim}
	if s.Kind == algo.MutualExclusion {
		out = append(out, [2]string{"dmx stats run.db", "messages per CS beside the seeds' figure"})
	}
	return append(out, [2]string{"dmx run " + s.Name + " -n 8", "8 real processes over UDP"})
}

// wrap fills text into lines of at most textWidth runes where words
// allow, the first line after first, the others after rest.
func wrap(text, first, rest string) string {
	var b strings.Builder
	line := first
	empty := true
	for _, word := range strings.Fields(text) {
		if !empty && len([]rune(line))+1+len([]rune(word)) > textWidth {
			b.WriteString(line + "\n")
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	b.WriteString(line + "\n")
	return b.String()
}

// Costs writes an algorithm's costs as one line: "messages per CS: 2(N-1)
// [N-1 requests, N-1 replies]; sync delay: 1 [the deferred reply]", notes
// in brackets (formulas have parentheses of their own), a figure the seeds
// do not give marked "dmx's count".
func Costs(costs []theory.Cost) string {
	parts := make([]string, len(costs))
	for i, c := range costs {
		var notes []string
		if c.Note != "" {
			notes = append(notes, c.Note)
		}
		if c.Seed == "" {
			notes = append(notes, "dmx's count")
		}
		parts[i] = string(c.Measure) + ": " + c.Formula
		if len(notes) > 0 {
			parts[i] += " [" + strings.Join(notes, "; ") + "]"
		}
	}
	return strings.Join(parts, "; ")
}

// wrapWords breaks s into lines of at most width runes at spaces (a word
// longer than width gets a line of its own).
func wrapWords(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		l := utf8.RuneCountInString(w)
		switch {
		case n == 0:
		case n+1+l > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}

package render

import (
	"io"
	"strings"

	"github.com/dmxlab/dmx/runner/algo"
)

// ListFormats are the formats List writes, the default first.
var ListFormats = []string{"table", "json", "csv"}

// List writes the algorithms in format, one of ListFormats: a table with
// one row per algorithm, the same rows as CSV, or JSON, a list of
// {"name", "kind", "summary", "seeds", "message_types", "properties",
// "validity" (the rule of check validity, for elections), "complexity", "costs": [{"measure", "formula", "note", "seed"}],
// "params": [{"name", "default", "doc"}]}, "complexity" the costs as
// Costs writes them and "seed" "" for dmx's own count.
func List(w io.Writer, format string, specs []*algo.Spec) error {
	switch format {
	case "table":
		return Table(w, listHeader, listRows(specs))
	case "json":
		return listJSON(w, specs)
	case "csv":
		return CSV(w, listHeader, listRows(specs))
	}
	return unknownFormat(format, ListFormats)
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
	Name       string      `json:"name"`
	Kind       string      `json:"kind"`
	Summary    string      `json:"summary"`
	Seeds      []string    `json:"seeds"`
	Messages   []string    `json:"message_types"`
	Properties []string    `json:"properties"`
	Validity   string      `json:"validity,omitempty"`
	Complexity string      `json:"complexity"`
	Costs      []listCost  `json:"costs"`
	Params     []listParam `json:"params"`
}

type listCost struct {
	Measure string `json:"measure"`
	Formula string `json:"formula"`
	Note    string `json:"note"`
	Seed    string `json:"seed"`
}

// listJSON writes the algorithms as a JSON list.
func listJSON(w io.Writer, specs []*algo.Spec) error {
	var es []listEntry
	for _, s := range specs {
		e := listEntry{Name: s.Name, Kind: string(s.Kind), Summary: s.Summary, Seeds: s.Seeds, Messages: s.MsgTypes,
			Properties: s.Properties, Validity: s.Validity, Complexity: Costs(s.Costs), Costs: []listCost{}, Params: []listParam{}}
		for _, c := range s.Costs {
			e.Costs = append(e.Costs, listCost{string(c.Measure), c.Formula, c.Note, c.Seed})
		}
		for _, p := range s.Params {
			e.Params = append(e.Params, listParam{p.Name, p.Default, p.Doc})
		}
		es = append(es, e)
	}
	return JSON(w, es)
}

// Costs writes an algorithm's costs as one line: "messages per CS: 2(N-1)
// [N-1 requests, N-1 replies]; sync delay: 1 [the deferred reply]", notes
// in brackets (formulas have parentheses of their own), a figure the seeds
// do not give marked "dmx's count".
func Costs(costs []algo.Cost) string {
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

package analyze

import (
	"encoding/json"

	"github.com/dmxlab/dmx/trace"
)

// JSONResult is the stable machine-readable form of a Result (dmx check
// --format json prints a list of them):
//
//	{"run":1,"check":"mutex-causal","verdict":"violated",
//	 "findings":[{"message":"concurrent critical sections on cs: ...","events":["P0#3","P0#4","P1#2","P1#3"]}]}
//
// verdict is "ok", "violated", "unknown", "not applicable" (nothing to
// judge; see NotApplicable) or "skipped" (the trace lacks what the check
// needs; see Skipped); findings is always an array ([] when
// there are none); note and error appear only when set. Fields are only
// ever added.
type JSONResult struct {
	Run      int64         `json:"run"`
	Check    string        `json:"check"`
	Verdict  Verdict       `json:"verdict"`
	Findings []JSONFinding `json:"findings"`
	Note     string        `json:"note,omitempty"`
	Error    string        `json:"error,omitempty"`
}

// JSONFinding is the machine-readable form of a Finding: events are named
// as "P<proc>#<seq>"; sources, only for a trace imported from a log, gives
// the "file:line" of each of them ("" for one without).
type JSONFinding struct {
	Message string   `json:"message"`
	Events  []string `json:"events"`
	Sources []string `json:"sources,omitempty"`
}

// JSON converts the results of one run to their JSON form.
func JSON(run trace.Run, results []Result) []JSONResult {
	out := make([]JSONResult, len(results))
	for i, r := range results {
		out[i] = r.json(run.ID)
	}
	return out
}

func (r Result) json(run int64) JSONResult {
	j := JSONResult{Run: run, Check: r.Check, Verdict: r.Verdict, Findings: make([]JSONFinding, len(r.Findings)), Note: r.Note}
	if r.Err != nil {
		j.Error = r.Err.Error()
	}
	for i, f := range r.Findings {
		j.Findings[i] = f.json()
	}
	return j
}

func (f Finding) json() JSONFinding {
	j := JSONFinding{Message: f.Message, Events: make([]string, len(f.Events)), Sources: f.Sources}
	for k, e := range f.Events {
		j.Events[k] = e.String()
	}
	return j
}

// MarshalJSON encodes a Result as a JSONResult without "run", so that a
// Result marshaled directly has the same stable shape.
func (r Result) MarshalJSON() ([]byte, error) {
	j := r.json(0)
	return json.Marshal(struct {
		Check    string        `json:"check"`
		Verdict  Verdict       `json:"verdict"`
		Findings []JSONFinding `json:"findings"`
		Note     string        `json:"note,omitempty"`
		Error    string        `json:"error,omitempty"`
	}{j.Check, j.Verdict, j.Findings, j.Note, j.Error})
}

// MarshalJSON encodes a Finding as a JSONFinding.
func (f Finding) MarshalJSON() ([]byte, error) { return json.Marshal(f.json()) }

package analyze

import "github.com/dmxlab/dmx/trace"

// JSONResult is the stable machine-readable form of a Result (dmx check
// --format json prints a list of them):
//
//	{"run":1,"check":"mutex-causal","verdict":"violated",
//	 "findings":[{"message":"concurrent critical sections on cs: ...","events":["P0#3","P0#4","P1#2","P1#3"]}]}
//
// findings is always an array ([] when there are none); note and error
// appear only when set. Fields are only ever added.
type JSONResult struct {
	Run      int64         `json:"run"`
	Check    string        `json:"check"`
	Verdict  Verdict       `json:"verdict"`
	Findings []JSONFinding `json:"findings"`
	Note     string        `json:"note,omitempty"`
	Error    string        `json:"error,omitempty"`
}

// JSONFinding is the machine-readable form of a Finding: events are named
// as "P<proc>#<seq>".
type JSONFinding struct {
	Message string   `json:"message"`
	Events  []string `json:"events"`
}

// JSON converts the results of one run to their JSON form.
func JSON(run trace.Run, results []Result) []JSONResult {
	out := make([]JSONResult, len(results))
	for i, r := range results {
		j := JSONResult{Run: run.ID, Check: r.Check, Verdict: r.Verdict, Findings: []JSONFinding{}, Note: r.Note}
		if r.Err != nil {
			j.Error = r.Err.Error()
		}
		for _, f := range r.Findings {
			jf := JSONFinding{Message: f.Message, Events: make([]string, len(f.Events))}
			for k, e := range f.Events {
				jf.Events[k] = e.String()
			}
			j.Findings = append(j.Findings, jf)
		}
		out[i] = j
	}
	return out
}

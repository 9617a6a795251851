package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Scenario is a run described in a file (dmx run/sim --scenario FILE), so
// that it can be kept in a repository, reviewed and replayed. Every field is
// optional; flags given on the command line win over the file. Example:
//
//	{
//	  "algorithm": "central",
//	  "nodes": 4,
//	  "seed": 2,
//	  "entries": 5,
//	  "think": "0ms-2ms",
//	  "hold": "1ms",
//	  "resources": ["printer", "scanner"],
//	  "nested": true,
//	  "procs": {"1": {"resources": ["scanner", "printer"]}},
//	  "faults": ["crash:2@100ms", "recover:2@300ms"]
//	}
type Scenario struct {
	Doc        string                  `json:"doc,omitempty"` // what the scenario shows, for people
	Algorithm  string                  `json:"algorithm,omitempty"`
	Nodes      int                     `json:"nodes,omitempty"`
	Seed       uint64                  `json:"seed,omitempty"`
	Entries    *int                    `json:"entries,omitempty"`
	Think      string                  `json:"think,omitempty"`
	Hold       string                  `json:"hold,omitempty"`
	Contention string                  `json:"contention,omitempty"`
	Resources  []string                `json:"resources,omitempty"`
	Nested     bool                    `json:"nested,omitempty"`
	Order      string                  `json:"order,omitempty"`
	Params     map[string]string       `json:"params,omitempty"`
	Faults     []string                `json:"faults,omitempty"`
	Delay      string                  `json:"delay,omitempty"`   // sim only
	Reorder    bool                    `json:"reorder,omitempty"` // sim only
	Duration   string                  `json:"duration,omitempty"`
	Procs      map[string]ProcWorkload `json:"procs,omitempty"` // keys: "2" or "P2"
	// Expect is what dmx check should conclude on the run: for examples
	// and regression tests ("ok", or "violated" with the checks that find
	// it). dmx itself does not act on it.
	Expect *Expectation `json:"expect,omitempty"`
}

// Expectation is a scenario's expected verdict.
type Expectation struct {
	Verdict string   `json:"verdict"`
	Checks  []string `json:"checks,omitempty"` // the checks that must report the violation
}

// LoadScenario reads a scenario file. Errors name the file and, for JSON
// errors, the line.
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("%s:%d: %v", path, lineOf(data, se.Offset), err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%s:%d: field %q: want %v, not a JSON %s", path, lineOf(data, te.Offset), te.Field, te.Type, te.Value)
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: more than one JSON value", path)
	}
	return &s, nil
}

// ProcOverrides returns the scenario's per-process workloads keyed by id,
// checking ids against n.
func (s *Scenario) ProcOverrides(n int) (map[int]ProcWorkload, error) {
	if len(s.Procs) == 0 {
		return nil, nil
	}
	out := map[int]ProcWorkload{}
	for k, v := range s.Procs {
		id, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(k, "P"), "p"))
		if err != nil || id < 0 || id >= n {
			return nil, fmt.Errorf("scenario procs: %q is not a process of this run (0..%d)", k, n-1)
		}
		if _, dup := out[id]; dup {
			// "2" and "P2" name the same process: which one won would
			// depend on map order, and the seed would not reproduce the run.
			return nil, fmt.Errorf("scenario procs: process %d is named twice", id)
		}
		out[id] = v
	}
	return out, nil
}

func lineOf(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

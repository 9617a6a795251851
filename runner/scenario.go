package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dmxlab/dmx/trace"
)

// Scenario is a run described in a file (dmx run/sim --scenario FILE), so
// that it can be kept in a repository, reviewed and replayed. Every field is
// optional; Apply puts the file's values into a Plan, where flags given on
// the command line win over the file. Example:
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
	Doc        string            `json:"doc,omitempty"` // what the scenario shows, for people
	Algorithm  string            `json:"algorithm,omitempty"`
	Nodes      int               `json:"nodes,omitempty"`
	Seed       uint64            `json:"seed,omitempty"`
	Entries    *int              `json:"entries,omitempty"`
	Think      string            `json:"think,omitempty"`
	Hold       string            `json:"hold,omitempty"`
	Contention string            `json:"contention,omitempty"`
	Resources  []string          `json:"resources,omitempty"`
	Nested     bool              `json:"nested,omitempty"`
	Order      string            `json:"order,omitempty"`
	Params     map[string]string `json:"params,omitempty"`
	Faults     []string          `json:"faults,omitempty"`
	// Delay is the simulator's network delay; under dmx run, whose network
	// is loopback, the same delay is injected (a delay fault).
	Delay string `json:"delay,omitempty"`
	// Reorder makes channels not FIFO: in the simulator, messages overtake
	// each other within Delay; under dmx run, a reorder fault (its jitter
	// Delay, if given) does it.
	Reorder  bool                    `json:"reorder,omitempty"`
	Channels Channels                `json:"channels,omitempty"`
	Duration string                  `json:"duration,omitempty"`
	Procs    map[string]ProcWorkload `json:"procs,omitempty"` // keys: "2" or "P2"
	// Schedule is the run step by step (see Step for the steps' form):
	// what dmx explore writes for the violation it finds. The simulator
	// then follows it instead of drawing delays and think times.
	Schedule []string `json:"schedule,omitempty"`
	// Expect is what dmx check should conclude on the run: for examples
	// and regression tests ("ok", or "violated" with the checks that find
	// it). dmx itself does not act on it.
	Expect *Expectation `json:"expect,omitempty"`
	// Path is the file the scenario was read from (LoadScenario sets it).
	Path string `json:"-"`
}

// Expectation is a scenario's expected verdict.
type Expectation struct {
	Verdict string   `json:"verdict"`
	Checks  []string `json:"checks,omitempty"` // the checks that must report the violation
	OK      []string `json:"ok,omitempty"`     // checks that must hold all the same (the contrast a scenario shows)
}

// LoadScenario reads a scenario file. Errors name the file and, for JSON
// errors, the line.
func LoadScenario(path string) (*Scenario, error) {
	data, err := trace.ReadInput(path, trace.MaxScenarioBytes)
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
	s.Path = path
	return &s, nil
}

// Apply puts the scenario's values into p, except those given says the
// command line gave (given is called with the scenario's JSON keys, which
// are the flags' names; nil: none was given). Parameters merge key by key,
// a given one winning. The simulator's delay and reorder become faults of
// a dmx run plan (delay:D, or reorder:D), appended to its faults: no field
// is dropped. The algorithm is for the caller, who has the registry. Apply records the scenario in p.Scenario; Plan.Validate checks
// the result.
func (s *Scenario) Apply(p *Plan, given func(key string) bool) error {
	if given == nil {
		given = func(string) bool { return false }
	}
	set := func(key string, has bool, do func() error) error {
		if !has || given(key) {
			return nil
		}
		if err := do(); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	}
	sim := p.driver() == DriverSim
	w := &p.Workload
	err := errors.Join(
		set("nodes", s.Nodes != 0, func() error { p.N = s.Nodes; return nil }),
		set("seed", s.Seed != 0, func() error { p.Seed = s.Seed; return nil }),
		set("entries", s.Entries != nil, func() error { w.Entries = *s.Entries; return nil }),
		set("think", s.Think != "", func() error { return w.Think.Set(s.Think) }),
		set("hold", s.Hold != "", func() error { return w.Hold.Set(s.Hold) }),
		set("delay", sim && s.Delay != "", func() error { return p.Sim.Delay.Set(s.Delay) }),
		set("channels", s.Channels != "", func() error { return p.Channels.Set(string(s.Channels)) }),
		set("contention", s.Contention != "", func() error { return w.Contention.Set(s.Contention) }),
		set("resources", len(s.Resources) > 0, func() error { w.Resources = s.Resources; return nil }),
		set("nested", s.Nested, func() error { w.Nested = true; return nil }),
		set("order", s.Order != "", func() error { w.Order = s.Order; return nil }),
		set("reorder", sim && s.Reorder, func() error { p.Sim.Reorder = true; return nil }),
		set("faults", len(s.Faults) > 0, func() error {
			var all []Fault
			for _, spec := range s.Faults {
				fl, err := ParseFaults(spec)
				if err != nil {
					return err
				}
				all = append(all, fl...)
			}
			p.Faults = all
			return nil
		}),
		set("duration", s.Duration != "", func() (err error) { p.Duration, err = time.ParseDuration(s.Duration); return }),
		set("procs", len(s.Procs) > 0, func() (err error) { w.Procs, err = s.procs(); return }),
		set("schedule", len(s.Schedule) > 0, func() (err error) { p.Schedule, err = ParseSteps(s.Schedule); return }),
	)
	if err == nil && !sim {
		err = s.network(p)
	}
	if err != nil {
		if s.Path != "" {
			return fmt.Errorf("%s: %w", s.Path, err)
		}
		return err
	}
	if len(s.Params) > 0 {
		params := make(map[string]string, len(s.Params)+len(p.Params))
		for k, v := range s.Params {
			params[k] = v
		}
		for k, v := range p.Params {
			params[k] = v
		}
		p.Params = params
	}
	p.Scenario = s
	return nil
}

// network gives a dmx run plan the simulator's network of the scenario:
// its delay and its reordering become faults, on every link for the whole
// run.
func (s *Scenario) network(p *Plan) error {
	var d Dist
	if s.Delay != "" {
		var err error
		if d, err = ParseDist(s.Delay); err != nil {
			return fmt.Errorf("delay: %w", err)
		}
	}
	switch {
	case s.Reorder && s.Delay != "":
		p.Faults = append(p.Faults, Fault{Kind: FaultReorder, Dist: d})
	case s.Reorder:
		p.Faults = append(p.Faults, Fault{Kind: FaultReorder, Dist: defaultJitter})
	case s.Delay != "":
		p.Faults = append(p.Faults, Fault{Kind: FaultDelay, Dist: d})
	}
	return nil
}

// procs returns the scenario's per-process workloads keyed by id; whether
// the ids are in the group is for Plan.Validate.
func (s *Scenario) procs() (map[int]ProcWorkload, error) {
	out := map[int]ProcWorkload{}
	for k, v := range s.Procs {
		id, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(k, "P"), "p"))
		if err != nil || id < 0 {
			return nil, fmt.Errorf("%q is not a process id (want 2 or P2)", k)
		}
		if _, dup := out[id]; dup {
			// "2" and "P2" name the same process: which one won would
			// depend on map order, and the seed would not reproduce the run.
			return nil, fmt.Errorf("process %d is named twice", id)
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

// NewScenario returns the scenario that describes p, for a file that
// reproduces the run (dmx sim --scenario): its algorithm, processes, seed,
// workload, parameters, faults, simulator options and schedule. Apply
// gives p back, as far as scenarios describe plans (not linger or slot;
// with a schedule, which says when everything happens, not think, hold,
// contention and delay either).
func NewScenario(p Plan) *Scenario {
	w := p.Workload
	entries := w.Entries
	s := &Scenario{
		Nodes: p.N, Seed: p.Seed, Entries: &entries, Resources: w.Resources, Nested: w.Nested,
		Params: p.Params, Reorder: p.Sim.Reorder,
	}
	if p.Raw() {
		s.Channels = p.Channels
	}
	if p.Spec != nil {
		s.Algorithm = p.Spec.Name
	}
	if w.Nested && w.Order != "" && w.Order != OrderSame {
		s.Order = w.Order
	}
	if len(p.Schedule) == 0 {
		// A schedule says when everything happens: these do not matter.
		s.Think, s.Hold, s.Contention = w.Think.String(), w.Hold.String(), w.Contention.String()
		if p.driver() == DriverSim {
			s.Delay = p.Sim.Delay.String()
		}
	}
	if p.Duration != 0 {
		s.Duration = p.Duration.String()
	}
	for _, f := range p.Faults {
		s.Faults = append(s.Faults, f.String())
	}
	for _, st := range p.Schedule {
		s.Schedule = append(s.Schedule, st.String())
	}
	if len(w.Procs) > 0 {
		s.Procs = map[string]ProcWorkload{}
		for id, pw := range w.Procs {
			s.Procs[strconv.Itoa(id)] = pw
		}
	}
	return s
}

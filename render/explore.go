package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/explore"
	"github.com/dmxlab/dmx/trace/plural"
)

// ExploreFormats are the formats of dmx explore, the default first.
var ExploreFormats = []string{"text", "json"}

// ExploreReport is what dmx explore did: the run searched, how, what it
// found, and where it wrote the violation.
type ExploreReport struct {
	Algorithm string
	N         int
	Entries   int
	Reorder   bool
	Raw       bool   // raw channels (explore loses messages): a loss is for good
	Walks     int    // 0: exhaustive
	Faults    string // the fault kinds allowed and their budget, "" if none
	Stats     explore.Stats
	// Violation is the violation to report (shrunk if it was), nil if none.
	Violation *explore.Violation
	Shrunk    bool
	Proof     *explore.Proof // what the search for a shorter one established, if it ran
	Trace     string         // the trace file written, with the violation as run 1...
	Run       int64
	Scenario  string // the scenario file written
}

// ExploreVerdict names the outcome: violated (a violation was found), ok
// (none, and every state was visited), or inconclusive (none found, but
// the search was cut short or walked at random).
func ExploreVerdict(r *ExploreReport) string {
	switch {
	case r.Violation != nil:
		return "violated"
	case r.Stats.Exhausted:
		return "ok"
	}
	return "inconclusive"
}

// Explore writes r in format: text (what was searched, the figures, the
// violation's schedule and its checks, the files and how to look
// further) or one JSON object.
func Explore(w io.Writer, format string, r *ExploreReport) error {
	switch format {
	case "text":
		return exploreText(w, r)
	case "json":
		return exploreJSON(w, r)
	}
	return unknownFormat(format, ExploreFormats)
}

func (r *ExploreReport) what() string {
	ch := "FIFO channels"
	if r.Reorder {
		ch = "channels that reorder"
	}
	if r.Raw {
		ch = "raw " + ch
	}
	s := fmt.Sprintf("%s, %s each, %s", plural.Count(r.N, "process"), plural.Count(r.Entries, "entry"), ch)
	if r.Faults != "" {
		s += ", faults " + r.Faults
	}
	return s
}

func sizeText(s explore.Size) string {
	t := plural.Count(s.N, "process") + ", " + plural.Count(s.Entries, "entry") + ", " + plural.Count(s.Steps, "step")
	if s.Faults > 0 {
		t += ", " + plural.Count(s.Faults, "fault")
	}
	return t
}

func exploreText(w io.Writer, r *ExploreReport) error {
	var b bytes.Buffer
	st := r.Stats
	how := "exhaustive search (state hashing, sleep sets)"
	if st.Shifted {
		how = "exhaustive search (state hashing up to a shift of every timestamp, sleep sets)"
	}
	if r.Walks > 0 {
		how = fmt.Sprintf("%d random walks", r.Walks)
	}
	fmt.Fprintf(&b, "explore %s: %s; %s\n", r.Algorithm, r.what(), how)
	fmt.Fprintf(&b, "searched %s", plural.Count(st.States, "state"))
	if st.Passes > 1 {
		fmt.Fprintf(&b, " in its last of %d passes (%d in all)", st.Passes, st.Visited)
	}
	fmt.Fprintf(&b, ": %s, %s, %s, schedules up to %s\n", plural.Count(st.Transitions, "step"), plural.Count(st.Revisits, "revisit"),
		plural.Count(st.Finals, "final state"), plural.Count(st.MaxDepth, "step"))
	fmt.Fprintf(&b, "time %v (cpu %v)", st.Elapsed.Round(time.Millisecond), st.CPU.Round(time.Millisecond))
	if secs := st.CPU.Seconds(); secs > 0 {
		fmt.Fprintf(&b, ", %.0f states per cpu second", float64(st.Visited)/secs)
	}
	b.WriteString("\n")
	switch v := r.Violation; {
	case v != nil:
		fmt.Fprintf(&b, "violation found after %s: %s\n", plural.Count(st.FirstAt, "state"), v.Watched)
		switch from, to := sizeText(v.Original), sizeText(v.Size()); {
		case !r.Shrunk:
		case from == to:
			// "shrunk from X to X" said it shrank when it did not.
			fmt.Fprintf(&b, "not shrunk: no smaller run (fewer processes, entries, steps or faults) violates it; %s\n", to)
		default:
			fmt.Fprintf(&b, "shrunk from %s to %s\n", from, to)
		}
		if p := r.Proof; p != nil {
			if p.Shortest {
				fmt.Fprintf(&b, "shortest: no schedule of %d steps or fewer of this run violates %s (%s searched)\n", v.Size().Steps-1, v.Check, plural.Count(p.States, "state"))
			} else {
				fmt.Fprintf(&b, "shortest: not proven (%s searched for a shorter schedule)\n", plural.Count(p.States, "state"))
			}
		}
		fmt.Fprintf(&b, "schedule (%s):\n", sizeText(v.Size()))
		for i, s := range v.Plan.Schedule {
			fmt.Fprintf(&b, "  %3d  %v\n", i+1, s)
		}
		if err := reportTable(&b, []Report{{Run: v.Run.ID, Algo: r.Algorithm, Mode: "sim", Verdict: analyze.Summarize(v.Results), Results: v.Results}}, 5); err != nil {
			return err
		}
		if r.Trace != "" {
			fmt.Fprintf(&b, "\ntrace: %s (run %d)\nscenario: %s\n", r.Trace, r.Run, r.Scenario)
			fmt.Fprintf(&b, "look further:\n  dmx replay %s --run %d --step\n  dmx render %s --run %d -o violation.svg\n  dmx sim --scenario %s   # records the same run again\n",
				r.Trace, r.Run, r.Trace, r.Run, r.Scenario)
		}
	case st.Exhausted:
		fmt.Fprintf(&b, "no violation: every reachable state was visited (the space is exhausted)\n")
	default:
		why := "the search was cut short"
		switch {
		case r.Walks > 0:
			why = "random walks do not visit every state"
		case st.Truncated:
			why = fmt.Sprintf("schedules longer than %d steps were not explored", st.MaxDepth)
		}
		fmt.Fprintf(&b, "no violation found, but %s: inconclusive\n", why)
	}
	_, err := w.Write(b.Bytes())
	return err
}

type exploreJSONViolation struct {
	Check    string               `json:"check"`
	Watched  string               `json:"watched"`
	Schedule []string             `json:"schedule"`
	Size     explore.Size         `json:"size"`
	Original explore.Size         `json:"original"`
	Shortest *bool                `json:"shortest,omitempty"`
	Results  []analyze.JSONResult `json:"results"`
	Trace    string               `json:"trace,omitempty"`
	Run      int64                `json:"run,omitempty"`
	Scenario string               `json:"scenario,omitempty"`
}

func exploreJSON(w io.Writer, r *ExploreReport) error {
	st := r.Stats
	out := struct {
		Algorithm   string                `json:"algorithm"`
		Nodes       int                   `json:"nodes"`
		Entries     int                   `json:"entries"`
		Reorder     bool                  `json:"reorder"`
		Channels    string                `json:"channels"`
		Search      string                `json:"search"`
		Faults      string                `json:"faults,omitempty"`
		Verdict     string                `json:"verdict"`
		States      int64                 `json:"states"`
		Visited     int64                 `json:"visited"`
		Passes      int                   `json:"passes,omitempty"`
		CPUNS       int64                 `json:"cpu_ns"`
		Transitions int64                 `json:"transitions"`
		Revisits    int64                 `json:"revisits"`
		Finals      int64                 `json:"finals"`
		Walks       int64                 `json:"walks,omitempty"`
		MaxDepth    int                   `json:"max_depth"`
		Exhausted   bool                  `json:"exhausted"`
		Truncated   bool                  `json:"truncated"`
		Shifted     bool                  `json:"shifted,omitempty"`
		ElapsedNS   int64                 `json:"elapsed_ns"`
		FirstAt     int64                 `json:"first_at,omitempty"`
		Violation   *exploreJSONViolation `json:"violation,omitempty"`
	}{Algorithm: r.Algorithm, Nodes: r.N, Entries: r.Entries, Reorder: r.Reorder, Channels: "reliable", Search: "exhaustive", Faults: r.Faults,
		Verdict: ExploreVerdict(r), States: st.States, Visited: st.Visited, Passes: st.Passes, CPUNS: int64(st.CPU), Transitions: st.Transitions, Revisits: st.Revisits, Finals: st.Finals,
		Walks: st.Walks, MaxDepth: st.MaxDepth, Exhausted: st.Exhausted, Truncated: st.Truncated, Shifted: st.Shifted, ElapsedNS: int64(st.Elapsed), FirstAt: st.FirstAt}
	if r.Walks > 0 {
		out.Search = "random"
	}
	if r.Raw {
		out.Channels = "raw"
	}
	if v := r.Violation; v != nil {
		jv := &exploreJSONViolation{Check: v.Check, Watched: v.Watched, Size: v.Size(), Original: v.Original, Results: analyze.JSON(v.Run, v.Results),
			Trace: r.Trace, Run: r.Run, Scenario: r.Scenario, Schedule: []string{}}
		for _, s := range v.Plan.Schedule {
			jv.Schedule = append(jv.Schedule, s.String())
		}
		if r.Proof != nil {
			jv.Shortest = &r.Proof.Shortest
		}
		out.Violation = jv
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

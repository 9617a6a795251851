package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// Verdict is the outcome of a check on one run.
type Verdict string

// The verdicts, after porcupine's Ok/Illegal/Unknown, with two for a check
// that judged nothing. Only OK, Violated and Unknown are judgements (see
// Judged); neither of the others counts as ok, in Summarize or anywhere.
//
// A verdict rests on evidence: ok says the trace shows the property held
// over the whole run (a run cut short, abandoned, still recording or with
// fewer events stored than recorded is unknown, see Evaluate); violated
// says a finding names the events that break it; unknown says the trace
// holds evidence either way but not enough to decide (a crash that no
// wall time orders against an entry, a request still waiting when the run
// was cut short), and its note says what is missing.
const (
	OK       Verdict = "ok"       // the property holds on this run
	Violated Verdict = "violated" // a finding shows it does not
	Unknown  Verdict = "unknown"  // the trace cannot decide (run cut short, an order it does not show)
	// NotApplicable: the run has nothing the check judges (agreement on a
	// run without election events, mutex-causal without critical
	// sections).
	NotApplicable Verdict = "not applicable"
	// Skipped: the run has what the check judges but lacks data it needs
	// to judge it (wall times); see Require.
	Skipped Verdict = "skipped"
)

// Judged reports whether v is a judgement (ok, violated or unknown) rather
// than a check that had nothing to judge or lacked the data to.
func (v Verdict) Judged() bool { return v == OK || v == Violated || v == Unknown }

// Finding is one violation of a property, with the events that show it.
type Finding struct {
	Check   string
	Message string      // names the events, e.g. "concurrent critical sections on r: ..."
	Events  []trace.Ref // the events involved, most important first
	// Parts give the structure of the finding where the check knows one
	// (the two sections of a mutual-exclusion violation and the missing
	// ordering, the edges of a deadlock); nil otherwise. See Role.
	Parts []Part
	// Sources says where each of Events came from in the log of an
	// imported trace ("lock.log:12", "" for an event without one); nil
	// when none did. Evaluate fills it in for every check.
	Sources []string
	names   *namer // the run's process names, for Text
}

// String formats the finding as "check: message", followed by the log
// lines of its events when it has Sources.
func (f Finding) String() string { return f.Check + ": " + f.Text() }

// Text is the finding's message followed by the log lines its events came
// from, if it has Sources: "... (in the log: P0#3 at lock.log:5, P1#2 at
// lock.log:6)".
func (f Finding) Text() string {
	if len(f.Sources) == 0 {
		return f.Message
	}
	var b strings.Builder
	seen := map[trace.Ref]bool{}
	for i, src := range f.Sources {
		if src == "" || i >= len(f.Events) || seen[f.Events[i]] {
			continue
		}
		seen[f.Events[i]] = true
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s at %s", f.names.ref(f.Events[i]), src)
	}
	if b.Len() == 0 {
		return f.Message
	}
	return f.Message + " (in the log: " + b.String() + ")"
}

// Result is what one check concluded about one run.
type Result struct {
	Check    string
	Verdict  Verdict
	Findings []Finding // at most MaxFindings; Note counts the rest
	Note     string    // what the verdict rests on, when it is not obvious
	Err      error     // the check could not run (Verdict is then Unknown)
}

// Checker is one check running over one run. Event is called for every
// event in a causal order (see Walk): ev and hb are valid only during the
// call, so a Checker keeps trace.Refs and the few values it needs, never
// the event. Finish is called once after the last event.
type Checker interface {
	Event(ev *trace.Event, hb *HB)
	Finish(end End) Result
}

// Check is a property check as a value, in the manner of go/analysis's
// Analyzer.
type Check struct {
	Name     string   // short, lower case, used on the command line
	Doc      string   // first line is a summary; the rest says what is checked and how
	Requires []string // what the trace must provide: NeedHB, NeedWall
	// Promise marks a property that only some algorithms promise (fairness
	// and bounded overtaking): it applies to a run when its algorithm
	// claims it or when it is asked for by name, never by default to a
	// trace of another program (see General).
	Promise bool
	New     func(cfg Config) Checker
}

// Config is what a check is told about a run besides its events.
type Config struct {
	Run trace.Run
	// Validity is the rule check validity holds the run's decisions to:
	// ValidityHighestID or ValidityParticipant. "" takes the rule the
	// run's params declare ({"validity": RULE}), else the weak one,
	// ValidityParticipant: a trace of another program promises no more.
	Validity string
	// MaxOvertakes is the number of times check starvation lets a waiting
	// request be overtaken; 0: one per other process (N-1).
	MaxOvertakes int
	// Require names the checks that must judge: a Skipped or
	// NotApplicable verdict of one of them is Unknown (the data it needs,
	// or what it judges, is required).
	Require []string
}

// Option sets a field of the Config that Evaluate gives the checks.
type Option func(*Config)

// WithValidity sets Config.Validity.
func WithValidity(rule string) Option { return func(c *Config) { c.Validity = rule } }

// WithMaxOvertakes sets Config.MaxOvertakes.
func WithMaxOvertakes(n int) Option { return func(c *Config) { c.MaxOvertakes = n } }

// WithRequire adds to Config.Require.
func WithRequire(names ...string) Option {
	return func(c *Config) { c.Require = append(c.Require, names...) }
}

// Requirements a check can declare. Run always rebuilds happens-before; a
// check that needs wall times says Skipped on a trace without them (unless
// it has nothing to check).
const (
	NeedHB   = "happens-before"
	NeedWall = "wall-time"
)

// MaxFindings bounds the findings one check reports on one run: a broken
// clock can make every later event wrong. Result.Note counts the rest.
const MaxFindings = 100

// All is the registry of checks, in the order dmx check runs them. A new
// check is a file with its Check value and a line here.
var All = []*Check{
	Clocks,
	ClockSkew,
	MutexCausal,
	MutexRealtime,
	Liveness,
	Fairness,
	Starvation,
	Deadlock,
	DeadlockOR,
	Agreement,
	Validity,
	SplitBrain,
	Termination,
	TotalOrder,
	Protocol,
}

// Lookup returns the check named name, or nil.
func Lookup(name string) *Check {
	for _, c := range All {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Evaluate runs checks over one pass of the run's events and returns their
// results in the order of checks. Its error says the trace could not be
// read or is broken (a *BrokenError, see Walk): then there are no results.
// A check's own trouble is its Result's Err. A required check (WithRequire)
// that was skipped or had nothing to judge is Unknown.
//
// No check says ok about a run whose trace cannot show the whole of it
// (Incomplete says why: cut short, interrupted, abandoned by its recorder,
// still being recorded, a cut at the end, no events): an ok verdict there
// is Unknown, its note saying why, and only a violation stands. In a run
// whose processes have names (an imported log's hosts) findings and notes
// name them: "n3#4" rather than "P0#4".
func Evaluate(run trace.Run, r trace.Reader, checks []*Check, opts ...Option) ([]Result, error) {
	cfg := Config{Run: run}
	for _, o := range opts {
		o(&cfg)
	}
	cs := make([]Checker, len(checks))
	for i, c := range checks {
		cs[i] = c.New(cfg)
	}
	// Where the events of an imported log came from, for the findings
	// (kept only for events that say: dmx's own have no source).
	var sources map[trace.Ref]string
	imported := run.Mode == "import"
	var unreadable error // the first event whose detail the checks cannot read
	end, err := Walk(run, r, func(ev *trace.Event, hb *HB) {
		if unreadable != nil {
			return
		}
		if unreadable = readable(ev, hb); unreadable != nil {
			return
		}
		if imported {
			if src := ev.Source(); src != "" {
				if sources == nil {
					sources = make(map[trace.Ref]string)
				}
				sources[ev.Ref()] = src
			}
		}
		for _, c := range cs {
			c.Event(ev, hb)
		}
	})
	if err == nil {
		err = unreadable
	}
	if err != nil {
		return nil, err
	}
	why := Incomplete(run, end)
	names := newNamer(run.Names)
	results := make([]Result, len(checks))
	for i, c := range checks {
		res := cs[i].Finish(end)
		for _, need := range c.Requires {
			if need != NeedHB && need != NeedWall {
				res = Result{Verdict: Unknown, Err: fmt.Errorf("check %s requires %q, which dmx does not know", c.Name, need)}
			}
		}
		res.Check = c.Name
		for j := range res.Findings {
			f := &res.Findings[j]
			f.Check = c.Name
			f.Sources = findSources(f.Events, sources)
			f.Message = names.text(f.Message)
			f.names = names
		}
		res.Note = names.text(res.Note)
		if res.Err != nil {
			res.Verdict = Unknown
		}
		if (res.Verdict == Skipped || res.Verdict == NotApplicable) && slices.Contains(cfg.Require, c.Name) {
			res.Verdict, res.Note = Unknown, fmt.Sprintf("required, but %s: %s", res.Verdict, res.Note)
		}
		switch {
		case why == "":
		case res.Verdict == OK:
			res.Verdict = Unknown
			res.Note = joinNote("held on what the trace holds", res.Note) + "; but " + why
		case res.Verdict == NotApplicable || res.Verdict == Skipped:
			res.Note = joinNote(res.Note, why)
		}
		results[i] = res
	}
	// A run the trace does not hold whole, of which no check judged
	// anything (interrupted before it started), is not one with nothing to
	// judge: what it would have shown is not in the trace.
	if why != "" && !slices.ContainsFunc(results, func(r Result) bool { return r.Verdict.Judged() }) {
		for i := range results {
			if results[i].Verdict == NotApplicable {
				results[i].Verdict = Unknown
			}
		}
	}
	return results, nil
}

// Incomplete says why the trace of run cannot show the whole run, given
// what Walk saw of it, or returns "" if it can: the run has no events in
// the trace, was cut short or interrupted (not Complete), is still being
// recorded, was abandoned by its recorder, or ends in a cut (End.Cut). An
// ok verdict needs the whole run: a property that held until the trace
// ends may have failed after it.
func Incomplete(run trace.Run, end End) string {
	var why []string
	switch {
	case end.Events == 0:
		why = append(why, "the trace holds no events of this run")
	}
	status := strings.TrimSpace(run.Status)
	switch {
	case run.Status == trace.StatusAbandoned:
		why = append(why, "its recorder died before ending it (abandoned): the events it had not written are missing")
	case run.Status == trace.StatusRunning || run.Status == trace.StatusUnwatched:
		why = append(why, "it is still being recorded")
	case !run.Complete && status != "":
		why = append(why, "the run is incomplete ("+status+")")
	case !run.Complete:
		why = append(why, "the run is incomplete")
	}
	if end.Cut > 0 {
		why = append(why, fmt.Sprintf("%s at the end of the run could not be placed (its recorder died: a receive was written, its send not)", plural.Count(end.Cut, "event")))
	}
	return strings.Join(why, "; ")
}

// joinNote joins two parts of a note with "; ", leaving out an empty one.
func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// ReadsMessages reports whether checks, run over run, read the resource or
// the detail of its sends and receives, which a lean reader leaves out
// (trace.ReadOptions.Lean): in an imported run they hold the messages an
// event sends and receives beyond its msg column and where it came from;
// total-order reads the multicast a send belongs to; the election checks
// read the terms messages carry when the run declares Raft's step-down
// rule.
func ReadsMessages(run trace.Run, checks []*Check) bool {
	if run.Mode == "import" {
		return true
	}
	higher := stepDownRule(Config{Run: run}) == StepDownHigherTerm
	for _, c := range checks {
		switch {
		case c == TotalOrder:
			return true
		case higher && (c == SplitBrain || c == Agreement || c == Termination):
			return true
		}
	}
	return false
}

// findSources returns the sources of events, nil if none has one.
func findSources(events []trace.Ref, sources map[trace.Ref]string) []string {
	var out []string
	for i, ref := range events {
		if src, ok := sources[ref]; ok {
			if out == nil {
				out = make([]string, len(events))
			}
			out[i] = src
		}
	}
	return out
}

// Summarize returns the verdict of a set of results: violated if any is,
// else unknown if any is unknown or failed, else ok if any is ok, else
// (no check judged anything: each was skipped or not applicable, or there
// are no results) NotApplicable. A skipped or not applicable check does
// not count as ok: it judged nothing (see WithRequire to make one count).
func Summarize(results []Result) Verdict {
	v := NotApplicable
	for _, r := range results {
		switch {
		case r.Verdict == Violated:
			return Violated
		case r.Err != nil || r.Verdict == Unknown:
			v = Unknown
		case r.Verdict == OK && v == NotApplicable:
			v = OK
		}
	}
	return v
}

// notApplicable is the result of a check that found nothing to judge;
// what says what it looked for ("no election events").
func notApplicable(what string) Result { return Result{Verdict: NotApplicable, Note: what} }

// skipped is the result of a check that needs wall times on a trace
// without them; what says what was left unchecked.
func skipped(what string) Result {
	return Result{Verdict: Skipped, Note: "no wall times: " + what + " not checked"}
}

// findings collects a check's findings, keeping MaxFindings of them.
type findings struct {
	list []Finding
	more int
}

func (f *findings) add(msg string, events ...trace.Ref) {
	if len(f.list) >= MaxFindings {
		f.more++
		return
	}
	f.list = append(f.list, Finding{Message: msg, Events: slices.Clone(events)})
}

func (f *findings) count() int { return len(f.list) + f.more }

// result is Violated with the findings if there are any, else OK; note is
// prefixed by the count of findings left out.
func (f *findings) result(note string) Result {
	if f.count() == 0 {
		return Result{Verdict: OK, Note: note}
	}
	if f.more > 0 {
		more := plural.Count(f.more, "more finding") + " not shown"
		if note != "" {
			more += "; " + note
		}
		note = more
	}
	return Result{Verdict: Violated, Findings: f.list, Note: note}
}

// resultUndecided is result(note) for a check that could not judge n
// things, the first of them named in names (what says what they are): it
// names them after the note, and with no finding the verdict is Unknown,
// not OK, since any of them may be a violation.
func (f *findings) resultUndecided(note string, n int, what string, names []string) Result {
	if n == 0 {
		return f.result(note)
	}
	what += ": " + strings.Join(names, "; ")
	if n > len(names) {
		what += "; ..."
	}
	if f.count() == 0 {
		return Result{Verdict: Unknown, Note: what + "; " + note}
	}
	return f.result(note + "; " + what)
}

package spacetime

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/trace"
)

// Axis is what places events along the diagram's time axis.
type Axis string

// The axes.
const (
	// Lamport places events by their recorded Lamport clock: one column
	// per distinct value in the window, so a message always points
	// forwards and concurrent events may share a column.
	Lamport Axis = "lamport"
	// Wall places events by wall-clock time, with long idle stretches cut
	// short (and marked) so that bursts stay readable.
	Wall Axis = "wall"
)

// Axes are the axes, the default first.
var Axes = []Axis{Lamport, Wall}

// Options say what to draw.
type Options struct {
	Axis Axis // Lamport if empty

	// The window. From and To bound the axis (Lamport values, or ns since
	// the run's first event for Wall); HasFrom and HasTo say they are set.
	From, To       int64
	HasFrom, HasTo bool
	Procs          []int      // the processes to show; all if empty
	Around         *trace.Ref // a window of Radius around this event
	Finding        int        // > 0: a window of Radius around the Nth finding (1-based, in Findings' order)
	Radius         int64      // half the width of an Around or Finding window, in axis units; 0: a default
	First          int        // > 0 and no other bound: the window of the run's first First events
	// WallWindow says From and To (and Radius) are wall times (ns since
	// the run's first event) on a Lamport picture.
	WallWindow bool
	// Auto > 0 chooses the window by what matters (see Diagram.Why): the
	// first finding (or Finding), else the faults, else the whole run,
	// else its start, drawing at most about Auto events (heartbeats not
	// counted). From, To, Around and Radius must not be set.
	Auto int
	// Heartbeats draws background messages (a failure detector's); by
	// default they are left out and counted in the caption.
	Heartbeats bool
	// Page is the page of a long window Write writes (1-based; 0: the
	// first). See Layout.
	Page int
	// Trace is the trace file's path, named in the hints of how to draw
	// the rest of the run.
	Trace string

	// MaxEvents refuses a window holding more events (0: DefaultMaxEvents);
	// the error says how to narrow it.
	MaxEvents int
	// NoCollapse keeps runs of local events apart; by default three or
	// more consecutive local events of one process (internal, timeout,
	// wait...) that nothing else refers to are drawn as one node.
	NoCollapse bool

	// Findings are drawn in, those that have events in the window.
	Findings []analyze.Finding
	// MsgTypes are the message types the run's algorithm declares, in
	// order (algo.Spec.MsgTypes): they give the types their colours
	// (render/palette).
	MsgTypes []string
	// Roles name the processes' roles at the start ("coordinator", "token
	// holder"), shown with their lane's label.
	Roles map[int]string
	// Fates are the fates of the messages that were not delivered
	// (dropped, lost_to_crash, in_flight), by message id, as the store's
	// messages table has them (trace.Store.Undelivered). Without them, a
	// message never received is drawn in flight unless a drop event says
	// otherwise.
	Fates map[int64]string
}

// DefaultMaxEvents is the largest window drawn without --max-events: at
// about 0.2 ms an event in SVG, a picture that takes seconds to make and is
// already too long to read whole.
const DefaultMaxEvents = 20000

// defaultRadius is the half-width of an Around or Finding window in
// Lamport units: some 60 columns, a screen or two.
const defaultRadius = 30

func (o *Options) axis() Axis {
	if o.Axis == "" {
		return Lamport
	}
	return o.Axis
}

// auto says the window is chosen (Options.Auto).
func (o *Options) auto() bool {
	return o.Auto > 0 && o.Around == nil && !o.HasFrom && !o.HasTo && o.Radius == 0
}

// DefaultAuto is the budget of events of a window chosen by what matters:
// some five rows of a page.
const DefaultAuto = 360

func (o *Options) maxEvents() int {
	if o.MaxEvents <= 0 {
		return DefaultMaxEvents
	}
	return o.MaxEvents
}

// ParseAxis reads --time.
func ParseAxis(s string) (Axis, error) {
	for _, a := range Axes {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("time axis %q: want lamport or wall", s)
}

// ParseRef reads an event's name as dmx prints it: "P3#120".
func ParseRef(s string) (trace.Ref, error) {
	p, q, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(s), "P"), "#")
	proc, err1 := strconv.Atoi(p)
	seq, err2 := strconv.ParseInt(q, 10, 64)
	if !ok || err1 != nil || err2 != nil || proc < 0 || seq < 1 {
		return trace.Ref{}, fmt.Errorf("event %q: want P<process>#<seq>, as in P3#120", s)
	}
	return trace.Ref{Proc: proc, Seq: seq}, nil
}

// IsDuration reports whether s is a duration ("120ms"), which bounds a
// window in wall time whatever the picture's axis.
func IsDuration(s string) bool {
	_, err := time.ParseDuration(strings.TrimSpace(s))
	return err == nil && strings.TrimSpace(s) != "0"
}

// ParseBound reads a --from or --to value on axis: a Lamport value, or for
// Wall a duration since the run's first event ("120ms") or a number of ns.
func ParseBound(axis Axis, s string) (int64, error) {
	if axis == Wall {
		if d, err := time.ParseDuration(s); err == nil {
			return int64(d), nil
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
			return n, nil
		}
		return 0, fmt.Errorf("%q: want a time since the run's start, such as 120ms", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q: want a Lamport time (a whole number)", s)
	}
	return n, nil
}

// ParseProcs reads --procs: "0,2,5" or "P0,P2" or ranges "1-3".
func ParseProcs(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(f, "-")
		a, err1 := strconv.Atoi(strings.TrimPrefix(lo, "P"))
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(strings.TrimPrefix(hi, "P"))
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b-a > analyze.MaxProcs {
			return nil, fmt.Errorf("processes %q: want ids such as 0,2,5 or 1-3", s)
		}
		for p := a; p <= b; p++ {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// TooBigError says a window holds more events than a picture should, and
// how to narrow it.
type TooBigError struct {
	Events, Max int
	Axis        Axis
	Lo, Hi      int64 // the window's bounds on the axis
	RunLo       int64 // the run's extent on the axis
	RunHi       int64
}

func (e *TooBigError) Error() string {
	what := fmt.Sprintf("Lamport %d..%d", e.Lo, e.Hi)
	span := fmt.Sprintf("Lamport %d..%d", e.RunLo, e.RunHi)
	ex := fmt.Sprintf("--from %d --to %d", e.Lo, e.Lo+max(1, (e.Hi-e.Lo)*int64(e.Max)/int64(max(1, e.Events))))
	if e.Axis == Wall {
		what = fmt.Sprintf("%s..%s", flagDur(e.Lo), flagDur(e.Hi))
		span = fmt.Sprintf("%s..%s", flagDur(e.RunLo), flagDur(e.RunHi))
		ex = fmt.Sprintf("--from %s --to %s", flagDur(e.Lo), flagDur(e.Lo+max(1, (e.Hi-e.Lo)*int64(e.Max)/int64(max(1, e.Events)))))
	}
	return fmt.Sprintf("the window (%s) holds %d events, more than %d; narrow it: %s (the run spans %s), --procs 0,1, --around P0#1, --finding 1, or raise --max-events",
		what, e.Events, e.Max, ex, span)
}

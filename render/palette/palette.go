package palette

import (
	"fmt"
	"slices"
	"strings"
)

// Finding is the red of findings: the only red of any picture.
const Finding = "#d7191c"

// Neutral colours.
const (
	Text       = "#202020"
	Note       = "#555555" // secondary text: axis, captions, counts
	Lane       = "#7f7f7f" // a process's line
	Down       = "#c8c8c8" // its line while it is down (dashed)
	Event      = "#303030" // an event's dot
	Minor      = "#9a9a9a" // local events (internal, timeout, wait)
	Background = "#c4c4c4" // a failure detector's heartbeats
	Grid       = "#e4e4e4" // plot grid lines
	Paper      = "#ffffff"
)

// Marks: events drawn with a shape of their own, and faults.
const (
	Crash     = "#000000" // a black cross; the lane dashed while down
	Lost      = "#6f6f6f" // a grey cross: a message dropped or lost to a crash
	Recover   = "#009e73" // a ring
	Leader    = "#f0e442" // a star, outlined in LeaderInk
	LeaderInk = "#6b5d00" // a leader's outline and its words
	Election  = "#aa4499" // a diamond
	Suspect   = "#e69f00" // a triangle
	Trust     = "#56b4e9" // a triangle
	Deliver   = "#0072b2" // a square
	Fault     = "#8c6d00" // a fault's words (partition, pause)
	Pause     = "#bdbdbd" // a paused process's lane, hatched
	Partition = "#dcdcee" // the band of a partition (and of other faults); their plots' shading
	Reign     = "#b8a000" // a leader's reign: a thin bar above its lane
	Highlight = "#e6a700" // rows an SQL query selected (dmx serve)
	Past      = "#0072b2" // an event's causal past (dmx serve)
	Future    = "#e69f00" // its causal future (dmx serve)
)

// Messages colour message types, by index (see Types).
var Messages = []string{
	"#0072b2", // blue
	"#e69f00", // orange
	"#009e73", // bluish green
	"#cc79a7", // reddish purple
	"#56b4e9", // sky blue
	"#332288", // indigo
	"#999933", // olive
	"#44aa99", // teal
}

// Resources colour critical sections, by index (see Resources): pale, so
// that a bar across a lane does not hide the messages over it, and none
// of them the colour of a message.
var Resources = []string{
	"#ddcc77", // sand
	"#88ccee", // cyan
	"#bbcc99", // pale green
	"#bbbbbb", // grey
	"#eeddaa", // pale yellow
	"#aabbdd", // pale blue
}

// Kinds colour the marked event kinds (as trace.Kind strings); an event of
// another kind is drawn in Event, or Minor for a local one.
var Kinds = map[string]string{
	"crash":          Crash,
	"recover":        Recover,
	"leader":         Leader,
	"election_start": Election,
	"suspect":        Suspect,
	"trust":          Trust,
	"deliver":        Deliver,
	"drop":           Lost,
	"fault":          Fault,
}

// IsBackground reports whether messages of typ are background traffic,
// drawn faint or not at all: a failure detector's heartbeats outnumber the
// messages of the algorithm it serves.
func IsBackground(typ string) bool { return typ == "heartbeat" }

// Order lists types (each once) in the order their colours are given:
// those the algorithm declares in their declared order, then the others by
// name; heartbeats last.
func Order(declared, types []string) []string {
	has := make(map[string]bool, len(types))
	for _, t := range types {
		has[t] = true
	}
	var out []string
	seen := make(map[string]bool, len(types))
	for _, t := range declared {
		if has[t] && !seen[t] && !IsBackground(t) {
			seen[t] = true
			out = append(out, t)
		}
	}
	others := slices.Clone(types)
	slices.Sort(others)
	var bg []string
	for _, t := range slices.Compact(others) {
		switch {
		case seen[t]:
		case IsBackground(t):
			bg = append(bg, t)
		default:
			out = append(out, t)
		}
	}
	return append(out, bg...)
}

// Types gives each message type of a run its colour: the run's types
// (types, all of them) in Order, each the next colour of Messages,
// heartbeats Background. The colour of a type depends on the run's set of
// types and on declared alone, never on the order a window met them in: a
// window, a page of the report and the viewer agree.
func Types(declared, types []string) map[string]string {
	out := make(map[string]string, len(types))
	i := 0
	for _, t := range Order(declared, types) {
		if IsBackground(t) {
			out[t] = Background
			continue
		}
		out[t] = Messages[i%len(Messages)]
		i++
	}
	return out
}

// ResourceColours gives each resource its colour by its index among the
// resources sorted by name.
func ResourceColours(resources []string) map[string]string {
	rs := slices.Clone(resources)
	slices.Sort(rs)
	rs = slices.Compact(rs)
	out := make(map[string]string, len(rs))
	for i, r := range rs {
		out[r] = Resources[i%len(Resources)]
	}
	return out
}

// JS is the palette as JavaScript for dmx serve's page (served as
// palette.js, read before app.js): one constant PALETTE.
func JS() string {
	var b strings.Builder
	b.WriteString("// dmx's palette, written by package render/palette: the colours of every picture of dmx.\n'use strict';\nconst PALETTE = {\n")
	kv := func(k, v string) { fmt.Fprintf(&b, "  %s: %q,\n", k, v) }
	kv("finding", Finding)
	kv("text", Text)
	kv("note", Note)
	kv("lane", Lane)
	kv("down", Down)
	kv("event", Event)
	kv("minor", Minor)
	kv("background", Background)
	kv("crash", Crash)
	kv("lost", Lost)
	kv("pause", Pause)
	kv("partition", Partition)
	kv("reign", Reign)
	kv("highlight", Highlight)
	kv("past", Past)
	kv("future", Future)
	list := func(k string, vs []string) {
		fmt.Fprintf(&b, "  %s: [", k)
		for i, v := range vs {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", v)
		}
		b.WriteString("],\n")
	}
	list("messages", Messages)
	list("resources", Resources)
	b.WriteString("  kinds: {")
	keys := make([]string, 0, len(Kinds))
	for k := range Kinds {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %q", k, Kinds[k])
	}
	b.WriteString("},\n};\n")
	return b.String()
}

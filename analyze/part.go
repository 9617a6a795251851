package analyze

import (
	"slices"

	"github.com/dmxlab/dmx/trace"
)

// Role says what some events of a finding stand for, so that a reader that
// draws the finding (a space-time diagram) can show its structure and not
// only the events: which two events bound a critical section, which
// ordering is missing, which events make an edge of a wait-for cycle.
type Role string

// The roles of a Part.
const (
	// RoleSection is a critical section: Events are its cs_enter and the
	// event that ended it (its cs_exit, or its process's crash), or only
	// the cs_enter if it never ended.
	RoleSection Role = "section"
	// RoleNotBefore is an ordering that should hold and does not: Events[0]
	// did not happen before Events[1].
	RoleNotBefore Role = "not-before"
	// RoleWaitsFor is an edge of a wait-for graph: process From waits for
	// process To. Events are the event of From that puts it there (its
	// wait event, or its pending cs_request) and the event of To that it
	// waits on (To's cs_enter of the resource it holds, or To's own
	// pending cs_request). Label says why ("wait [2]", "holds printer").
	RoleWaitsFor Role = "waits-for"
	// RoleReign is a leadership interval: the leader event with which a
	// process declared itself leader, and the event that ended it (a crash
	// or a later decision), or only the first if it lasted to the end.
	RoleReign Role = "reign"
	// RoleSame links events at different processes about one thing, such
	// as the deliveries of one multicast; Label names the thing.
	RoleSame Role = "same"
)

// Part is one element of a finding's structure: events in a role.
type Part struct {
	Role     Role
	Events   []trace.Ref
	From, To int    // RoleWaitsFor: the waiting process and the one it waits for
	Label    string // a few words for a picture ("overlap 1.2ms", "holds printer")
}

// addParts is add with the finding's parts.
func (f *findings) addParts(msg string, parts []Part, events ...trace.Ref) {
	if len(f.list) >= MaxFindings {
		f.more++
		return
	}
	f.list = append(f.list, Finding{Message: msg, Events: slices.Clone(events), Parts: parts})
}

// part is the RoleSection part of the critical section s.
func (s *csSpan) part(label string) Part {
	return Part{Role: RoleSection, Events: s.refs(nil), Label: label}
}

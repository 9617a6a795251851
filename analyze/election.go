package analyze

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dmxlab/dmx/trace"
)

// The election checks (agreement, validity, split-brain, termination) read
// four kinds of events: election_start (a process starts an election),
// leader (a process decides who leads: detail {"leader": id, "term": t},
// Peer = the leader; a negative leader means "no leader known"), crash and
// recover. What they share is here.
//
// Definitions the four rest on:
//
//   - A process is live from its first event until it crashes, and again
//     from its recovery. An incarnation forgets what the previous one
//     decided: its belief is its latest decision since it last recovered.
//   - A decision d comes after an election_start e if e happened before d,
//     or, when neither happened before the other, if d's wall time is not
//     earlier than e's (in a trace without wall times: if d comes later in
//     the walk, a linear extension of happens-before). A crash sends no
//     message, so elections after failures are seldom causally after each
//     other: wall time orders what causality cannot.
//   - The elections still to be answered are each process's latest
//     election_start: a decision after a process's latest start is after
//     its earlier ones too. A start whose process crashed before sending a
//     single message never left that process and is dropped.

// decision reads a leader event: the leader it names (negative: none) and
// its term (0: the algorithm has no terms), as trace.Event.Leader defines
// them. A detail that cannot be read leaves Peer as the leader, as the
// elections view of the schema does.
func decision(ev *trace.Event) (leader int, term uint64) {
	d, _ := ev.Leader()
	return d.Leader, d.Term
}

// mark is an event kept by an election check: its reference, wall time and
// position in the walk.
type mark struct {
	ref  trace.Ref
	wall int64
	pos  int64
}

func newMark(ev *trace.Event, pos int64) mark { return mark{ev.Ref(), ev.Wall, pos} }

// laterThan reports whether m, which is concurrent with o, counts as after
// it: by wall time when both have one, else by the walk's order.
func (m mark) laterThan(o mark) bool {
	if m.wall != 0 && o.wall != 0 {
		return m.wall >= o.wall
	}
	return m.pos > o.pos
}

// at formats a wall time relative to the start of the run.
func at(wall int64, end End) string {
	if wall == 0 || !end.HasWall {
		return ""
	}
	return " at +" + time.Duration(wall-end.Start).String()
}

// electorate follows who is live, what each live process believes, and
// whether its belief comes after every election that started.
type electorate struct {
	procs   []*voter
	pos     int64
	leaders int64 // leader events seen
	starts  int64 // election_start events seen
}

type voter struct {
	down    bool
	belief  *belief // latest decision of the current incarnation; nil: none
	start   *mark   // latest election_start still to be answered
	sent    bool    // a message left since start
	stale   []bool  // stale[q]: belief is not after q's start
	crashed mark    // the crash that took the process down
}

type belief struct {
	mark
	leader int
	term   uint64
}

func (e *electorate) voter(p int) *voter {
	for p >= len(e.procs) {
		e.procs = append(e.procs, nil)
	}
	if e.procs[p] == nil {
		e.procs[p] = new(voter)
	}
	return e.procs[p]
}

// stale reports whether v's belief is not after q's start.
func (v *voter) isStale(q int) bool { return q < len(v.stale) && v.stale[q] }

func (v *voter) setStale(q int, s bool) {
	for q >= len(v.stale) {
		v.stale = append(v.stale, false)
	}
	v.stale[q] = s
}

// event updates the electorate with the current event.
func (e *electorate) event(ev *trace.Event, hb *HB) {
	e.pos++
	switch ev.Kind {
	case trace.KindLeader:
		e.leaders++
		v := e.voter(ev.Proc)
		leader, term := decision(ev)
		if leader < 0 {
			v.belief = nil
			return
		}
		d := &belief{newMark(ev, e.pos), leader, term}
		v.belief = d
		// Every start was delivered before d: it happened before d, or is
		// concurrent with it.
		for q, w := range e.procs {
			if w != nil && w.start != nil {
				v.setStale(q, !(hb.HappenedBefore(w.start.ref) || d.laterThan(*w.start)))
			}
		}
	case trace.KindElectionStart:
		e.starts++
		v := e.voter(ev.Proc)
		s := newMark(ev, e.pos)
		v.start, v.sent = &s, false
		// Every belief was delivered before s: it happened before s (then
		// it is stale), or is concurrent with it.
		for _, w := range e.procs {
			if w != nil && w.belief != nil {
				w.setStale(ev.Proc, hb.HappenedBefore(w.belief.ref) || !w.belief.laterThan(s))
			}
		}
	case trace.KindSend:
		e.voter(ev.Proc).sent = true
	case trace.KindCrash:
		v := e.voter(ev.Proc)
		v.down, v.belief, v.crashed = true, nil, newMark(ev, e.pos)
		if v.start != nil && !v.sent {
			v.start = nil // the election never left its process
		}
	case trace.KindRecover:
		e.voter(ev.Proc).down = false
	}
}

// live reports whether process p is live at the end of the walk.
func (e *electorate) live(p int) bool {
	return p >= len(e.procs) || e.procs[p] == nil || !e.procs[p].down
}

// procList formats process ids as "P0, P2 and P3".
func procList(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprintf("P%d", id)
	}
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// noElection is the result of an election check on a trace without
// election events (a mutual-exclusion run).
func noElection() Result { return Result{Verdict: OK, Note: "no election events"} }

// sortedInts returns the keys of m in order.
func sortedInts[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package analyze

import (
	"fmt"
	"strings"
	"time"

	"github.com/dmxlab/dmx/trace"
)

// The election checks (agreement, validity, split-brain, termination) read
// four kinds of events: election_start (a process starts an election),
// leader (a process decides who leads: detail {"leader": id, "term": t},
// Peer = the leader; a negative leader means "no leader known"), crash and
// recover. Each resource has its own election (one per shard, say):
// agreement, split-brain and termination judge each on its own, while a
// process's crashes concern all of them. What they share is here.
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

// electorate follows who is live, what each live process believes in each
// election, and whether its belief comes after every election that
// started. An election is all the election events of one resource (one
// election per shard, say): the processes' liveness is shared by all.
type electorate struct {
	higherTerm bool // the run declares Raft's step-down rule (StepDownHigherTerm)
	pos        int64
	leaders    int64   // leader events seen
	starts     int64   // election_start events seen
	down       []bool  // per process: crashed and not recovered
	crashed    []mark  // per process: the crash that took it down last
	sends      []int64 // per process: messages sent
	el         map[string]*election
	names      []string // the elections' resources, in order of first event
}

// election is the state of the election of one resource.
type election struct {
	procs   []*voter
	leaders int64
	starts  int64
	// longest is the longest a process took to decide after an election
	// start, in wall time, among the decisions that came (each process's
	// first decision after each start): how long this run's elections
	// take, against which one still open at the end is judged young.
	longest int64
}

type voter struct {
	belief *belief // latest decision of the current incarnation; nil: none
	start  *mark   // latest election_start still to be answered
	sends  int64   // the process's sends when it started it
	stale  []bool  // stale[q]: belief is not after q's start
}

type belief struct {
	mark
	leader int
	term   uint64
}

// election returns the election of resource res, made on its first event.
func (e *electorate) election(res string) *election {
	if e.el == nil {
		e.el = make(map[string]*election)
	}
	el, added := entry(e.el, res)
	if added {
		e.names = append(e.names, res)
	}
	return el
}

func (el *election) voter(p int) *voter {
	for p >= len(el.procs) {
		el.procs = append(el.procs, nil)
	}
	if el.procs[p] == nil {
		el.procs[p] = new(voter)
	}
	return el.procs[p]
}

// get returns p's state in the election, or nil if it has none.
func (el *election) get(p int) *voter {
	if p < 0 || p >= len(el.procs) {
		return nil
	}
	return el.procs[p]
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
		el := e.election(ev.Resource)
		el.leaders++
		v := el.voter(ev.Proc)
		leader, term := decision(ev)
		if leader < 0 {
			v.belief = nil
			return
		}
		d := &belief{newMark(ev, e.pos), leader, term}
		had := v.belief != nil
		v.belief = d
		// Every start was delivered before d: it happened before d, or is
		// concurrent with it.
		for q, w := range el.procs {
			if w != nil && w.start != nil {
				first := !had || v.isStale(q)
				stale := !(hb.HappenedBefore(w.start.ref) || d.laterThan(*w.start))
				v.setStale(q, stale)
				if first && !stale && d.wall != 0 && w.start.wall != 0 {
					el.longest = max(el.longest, d.wall-w.start.wall)
				}
			}
		}
	case trace.KindElectionStart:
		e.starts++
		el := e.election(ev.Resource)
		el.starts++
		v := el.voter(ev.Proc)
		s := newMark(ev, e.pos)
		v.start, v.sends = &s, e.sent(ev.Proc)
		// Every belief was delivered before s: it happened before s (then
		// it is stale), or is concurrent with it.
		for _, w := range el.procs {
			if w != nil && w.belief != nil {
				w.setStale(ev.Proc, hb.HappenedBefore(w.belief.ref) || !w.belief.laterThan(s))
			}
		}
	case trace.KindSend:
		e.sends = grow(e.sends, ev.Proc)
		e.sends[ev.Proc]++
	case trace.KindCrash:
		e.down, e.crashed = grow(e.down, ev.Proc), grow(e.crashed, ev.Proc)
		e.down[ev.Proc], e.crashed[ev.Proc] = true, newMark(ev, e.pos)
		for _, el := range e.el {
			if v := el.get(ev.Proc); v != nil {
				v.belief = nil
				if v.start != nil && v.sends == e.sent(ev.Proc) {
					v.start = nil // the election never left its process
				}
			}
		}
	case trace.KindRecover:
		if ev.Proc < len(e.down) {
			e.down[ev.Proc] = false
		}
	case trace.KindReceive:
		// Raft's rule: a message of a higher term makes a process forget
		// the leader of its term.
		if e.higherTerm {
			if el := e.el[ev.Resource]; el != nil {
				if v := el.get(ev.Proc); v != nil && v.belief != nil {
					if m, err := ev.Message(); err == nil && m.Term > v.belief.term {
						v.belief = nil
					}
				}
			}
		}
	}
}

// sent returns how many messages process p sent so far.
func (e *electorate) sent(p int) int64 {
	if p < len(e.sends) {
		return e.sends[p]
	}
	return 0
}

// live reports whether process p is live at the end of the walk.
func (e *electorate) live(p int) bool { return p < 0 || p >= len(e.down) || !e.down[p] }

// lastCrash returns the crash that last took p down (Seq 0: none).
func (e *electorate) lastCrash(p int) mark {
	if p < len(e.crashed) {
		return e.crashed[p]
	}
	return mark{}
}

// perElection runs judge over the elections of the electorate, in order of
// their first event, and joins the results (see joinElections).
func (e *electorate) perElection(judge func(el *election) Result) Result {
	results := make([]Result, len(e.names))
	for i, name := range e.names {
		results[i] = judge(e.el[name])
	}
	return joinElections(e.names, results)
}

// joinElections joins the results of one check over the elections of
// several resources, as Summarize joins checks (violated, else unknown,
// else ok if one is, else not applicable); with several elections each finding and note says which one it is about
// ("on shard-1: ..."). One election's result is returned as it is.
func joinElections(names []string, results []Result) Result {
	if len(results) == 1 {
		return results[0]
	}
	out := Result{Verdict: Summarize(results)}
	var f findings
	var notes []string
	for i, r := range results {
		on := "on " + resourceName(names[i]) + ": "
		for _, fd := range r.Findings {
			f.addParts(on+fd.Message, fd.Parts, fd.Events...)
		}
		if r.Note != "" {
			notes = append(notes, on+r.Note)
		}
	}
	out.Findings = f.list
	out.Note = fmt.Sprintf("%d elections", len(results))
	if f.more > 0 {
		out.Note += fmt.Sprintf("; %d more findings not shown", f.more)
	}
	out.Note += "; " + strings.Join(notes, "; ")
	return out
}

// resourceName names a resource in a finding: the events of a trace that
// names none have resource "".
func resourceName(res string) string {
	if res == "" {
		return "(no resource)"
	}
	return res
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
// election events (a mutual-exclusion run): nothing to judge.
func noElection() Result { return notApplicable("no election events") }

package central

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/bully"
	"github.com/dmxlab/dmx/runner/algo/election"
	"github.com/dmxlab/dmx/runner/algo/ring"
)

// Message types of the failover variant, beside request, grant, release and
// the embedded election's (and its detector's heartbeat).
const (
	MsgStateQuery      = "state-query"      // new coordinator -> all: report your state (Term: the new epoch)
	MsgStateIdle       = "state-idle"       // neither asking nor holding (Stamp: every request up to it is over)
	MsgStateRequesting = "state-requesting" // asking (Stamp: the request's original time)
	MsgStateHolding    = "state-holding"    // in the critical section (Stamp: the request granted)
	MsgNack            = "nack"             // the query's epoch is older than one promised (Term: that epoch)
)

// Failover modes (parameter failover).
const (
	FailoverNone  = "none"
	FailoverBully = "bully"
	FailoverRing  = "ring"
)

// electionParams are the parameters the failover variant hands to its
// embedded election machine.
var electionParams = []string{"timeout", "initiators", "fd-period", "fd-allowance", "fd-stall"}

// failoverParams are the parameters that apply only with failover.
var failoverParams = append([]string{"revoke"}, electionParams...)

// entry is one request known to the coordinator: who asked, and the
// request's original time (the requester's Lamport clock when it asked),
// which identifies it: a process's stamps only grow, across crashes too
// (the runtime keeps its clock).
type entry struct {
	id    int
	stamp uint64
}

var noEntry = entry{id: none}

func (e entry) String() string {
	if e.id == none {
		return "none"
	}
	return fmt.Sprintf("P%d@%d", e.id, e.stamp)
}

// leaderer is what the failover variant needs of its election machine
// beside Step: who it believes leads.
type leaderer interface {
	algo.Machine
	Leader() int
}

// failover is one process of central with an elected coordinator (doc.go,
// "Failover").
type failover struct {
	id, n  int
	revoke bool          // take back the grant of a suspected holder
	el     leaderer      // the embedded election (bully or ring)
	host   election.Host // what the election's detector suspects, and its last election number

	// The process as a client.
	state algo.CSState
	stamp uint64       // the current or last request's time; after a restart, the restart's time
	epoch uint64       // the highest epoch promised (persisted)
	coord int          // the coordinator of that epoch, none if unknown
	wait  algo.WaitSet // the last Wait set output

	// The process as coordinator (coord == id).
	collecting bool
	awaiting   []bool   // collecting: the processes whose state has not come yet
	holder     entry    // the request granted, or noEntry
	queue      []entry  // waiting requests
	over       []uint64 // over[j]: every request of P_j stamped up to it is over
}

func newFailover(c algo.Config, mode string) (algo.Machine, error) {
	ec := election.SubConfig(c, "0", electionParams)
	var el algo.Machine
	var err error
	switch mode {
	case FailoverBully:
		el, err = bully.New(ec)
	case FailoverRing:
		el, err = ring.New(ec)
	}
	if err != nil {
		return nil, fmt.Errorf("failover=%s: %w", mode, err)
	}
	var revoke bool
	switch v := c.Param("revoke", "false"); v {
	case "true", "false":
		revoke = v == "true"
	default:
		return nil, fmt.Errorf("parameter revoke=%q: want true or false", v)
	}
	return &failover{id: c.ID, n: c.N, revoke: revoke, el: el.(leaderer), host: election.NewHost(c.N),
		coord: none, holder: noEntry, awaiting: make([]bool, c.N), over: make([]uint64, c.N)}, nil
}

func (m *failover) isCoord() bool { return m.coord == m.id }

// report tells the coordinator of this process's request or release (msg,
// stamped with the request's time and the epoch): as the state kind if
// this process is the coordinator, not at all while none is known (the
// note says what happens instead).
func (m *failover) report(out []algo.Output, msg, kind, meanwhile string) []algo.Output {
	switch {
	case m.isCoord():
		return m.learn(out, m.id, kind, m.stamp)
	case m.coord != none:
		return append(out, algo.SendTo(m.coord, algo.Msg{Type: msg, ID: m.id, Stamp: m.stamp, Term: m.epoch}))
	}
	return append(out, algo.NoteOut("no coordinator known: %s", meanwhile))
}

// Step implements algo.Machine.
func (m *failover) Step(in algo.Input) []algo.Output {
	if o, ok := in.Ignored(m.n, m.state); ok {
		return []algo.Output{o}
	}
	var out []algo.Output
	switch in.Kind {
	case algo.Start:
		out = m.elStep(out, in)
	case algo.Recover:
		// Stable storage holds the election's number (Term) and the epoch
		// promised (Stamp). Every request of the crashed incarnation is
		// over: the restart's time says so to the next coordinator.
		m.epoch, m.stamp = in.Msg.Stamp, in.Clock
		in.Msg = algo.Msg{Type: in.Msg.Type, Term: in.Msg.Term}
		out = m.elStep(out, in)
	case algo.Request:
		m.state, m.stamp = algo.Requested, in.Clock
		// No coordinator yet: the state query of the one being elected
		// collects the request.
		out = m.report(out, MsgRequest, MsgStateRequesting, "the request waits for a state query")
	case algo.Release:
		m.state = algo.Released
		out = m.report(out, MsgRelease, MsgStateIdle, "the next state query reports the release")
	case algo.Receive:
		switch in.Msg.Type {
		case MsgRequest, MsgRelease, MsgStateIdle, MsgStateRequesting, MsgStateHolding:
			out = m.onReport(out, in.From, in.Msg)
		case MsgGrant:
			out = m.onGrant(out, in.From, in.Msg)
		case MsgStateQuery:
			out = m.onQuery(out, in.From, in.Msg.Term)
		case MsgNack:
			out = m.onNack(out, in.From, in.Msg.Term)
		default:
			out = m.elStep(out, in)
		}
	case algo.Timer:
		out = m.elStep(out, in)
	}
	return m.refreshWait(out)
}

// elStep gives in to the election machine and carries on with its outputs.
func (m *failover) elStep(out []algo.Output, in algo.Input) []algo.Output {
	if in.Kind == algo.Start || in.Kind == algo.Recover {
		// The detector restarts with the machine: it suspects nobody.
		m.host.Restart()
	}
	return m.absorb(out, m.el.Step(in))
}

// absorb passes the election's outputs on, combining its Persist with the
// epoch, and reacts to its Suspect, Trust and Leader outputs.
func (m *failover) absorb(out, els []algo.Output) []algo.Output {
	out, react := m.host.Absorb(out, els, m.persist)
	for _, o := range react {
		switch o.Kind {
		case algo.Suspect:
			out = m.onSuspect(out, o.To)
		case algo.Trust:
			out = m.onTrust(out, o.To)
		case algo.Leader:
			out = m.onLeader(out, o.Leader)
		}
	}
	return out
}

// persist is the node's stable storage: the election's number and the
// epoch promised, so that a restarted process neither reuses an election
// number nor takes an old coordinator's grant for a current one.
func (m *failover) persist() algo.Output {
	return algo.Output{Kind: algo.Persist, Msg: algo.Msg{Type: "state", Term: m.host.Term, Stamp: m.epoch}}
}

// onLeader: the election decided. Its winner becomes coordinator of a new
// epoch and asks everyone for their state before it grants anything; a
// coordinator that learns that another process won steps down at once.
func (m *failover) onLeader(out []algo.Output, l int) []algo.Output {
	if l == m.id {
		return m.collect(out, m.epoch)
	}
	if m.isCoord() {
		out = append(out, algo.NoteOut("P%d won an election: step down as coordinator of epoch %d", l, m.epoch))
		m.stepDown(none)
	}
	return out
}

func (m *failover) stepDown(coord int) {
	m.coord = coord
	m.collecting = false
	clear(m.awaiting)
	m.holder, m.queue = noEntry, nil
}

// collect starts an epoch above seen, numbered as the election numbers are
// (unique to this process), and sends a state query to every process the
// detector does not suspect. Its own state it knows.
func (m *failover) collect(out []algo.Output, seen uint64) []algo.Output {
	m.stepDown(m.id)
	m.epoch = election.NextTerm(max(seen, m.epoch), m.id, m.n)
	m.collecting = true
	out = append(out, m.persist())
	switch m.state {
	case algo.Requested:
		m.queue = append(m.queue, entry{m.id, m.stamp})
	case algo.Held:
		m.holder = entry{m.id, m.stamp}
	}
	for j := 0; j < m.n; j++ {
		if j != m.id && !m.host.Suspected[j] {
			m.awaiting[j] = true
			out = append(out, algo.SendTo(j, algo.Msg{Type: MsgStateQuery, Term: m.epoch}))
		}
	}
	return m.maybeServe(out)
}

// maybeServe ends the collection once every process it waits for has
// answered (or is suspected): the queue is ordered by the requests'
// original times, so that an old request does not lose its turn to the
// failure, and the resource is granted if nobody holds it.
func (m *failover) maybeServe(out []algo.Output) []algo.Output {
	if !m.collecting || slices.Contains(m.awaiting, true) {
		return out
	}
	m.collecting = false
	slices.SortFunc(m.queue, func(a, b entry) int {
		if a.stamp != b.stamp {
			if a.stamp < b.stamp {
				return -1
			}
			return 1
		}
		return a.id - b.id
	})
	out = append(out, algo.NoteOut("coordinator of epoch %d: holder %v, queue %v", m.epoch, m.holder, m.queue))
	return m.grantNext(out)
}

// onQuery is a client's side of a state query from P_from for epoch e.
func (m *failover) onQuery(out []algo.Output, from int, e uint64) []algo.Output {
	newer := e > m.epoch
	switch {
	case e < m.epoch:
		return append(out, algo.SendTo(from, algo.Msg{Type: MsgNack, Term: m.epoch}))
	case newer:
		if m.isCoord() {
			out = append(out, algo.NoteOut("P%d is coordinator of epoch %d: step down", from, e))
		}
		m.stepDown(from)
		m.epoch = e
		out = append(out, m.persist())
	default:
		// The same epoch again (a coordinator that heard from this process
		// after suspecting it): epoch numbers are unique to their
		// coordinator, so from is its coordinator even if a restart
		// forgot it.
		m.coord = from
	}
	// From now on, grants of older epochs are refused.
	t := map[algo.CSState]string{algo.Released: MsgStateIdle, algo.Requested: MsgStateRequesting, algo.Held: MsgStateHolding}[m.state]
	out = append(out, algo.SendTo(from, algo.Msg{Type: t, Stamp: m.stamp, Term: e}))
	if newer && m.el.Leader() == m.id {
		// The election still names this process (P_from won an earlier
		// election, or both believe they lead until the election settles
		// it): collect again, above P_from's epoch. The election, not the
		// epochs, says who leads; the epochs only fence off the loser.
		out = append(out, algo.NoteOut("the election names this process: collect again above epoch %d", e))
		return m.collect(out, e)
	}
	return out
}

// onNack: a process promised a later epoch than the one this coordinator
// collects for (it restarted with an old one, or another process
// collected meanwhile). If the election still names this process, it
// collects again above that epoch.
func (m *failover) onNack(out []algo.Output, from int, e uint64) []algo.Output {
	if !m.isCoord() || e <= m.epoch {
		return append(out, algo.NoteOut("nack from P%d for epoch %d ignored", from, e))
	}
	if m.el.Leader() != m.id {
		out = append(out, algo.NoteOut("P%d promised epoch %d: step down", from, e))
		m.stepDown(none)
		m.epoch = e
		return append(out, m.persist())
	}
	out = append(out, algo.NoteOut("P%d promised epoch %d: collect again above it", from, e))
	return m.collect(out, e)
}

// onGrant: a grant counts only if it comes from the coordinator of the
// epoch this process promised, for the request it is making now.
func (m *failover) onGrant(out []algo.Output, from int, msg algo.Msg) []algo.Output {
	switch {
	case m.state != algo.Requested:
		return append(out, algo.NoteOut("grant from P%d ignored: not requesting (%v)", from, m.state))
	case msg.Term != m.epoch || from != m.coord:
		return append(out, algo.NoteOut("grant from P%d of epoch %d refused: the coordinator of epoch %d is P%d", from, msg.Term, m.epoch, m.coord))
	case msg.Stamp != m.stamp:
		return append(out, algo.NoteOut("grant from P%d for request @%d ignored: this request is @%d", from, msg.Stamp, m.stamp))
	}
	return m.enter(out)
}

// onReport is the coordinator's side of a request, a release or a state
// reply of P_j.
func (m *failover) onReport(out []algo.Output, j int, msg algo.Msg) []algo.Output {
	if !m.isCoord() || msg.Term != m.epoch {
		return append(out, algo.NoteOut("%s from P%d of epoch %d ignored: %s", msg.Type, j, msg.Term, m.role()))
	}
	kind := msg.Type
	switch kind {
	case MsgRequest:
		kind = MsgStateRequesting
	case MsgRelease:
		kind = MsgStateIdle
	default:
		if m.collecting {
			m.awaiting[j] = false
		}
	}
	out = m.learn(out, j, kind, msg.Stamp)
	return m.maybeServe(out)
}

func (m *failover) role() string {
	if m.isCoord() {
		return fmt.Sprintf("coordinator of epoch %d", m.epoch)
	}
	if m.coord == none {
		return fmt.Sprintf("not the coordinator (epoch %d, coordinator unknown)", m.epoch)
	}
	return fmt.Sprintf("not the coordinator (epoch %d is P%d's)", m.epoch, m.coord)
}

// learn is the coordinator taking in what P_j says of itself (kind: one of
// the state message types) about its request stamped s. Requests,
// releases and state replies may overtake each other; the stamps put them
// in order: a process asks for one thing at a time, so a report of a
// request stamped s means that every earlier request of P_j is over.
func (m *failover) learn(out []algo.Output, j int, kind string, s uint64) []algo.Output {
	if kind != MsgStateIdle && s <= m.over[j] {
		return append(out, algo.NoteOut("%s of P%d @%d ignored: that request is over", kind, j, s))
	}
	if kind == MsgStateIdle {
		m.over[j] = max(m.over[j], s)
	} else {
		m.over[j] = max(m.over[j], s-1)
	}
	if m.holder.id == j && m.holder.stamp <= m.over[j] {
		m.holder = noEntry
	}
	m.queue = slices.DeleteFunc(m.queue, func(e entry) bool { return e.id == j && e.stamp <= m.over[j] })
	switch kind {
	case MsgStateRequesting:
		if m.holder != (entry{j, s}) && !slices.Contains(m.queue, entry{j, s}) {
			// Seed 000: "Maintain queue"; arrival order while serving.
			m.queue = append(m.queue, entry{j, s})
		}
	case MsgStateHolding:
		switch {
		case m.holder == noEntry:
			m.holder = entry{j, s}
			m.queue = slices.DeleteFunc(m.queue, func(e entry) bool { return e.id == j })
		case m.holder.id != j:
			out = append(out, algo.NoteOut("P%d reports holding the resource, granted to %v: mutual exclusion is already broken", j, m.holder))
		}
	}
	if m.collecting {
		return out
	}
	return m.grantNext(out)
}

// grantNext grants the resource to the head of the queue, skipping the
// requests of suspected processes (a grant to a crashed process would
// never be released: nothing would tell the coordinator again).
func (m *failover) grantNext(out []algo.Output) []algo.Output {
	for m.holder == noEntry && len(m.queue) > 0 {
		e := m.queue[0]
		m.queue = m.queue[1:]
		if e.id != m.id && m.host.Suspected[e.id] {
			out = append(out, algo.NoteOut("request of %v dropped: P%d is suspected", e, e.id))
			continue
		}
		m.holder = e
		if e.id == m.id {
			return m.enter(out)
		}
		return append(out, algo.SendTo(e.id, algo.Msg{Type: MsgGrant, ID: e.id, Stamp: e.stamp, Term: m.epoch}))
	}
	return out
}

// onSuspect: the coordinator stops waiting for a suspected process's state
// and drops its requests. With revoke=true it also takes back its grant
// (seed 004's "Deadlock if Coordinator fails" has a twin: a holder that
// crashed never releases), which is safe only if the suspicion is right: a
// holder falsely suspected is still in the critical section when the next
// one enters (doc.go). By default the grant stands.
func (m *failover) onSuspect(out []algo.Output, j int) []algo.Output {
	if !m.isCoord() {
		return out
	}
	m.awaiting[j] = false
	m.queue = slices.DeleteFunc(m.queue, func(e entry) bool { return e.id == j })
	if m.holder.id == j {
		if !m.revoke {
			return append(out, algo.NoteOut("holder %v suspected: its grant stands (revoke=false)", m.holder))
		}
		out = append(out, algo.NoteOut("holder %v suspected: its grant is revoked", m.holder))
		m.over[j] = max(m.over[j], m.holder.stamp)
		m.holder = noEntry
	}
	if m.collecting {
		return m.maybeServe(out)
	}
	return m.grantNext(out)
}

// onTrust: a process the coordinator skipped or dropped is heard from
// again: ask it for its state (its requests were dropped with the
// suspicion). While collecting, wait for its answer too.
func (m *failover) onTrust(out []algo.Output, j int) []algo.Output {
	if !m.isCoord() {
		return out
	}
	if m.collecting {
		m.awaiting[j] = true
	}
	return append(out, algo.SendTo(j, algo.Msg{Type: MsgStateQuery, Term: m.epoch}))
}

func (m *failover) enter(out []algo.Output) []algo.Output {
	m.state = algo.Held
	out = m.refreshWait(out)
	return append(out, algo.EnterCS())
}

// refreshWait outputs a Wait when the set this process is blocked on
// changes: a client waits for its coordinator; the coordinator, when it
// asks itself, for the processes whose state it awaits, then for the
// holder.
func (m *failover) refreshWait(out []algo.Output) []algo.Output {
	var set []int
	switch {
	case m.state != algo.Requested:
	case m.isCoord() && m.collecting:
		for j, a := range m.awaiting {
			if a {
				set = append(set, j)
			}
		}
	case m.isCoord():
		if m.holder != noEntry && m.holder.id != m.id {
			set = []int{m.holder.id}
		}
	case m.coord != none:
		set = []int{m.coord}
	}
	return m.wait.Set(out, set)
}

// String describes the machine's state, for scripts and debugging.
func (m *failover) String() string {
	var b strings.Builder
	b.WriteString(m.state.String())
	if len(m.wait) > 0 {
		fmt.Fprintf(&b, " waiting-for=%v", m.wait)
	}
	c := "?"
	if m.coord != none {
		c = fmt.Sprintf("P%d", m.coord)
	}
	fmt.Fprintf(&b, " epoch=%d coordinator=%s", m.epoch, c)
	if m.isCoord() {
		if m.collecting {
			var aw []int
			for j, a := range m.awaiting {
				if a {
					aw = append(aw, j)
				}
			}
			fmt.Fprintf(&b, " collecting awaiting=%v", aw)
		}
		fmt.Fprintf(&b, " holder=%v queue=%v", m.holder, m.queue)
	}
	if s, ok := m.el.(fmt.Stringer); ok {
		b.WriteString(" | " + s.String())
	}
	return b.String()
}

// State implements algo.Inspector: the client's state and epoch, the
// coordinator it follows, what it holds as coordinator (grant, queue,
// state collection), and the embedded election's state.
func (m *failover) State() any {
	type request struct {
		ID    int    `json:"id"`
		Stamp uint64 `json:"stamp"`
	}
	st := struct {
		State       string    `json:"state"`
		Stamp       uint64    `json:"stamp"`
		Epoch       uint64    `json:"epoch"`
		Coordinator int       `json:"coordinator"`
		Collecting  []int     `json:"collecting,omitempty"`
		Holder      *request  `json:"holder,omitempty"`
		Queue       []request `json:"queue,omitempty"`
		WaitingFor  []int     `json:"waiting_for"`
		Election    any       `json:"election,omitempty"`
	}{State: m.state.String(), Stamp: m.stamp, Epoch: m.epoch, Coordinator: m.coord, WaitingFor: algo.Clone(m.wait)}
	if m.isCoord() {
		if m.collecting {
			st.Collecting = algo.Members(m.awaiting)
		}
		if m.holder != noEntry {
			st.Holder = &request{m.holder.id, m.holder.stamp}
		}
		st.Queue = []request{}
		for _, e := range m.queue {
			st.Queue = append(st.Queue, request{e.id, e.stamp})
		}
	}
	if in, ok := m.el.(algo.Inspector); ok {
		st.Election = in.State()
	}
	return st
}

package maekawa

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner/algo"
)

// Message types.
const (
	MsgRequest    = "request"
	MsgReply      = "reply"
	MsgRelease    = "release"
	MsgInquire    = "inquire"
	MsgRelinquish = "relinquish"
	MsgFailed     = "failed"
)

var params = []algo.Param{
	{Name: "variant", Default: "basic", Doc: "basic: seed 001's actions, which can deadlock; inquire: the deadlock-free version with Lamport timestamps, inquire, relinquish and failed (needs FIFO channels)"},
}

// variants are the configurations tests run: basic (the defaults) and
// the deadlock-free version.
var variants = []algo.Variant{
	{Doc: "basic: seed 001's actions", Flawed: "two requests can each hold votes the other needs: a deadlock (seed 001)"},
	{Params: map[string]string{"variant": "inquire"}, Doc: "the deadlock-free version with inquire, relinquish and failed"},
}

// docGo is this package's doc.go, the documentation dmx list shows.
//
//go:embed doc.go
var docGo string

// Spec describes the algorithm for dmx list and builds its machines.
var Spec = algo.Spec{
	Doc:      algo.PackageDoc(docGo),
	Name:     "maekawa",
	Kind:     algo.MutualExclusion,
	Summary:  "votes from a grid voting set (row + column); one vote at a time; the basic version can deadlock, variant=inquire cannot",
	Seeds:    []string{"001 Maekawa's algorithm: voting sets, actions, safety, liveness", "004 Maekawa's algorithm"},
	MsgTypes: []string{MsgRequest, MsgReply, MsgRelease, MsgInquire, MsgRelinquish, MsgFailed},
	IDTypes:  []string{MsgRequest, MsgRelease},
	// Seed 004: "Ordering: Yes" (basic Maekawa deadlocks before it can
	// show otherwise; with inquire, requests are served by timestamp).
	Properties: []string{"mutex-causal", "mutex-realtime", "liveness", "fairness", "deadlock"},
	Costs: []theory.Cost{
		{Measure: theory.MessagesPerCS, Formula: "3(K-1), K = 2*sqrt(N)-1 on a square grid (about 3*sqrt(N))",
			Note: "request, vote and release to each other member of the voting set; more with variant=inquire",
			Seed: "001 Maekawa's algorithm: voting sets; 004 overview", Eval: messagesPerCS},
		{Measure: theory.SyncDelay, Formula: "2 (1 when the process that leaves is the common voter)", Note: "release to the common voter, its vote",
			Seed: "004 Maekawa's algorithm, properties", Eval: theory.Const(theory.Typical(2, 1, 2))},
		{Measure: theory.ClientDelay, Formula: "2 (multicast + votes)", Seed: "004 Maekawa's algorithm, properties", Eval: theory.Const(theory.Exact(2))},
		{Measure: theory.Bandwidth, Formula: "3*sqrt(N)", Note: "without hardware multicast", Seed: "004 Maekawa's algorithm, properties",
			Eval: theory.InN(func(n float64) theory.Estimate { return theory.Exact(3 * math.Sqrt(n)) })},
	},
	Params:   params,
	Variants: variants,
	New:      New,
}

// messagesPerCS is 3(K-1) for a critical section of a process whose
// voting set has K members (itself included: its own vote costs no
// message), averaged over the run's critical sections: the sets differ in
// size when N is not a square.
func messagesPerCS(s theory.Setting) theory.Estimate {
	if len(s.CS) == 0 {
		return theory.Estimate{}
	}
	var msgs, cs float64
	lo, hi := s.N, 0
	for p, c := range s.CS {
		k := len(VotingSet(p, s.N))
		lo, hi = min(lo, k), max(hi, k)
		msgs += float64(c) * 3 * float64(k-1)
		cs += float64(c)
	}
	var e theory.Estimate
	if cs > 0 {
		e = theory.Exact(msgs / cs)
	}
	e.Formula = fmt.Sprintf("3(K-1), K = %d", lo)
	if lo != hi {
		e.Formula = fmt.Sprintf("3(K-1), K = %d..%d by voting set, averaged", lo, hi)
	}
	return e
}

// VotingSet returns V_i for the grid of seed 001: P_i's row plus its column
// in a grid of ⌈√N⌉ columns filled row by row (see the package doc for why
// any two sets intersect when the last row is short). The result is sorted
// and contains i.
func VotingSet(i, n int) []int {
	c := 1
	for c*c < n {
		c++
	}
	row, col := i/c, i%c
	var set []int
	for j := 0; j < n; j++ {
		if j/c == row || j%c == col {
			set = append(set, j)
		}
	}
	return set
}

type state int

const (
	released state = iota
	wanted
	held
)

func (s state) String() string {
	return [...]string{"RELEASED", "WANTED", "HELD"}[s]
}

// req is a request as a voter keeps it: (T, id), in algo's total order
// of requests, and whether this voter told its requester failed.
type req struct {
	algo.StampedRequest
	failed bool // inquire variant: this voter told the requester failed
}

// Machine is one process of Maekawa's algorithm: a requester and a voter.
type Machine struct {
	id, n   int
	inquire bool
	set     []int // V_i

	// Requester.
	state     state
	t         uint64 // T_i of the current request
	votes     []bool // votes[v]: P_v's vote is with this process
	failed    []bool // inquire: failed[v]: P_v said failed and has not voted since
	inquiries []bool // inquire: an inquire from P_v is deferred

	// Voter.
	voted    bool
	lock     req   // the request voted for, when voted
	queue    []req // basic: FIFO; inquire: by (T, id)
	inquired bool  // inquire: an inquire was sent for the current vote

	wait algo.WaitSet // the last Wait set output
	box  algo.Outbox  // this Step's outputs and messages to itself
}

// New builds the machine of node c.ID.
func New(c algo.Config) (algo.Machine, error) {
	if err := c.Validate(params); err != nil {
		return nil, err
	}
	m := &Machine{id: c.ID, n: c.N, set: VotingSet(c.ID, c.N), box: algo.Outbox{Self: c.ID}}
	switch v := c.Param("variant", "basic"); v {
	case "basic":
	case "inquire":
		m.inquire = true
	default:
		return nil, fmt.Errorf("parameter variant=%q: want basic or inquire", v)
	}
	m.reset()
	return m, nil
}

func (m *Machine) reset() {
	m.state = released
	m.votes = make([]bool, m.n)
	m.failed = make([]bool, m.n)
	m.inquiries = make([]bool, m.n)
	m.voted, m.lock, m.queue, m.inquired = false, req{}, nil, false
	m.wait = nil
}

// Step implements algo.Machine.
func (m *Machine) Step(in algo.Input) []algo.Output {
	return m.box.Step(in, m.n, m.handle, m.deliver, m.updateWait)
}

// handle is what an input does, before the messages to itself.
func (m *Machine) handle(in algo.Input) {
	switch in.Kind {
	case algo.Start:
	case algo.Recover:
		// A recovered process forgets its vote and its queue: it may vote
		// twice, and queued requesters wait for ever (seed 004: "Deadlock
		// in voting-set if process crashes").
		m.reset()
	case algo.Request:
		if m.state != released {
			m.box.Note("request ignored: already %v", m.state)
			break
		}
		// enter(): state = WANTED; multicast request to V_i.
		m.state, m.t = wanted, in.Clock
		clear(m.votes)
		clear(m.failed)
		clear(m.inquiries)
		for _, v := range m.set {
			m.box.Send(v, algo.Msg{Type: MsgRequest, Stamp: m.t, ID: m.id})
		}
	case algo.Release:
		if m.state != held {
			m.box.Note("release ignored: not in the critical section (%v)", m.state)
			break
		}
		// exit(): state = RELEASED; multicast release to V_i.
		m.state = released
		clear(m.votes)
		for _, v := range m.set {
			m.box.Send(v, algo.Msg{Type: MsgRelease, Stamp: m.t, ID: m.id})
		}
	case algo.Receive:
		m.deliver(in.From, in.Msg)
	case algo.Timer:
		m.box.Note("unexpected timer %q", in.TimerName)
	}
}

func (m *Machine) deliver(from int, msg algo.Msg) {
	switch msg.Type {
	case MsgRequest:
		m.onRequest(req{StampedRequest: algo.StampedRequest{T: msg.Stamp, ID: from}})
	case MsgRelease:
		m.onRelease(from)
	case MsgReply:
		m.onReply(from)
	case MsgInquire:
		m.onInquire(from, msg.Stamp)
	case MsgRelinquish:
		m.onRelinquish(from)
	case MsgFailed:
		m.onFailed(from, msg.Stamp)
	default:
		m.box.Note("unknown message %q from P%d", msg.Type, from)
	}
}

// vote gives this process's vote to r.
func (m *Machine) vote(r req) {
	m.voted, m.lock, m.inquired = true, r, false
	m.box.Send(r.ID, algo.Msg{Type: MsgReply, Stamp: r.T})
}

func (m *Machine) onRequest(r req) {
	if !m.inquire {
		// Seed 001: "if (state == Held OR voted = true) queue Request else
		// send Reply to P_j and set voted = true".
		if m.state == held || m.voted {
			m.queue = append(m.queue, r)
			return
		}
		m.vote(r)
		return
	}
	if !m.voted {
		m.vote(r)
		return
	}
	var i int
	m.queue, i = algo.Enqueue(m.queue, r)
	if i == 0 && r.Before(m.lock.StampedRequest) {
		// R precedes the vote's holder and every waiting request: ask the
		// holder for the vote back, once per vote.
		if !m.inquired {
			m.inquired = true
			m.box.Send(m.lock.ID, algo.Msg{Type: MsgInquire, Stamp: m.lock.T})
		}
		// The displaced head now waits behind R and the holder.
		if len(m.queue) > 1 && !m.queue[1].failed {
			m.queue[1].failed = true
			m.box.Send(m.queue[1].ID, algo.Msg{Type: MsgFailed, Stamp: m.queue[1].T})
		}
		return
	}
	m.queue[i].failed = true
	m.box.Send(r.ID, algo.Msg{Type: MsgFailed, Stamp: r.T})
}

func (m *Machine) onRelease(from int) {
	if m.inquire && (!m.voted || m.lock.ID != from) {
		m.box.Note("release from P%d, which does not hold this vote", from)
		return
	}
	// Seed 001: "if (queue empty) voted = false else dequeue head of queue,
	// say P_k; send Reply only to P_k; voted = true". The basic version, as
	// written, does not check who releases.
	if len(m.queue) == 0 {
		m.voted, m.lock, m.inquired = false, req{}, false
		return
	}
	head := m.queue[0]
	m.queue = m.queue[1:]
	m.vote(head)
}

func (m *Machine) onRelinquish(from int) {
	if !m.voted || m.lock.ID != from {
		m.box.Note("relinquish from P%d, which does not hold this vote", from)
		return
	}
	// Queue the holder's request again (it already counts as failed here)
	// and vote for the head of the queue, which precedes it.
	back := m.lock
	back.failed = true
	m.queue, _ = algo.Enqueue(m.queue, back)
	head := m.queue[0]
	m.queue = m.queue[1:]
	m.vote(head)
}

func (m *Machine) onReply(from int) {
	if m.state != wanted {
		m.box.Note("reply from P%d ignored: not waiting (%v)", from, m.state)
		return
	}
	m.votes[from] = true
	m.failed[from] = false
	m.inquiries[from] = false
	for _, v := range m.set {
		if !m.votes[v] {
			return
		}
	}
	// "Wait for Reply (vote) messages from all processes in V_i (including
	// vote from self); state = Held".
	m.state = held
	clear(m.inquiries) // the release will answer them
	m.updateWait()
	m.box.Out = append(m.box.Out, algo.EnterCS())
}

func (m *Machine) onInquire(from int, t uint64) {
	if m.state != wanted || t != m.t || !m.votes[from] {
		// In the CS (the release answers it) or about an older request.
		return
	}
	if slices.Contains(m.failed, true) {
		m.relinquish(from)
		return
	}
	m.inquiries[from] = true
}

func (m *Machine) onFailed(from int, t uint64) {
	if m.state != wanted || t != m.t {
		return
	}
	m.failed[from] = true
	for v, deferred := range m.inquiries {
		if deferred {
			m.relinquish(v)
		}
	}
}

func (m *Machine) relinquish(v int) {
	m.inquiries[v] = false
	m.votes[v] = false
	m.failed[v] = true
	m.box.Send(v, algo.Msg{Type: MsgRelinquish, Stamp: m.t})
}

// updateWait outputs a Wait when the set of processes this one is blocked on
// changes: the members of V_i whose vote it lacks while it wants the CS, and,
// if requests wait in its voter queue, the process it voted for.
func (m *Machine) updateWait() {
	var set []int
	if m.state == wanted {
		for _, v := range m.set {
			if v != m.id && !m.votes[v] {
				set = append(set, v)
			}
		}
	}
	if m.voted && len(m.queue) > 0 && m.lock.ID != m.id && !slices.Contains(set, m.lock.ID) {
		set = append(set, m.lock.ID)
		slices.Sort(set)
	}
	m.box.Out = m.wait.Set(m.box.Out, set)
}

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v V=%v", m.state, m.set)
	if m.state == wanted {
		var got []int
		for _, v := range m.set {
			if m.votes[v] {
				got = append(got, v)
			}
		}
		fmt.Fprintf(&b, " T=%d votes=%v", m.t, got)
	}
	if m.voted {
		fmt.Fprintf(&b, " voted-for=P%d", m.lock.ID)
	}
	if len(m.queue) > 0 {
		fmt.Fprintf(&b, " queue=%v", m.queue)
	}
	if len(m.wait) > 0 {
		fmt.Fprintf(&b, " waiting-for=%v", m.wait)
	}
	return b.String()
}

// State implements algo.Inspector: as a requester, its voting set, the
// request's T and the votes it holds; as a voter, whom its vote is with
// and the queue of requests (T, id) waiting for it.
func (m *Machine) State() any {
	type request struct {
		T      uint64 `json:"t"`
		ID     int    `json:"id"`
		Failed bool   `json:"failed,omitempty"`
	}
	st := struct {
		State      string    `json:"state"`
		VotingSet  []int     `json:"voting_set"`
		T          uint64    `json:"t,omitempty"`
		Votes      []int     `json:"votes"`
		Failed     []int     `json:"failed,omitempty"`
		VotedFor   *request  `json:"voted_for"`
		Queue      []request `json:"queue"`
		WaitingFor []int     `json:"waiting_for"`
	}{State: m.state.String(), VotingSet: algo.Clone(m.set), Votes: algo.Members(m.votes), Queue: []request{}, WaitingFor: algo.Clone(m.wait)}
	if m.state != released {
		st.T = m.t
	}
	if m.inquire {
		st.Failed = algo.Members(m.failed)
	}
	if m.voted {
		st.VotedFor = &request{T: m.lock.T, ID: m.lock.ID}
	}
	for _, r := range m.queue {
		st.Queue = append(st.Queue, request{r.T, r.ID, r.failed})
	}
	return st
}

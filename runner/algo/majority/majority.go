package majority

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner/algo"
)

// Message types.
const (
	MsgRequest = "request"
	MsgGrant   = "grant"
	MsgDeny    = "deny"
	MsgRelease = "release"
)

// MsgVote is the type of the persisted vote (not a message on the wire).
const MsgVote = "vote"

// TimerBackoff is the name of the back-off timer.
const TimerBackoff = "backoff"

var params = []algo.Param{
	{Name: "coordinators", Default: "N", Doc: "how many coordinators: processes 0..k-1 vote (seed 002 point 1); 1..N"},
	{Name: "forget", Default: "false", Doc: "true: a restarted coordinator forgets its vote and votes again (seed 002 point 4); false: the vote is persisted and restored"},
	{Name: "backoff", Default: "1ms-10ms", Doc: "back-off before a retry (seed 002 point 5): MIN-MAX drawn uniformly from the seeded source, or one duration for a fixed back-off; not 0"},
}

// variants are the configurations tests run besides the defaults.
var variants = []algo.Variant{
	{Params: map[string]string{"forget": "true", "coordinators": "1"}, Doc: "one coordinator that forgets its vote on restart (seed 002 point 4)"},
}

// docGo is this package's doc.go, the documentation dmx list shows.
//
//go:embed doc.go
var docGo string

// Spec describes the algorithm for dmx list and builds its machines.
var Spec = algo.Spec{
	Doc:     algo.PackageDoc(docGo),
	Name:    "majority",
	Kind:    algo.MutualExclusion,
	Summary: "decentralized: n coordinators vote GRANT or DENY in timestamp order, m > n/2 grants to enter, give back and back off when short; starvation possible, forget=true breaks safety on restarts",
	Seeds: []string{
		"002 Decentralized Algorithm, points 1-6 and the timestamp rule",
		"002 Summary point 4 (no crash tolerance)",
	},
	MsgTypes:   []string{MsgRequest, MsgGrant, MsgDeny, MsgRelease},
	IDTypes:    []string{MsgRequest, MsgRelease},
	Properties: []string{"mutex-causal", "mutex-realtime", "liveness", "deadlock"},
	Costs: []theory.Cost{
		{Measure: theory.MessagesPerCS, Formula: "3k'", Note: "uncontended: request, answer and release to each of the k' coordinators other than the requester (3(N-1) by default); up to 3k' more per failed attempt",
			Eval: messagesPerCS},
		{Measure: theory.SyncDelay, Formula: "2", Note: "release to a coordinator, its grant", Eval: theory.Const(theory.Exact(2))},
	},
	Params:   params,
	Variants: variants,
	New:      New,
}

// messagesPerCS is 3k' for an uncontended critical section, k' the
// coordinators other than the requester, averaged over the run's critical
// sections: a coordinator that requests asks one coordinator fewer.
func messagesPerCS(s theory.Setting) theory.Estimate {
	k := s.N
	if v, err := strconv.Atoi(s.Params["coordinators"]); err == nil {
		k = v
	}
	var msgs, cs float64
	for p, c := range s.CS {
		others := k
		if p < k {
			others--
		}
		msgs += float64(c) * 3 * float64(others)
		cs += float64(c)
	}
	if cs == 0 {
		return theory.Estimate{}
	}
	return theory.Exact(msgs / cs)
}

// Quorum is m, the number of grants a request needs out of k coordinators:
// the smallest m > k/2 (seed 002 point 2).
func Quorum(k int) int { return k/2 + 1 }

type state int

const (
	idle       state = iota // not asking
	wanting                 // an attempt is open: collecting answers
	held                    // in the critical section
	backingOff              // gave up an attempt; the back-off timer runs
)

func (s state) String() string {
	return [...]string{"IDLE", "WANTING", "HELD", "BACKOFF"}[s]
}

type answer int8

const (
	missing answer = iota
	granted
	denied
)

// req is a request (T, id), in algo's total order of requests: by
// timestamp, ties by id.
type req = algo.StampedRequest

// Machine is one process of the decentralized algorithm: a requester, and a
// coordinator if its id is below k.
type Machine struct {
	id, n  int
	k, m   int // coordinators 0..k-1; grants needed
	forget bool
	boMin  int64 // back-off range, ns
	boMax  int64
	rnd    *rand.Rand

	// Requester.
	state    state
	t        uint64   // T of the open (or last) attempt
	answers  []answer // answers[c] from coordinator c to attempt t
	grants   int
	denies   int
	released uint64 // the latest T whose release went to every coordinator
	attempts int    // attempts for the current request

	// Coordinator.
	voted  bool
	holder req      // the request the vote is with, when voted
	queue  []req    // held-back requests, all preceding holder, earliest first
	done   []uint64 // done[j]: the latest T P_j released
	stored req      // the vote last persisted (zero: none)

	wait algo.WaitSet // the last Wait set output
	box  algo.Outbox  // this Step's outputs and messages to itself
}

// New builds the machine of node c.ID.
func New(c algo.Config) (algo.Machine, error) {
	if err := c.Validate(params); err != nil {
		return nil, err
	}
	k, err := c.IntParam("coordinators", c.N)
	if err != nil {
		return nil, err
	}
	if k < 1 || k > c.N {
		return nil, fmt.Errorf("parameter coordinators=%d: want 1..%d", k, c.N)
	}
	m := &Machine{id: c.ID, n: c.N, k: k, m: Quorum(k), rnd: c.Rand, box: algo.Outbox{Self: c.ID}}
	switch v := c.Param("forget", "false"); v {
	case "true":
		m.forget = true
	case "false":
	default:
		return nil, fmt.Errorf("parameter forget=%q: want true or false", v)
	}
	if m.boMin, m.boMax, err = parseBackoff(c.Param("backoff", "1ms-10ms")); err != nil {
		return nil, err
	}
	if m.rnd == nil {
		m.rnd = rand.New(rand.NewPCG(0, uint64(c.ID)))
	}
	m.reset()
	return m, nil
}

// parseBackoff parses "MIN-MAX" or a single duration (a fixed back-off).
// A duration is a Go duration ("5ms") or a number of ns.
func parseBackoff(v string) (lo, hi int64, err error) {
	parse := func(s string) (int64, error) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil && i >= 0 {
			return i, nil
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("parameter backoff=%q: want MIN-MAX or a duration such as 5ms", v)
		}
		return int64(d), nil
	}
	a, b, ok := strings.Cut(v, "-")
	if lo, err = parse(a); err != nil {
		return 0, 0, err
	}
	hi = lo
	if ok {
		if hi, err = parse(b); err != nil {
			return 0, 0, err
		}
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("parameter backoff=%q: MIN exceeds MAX", v)
	}
	if hi == 0 {
		// A process whose own coordinator denies it would retry, be
		// denied and retry again at the same instant, for ever.
		return 0, 0, fmt.Errorf("parameter backoff=%q: want a back-off above 0", v)
	}
	return lo, hi, nil
}

// reset is the state of a process that starts, or restarts after a crash:
// it remembers nothing.
func (m *Machine) reset() {
	m.state, m.t, m.released, m.attempts = idle, 0, 0, 0
	m.answers = make([]answer, m.k)
	m.grants, m.denies = 0, 0
	m.voted, m.holder, m.queue, m.stored = false, req{}, nil, req{}
	m.done = make([]uint64, m.n)
	m.wait = nil
}

func (m *Machine) coordinator() bool { return m.id < m.k }

// Step implements algo.Machine.
func (m *Machine) Step(in algo.Input) []algo.Output {
	return m.box.Step(in, m.n, m.handle, m.deliver, m.updateWait)
}

// handle is what an input does, before the messages to itself.
func (m *Machine) handle(in algo.Input) {
	switch in.Kind {
	case algo.Start:
	case algo.Recover:
		m.recover(in.Msg)
	case algo.Request:
		if m.state != idle {
			m.box.Note("request ignored: already %v", m.state)
			break
		}
		m.attempts = 0
		m.attempt(in.Clock)
	case algo.Release:
		if m.state != held {
			m.box.Note("release ignored: not in the critical section (%v)", m.state)
			break
		}
		// "The requester tells all the other coordinators when it has
		// finished" (seed 002).
		m.state = idle
		m.releaseAll()
	case algo.Timer:
		if in.TimerName != TimerBackoff || m.state != backingOff {
			m.box.Note("unexpected timer %q (%v)", in.TimerName, m.state)
			break
		}
		// Point 5: retry, with a new timestamp.
		m.attempt(in.Clock)
	case algo.Receive:
		m.deliver(in.From, in.Msg)
	}
}

// recover restarts the process from stable storage: with forget=false the
// coordinator's vote, as last persisted; everything else is forgotten.
func (m *Machine) recover(v algo.Msg) {
	m.reset()
	if !m.coordinator() {
		return
	}
	if m.forget {
		// Point 4: "forgets the vote it gave, then votes again".
		m.box.Note("restarted: the vote is forgotten (forget=true)")
		return
	}
	if v.Type == MsgVote && v.Stamp != 0 {
		m.voted, m.holder = true, req{T: v.Stamp, ID: v.ID}
		m.stored = m.holder
		m.box.Note("restarted: the vote is with P%d (T=%d), from stable storage", v.ID, v.Stamp)
	}
}

func (m *Machine) deliver(from int, msg algo.Msg) {
	switch msg.Type {
	case MsgRequest:
		if !m.coordinator() {
			m.box.Note("request from P%d ignored: not a coordinator", from)
			return
		}
		m.onRequest(req{T: msg.Stamp, ID: from})
	case MsgRelease:
		if !m.coordinator() {
			m.box.Note("release from P%d ignored: not a coordinator", from)
			return
		}
		m.onRelease(from, msg.Stamp)
	case MsgGrant:
		m.onGrant(from, msg.Stamp)
	case MsgDeny:
		m.onDeny(from, msg.Stamp)
	default:
		m.box.Note("unknown message %q from P%d", msg.Type, from)
	}
}

// --- Requester ---

// attempt opens an attempt with timestamp t: a request to every
// coordinator, itself included (seed 002: "the requester puts a timestamp
// in its request").
func (m *Machine) attempt(t uint64) {
	m.state, m.t = wanting, t
	clear(m.answers)
	m.grants, m.denies = 0, 0
	m.attempts++
	for c := 0; c < m.k; c++ {
		m.box.Send(c, algo.Msg{Type: MsgRequest, Stamp: t, ID: m.id})
	}
}

// releaseAll ends the attempt t: a release to every coordinator, which
// returns the votes it got and withdraws the requests still held back.
func (m *Machine) releaseAll() {
	m.released = m.t
	for c := 0; c < m.k; c++ {
		m.box.Send(c, algo.Msg{Type: MsgRelease, Stamp: m.t, ID: m.id})
	}
}

func (m *Machine) onGrant(from int, t uint64) {
	if from >= m.k {
		m.box.Note("grant from P%d ignored: not a coordinator", from)
		return
	}
	switch {
	case t == m.t && m.state == wanting:
		if m.answers[from] != missing {
			m.box.Note("second answer from P%d to T=%d ignored", from, t)
			return
		}
		m.answers[from] = granted
		m.grants++
		if m.grants >= m.m {
			// Point 2: m > n/2 grants.
			m.state = held
			m.updateWait()
			m.box.Out = append(m.box.Out, algo.EnterCS())
		}
	case t == m.t && m.state == held:
		// A late grant for the attempt in the CS: the release after it
		// goes to every coordinator.
		m.answers[from] = granted
	case t <= m.released:
		// The release of attempt t is on its way to P_from.
	default:
		// A vote for an attempt this process knows nothing of (it has
		// restarted since): give it back.
		m.box.Note("grant from P%d for unknown T=%d: given back", from, t)
		m.box.Send(from, algo.Msg{Type: MsgRelease, Stamp: t, ID: m.id})
	}
}

func (m *Machine) onDeny(from int, t uint64) {
	if from >= m.k || t != m.t || m.state != wanting || m.answers[from] != missing {
		return // an answer to an attempt that is over
	}
	m.answers[from] = denied
	m.denies++
	if m.denies <= m.k-m.m {
		return
	}
	// Point 5: short of votes, m grants are out of reach. Give back what
	// was granted (and withdraw the rest), then retry after a back-off.
	d := m.boMin
	if m.boMax > m.boMin {
		d += m.rnd.Int64N(m.boMax - m.boMin + 1)
	}
	m.box.Note("short of votes at T=%d (%d grants, %d denies of %d): back off %v", m.t, m.grants, m.denies, m.k, time.Duration(d))
	m.state = backingOff
	m.releaseAll()
	m.box.Out = append(m.box.Out, algo.SetTimerOut(TimerBackoff, d))
}

// --- Coordinator ---

func (m *Machine) onRequest(r req) {
	if r.T <= m.done[r.ID] {
		// Its release overtook it: the attempt is over.
		m.box.Note("request (%d,%d) ignored: already released", r.T, r.ID)
		return
	}
	// A process asks again only after releasing: its older requests are
	// over even if their release has not arrived yet.
	m.withdraw(r.ID, r.T-1)
	if m.voted {
		if r.Before(m.holder) {
			// Timestamp order: r comes before the vote's holder, so it is
			// next; hold the answer back.
			m.enqueue(r)
			return
		}
		// Point 3: DENY; r comes after a vote already given.
		m.box.Send(r.ID, algo.Msg{Type: MsgDeny, Stamp: r.T})
		return
	}
	m.enqueue(r)
	m.settle()
	m.persist()
}

func (m *Machine) onRelease(from int, t uint64) {
	m.done[from] = max(m.done[from], t)
	if !m.withdraw(from, t) {
		return
	}
	m.settle()
	m.persist()
}

// withdraw forgets P_j's requests up to T (its queue entries, the vote if P_j
// holds it). It reports whether anything was forgotten.
func (m *Machine) withdraw(j int, t uint64) bool {
	n := len(m.queue)
	m.queue = slices.DeleteFunc(m.queue, func(r req) bool { return r.ID == j && r.T <= t })
	changed := len(m.queue) != n
	if m.voted && m.holder.ID == j && m.holder.T <= t {
		m.voted, m.holder = false, req{}
		changed = true
	}
	return changed
}

func (m *Machine) enqueue(r req) {
	m.queue, _ = algo.Enqueue(m.queue, r)
}

// settle gives a free vote to the earliest queued request and denies the
// others, which follow it (the queue only ever holds requests that precede
// the vote's holder).
func (m *Machine) settle() {
	if m.voted || len(m.queue) == 0 {
		return
	}
	head, rest := m.queue[0], m.queue[1:]
	m.queue = nil
	m.voted, m.holder = true, head
	// Stable storage first: a crash after the grant left must not lose it.
	m.persist()
	m.box.Send(head.ID, algo.Msg{Type: MsgGrant, Stamp: head.T})
	for _, r := range rest {
		m.box.Send(r.ID, algo.Msg{Type: MsgDeny, Stamp: r.T})
	}
}

// persist saves the vote to stable storage, unless forget=true or it is
// saved already.
func (m *Machine) persist() {
	var cur req
	if m.voted {
		cur = m.holder
	}
	if m.forget || cur == m.stored {
		return
	}
	m.stored = cur
	v := algo.Msg{Type: MsgVote}
	if m.voted {
		v.Stamp, v.ID = m.holder.T, m.holder.ID
	}
	m.box.Out = append(m.box.Out, algo.Output{Kind: algo.Persist, Msg: v})
}

// updateWait outputs a Wait when the set of processes this one is blocked on
// changes: while an attempt is open, the coordinators whose answer is
// missing; its own coordinator's missing answer is the process its own
// vote is with.
func (m *Machine) updateWait() {
	var set []int
	if m.state == wanting {
		for c, a := range m.answers {
			if a != missing {
				continue
			}
			w := c
			if c == m.id {
				if !m.voted || m.holder.ID == m.id {
					continue
				}
				w = m.holder.ID
			}
			if !slices.Contains(set, w) {
				set = append(set, w)
			}
		}
		slices.Sort(set)
	}
	m.box.Out = m.wait.Set(m.box.Out, set)
}

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	var b strings.Builder
	b.WriteString(m.state.String())
	if m.state == wanting || m.state == held {
		var g, d []int
		for c, a := range m.answers {
			switch a {
			case granted:
				g = append(g, c)
			case denied:
				d = append(d, c)
			}
		}
		fmt.Fprintf(&b, " T=%d grants=%v denies=%v", m.t, g, d)
	}
	if m.attempts > 1 && m.state != idle {
		fmt.Fprintf(&b, " attempt=%d", m.attempts)
	}
	if !m.coordinator() {
		return b.String()
	}
	if m.voted {
		fmt.Fprintf(&b, " vote=%v", m.holder)
	} else {
		b.WriteString(" vote=free")
	}
	if len(m.queue) > 0 {
		fmt.Fprintf(&b, " queue=%v", m.queue)
	}
	return b.String()
}

// State implements algo.Inspector: the open attempt (T, grants and denies
// by coordinator) and, for a coordinator, whom its vote is with and the
// requests it holds back.
func (m *Machine) State() any {
	st := struct {
		State       string                `json:"state"`
		T           uint64                `json:"t,omitempty"`
		Attempt     int                   `json:"attempt,omitempty"`
		Grants      []int                 `json:"grants"`
		Denies      []int                 `json:"denies"`
		Coordinator bool                  `json:"coordinator"`
		Vote        *algo.StampedRequest  `json:"vote"`
		Queue       []algo.StampedRequest `json:"queue"`
		WaitingFor  []int                 `json:"waiting_for"`
	}{State: m.state.String(), Grants: []int{}, Denies: []int{}, Coordinator: m.coordinator(), Queue: algo.Clone(m.queue), WaitingFor: algo.Clone(m.wait)}
	if m.state != idle {
		st.T, st.Attempt = m.t, m.attempts
	}
	for c, a := range m.answers {
		switch a {
		case granted:
			st.Grants = append(st.Grants, c)
		case denied:
			st.Denies = append(st.Denies, c)
		}
	}
	if m.voted {
		vote := m.holder
		st.Vote = &vote
	}
	return st
}

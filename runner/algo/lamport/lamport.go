package lamport

import (
	_ "embed"
	"fmt"
	"math"
	"slices"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner/algo"
)

// Message types.
const (
	MsgRequest = "request"
	MsgAck     = "ack"
	MsgRelease = "release"
)

// docGo is this package's doc.go, the documentation dmx list shows.
//
//go:embed doc.go
var docGo string

// Spec describes the algorithm for dmx list and builds its machines.
var Spec = algo.Spec{
	Doc:      algo.PackageDoc(docGo),
	Name:     "lamport",
	Kind:     algo.MutualExclusion,
	Summary:  "request queues ordered by Lamport time, timestamped acks from everyone, release to everyone; assumes FIFO channels",
	Seeds:    []string{"000 Lamport's mutual exclusion", "002 Lamport mutual exclusion"},
	MsgTypes: []string{MsgRequest, MsgAck, MsgRelease},
	IDTypes:  []string{MsgRequest, MsgRelease, MsgAck},
	// Requests are served in timestamp order, which extends happens-before
	// (seed 002): fair, and overtaken at most once by each other process.
	Properties: []string{"mutex-causal", "mutex-realtime", "liveness", "fairness", "starvation", "deadlock"},
	Costs: []theory.Cost{
		{Measure: theory.MessagesPerCS, Formula: "3(N-1)", Note: "request, ack and release to each other process",
			Seed: "000 Lamport's mutual exclusion, counted from its rules", Eval: theory.InN(func(n float64) theory.Estimate { return theory.Exact(3 * (n - 1)) })},
		{Measure: theory.SyncDelay, Formula: "1", Note: "the release", Eval: theory.Const(theory.Exact(1))},
	},
	New: New,
}

// req is a queued request (T, id), in algo's total order of requests.
type req = algo.StampedRequest

// Machine is one process of Lamport's algorithm.
type Machine struct {
	id, n      int
	queue      []req        // the request queue, earliest first
	requesting bool         // own request queued, not yet entered
	held       bool         // in the CS
	t          uint64       // T_i of the own request
	heard      []uint64     // heard[j]: the largest timestamp of an ack or release from P_j
	wait       algo.WaitSet // the last Wait set output
}

// New builds the machine of node c.ID. The algorithm takes no parameters.
func New(c algo.Config) (algo.Machine, error) {
	if err := c.Validate(nil); err != nil {
		return nil, err
	}
	return &Machine{id: c.ID, n: c.N, heard: make([]uint64, c.N)}, nil
}

func (m *Machine) insert(r req) {
	m.queue, _ = algo.Enqueue(m.queue, r)
}

func (m *Machine) remove(id int) bool {
	n := len(m.queue)
	m.queue = slices.DeleteFunc(m.queue, func(r req) bool { return r.ID == id })
	return len(m.queue) != n
}

// Step implements algo.Machine.
func (m *Machine) Step(in algo.Input) []algo.Output {
	if o, ok := in.Outsider(m.n); ok {
		return []algo.Output{o}
	}
	var out []algo.Output
	switch in.Kind {
	case algo.Start:
	case algo.Recover:
		// A recovered process has an empty queue: the requests it had
		// queued and the acks it owed are gone (no rule covers crashes).
		*m = Machine{id: m.id, n: m.n, heard: make([]uint64, m.n)}
	case algo.Request:
		if m.requesting || m.held {
			return []algo.Output{algo.NoteOut("request ignored: already requested")}
		}
		// Seed 000: send request(i, T_i) to all nodes and place it on the
		// own queue.
		m.requesting, m.t = true, in.Clock
		m.insert(req{T: m.t, ID: m.id})
		for j := 0; j < m.n; j++ {
			if j != m.id {
				out = append(out, algo.SendTo(j, algo.Msg{Type: MsgRequest, Stamp: m.t, ID: m.id}))
			}
		}
		out = m.progress(out)
	case algo.Release:
		if !m.held {
			return []algo.Output{algo.NoteOut("release ignored: not in the critical section")}
		}
		// Seed 000: remove the request from the own queue and send a
		// timestamped release message.
		m.held = false
		m.remove(m.id)
		for j := 0; j < m.n; j++ {
			if j != m.id {
				out = append(out, algo.SendTo(j, algo.Msg{Type: MsgRelease, Stamp: in.Clock, ID: m.id}))
			}
		}
	case algo.Receive:
		switch in.Msg.Type {
		case MsgRequest:
			// Seed 002: enter the request in the queue and reply with a
			// timestamp, to the sender only.
			m.insert(req{T: in.Msg.Stamp, ID: in.From})
			out = append(out, algo.SendTo(in.From, algo.Msg{Type: MsgAck, Stamp: in.Clock, ID: m.id}))
		case MsgAck:
			m.heard[in.From] = max(m.heard[in.From], in.Msg.Stamp)
		case MsgRelease:
			// Seed 000: remove the request of that process.
			m.heard[in.From] = max(m.heard[in.From], in.Msg.Stamp)
			if !m.remove(in.From) {
				out = append(out, algo.NoteOut("release from P%d, which has no queued request", in.From))
			}
		default:
			return append(out, algo.NoteOut("unknown message %q from P%d", in.Msg.Type, in.From))
		}
		out = m.progress(out)
	case algo.Timer:
		out = append(out, algo.NoteOut("unexpected timer %q", in.TimerName))
	}
	return out
}

// progress applies seed 000's entry rule and keeps the Wait set.
func (m *Machine) progress(out []algo.Output) []algo.Output {
	if !m.requesting {
		return out
	}
	var blocked []int
	for j := 0; j < m.n; j++ {
		// (1) a message (ack or release) with a timestamp larger than T_i
		// from every other process.
		if j != m.id && m.heard[j] <= m.t {
			blocked = append(blocked, j)
		}
	}
	// (2) the own request has the earliest timestamp in the queue.
	for _, r := range m.queue {
		if r.ID == m.id {
			break
		}
		if !slices.Contains(blocked, r.ID) {
			blocked = append(blocked, r.ID)
		}
	}
	slices.Sort(blocked)
	out = m.wait.Set(out, blocked)
	if len(blocked) == 0 {
		m.requesting, m.held = false, true
		out = append(out, algo.EnterCS())
	}
	return out
}

// Abstract implements algo.Abstracter, for dmx explore: the state without
// the timestamps that no longer decide anything, so that schedules that
// differ only in them meet in one state. It is exact, not a heuristic:
//
//   - t is read only while the own request waits (progress), and a
//     Request sets it before that: otherwise it is left out.
//   - heard[j] is read only by progress, as heard[j] <= t, and only ever
//     raised by max. While the own request waits, that comparison is all
//     that counts now and later: if heard[j] <= t, max(heard[j], s) <= t
//     exactly when s <= t; if heard[j] > t, max(heard[j], s) > t. So only
//     the comparison is kept.
//   - Otherwise (released, or in the critical section) heard[j] is next
//     read after a Request, whose t is the clock then, larger than clock:
//     a heard[j] below clock compares below that t whatever its value, so
//     it is kept as 0. The runtime merges a message's clock into the
//     node's before the machine sees its stamp, so every heard[j] is below
//     the clock; one that were not would be kept whole, which is exact too.
//   - The queue is read only by progress, which asks which requests are
//     ahead of the own one, and its order is set by insert, which compares
//     a new request with those queued. A request is queued on receipt,
//     once the runtime has merged its clock, so each queued T is below the
//     clock (kept whole otherwise, which is exact too). While the own
//     request waits, each other queued request is ahead of it or behind it
//     for as long as both are queued, and a later one is placed by
//     comparing it with T_i alone as far as progress can tell (the order
//     among the others never reaches it): so a queued request is kept as
//     its process and which side of the own one it is on. Otherwise a
//     later own request's T_i is above the clock, behind every request
//     queued now: each is kept as its process only.
func (m *Machine) Abstract(clock uint64) any {
	var w wordList
	m.AbstractFrom(&w, clock, 0)
	return []uint64(w)
}

// wordList collects words.
type wordList []uint64

func (w *wordList) Word(v uint64) { *w = append(*w, v) }

// What Abstract and AbstractFrom keep of heard[j] (see Abstract).
const (
	heardBelow = 0 // not above T_i while the own request waits, below the clock otherwise
	heardAbove = 1 // above T_i while the own request waits
	heardKept  = 2 // kept whole (not below the clock while released or held)
)

func (m *Machine) heardClass(h, clock uint64) uint64 {
	switch {
	case m.requesting && h > m.t:
		return heardAbove
	case m.requesting, h < clock:
		return heardBelow
	}
	return heardKept
}

// AbstractFrom implements algo.Shifter: Lamport's machine reads timestamps
// only by comparing them (queue order, heard[j] <= T_i) and keeps the
// largest (max), and every message it sends is stamped with one, so
// Abstract with every timestamp lowered by base describes the same future
// shifted by base. The words: the flags, T_i if requesting, the queue's
// length and each queued request's class and process (its T too, lowered,
// if kept), each heard[j]'s class (and its value, lowered, if kept), the
// wait set's length and members.
func (m *Machine) AbstractFrom(out algo.Words, clock, base uint64) {
	var flags uint64
	if m.requesting {
		flags |= 1
	}
	if m.held {
		flags |= 2
	}
	out.Word(flags)
	if m.requesting {
		algo.Stamp(out, m.t-base)
	}
	// Per process, in process order: the queue's order among the others
	// never counts (see Abstract).
	out.Word(uint64(len(m.queue)))
	for j := 0; j < m.n; j++ {
		ahead := m.requesting
		for _, r := range m.queue {
			if r.ID == m.id {
				ahead = false
			}
			if r.ID != j {
				continue
			}
			switch {
			case r.T >= clock && r.ID != m.id:
				out.Word(queuedKept)
				algo.Stamp(out, r.T-base)
			case ahead:
				out.Word(queuedAhead)
			default:
				out.Word(queuedBehind)
			}
			out.Word(uint64(r.ID))
		}
	}
	for _, h := range m.heard {
		c := m.heardClass(h, clock)
		out.Word(c)
		if c == heardKept {
			algo.Stamp(out, h-base)
		}
	}
	out.Word(uint64(len(m.wait)))
	for _, w := range m.wait {
		out.Word(uint64(w))
	}
}

// AbstractStamp implements algo.StampAbstracter. A message's stamp is
// read on arrival, after the runtime merged its clock, so only a stamp
// below the clock now can be read without regard to its value, in the
// classes of the state it meets (see Abstract):
//
//   - a request's T, by insert, as ahead of or behind a waiting own
//     request: a T below the clock is behind T_i (as (T, id) orders)
//     exactly when it is behind now, if the own request waits now; it is
//     ahead of every own request made later, whose T_i is above the clock.
//   - an ack's or release's stamp s, by max into heard[j], as above or not
//     above a waiting own request's T_i: an s below the clock is above
//     T_i exactly when it is above now, if the own request waits now; it
//     is not above a T_i made later.
//
// A stamp not below the clock is kept whole too (as a timestamp, which the
// search may count with others alike: algo.Pender).
func (m *Machine) AbstractStamp(out algo.Words, msg algo.Msg, clock, base uint64) {
	switch {
	case !m.requesting:
		out.Word(stampBelow)
	case msg.Type == MsgRequest && (req{T: msg.Stamp, ID: msg.ID}).Before(req{T: m.t, ID: m.id}):
		out.Word(stampAhead)
	case msg.Type == MsgRequest:
		out.Word(stampBehind)
	case msg.Stamp > m.t:
		out.Word(stampAbove)
	default:
		out.Word(stampBelow)
	}
	if msg.Stamp < clock {
		// Its class says all: written as a timestamp below every
		// clock, base-1 lowered by base.
		algo.Stamp(out, math.MaxUint64)
		return
	}
	algo.Stamp(out, msg.Stamp-base)
}

// What AbstractStamp keeps of a stamp: its class in the receiver's state
// now.
const (
	stampBelow  = 0 // not above a waiting own request's T_i (an ack or release), or none waits
	stampAhead  = 1 // a request ahead of the waiting own one
	stampBehind = 2 // a request behind the waiting own one
	stampAbove  = 3 // an ack or release above the waiting own request's T_i
)

// Pending implements algo.Pender: T_i while the own request waits. A
// stamp received is read only against T_i (heard[j] <= T_i) and against
// the queued requests, of which only the side of the own one counts (see
// Abstract); with none waiting, not before the next Request.
func (m *Machine) Pending() (uint64, bool) { return m.t, m.requesting }

// What Abstract and AbstractFrom keep of a queued request (see Abstract):
// the own request and those behind it or below the clock while no own
// request waits are behind; those ahead of a waiting own one are ahead.
const (
	queuedBehind = 0
	queuedAhead  = 1
	queuedKept   = 2 // kept whole (not below the clock)
)

// Clone implements algo.Cloner.
func (m *Machine) Clone() algo.Machine {
	c := *m
	c.queue, c.heard, c.wait = slices.Clone(m.queue), slices.Clone(m.heard), slices.Clone(m.wait)
	return &c
}

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	s := "RELEASED"
	switch {
	case m.held:
		s = "HELD"
	case m.requesting:
		s = fmt.Sprintf("REQUESTED T=%d waiting-for=%v", m.t, m.wait)
	}
	return s + fmt.Sprintf(" queue=%v heard=%v", m.queue, m.heard)
}

// State implements algo.Inspector: the request queue (T, id) earliest
// first, the own request's T_i, and the largest timestamp heard from each
// process (an ack or a release), which decides when the own request is
// first everywhere.
func (m *Machine) State() any {
	st := struct {
		State      string                `json:"state"`
		T          uint64                `json:"t,omitempty"`
		Queue      []algo.StampedRequest `json:"queue"`
		Heard      []uint64              `json:"heard"`
		WaitingFor []int                 `json:"waiting_for"`
	}{State: "RELEASED", Queue: algo.Clone(m.queue), Heard: algo.Clone(m.heard), WaitingFor: algo.Clone(m.wait)}
	switch {
	case m.held:
		st.State, st.T = "HELD", m.t
	case m.requesting:
		st.State, st.T = "REQUESTED", m.t
	}
	return st
}

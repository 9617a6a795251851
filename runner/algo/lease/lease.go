package lease

import (
	_ "embed"
	"fmt"
	"time"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/election"
)

// Message types.
const (
	MsgVoteRequest = "vote-request"
	MsgVote        = "vote"
	MsgRenew       = "renew"
	MsgRenewAck    = "renew-ack"
)

// Timer names.
const (
	TimerElect = "elect" // a follower's (or failed candidate's) time to stand
	TimerRenew = "renew" // the master's next renewal round
	TimerLease = "lease" // the end of the master's lease
)

// Defaults, in ns.
const (
	DefaultLease   = 100_000_000
	DefaultBackoff = 10_000_000
)

var params = []algo.Param{
	{Name: "lease", Default: "100ms", Doc: "the master lease L: how long a vote or an ack promises not to elect another; the master renews every L/3"},
	{Name: "backoff", Default: "10ms", Doc: "a server whose promise ran out stands after (N - id) times this (the highest ids first)"},
}

// docGo is this package's doc.go, the documentation dmx list shows.
//
//go:embed doc.go
var docGo string

// Spec describes the algorithm for dmx list and builds its machines.
var Spec = algo.Spec{
	Doc:     algo.PackageDoc(docGo),
	Name:    "lease",
	Kind:    algo.Election,
	Summary: "Chubby: a candidate needs a majority of votes, one vote per server per term; the master renews its lease while it keeps a majority",
	Seeds: []string{
		"001 election in Google Chubby, master lease",
	},
	MsgTypes:   []string{MsgVoteRequest, MsgVote, MsgRenew, MsgRenewAck},
	Properties: []string{"agreement", "validity", "split-brain", "termination"},
	Validity:   "participant", // any live server may win, not the highest id
	Costs: []theory.Cost{
		{Measure: theory.MessagesPerElection, Formula: "4(N-1)", Note: "uncontested: a vote request to each other server and its vote, then the first renewal round, which tells them the master (seed 001: the master informs everyone), a renew and its ack",
			Eval: theory.InN(func(n float64) theory.Estimate { return theory.Exact(4 * (n - 1)) })},
		{Measure: theory.MessagesPerRenewal, Formula: "2(N-1) every L/3", Note: "a renew to each other server and its ack, per round",
			Eval: theory.InN(func(n float64) theory.Estimate { return theory.Exact(2 * (n - 1)) }),
			Every: func(s theory.Setting) time.Duration {
				l, err := algo.Config{Params: s.Params}.DurationParam("lease", DefaultLease)
				if err != nil {
					l = DefaultLease
				}
				return time.Duration(l / 3)
			}},
	},
	Params: params,
	// Over real UDP a lease lasts 500ms (algo.Spec.UDPParams): a loaded
	// machine's stalls of 100-400ms would let a 100ms lease lapse in the
	// middle of a term.
	UDPParams: func(map[string]string) map[string]string { return map[string]string{"lease": "500ms"} },
	New:       New,
	Parts:     algo.ElectionParts,
}

type role int

const (
	follower role = iota
	candidate
	master
)

func (r role) String() string { return [...]string{"follower", "candidate", "master"}[r] }

// Machine is one server.
type Machine struct {
	id, n   int
	lease   int64
	backoff int64
	role    role

	// Stable storage (persisted on every vote).
	term      uint64 // the highest term seen
	votedTerm uint64 // the term of the last vote (0: none)
	votedFor  int

	// The promise this server made: not to elect anyone but promiseTo
	// before promiseEnd (seed 001: "promise not to run election again for
	// 'a while'").
	promiseTo  int
	promiseEnd int64
	quietEnd   int64 // after a restart: no vote, no candidacy before this

	leader     int // the master this server knows, -1: none
	leaderTerm uint64

	// Candidate.
	asked int64 // when it asked for the votes
	votes []bool

	// Master.
	leaseEnd int64
	round    uint64
	sentAt   map[uint64]int64
	acks     map[uint64][]bool
}

// New builds the machine of node c.ID.
func New(c algo.Config) (algo.Machine, error) {
	if err := c.Validate(params); err != nil {
		return nil, err
	}
	l, err := c.DurationParam("lease", DefaultLease)
	if err != nil {
		return nil, err
	}
	if l <= 0 {
		return nil, fmt.Errorf("parameter lease=%v: want a positive duration", time.Duration(l))
	}
	b, err := c.DurationParam("backoff", DefaultBackoff)
	if err != nil {
		return nil, err
	}
	return &Machine{id: c.ID, n: c.N, lease: l, backoff: b, votedFor: -1, promiseTo: -1, leader: -1}, nil
}

func (m *Machine) majority(set []bool) bool {
	k := 0
	for _, x := range set {
		if x {
			k++
		}
	}
	return 2*k > m.n
}

// wait is this server's back-off before it stands: the highest id first.
func (m *Machine) wait() int64 { return int64(m.n-m.id) * m.backoff }

// promised reports whether a promise to someone other than c runs at now.
func (m *Machine) promised(now int64, c int) bool {
	return now < m.promiseEnd && m.promiseTo != c
}

// Step implements algo.Machine.
func (m *Machine) Step(in algo.Input) []algo.Output {
	var out []algo.Output
	now := in.Now
	switch in.Kind {
	case algo.Start:
		out = m.armElect(out, now)
	case algo.Recover:
		// Step 7: only the vote survived the crash.
		m.votedTerm, m.votedFor, m.term = in.Msg.Term, -1, in.Msg.Stamp
		if m.votedTerm != 0 {
			m.votedFor = in.Msg.ID
		}
		m.quietEnd = now + m.lease
		out = append(out, algo.NoteOut("restarted: no vote, no candidacy for %v", time.Duration(m.lease)))
		out = m.armElect(out, now)
	case algo.Receive:
		if in.Msg.Term < m.term && in.Msg.Type != MsgVote && in.Msg.Type != MsgRenewAck {
			return append(out, algo.NoteOut("%s from P%d ignored: term %d < %d", in.Msg.Type, in.From, in.Msg.Term, m.term))
		}
		switch in.Msg.Type {
		case MsgVoteRequest:
			out = m.onVoteRequest(out, now, in.From, in.Msg.Term)
		case MsgVote:
			out = m.onVote(out, now, in.From, in.Msg.Term)
		case MsgRenew:
			out = m.onRenew(out, now, in.From, in.Msg)
		case MsgRenewAck:
			out = m.onRenewAck(out, now, in.From, in.Msg)
		default:
			out = append(out, algo.NoteOut("unknown message %q from P%d", in.Msg.Type, in.From))
		}
	case algo.Timer:
		switch in.TimerName {
		case TimerElect:
			out = m.onElect(out, now)
		case TimerRenew:
			if m.role == master {
				out = m.renew(out, now)
			}
		case TimerLease:
			if m.role == master && now >= m.leaseEnd {
				// Step 5: the lease ran out without a renewed majority.
				m.role = follower
				m.leader, m.leaderTerm = -1, m.term
				out = append(out, algo.CancelTimerOut(TimerRenew),
					algo.Output{Kind: algo.Leader, Leader: -1, Msg: algo.Msg{Term: m.term}})
				out = m.armElect(out, now)
			}
		default:
			out = append(out, algo.NoteOut("unexpected timer %q", in.TimerName))
		}
	default:
		out = append(out, algo.NoteOut("unexpected input %v", in.Kind))
	}
	return out
}

// armElect sets the time this server stands (step 6): after its promise
// and any quiet period, plus its back-off.
func (m *Machine) armElect(out []algo.Output, now int64) []algo.Output {
	at := max(now, m.promiseEnd, m.quietEnd) + m.wait()
	return append(out, algo.SetTimerOut(TimerElect, at-now))
}

// onElect stands, if no promise and no quiet period forbid it (step 1).
func (m *Machine) onElect(out []algo.Output, now int64) []algo.Output {
	if m.role == master {
		return out
	}
	if now < m.quietEnd || now < m.promiseEnd {
		return m.armElect(out, now)
	}
	m.role = candidate
	m.term++
	m.asked = now
	m.votes = make([]bool, m.n)
	m.votes[m.id] = true
	out = append(out, algo.Output{Kind: algo.StartElection, Msg: algo.Msg{Term: m.term}})
	out = m.grant(out, now, m.id, m.term)
	for j := 0; j < m.n; j++ {
		if j != m.id {
			out = append(out, algo.SendTo(j, algo.Msg{Type: MsgVoteRequest, Term: m.term}))
		}
	}
	return m.won(out, now)
}

// grant is a vote for c in term t: persisted, and a promise for L (step 2).
func (m *Machine) grant(out []algo.Output, now int64, c int, t uint64) []algo.Output {
	m.votedTerm, m.votedFor = t, c
	m.promiseTo, m.promiseEnd = c, now+m.lease
	out = append(out, algo.Output{Kind: algo.Persist, Msg: algo.Msg{Type: "vote", Term: t, ID: c, Stamp: m.term}})
	return m.armElect(out, now)
}

// onVoteRequest is step 2 at a server asked by candidate c for term t.
//
// A candidate's vote for itself yields to a candidate of a higher term: it
// gives its candidacy up (it will count no more votes for it) and may vote.
// Without that, two candidates that keep standing in turn could each
// refuse the other for ever. A promise to a master or to another candidate
// never yields: it is what keeps two masters from being elected.
func (m *Machine) onVoteRequest(out []algo.Output, now int64, c int, t uint64) []algo.Output {
	if now < m.quietEnd {
		return append(out, algo.NoteOut("no vote for P%d: restarted less than a lease ago", c))
	}
	if m.role == candidate && t > m.term {
		m.role = follower
		m.promiseTo, m.promiseEnd = -1, 0
		out = append(out, algo.NoteOut("candidacy for term %d given up for P%d's term %d", m.term, c, t))
	}
	if m.role != master {
		m.term = max(m.term, t)
	}
	switch {
	case m.promised(now, c):
		return append(out, algo.NoteOut("no vote for P%d: lease granted to P%d runs for %v", c, m.promiseTo, time.Duration(m.promiseEnd-now)))
	case m.votedTerm == t && m.votedFor != c:
		return append(out, algo.NoteOut("no vote for P%d: voted for P%d in term %d", c, m.votedFor, t))
	}
	out = m.grant(out, now, c, t)
	return append(out, algo.SendTo(c, algo.Msg{Type: MsgVote, Term: t}))
}

// onVote counts a vote; a majority makes the candidate master (step 3).
func (m *Machine) onVote(out []algo.Output, now int64, from int, t uint64) []algo.Output {
	if m.role != candidate || t != m.term {
		return out
	}
	m.votes[from] = true
	return m.won(out, now)
}

// won makes a candidate with a majority master: its lease runs L from when
// it asked (step 3), and it informs everyone at once.
func (m *Machine) won(out []algo.Output, now int64) []algo.Output {
	if m.role != candidate || !m.majority(m.votes) {
		return out
	}
	m.role = master
	m.leaseEnd = m.asked + m.lease
	m.promiseTo, m.promiseEnd = m.id, m.leaseEnd
	m.leader, m.leaderTerm = m.id, m.term
	m.sentAt, m.acks = map[uint64]int64{}, map[uint64][]bool{}
	out = append(out, algo.CancelTimerOut(TimerElect),
		algo.Output{Kind: algo.Leader, Leader: m.id, Msg: algo.Msg{Term: m.term}},
		algo.SetTimerOut(TimerLease, m.leaseEnd-now))
	return m.renew(out, now)
}

// renew is a renewal round (step 4).
func (m *Machine) renew(out []algo.Output, now int64) []algo.Output {
	m.round++
	m.sentAt[m.round] = now
	acks := make([]bool, m.n)
	acks[m.id] = true
	m.acks[m.round] = acks
	delete(m.sentAt, m.round-3) // rounds this old can no longer extend the lease
	delete(m.acks, m.round-3)
	for j := 0; j < m.n; j++ {
		if j != m.id {
			out = append(out, algo.SendTo(j, algo.Msg{Type: MsgRenew, Term: m.term, Stamp: m.round}))
		}
	}
	out = append(out, algo.SetTimerOut(TimerRenew, m.lease/3))
	return m.extend(out, now, m.round)
}

// extend runs the lease L from round r's sending once a majority acked it.
func (m *Machine) extend(out []algo.Output, now int64, r uint64) []algo.Output {
	acks, ok := m.acks[r]
	if !ok || !m.majority(acks) {
		return out
	}
	if end := m.sentAt[r] + m.lease; end > m.leaseEnd {
		m.leaseEnd = end
		m.promiseEnd = end
		out = append(out, algo.SetTimerOut(TimerLease, end-now))
	}
	delete(m.acks, r)
	return out
}

// onRenew: a master of a term not older than any seen; this server takes
// it as master and renews its promise to it (step 4).
func (m *Machine) onRenew(out []algo.Output, now int64, from int, msg algo.Msg) []algo.Output {
	if msg.Term > m.term || m.role != follower {
		if m.role == master {
			out = append(out, algo.CancelTimerOut(TimerRenew), algo.CancelTimerOut(TimerLease))
		}
		m.role = follower
	}
	m.term = msg.Term
	m.promiseTo, m.promiseEnd = from, now+m.lease
	if m.leader != from || m.leaderTerm != msg.Term {
		m.leader, m.leaderTerm = from, msg.Term
		out = append(out, algo.Output{Kind: algo.Leader, Leader: from, Msg: algo.Msg{Term: msg.Term}})
	}
	out = append(out, algo.SendTo(from, algo.Msg{Type: MsgRenewAck, Term: msg.Term, Stamp: msg.Stamp}))
	return m.armElect(out, now)
}

// onRenewAck counts an ack of a round.
func (m *Machine) onRenewAck(out []algo.Output, now int64, from int, msg algo.Msg) []algo.Output {
	if m.role != master || msg.Term != m.term {
		return out
	}
	if acks, ok := m.acks[msg.Stamp]; ok {
		acks[from] = true
	}
	return m.extend(out, now, msg.Stamp)
}

// Leader is the master this server knows, -1 if none.
func (m *Machine) Leader() int { return m.leader }

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	s := fmt.Sprintf("%v term=%d leader=%s", m.role, m.term, election.LeaderString(m.leader))
	if m.votedTerm != 0 {
		s += fmt.Sprintf(" voted=P%d@%d", m.votedFor, m.votedTerm)
	}
	if m.promiseTo >= 0 {
		s += fmt.Sprintf(" promise=P%d-until-%v", m.promiseTo, time.Duration(m.promiseEnd))
	}
	if m.role == master {
		s += fmt.Sprintf(" lease-until-%v", time.Duration(m.leaseEnd))
	}
	return s
}

// State implements algo.Inspector: the role, the stable storage (term,
// vote), the master known, the promise made and, for a candidate, the
// votes got or, for the master, when its lease ends (ns since the start).
func (m *Machine) State() any {
	st := struct {
		Role       string `json:"role"`
		Term       uint64 `json:"term"`
		VotedTerm  uint64 `json:"voted_term,omitempty"`
		VotedFor   *int   `json:"voted_for,omitempty"`
		Leader     int    `json:"leader"`
		LeaderTerm uint64 `json:"leader_term,omitempty"`
		PromiseTo  *int   `json:"promise_to,omitempty"`
		PromiseEnd int64  `json:"promise_end,omitempty"`
		Votes      []int  `json:"votes,omitempty"`
		LeaseEnd   int64  `json:"lease_end,omitempty"`
	}{Role: m.role.String(), Term: m.term, VotedTerm: m.votedTerm, Leader: m.leader, LeaderTerm: m.leaderTerm}
	if m.votedTerm != 0 {
		v := m.votedFor
		st.VotedFor = &v
	}
	if m.promiseTo >= 0 {
		p := m.promiseTo
		st.PromiseTo, st.PromiseEnd = &p, m.promiseEnd
	}
	switch m.role {
	case candidate:
		st.Votes = algo.Members(m.votes)
	case master:
		st.LeaseEnd = m.leaseEnd
	}
	return st
}

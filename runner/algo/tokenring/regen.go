package tokenring

import (
	"fmt"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/changroberts"
	"github.com/dmxlab/dmx/runner/algo/election"
	"github.com/dmxlab/dmx/runner/algo/ring"
)

// MsgProbe is regeneration's message: the elected process sends it round
// the ring before it makes a token (doc.go, "Regeneration").
const MsgProbe = "probe"

// TimerLost is the wait, at every process, for the token to come by.
const TimerLost = "token-lost"

// DefaultTokenTimeout is token-timeout's default, in ns.
const DefaultTokenTimeout = 200_000_000

// Elections that can pick the regenerating process (parameter election).
const (
	ElectionChangRoberts = "chang-roberts"
	ElectionRing         = "ring"
)

// regenParams are the parameters that apply only with regenerate=true;
// electionParams are those handed to the embedded election.
var (
	electionParams = []string{"timeout", "fd-period", "fd-allowance", "fd-stall"}
	regenParams    = append([]string{"election", "token-timeout"}, electionParams...)
)

// elector is what regeneration needs of its election machine beside Step.
type elector interface {
	algo.Machine
	Leader() int
	Elect() []algo.Output
}

// regen is one process of the token ring with token regeneration.
type regen struct {
	id, n int
	holding
	tokenTimeout int64
	el           elector
	host         election.Host // the election detector's view, and its last election number

	seen     uint64 // the newest token generation this process knows of (persisted)
	gen      uint64 // the generation of the token held
	passedTo int    // the process the token was last passed to, -1 if the token came by since

	probing   bool   // this process's probe is out: it may regenerate when it returns
	probeGen  uint64 // the generation it proposes
	forwarded uint64 // the generation of the last probe forwarded (a probe that comes round again is dropped)
}

func newRegen(c algo.Config, passDelay int64) (algo.Machine, error) {
	tt, err := c.DurationParam("token-timeout", DefaultTokenTimeout)
	if err != nil {
		return nil, err
	}
	if tt <= 0 {
		return nil, fmt.Errorf("parameter token-timeout: must be positive")
	}
	ec := election.SubConfig(c, "none", electionParams)
	var el algo.Machine
	switch e := c.Param("election", ElectionChangRoberts); e {
	case ElectionChangRoberts:
		el, err = changroberts.New(ec)
	case ElectionRing:
		el, err = ring.New(ec)
	default:
		return nil, fmt.Errorf("parameter election=%q: want chang-roberts or ring", e)
	}
	if err != nil {
		return nil, fmt.Errorf("regenerate: %w", err)
	}
	return &regen{id: c.ID, n: c.N, holding: holding{passDelay: passDelay}, tokenTimeout: tt, el: el.(elector),
		host: election.NewHost(c.N), passedTo: -1}, nil
}

// next is the first successor the detector does not suspect (seed 000
// "Process loss: what if you can't talk to your neighbor?"; "If successor
// is down, skip over"), or -1 if every other process is suspected.
func (m *regen) next() int {
	return election.Successor(m.id, m.n, func(j int) bool { return m.host.Suspected[j] })
}

// prev is the first predecessor not suspected, the one the token should
// come from, or -1.
func (m *regen) prev() int {
	for k := 1; k < m.n; k++ {
		if j := (m.id - k + m.n) % m.n; !m.host.Suspected[j] {
			return j
		}
	}
	return -1
}

// Step implements algo.Machine.
func (m *regen) Step(in algo.Input) []algo.Output {
	var out []algo.Output
	switch in.Kind {
	case algo.Start:
		out = m.elStep(out, in)
		if m.id == 0 {
			// Seed 000: "Process 0 creates a token for resource R":
			// generation 0.
			out = append(out, algo.NoteOut("token created"))
			return m.receive(out)
		}
		out = m.armLost(out)
	case algo.Recover:
		// A restarted process has no token, but remembers the newest
		// generation it knew: an old token that reaches it later is
		// still refused. Its election machine holds an election.
		m.seen = in.Msg.Stamp
		in.Msg = algo.Msg{Type: in.Msg.Type, Term: in.Msg.Term}
		out = m.elStep(out, in)
		out = m.armLost(out)
	case algo.Request:
		return m.request(m.prev())
	case algo.Release:
		return m.release(m.pass)
	case algo.Receive:
		switch in.Msg.Type {
		case MsgToken:
			out = m.onToken(out, in.From, in.Msg.Term)
		case MsgProbe:
			out = m.onProbe(out, in.Msg)
		default:
			out = m.elStep(out, in)
		}
	case algo.Timer:
		switch in.TimerName {
		case TimerPass:
			if m.hasToken && !m.inCS {
				out = m.pass(out)
			}
		case TimerLost:
			// Seed 000 "Token loss ... Detecting loss may be a problem (is
			// the token lost or in just use by someone?)": the token has
			// not come by for token-timeout. Lost, or held for long: an
			// election decides who finds out.
			out = append(out, algo.NoteOut("no token for %v: lost?", time.Duration(m.tokenTimeout)))
			out = m.elect(out)
			out = m.armLost(out)
		default:
			out = m.elStep(out, in)
		}
	}
	return out
}

func (m *regen) armLost(out []algo.Output) []algo.Output {
	if m.n == 1 {
		return out
	}
	return append(out, algo.SetTimerOut(TimerLost, m.tokenTimeout))
}

// elStep gives in to the election machine and carries on with its outputs.
func (m *regen) elStep(out []algo.Output, in algo.Input) []algo.Output {
	if in.Kind == algo.Start || in.Kind == algo.Recover {
		m.host.Restart()
	}
	return m.absorb(out, m.el.Step(in))
}

// elect asks the election machine for an election (none if one it takes
// part in is under way).
func (m *regen) elect(out []algo.Output) []algo.Output {
	return m.absorb(out, m.el.Elect())
}

// absorb passes the election's outputs on, combining its Persist with the
// generation seen, and reacts to Suspect, Trust and Leader.
func (m *regen) absorb(out, els []algo.Output) []algo.Output {
	out, react := m.host.Absorb(out, els, m.persist)
	for _, o := range react {
		switch o.Kind {
		case algo.Suspect:
			if o.To == m.passedTo {
				// The process this one passed the token to is suspected,
				// and the token has not come by since: it may have died
				// with it (seed 001 "If the process holding the token
				// fails").
				out = append(out, algo.NoteOut("P%d, which the token was passed to, is suspected: lost?", o.To))
				out = m.elect(out)
			}
		case algo.Trust:
			if m.hasToken && !m.wanted && m.next() == o.To {
				// The token stayed here for want of a live successor.
				out = append(out, algo.SetTimerOut(TimerPass, m.passDelay))
			}
		case algo.Leader:
			if o.Leader == m.id {
				out = m.startProbe(out, o.Msg.Term)
			}
		}
	}
	if m.wanted && !m.hasToken {
		var set []int
		if p := m.prev(); p >= 0 {
			set = []int{p}
		}
		out = m.wait.Set(out, set)
	}
	return out
}

// persist is the node's stable storage: the election's number and the
// newest generation seen.
func (m *regen) persist() algo.Output {
	return algo.Output{Kind: algo.Persist, Msg: algo.Msg{Type: "state", Term: m.host.Term, Stamp: m.seen}}
}

// startProbe: this process won an election (numbered term) and is the one
// that may make a new token. It proposes generation term (or, if it has
// seen that one already, the next number of its own above what it has
// seen) and sends a probe round the ring to find out whether the token is
// lost or in use.
func (m *regen) startProbe(out []algo.Output, term uint64) []algo.Output {
	g := term
	if g <= m.seen {
		g = election.NextTerm(m.seen, m.id, m.n)
	}
	m.seen = g
	out = append(out, m.persist())
	if m.hasToken {
		// In use here: it is not lost. It takes the new generation, so
		// that any older copy is refused.
		m.gen, m.probing = g, false
		return append(out, algo.NoteOut("the token is here: not lost; it is now of generation %d", g))
	}
	m.probing, m.probeGen = true, g
	j := m.next()
	if j < 0 {
		return m.regenerate(out)
	}
	m.forwarded = g
	return append(out, algo.SendTo(j, algo.Msg{Type: MsgProbe, ID: m.id, Term: g}))
}

// onProbe: a probe of generation msg.Term from P_msg.ID. Every process it
// passes takes that generation, so that it refuses an older token from
// then on; the holder of the token, if any, marks the probe (Vals: its id)
// and its token takes the generation. A process that knew the generation
// or a newer one already marks the probe stale (Stamp: that generation).
// Back at its origin, an unmarked probe means that no live process has the
// token and that any copy still in flight will be refused: the origin
// makes the token, once.
func (m *regen) onProbe(out []algo.Output, msg algo.Msg) []algo.Output {
	g := msg.Term
	if msg.ID == m.id {
		if !m.probing || g != m.probeGen {
			return append(out, algo.NoteOut("probe of generation %d came back: no longer waited for", g))
		}
		m.probing = false
		switch {
		case msg.Stamp >= g || m.seen > g:
			// Some process, this one included since, knew the generation
			// or a newer one: another regeneration may be under way.
			newer := max(msg.Stamp, m.seen)
			if newer > m.seen {
				m.seen = newer
				out = append(out, m.persist())
			}
			out = append(out, algo.NoteOut("probe of generation %d came back stale: generation %d was known", g, newer))
			if m.el.Leader() == m.id {
				return m.startProbe(out, 0)
			}
			return out
		case len(msg.Vals) > 0:
			return append(out, algo.NoteOut("probe of generation %d came back: the token is at P%d, not lost", g, msg.Vals[0]))
		}
		return m.regenerate(out)
	}
	if g == m.forwarded {
		// It went round without finding its origin (suspected, or down).
		return append(out, algo.NoteOut("probe of generation %d from P%d came round again: dropped", g, msg.ID))
	}
	if g > m.seen {
		m.seen = g
		out = append(out, m.persist())
		if m.hasToken {
			m.gen = g
			msg.Vals = []uint64{uint64(m.id)}
			out = append(out, algo.NoteOut("the token is here: it is now of generation %d", g))
		}
	} else {
		msg.Stamp = max(msg.Stamp, m.seen)
	}
	j := m.next()
	if j < 0 {
		return append(out, algo.NoteOut("probe dropped: every other process is suspected"))
	}
	m.forwarded = g
	return append(out, algo.SendTo(j, msg))
}

// regenerate makes the token of the generation this process's probe
// proposed (seed 001: "a unique process has to be picked to regenerate
// token and pass it along the ring").
func (m *regen) regenerate(out []algo.Output) []algo.Output {
	m.probing = false
	out = append(out, algo.NoteOut("token regenerated: generation %d", m.probeGen))
	m.gen = m.probeGen
	return m.receive(out)
}

// onToken: a token of generation g from P_from. One older than a
// generation seen is a copy that a regeneration replaced: it is discarded.
func (m *regen) onToken(out []algo.Output, from int, g uint64) []algo.Output {
	if g < m.seen {
		if m.probing && m.probeGen == m.seen {
			// The newer generation is this process's own proposal, which
			// nobody else makes: the token was not lost, and it takes the
			// new generation here instead of being discarded and made
			// again.
			m.probing = false
			out = append(out, algo.NoteOut("token of generation %d came by while probing: not lost; it is now of generation %d", g, m.seen))
			m.gen = m.seen
			return m.receive(out)
		}
		return append(out, algo.NoteOut("token of generation %d from P%d discarded: generation %d is newer", g, from, m.seen))
	}
	if g > m.seen {
		m.seen = g
		out = append(out, m.persist())
	}
	if m.hasToken {
		out = append(out, algo.NoteOut("a second token arrived from P%d", from))
	}
	if m.probing {
		m.probing = false
		out = append(out, algo.NoteOut("the token came by: not lost"))
	}
	m.gen = g
	return m.receive(out)
}

// receive is the token arriving (or being made here): the loss wait starts
// again, and the seeds' rule follows.
func (m *regen) receive(out []algo.Output) []algo.Output {
	m.hasToken, m.passedTo = true, -1
	return m.arrive(m.armLost(out), m.next() < 0, m.pass)
}

// pass sends the token to the next live process, with its generation.
func (m *regen) pass(out []algo.Output) []algo.Output {
	j := m.next()
	if j < 0 {
		return out
	}
	m.hasToken, m.passedTo = false, j
	return append(out, algo.SendTo(j, algo.Msg{Type: MsgToken, Term: m.gen}))
}

// Token reports whether this process holds a token, and its generation.
func (m *regen) Token() (bool, uint64) { return m.hasToken, m.gen }

// InCS reports whether this process is in the critical section.
func (m *regen) InCS() bool { return m.inCS }

// String describes the machine's state, for scripts and debugging.
func (m *regen) String() string {
	s := "no-token"
	if m.hasToken {
		s = fmt.Sprintf("token(gen %d)", m.gen)
	}
	if m.inCS {
		s += " in-cs"
	} else if m.wanted {
		s += fmt.Sprintf(" wanted waiting-for=%v", m.wait)
	}
	s += fmt.Sprintf(" seen=%d", m.seen)
	if m.probing {
		s += fmt.Sprintf(" probing=%d", m.probeGen)
	}
	if st, ok := m.el.(fmt.Stringer); ok {
		s += " | " + st.String()
	}
	return s
}

// State implements algo.Inspector: the token and its generation, the
// newest generation seen, the probe out, and the election's state.
func (m *regen) State() any {
	st := struct {
		Token      bool   `json:"token"`
		Generation uint64 `json:"generation,omitempty"`
		Seen       uint64 `json:"seen"`
		Wanted     bool   `json:"wanted"`
		InCS       bool   `json:"in_cs"`
		Probe      uint64 `json:"probe,omitempty"`
		WaitingFor []int  `json:"waiting_for"`
		Election   any    `json:"election,omitempty"`
	}{Token: m.hasToken, Seen: m.seen, Wanted: m.wanted, InCS: m.inCS, WaitingFor: algo.Clone(m.wait)}
	if m.hasToken {
		st.Generation = m.gen
	}
	if m.probing {
		st.Probe = m.probeGen
	}
	if in, ok := m.el.(algo.Inspector); ok {
		st.Election = in.State()
	}
	return st
}

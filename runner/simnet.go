package runner

import (
	"time"

	"github.com/dmxlab/dmx/runner/link"
)

// The simulator's model of the transport, for plans with network faults
// or raw channels (others keep the plain FIFO channels of Transmit, whose
// traces stay as they were). It follows what dmx run's transport does to
// a datagram, without its acknowledgements:
//
//   - reliable channels: a message the fault layer drops is sent again
//     after the transport's retransmission time-out (link.InitialRTO, doubling
//     up to link.MaxRTO), each lost copy recorded as a drop, up to link.MaxTries
//     sends, after which it is given up and the receiver stops waiting for
//     it; the receiver delivers each message once, in the order sent (a
//     message waits for the ones sent before it), except what a reorder
//     fault marks, which is delivered when it arrives;
//   - raw channels: each message is sent once; what is dropped is lost,
//     a duplicate is delivered twice, and nothing waits for anything.
//
// A crash loses what the crashed process had not yet got through, and
// starts its channels afresh, as a restarted process's transport does.

// simChan is one direction of a channel between two processes.
type simChan struct {
	next uint64 // the next sequence number to send
	in   link.InOrder[*simMsg]
}

// simMsg is a message on its way, with what the transport knows of it.
type simMsg struct {
	env       *Envelope
	seq       uint64
	inc, rinc int // the incarnations of sender and receiver when it was sent
	tries     int
	rto       time.Duration
}

func (s *sim) channel(from, to int) *simChan {
	c := &s.chans[from*s.plan.N+to]
	if c.next == 0 {
		*c = simChan{next: 1, in: link.NewInOrder[*simMsg]()}
	}
	return c
}

// transmit hands a message to the model of the transport.
func (s *sim) transmit(env *Envelope) {
	c := s.channel(env.From, env.To)
	m := &simMsg{env: env, seq: c.next, inc: s.inc[env.From], rinc: s.inc[env.To], rto: link.InitialRTO}
	c.next++
	s.attempt(m)
}

// attempt puts one copy of m on the network, as judged by the fault layer.
func (s *sim) attempt(m *simMsg) {
	from, to := m.env.From, m.env.To
	if s.inc[from] != m.inc || s.nodes[from].Crashed() {
		return // its sender's transport died with it
	}
	v := s.netf.Judge(from, to, m.env.Msg.Type, true)
	m.tries++
	if v.Drop != "" {
		resend := !s.plan.Raw() && m.tries < link.MaxTries
		s.nodes[from].Dropped(m.env, v.Drop, resend)
		switch {
		case resend:
			at := s.now + int64(m.rto)
			if m.rto < link.MaxRTO {
				m.rto *= 2
			}
			s.resending++
			s.push(&simItem{at: at, node: from, f: func() { s.resending--; s.attempt(m) }})
		case !s.plan.Raw():
			// Given up: the receiver stops waiting for it, and what was
			// held behind it goes on (the transport's base, see
			// transport.go).
			if rcv := s.nodes[to]; s.inc[to] == m.rinc && !rcv.Crashed() {
				s.channel(from, to).in.GiveUp(m.seq, func(m *simMsg) { rcv.Receive(m.env) })
			}
		}
		return
	}
	at := s.now + int64(s.plan.Sim.Delay.Draw(s.net)) + int64(v.Delay)
	unordered := v.Unordered || s.plan.Sim.Reorder
	s.push(&simItem{at: at, node: to, f: func() { s.arrive(m, unordered) }})
	if v.Dup && s.plan.Raw() {
		// Reliable channels drop the copy on arrival: only raw ones
		// deliver it.
		s.push(&simItem{at: at + int64(v.DupDelay), node: to, f: func() { s.arrive(m, unordered) }})
	}
}

// arrive delivers a copy of m that reached its receiver, as the
// receiver's transport would.
func (s *sim) arrive(m *simMsg, unordered bool) {
	from, to := m.env.From, m.env.To
	if s.inc[to] != m.rinc || s.inc[from] != m.inc || s.nodes[to].Crashed() {
		return // from or for an earlier incarnation: stale
	}
	rcv := s.nodes[to]
	if s.plan.Raw() {
		rcv.Receive(m.env)
		return
	}
	s.channel(from, to).in.Accept(m.seq, unordered, m, func(m *simMsg) { rcv.Receive(m.env) })
}

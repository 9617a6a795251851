package tomcast

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner/algo"
)

// Message types.
const (
	MsgMsg = "msg"
	MsgAck = "ack"
)

// docGo is this package's doc.go, the documentation dmx list shows.
//
//go:embed doc.go
var docGo string

// Spec describes the algorithm for dmx list and builds its machines.
var Spec = algo.Spec{
	Doc:     algo.PackageDoc(docGo),
	Name:    "tomcast",
	Kind:    algo.Multicast,
	Summary: "Lamport totally-ordered multicast: timestamped messages to all (self included), queued by (timestamp, sender), acked by everyone, delivered at the head once all have acked; assumes FIFO channels",
	Seeds: []string{
		"002 Totally-Ordered Multicasting: Lamport details, 实现原理",
		"000 Lamport's mutual exclusion (the same queue and acks)",
	},
	MsgTypes:   []string{MsgMsg, MsgAck},
	IDTypes:    []string{MsgMsg, MsgAck},
	Properties: []string{"total-order", "clocks"},
	Costs: []theory.Cost{
		{Measure: theory.MessagesPerMulticast, Formula: "N+N^2", Note: "N^2-1 between processes ((N-1) copies + N(N-1) acks) and N+1 to oneself",
			Eval: theory.InN(func(n float64) theory.Estimate { return theory.Exact(n + n*n) })},
	},
	New: New,
}

// key names a multicast: its timestamp T and its origin ID. Keys are in
// algo's total order of requests: by timestamp, then origin (seed 002's
// L(e) = M*Li(e) + i).
type key = algo.StampedRequest

// entry is a queued multicast. An entry can exist before its message
// arrives: an ACK from a third process may come first.
type entry struct {
	key
	seq  int    // the origin's sequence number, once the message has arrived
	have bool   // the message itself has arrived
	acks []bool // acks[j]: P_j acknowledged it
	nack int    // ACKs received
}

// Machine is one process of the totally-ordered multicast.
type Machine struct {
	id, n     int
	seq       int      // multicasts this process has begun
	queue     []*entry // ordered by key
	delivered int
	done      map[key]bool // delivered multicasts
}

// New builds the machine of node c.ID. The algorithm takes no parameters.
func New(c algo.Config) (algo.Machine, error) {
	if err := c.Validate(nil); err != nil {
		return nil, err
	}
	return &Machine{id: c.ID, n: c.N, done: map[key]bool{}}, nil
}

// find returns the entry of k, creating it in its place if needed.
func (m *Machine) find(k key) *entry {
	i := 0
	for i < len(m.queue) && m.queue[i].key.Before(k) {
		i++
	}
	if i < len(m.queue) && m.queue[i].key == k {
		return m.queue[i]
	}
	e := &entry{key: k, acks: make([]bool, m.n)}
	m.queue = append(m.queue, nil)
	copy(m.queue[i+1:], m.queue[i:])
	m.queue[i] = e
	return e
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
		// The algorithm assumes no failures (seed 002); a restarted
		// process has lost its queue and will not deliver what it held.
		*m = Machine{id: m.id, n: m.n, done: map[key]bool{}}
		return []algo.Output{algo.NoteOut("restarted: the queue is lost")}
	case algo.Request:
		// Begin a multicast: timestamp it with the current logical time
		// and send it to every process, this one included (seed 002).
		m.seq++
		for j := 0; j < m.n; j++ {
			out = append(out, algo.SendTo(j, algo.Msg{Type: MsgMsg, Stamp: in.Clock, ID: m.seq}))
		}
	case algo.Release:
		return []algo.Output{algo.NoteOut("release ignored: a multicast has no critical section")}
	case algo.Timer:
		return []algo.Output{algo.NoteOut("unexpected timer %q", in.TimerName)}
	case algo.Receive:
		switch in.Msg.Type {
		case MsgMsg:
			// Queue it by timestamp, then multicast an ACK to every
			// process, this one included (seed 002).
			k := key{T: in.Msg.Stamp, ID: in.From}
			if m.done[k] {
				return []algo.Output{algo.NoteOut("duplicate message (%d,%d) ignored: delivered already", k.T, k.ID)}
			}
			e := m.find(k)
			if e.have {
				return []algo.Output{algo.NoteOut("duplicate message (%d,%d) ignored", in.Msg.Stamp, in.From)}
			}
			e.have, e.seq = true, in.Msg.ID
			for j := 0; j < m.n; j++ {
				out = append(out, algo.SendTo(j, algo.Msg{Type: MsgAck, Stamp: in.Msg.Stamp, ID: in.From}))
			}
		case MsgAck:
			if in.Msg.ID < 0 || in.Msg.ID >= m.n {
				return []algo.Output{algo.NoteOut("ack from P%d for unknown origin %d ignored", in.From, in.Msg.ID)}
			}
			k := key{T: in.Msg.Stamp, ID: in.Msg.ID}
			if m.done[k] {
				return []algo.Output{algo.NoteOut("ack from P%d for (%d,%d), delivered already", in.From, k.T, k.ID)}
			}
			e := m.find(k)
			if !e.acks[in.From] {
				e.acks[in.From] = true
				e.nack++
			}
		default:
			return []algo.Output{algo.NoteOut("unknown message %q from P%d", in.Msg.Type, in.From)}
		}
		out = m.deliverReady(out)
	}
	return out
}

// deliverReady delivers from the head of the queue while the head's message
// has arrived and every process has acknowledged it (seed 002).
func (m *Machine) deliverReady(out []algo.Output) []algo.Output {
	for len(m.queue) > 0 {
		h := m.queue[0]
		if !h.have || h.nack < m.n {
			break
		}
		m.queue = m.queue[1:]
		m.delivered++
		m.done[h.key] = true
		out = append(out, algo.Output{Kind: algo.MulticastDelivered, From: h.ID, Msg: algo.Msg{Type: MsgMsg, Stamp: h.T, ID: h.seq}})
	}
	return out
}

// String describes the machine's state, for scripts and debugging.
func (m *Machine) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sent=%d delivered=%d queue=[", m.seq, m.delivered)
	for i, e := range m.queue {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "(%d,%d)", e.T, e.ID)
		if !e.have {
			b.WriteString("?")
		}
		var acks []int
		for j, a := range e.acks {
			if a {
				acks = append(acks, j)
			}
		}
		fmt.Fprintf(&b, "acks=%v", acks)
	}
	b.WriteString("]")
	return b.String()
}

// State implements algo.Inspector: the multicasts begun and delivered,
// and the hold-back queue in timestamp order with the acks each has.
func (m *Machine) State() any {
	type queued struct {
		T    uint64 `json:"t"`
		From int    `json:"from"`
		Have bool   `json:"have"`
		Acks []int  `json:"acks"`
	}
	st := struct {
		Sent      int      `json:"sent"`
		Delivered int      `json:"delivered"`
		Queue     []queued `json:"queue"`
	}{Sent: m.seq, Delivered: m.delivered, Queue: []queued{}}
	for _, e := range m.queue {
		st.Queue = append(st.Queue, queued{e.T, e.ID, e.have, algo.Members(e.acks)})
	}
	return st
}

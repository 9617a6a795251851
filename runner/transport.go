package runner

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

// The UDP transport gives the algorithms what the seeds assume of the
// network (seed 004, "Assumptions": reliable communication, the underlying
// protocol handles re-transmission) and what Lamport's algorithms assume on
// top (FIFO channels): every datagram carries a per-channel sequence number,
// receivers acknowledge cumulatively and deliver in order, senders retransmit
// what is not acknowledged. Message loss that a run wants is injected above
// this layer and recorded, never left to chance.
//
// Every datagram is authenticated with HMAC-SHA256 under the run's random
// key, so packets of another run, stray traffic and forgeries are rejected:
// counted by reason, never obeyed.
//
// Datagram layout: magic "DMX1", 32-byte MAC of the body, body (JSON).
//
// A channel never gives up on a peer that is alive, however long it stays
// silent (paused by SIGSTOP, starved on a loaded machine): its datagrams
// are retransmitted, the timeout doubling up to maxRTO (only the oldest
// retransmitWindow while it stays silent), until it acknowledges them. Giving up after
// a while would leave a gap that the receiver, which delivers in order,
// can never fill: it would hold every later message for ever. Only the
// runner, which starts and reaps the processes, knows that a peer is down
// (its process has ended): then what was not acknowledged, and what is sent
// to it until it comes back as a new incarnation, is abandoned. The trace
// says why: the peer's crash event, which makes those messages
// lost_to_crash.

var packetMagic = []byte("DMX1")

const macLen = sha256.Size

type packet struct {
	Kind string    `json:"k"` // "d" data, "a" ack
	From int       `json:"f"`
	To   int       `json:"t"`
	Inc  int       `json:"i,omitempty"`  // the sender's incarnation (bumped at each restart)
	RInc int       `json:"ri,omitempty"` // the receiver's incarnation the sender knows of
	Seq  uint64    `json:"s,omitempty"`  // data: channel sequence number, from 1
	Ack  uint64    `json:"a,omitempty"`  // ack: highest sequence delivered in order
	Env  *Envelope `json:"e,omitempty"`
}

// Rejections counts datagrams a node refused, by reason.
type Rejections struct {
	Malformed   int64 `json:"malformed"`   // too short, bad magic, bad JSON
	BadMAC      int64 `json:"bad_mac"`     // not signed with this run's key
	WrongPeer   int64 `json:"wrong_peer"`  // names a sender or receiver outside the run, or comes from another address
	Stale       int64 `json:"stale"`       // from or for an earlier incarnation of a restarted process
	Duplicate   int64 `json:"duplicate"`   // a retransmission of something already delivered
	Retransmits int64 `json:"retransmits"` // datagrams this node sent again
	Abandoned   int64 `json:"abandoned"`   // datagrams not sent or not retransmitted because their receiver was down (its process had ended)
}

// Total is the number of datagrams rejected (duplicates are not rejections).
func (r Rejections) Total() int64 { return r.Malformed + r.BadMAC + r.WrongPeer }

type outChan struct {
	next    uint64
	unacked []*pending // ascending seq
	heard   time.Time  // when the peer last acknowledged anything, or the first send
}

type pending struct {
	seq  uint64
	data []byte
	sent time.Time
	rto  time.Duration
}

// maxRTO is where the retransmission timeout stops doubling: a peer
// silent for long gets a retransmission a second.
const maxRTO = time.Second

// retransmitWindow is the most datagrams of one channel retransmitted in
// one round: to a peer that acknowledges nothing, the oldest are enough
// (it keeps later ones it gets out of order, and acknowledges all it has
// in order at once), and the rest would be a storm after a long pause.
const retransmitWindow = 64

type inChan struct {
	expect uint64 // next sequence number to deliver
	held   map[uint64]*Envelope
}

// transport is used from one goroutine only (the node loop); the socket
// reader goroutine hands datagrams over through the loop.
type transport struct {
	id, n   int
	inc     int    // this process's incarnation
	peerInc []int  // the incarnation of each peer, as far as known
	down    []bool // the runner said that this incarnation of the peer is down
	key     []byte
	conn    *net.UDPConn
	peers   []*net.UDPAddr
	out     []outChan
	in      []inChan
	deliver func(*Envelope)
	rto     time.Duration // the first retransmission timeout
	maxRTO  time.Duration // the RTO doubles up to it
	stats   Rejections
	scratch bytes.Buffer
}

func newTransport(id, n int, key []byte, conn *net.UDPConn, peers []*net.UDPAddr, deliver func(*Envelope)) *transport {
	t := &transport{id: id, n: n, key: key, conn: conn, peers: peers, deliver: deliver, rto: 30 * time.Millisecond, maxRTO: maxRTO}
	t.out = make([]outChan, n)
	t.in = make([]inChan, n)
	t.peerInc = make([]int, n)
	t.down = make([]bool, n)
	for i := range t.in {
		t.resetChan(i)
	}
	return t
}

// resetChan forgets the channels to and from peer: after the peer restarted,
// what was in flight between us belonged to its dead incarnation (lost to
// the crash, as the seeds' crash model says).
func (t *transport) resetChan(peer int) {
	t.out[peer] = outChan{next: 1}
	t.in[peer] = inChan{expect: 1, held: map[uint64]*Envelope{}}
}

// peerRestarted records that peer is now at incarnation inc.
func (t *transport) peerRestarted(peer, inc int) {
	if peer < 0 || peer >= t.n || inc <= t.peerInc[peer] {
		return
	}
	t.peerInc[peer] = inc
	t.down[peer] = false
	t.resetChan(peer)
}

// peerDown records that incarnation inc of peer is down: its process
// ended (the runner saw it). What it did not acknowledge is abandoned, and
// so is what is sent to it until it comes back. News of an incarnation
// older than the one known is ignored.
func (t *transport) peerDown(peer, inc int) {
	if peer < 0 || peer >= t.n || peer == t.id || inc != t.peerInc[peer] || t.down[peer] {
		return
	}
	t.down[peer] = true
	t.stats.Abandoned += int64(len(t.out[peer].unacked))
	t.out[peer].unacked = nil
}

func seal(key []byte, p *packet) ([]byte, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, key)
	m.Write(body)
	out := make([]byte, 0, len(packetMagic)+macLen+len(body))
	out = append(out, packetMagic...)
	out = m.Sum(out)
	return append(out, body...), nil
}

// open authenticates and decodes a datagram; the error says why it was
// rejected and which counter it belongs to.
func open(key []byte, b []byte) (*packet, error) {
	if len(b) < len(packetMagic)+macLen || !bytes.Equal(b[:len(packetMagic)], packetMagic) {
		return nil, errMalformed
	}
	mac, body := b[len(packetMagic):len(packetMagic)+macLen], b[len(packetMagic)+macLen:]
	m := hmac.New(sha256.New, key)
	m.Write(body)
	if !hmac.Equal(mac, m.Sum(nil)) {
		return nil, errBadMAC
	}
	var p packet
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, errMalformed
	}
	return &p, nil
}

var (
	errMalformed = errors.New("malformed datagram")
	errBadMAC    = errors.New("datagram not authenticated with this run's key")
)

// send transmits e reliably to e.To.
func (t *transport) send(e *Envelope) error {
	if e.To == t.id {
		// A message to oneself (a multicast that includes the sender) never
		// touches the network, but is still delivered later, not inside Step.
		return nil
	}
	if t.down[e.To] {
		t.stats.Abandoned++
		return nil
	}
	oc := &t.out[e.To]
	if len(oc.unacked) == 0 {
		// Nothing was waiting: the peer's silence counts from now.
		oc.heard = time.Now()
	}
	p := &packet{Kind: "d", From: t.id, To: e.To, Inc: t.inc, RInc: t.peerInc[e.To], Seq: oc.next, Env: e}
	data, err := seal(t.key, p)
	if err != nil {
		return fmt.Errorf("encode message %d: %w", e.ID, err)
	}
	oc.next++
	oc.unacked = append(oc.unacked, &pending{seq: p.Seq, data: data, sent: time.Now(), rto: t.rto})
	_, err = t.conn.WriteToUDP(data, t.peers[e.To])
	if err != nil {
		// Loopback rarely refuses; retransmission covers a transient error.
		return nil
	}
	return nil
}

// handle processes one datagram that arrived from addr.
func (t *transport) handle(b []byte, addr *net.UDPAddr) {
	p, err := open(t.key, b)
	switch err {
	case nil:
	case errBadMAC:
		t.stats.BadMAC++
		return
	default:
		t.stats.Malformed++
		return
	}
	if p.To != t.id || p.From < 0 || p.From >= t.n || p.From == t.id || !sameAddr(addr, t.peers[p.From]) {
		t.stats.WrongPeer++
		return
	}
	if p.Inc > t.peerInc[p.From] {
		t.peerRestarted(p.From, p.Inc)
	}
	if p.Inc < t.peerInc[p.From] || p.RInc != t.inc {
		t.stats.Stale++
		return
	}
	switch p.Kind {
	case "a":
		oc := &t.out[p.From]
		k := 0
		for k < len(oc.unacked) && oc.unacked[k].seq <= p.Ack {
			k++
		}
		oc.unacked = oc.unacked[k:]
		oc.heard = time.Now()
	case "d":
		if p.Env == nil || p.Env.From != p.From || p.Env.To != t.id || p.Seq == 0 {
			t.stats.Malformed++
			return
		}
		ic := &t.in[p.From]
		switch {
		case p.Seq < ic.expect:
			t.stats.Duplicate++
		case p.Seq == ic.expect:
			t.deliver(p.Env)
			ic.expect++
			for {
				e, ok := ic.held[ic.expect]
				if !ok {
					break
				}
				delete(ic.held, ic.expect)
				t.deliver(e)
				ic.expect++
			}
		default:
			if _, dup := ic.held[p.Seq]; dup {
				t.stats.Duplicate++
			} else if len(ic.held) < 1<<16 {
				ic.held[p.Seq] = p.Env
			}
		}
		t.ack(p.From)
	default:
		t.stats.Malformed++
	}
}

func (t *transport) ack(to int) {
	data, err := seal(t.key, &packet{Kind: "a", From: t.id, To: to, Inc: t.inc, RInc: t.peerInc[to], Ack: t.in[to].expect - 1})
	if err != nil {
		return
	}
	t.conn.WriteToUDP(data, t.peers[to])
}

// retransmit sends again, on every channel, what has waited for its ack
// longer than its RTO (see resend). Nothing is given up here: see
// peerDown.
func (t *transport) retransmit(now time.Time) {
	for to := range t.out {
		t.resend(to, now)
	}
}

// resend sends again the datagrams to peer that have waited for their ack
// longer than their RTO, and doubles their RTO up to maxRTO. To a peer
// silent for longer than maxRTO (paused, or down and not known to be),
// only the oldest retransmitWindow are sent: probes, while a pause lasts,
// not the whole backlog once a second; as soon as it acknowledges again
// the rest goes.
func (t *transport) resend(peer int, now time.Time) {
	oc := &t.out[peer]
	n := len(oc.unacked)
	if now.Sub(oc.heard) > t.maxRTO {
		n = min(n, retransmitWindow)
	}
	for _, p := range oc.unacked[:n] {
		if now.Sub(p.sent) < p.rto {
			continue
		}
		t.conn.WriteToUDP(p.data, t.peers[peer])
		t.stats.Retransmits++
		p.sent = now
		p.rto = min(2*p.rto, t.maxRTO)
	}
}

// idle reports whether nothing sent is waiting for an acknowledgement.
func (t *transport) idle() bool {
	for i := range t.out {
		if len(t.out[i].unacked) > 0 {
			return false
		}
	}
	return true
}

func sameAddr(a, b *net.UDPAddr) bool {
	return a != nil && b != nil && a.Port == b.Port && a.IP.Equal(b.IP)
}

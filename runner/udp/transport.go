package udp

import (
	"net"
	"net/netip"
	"time"

	"github.com/dmxlab/dmx/runner/link"

	"github.com/dmxlab/dmx/runner"
)

// The UDP transport gives the algorithms what the seeds assume of the
// network (seed 004, "Assumptions": reliable communication, the underlying
// protocol handles re-transmission) and what Lamport's algorithms assume on
// top (FIFO channels): every datagram carries a per-channel sequence number,
// receivers acknowledge cumulatively and deliver in order, senders retransmit
// what is not acknowledged. A plan with raw channels (ChannelsRaw) turns all
// of that off: each message is one datagram, sent once, delivered as it
// arrives.
//
// The network fault layer (netFaults) sits on the send path: every
// datagram, first sends, retransmissions and acknowledgements alike, is
// judged before it is written, so that injected loss, delay, duplication,
// reordering and partitions act on the real datagrams and the algorithm
// cannot tell them from a real network's. A data datagram the layer drops
// is recorded as a drop event of the sender; with reliable channels it is
// then sent again after its time-out, so the algorithm sees the loss only
// as delay. One marked unordered (a reorder fault) is delivered when it
// arrives instead of waiting for the ones sent before it. Nothing else is
// lost on loopback: loss that a run wants is injected and recorded, never
// left to chance.
//
// A channel never gives up on a peer that is alive, however long it stays
// silent (paused by SIGSTOP, starved on a loaded machine): its datagrams
// are retransmitted, the timeout doubling up to link.MaxRTO (only the oldest
// retransmitWindow while it stays silent), until it acknowledges them.
// Giving up after a while would leave a gap that the receiver, which
// delivers in order, could never fill: it would hold every later message
// for ever. A message is given up in two cases only, each explained by the
// trace: its receiver is down (the runner, which starts and reaps the
// processes, says so when the process has ended: its crash event makes the
// message lost_to_crash), or the fault layer dropped link.MaxTries copies of it
// in a row (each a drop event, the last saying it is not sent again: the
// message is dropped). After a give-up the sender's data datagrams carry
// the channel's base, the oldest sequence number it still waits for, and
// the receiver stops waiting for what came before it and did not come: the
// channel resynchronises instead of blocking for ever.
//
// Every datagram is authenticated with HMAC-SHA256 under the run's random
// key, so packets of another run, stray traffic and forgeries are rejected:
// counted by reason, never obeyed.
// (See packet.go for the datagram layout.)

type packet struct {
	Kind string // "d" data, "a" ack
	From int
	To   int
	Inc  int              // the sender's incarnation (bumped at each restart)
	RInc int              // the receiver's incarnation the sender knows of
	Seq  uint64           // data: channel sequence number, from 1
	U    bool             // data: deliver on arrival, not in order (a reorder fault)
	Base uint64           // data, after a give-up: every sequence number below it was delivered or given up
	Ack  uint64           // ack: highest sequence delivered in order
	Env  *runner.Envelope // data: what it carries
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
	GivenUp     int64 `json:"given_up"`    // datagrams given up after the fault layer dropped link.MaxTries copies in a row
	FaultDrops  int64 `json:"fault_drops"` // datagrams (data and acks) the fault layer dropped
	Sent        int64 `json:"sent"`        // datagrams this node wrote, retransmissions included
}

// Total is the number of datagrams rejected (duplicates are not rejections).
func (r Rejections) Total() int64 { return r.Malformed + r.BadMAC + r.WrongPeer }

type outChan struct {
	next    uint64
	unacked []*pending // ascending seq
	heard   time.Time  // when the peer last acknowledged anything, or the first send
	gaveUp  bool       // a message was given up: data datagrams carry the base
}

// base is the oldest sequence number the channel still waits for: every
// one below it was acknowledged or given up.
func (oc *outChan) base() uint64 {
	if len(oc.unacked) > 0 {
		return oc.unacked[0].seq
	}
	return oc.next
}

type pending struct {
	seq     uint64
	data    []byte // nil until it first leaves (sealData)
	sent    time.Time
	rto     time.Duration
	dropped int              // copies the fault layer dropped in a row
	base    uint64           // the base data carries (0: none)
	packet  *packet          // what data seals, to seal again with a new base
	env     *runner.Envelope // what it carries, for the record of a drop
}

// retransmitWindow is the most datagrams of one channel retransmitted in
// one round to a peer silent for longer than maxRTO: the oldest are enough
// (it keeps later ones it gets out of order, and acknowledges all it has
// in order at once), and the rest would be a storm once a second while a
// pause lasts.
const retransmitWindow = 64

// ackDelay is how long a node's acknowledgement may wait for data going
// back to its peer to carry it (see ackHeld): well within link.InitialRTO,
// even with the 10ms of the node loop's tick that sends it when the node
// is idle.
const ackDelay = 2 * time.Millisecond

// transport is used from one goroutine only (the node loop, which reads
// the socket itself: see sock).
type transport struct {
	id, n   int
	inc     int    // this process's incarnation
	peerInc []int  // the incarnation of each peer, as far as known
	down    []bool // the runner said that this incarnation of the peer is down
	key     []byte
	conn    *net.UDPConn
	peers   []*net.UDPAddr
	// peerAddrs are peers as the socket calls take them without
	// allocating.
	peerAddrs []netip.AddrPort
	out       []outChan
	in        []link.InOrder[*runner.Envelope]
	deliver   func(*runner.Envelope)
	rto       time.Duration // the first retransmission time-out
	maxRTO    time.Duration // the time-out doubles up to it
	stats     Rejections
	sealer    *sealer

	raw bool // raw channels: no sequence, acknowledgement or retransmission
	// net is the fault layer (nil: none); dropped records a data datagram
	// it dropped, later runs a function on the node's loop after a delay
	// (a delayed or duplicated datagram).
	net     *runner.NetFaults
	dropped func(e *runner.Envelope, fault string, resend bool)
	later   func(d time.Duration, f func())

	// hold keeps the datagrams written until sendHeld: the node's loop
	// sends them at its safe point, after the events that led to them
	// are in the runner's hands.
	hold bool
	held []heldDgram
	// ackDue says which peers sent data not acknowledged yet (with hold):
	// acksDue lists them, since acksSince. ackDelay is how long such an
	// acknowledgement may wait for data going back to carry it.
	ackDue    []bool
	acksDue   []int
	acksSince time.Time
	ackDelay  time.Duration
	// At the safe point: the data going to each peer for the first time
	// (bundles, by peer; bundled lists the peers), and the packets of the
	// datagram being made.
	bundles [][]*pending
	bundled []int
	bundle  []*packet
	// sock, if set, writes what sendHeld sends in one system call:
	// batching gathers it in outq meanwhile.
	sock     *sock
	batching bool
	outq     []outDgram
}

// heldDgram is a datagram to send at the next safe point.
type heldDgram struct {
	pd *pending
	to int
}

func newTransport(id, n int, key []byte, conn *net.UDPConn, peers []*net.UDPAddr, deliver func(*runner.Envelope)) *transport {
	t := &transport{id: id, n: n, key: key, conn: conn, peers: peers, deliver: deliver, rto: link.InitialRTO, maxRTO: link.MaxRTO, sealer: newSealer(key)}
	t.out = make([]outChan, n)
	t.in = make([]link.InOrder[*runner.Envelope], n)
	t.peerInc = make([]int, n)
	t.down = make([]bool, n)
	t.ackDue = make([]bool, n)
	t.bundles = make([][]*pending, n)
	t.peerAddrs = make([]netip.AddrPort, len(peers))
	for i, a := range peers {
		if a != nil {
			ap := a.AddrPort()
			t.peerAddrs[i] = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
	}
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
	t.in[peer] = link.NewInOrder[*runner.Envelope]()
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

// send transmits e reliably to e.To (with raw channels: once).
func (t *transport) send(e *runner.Envelope) {
	if e.To == t.id {
		// A message to oneself (a multicast that includes the sender) never
		// touches the network, but is still delivered later, not inside Step.
		return
	}
	if t.down[e.To] {
		t.stats.Abandoned++
		return
	}
	oc := &t.out[e.To]
	if len(oc.unacked) == 0 {
		// Nothing was waiting: the peer's silence counts from now.
		oc.heard = time.Now()
	}
	v := t.judge(e.To, e.Msg.Type, true)
	p := &packet{Kind: "d", From: t.id, To: e.To, Inc: t.inc, RInc: t.peerInc[e.To], Seq: oc.next, U: v.Unordered, Env: e}
	if oc.gaveUp {
		p.Base = oc.base()
	}
	oc.next++
	// Sealed when it leaves (sealData). Its time-out counts from then, and
	// allows for the injected delay both ways, as a transport that
	// measures the round trip would.
	pd := &pending{seq: p.Seq, sent: time.Now().Add(v.Delay), rto: t.rto + 2*v.Delay, base: p.Base, packet: p, env: e}
	if !t.raw {
		if v.Drop != "" {
			pd.dropped = 1
		}
		oc.unacked = append(oc.unacked, pd)
	}
	t.emit(e.To, pd, v, e, !t.raw)
}

// judge asks the fault layer about a datagram to peer to.
func (t *transport) judge(to int, typ string, data bool) runner.Verdict {
	if t.net == nil {
		return runner.Verdict{}
	}
	return t.net.Judge(t.id, to, typ, data)
}

// emit writes datagram pd to peer to as verdict v says: not at all (a
// drop, recorded for a data datagram e, resend saying whether it is sent
// again), later, or twice.
func (t *transport) emit(to int, pd *pending, v runner.Verdict, e *runner.Envelope, resend bool) {
	if v.Drop != "" {
		t.stats.FaultDrops++
		if e != nil && t.dropped != nil {
			t.dropped(e, v.Drop, resend)
		}
		return
	}
	if v.Delay > 0 && t.later != nil {
		t.later(v.Delay, func() { t.write(to, pd) })
	} else {
		t.write(to, pd)
	}
	if v.Dup && t.later != nil {
		t.later(v.Delay+v.DupDelay, func() { t.write(to, pd) })
	}
}

// write writes datagram pd to peer to, or holds it for sendHeld.
func (t *transport) write(to int, pd *pending) {
	if t.hold {
		t.held = append(t.held, heldDgram{pd, to})
		return
	}
	t.sealData(to, pd)
	t.writeOut(pd.data, to)
}

// writeOut writes datagram b to peer to; inside sendHeld it joins the
// batch written at its end (with sock: in one system call).
func (t *transport) writeOut(b []byte, to int) {
	t.stats.Sent++
	if t.batching {
		t.outq = append(t.outq, outDgram{b, to})
		return
	}
	// Loopback rarely refuses; retransmission covers a transient error.
	t.conn.WriteToUDPAddrPort(b, t.peerAddrs[to])
}

// flushOut writes the batch that sendHeld gathered.
func (t *transport) flushOut() {
	t.batching = false
	if len(t.outq) == 0 {
		return
	}
	if t.sock != nil {
		t.sock.send(t.outq, t.peerAddrs)
	} else {
		for _, d := range t.outq {
			t.conn.WriteToUDPAddrPort(d.b, t.peerAddrs[d.to])
		}
	}
	clear(t.outq)
	t.outq = t.outq[:0]
}

// sealData seals a data datagram the first time it leaves. It carries the
// acknowledgement of what came from its receiver so far, which then needs
// no datagram of its own.
func (t *transport) sealData(to int, pd *pending) {
	if pd.data != nil {
		return
	}
	if !t.raw {
		pd.packet.Ack = t.in[to].Delivered()
		t.ackDue[to] = false
	}
	pd.data = t.sealer.seal(pd.packet)
}

// sendHeld sends the datagrams held back (see hold), and acknowledges
// what came from peers that no data datagram acknowledged. The data going
// to one peer travels in one datagram, in the order sent (but for one
// already sealed alone, which goes again as it was).
func (t *transport) sendHeld() {
	t.batching = true
	defer t.flushOut()
	sealed := t.held[:0]
	for _, h := range t.held {
		if h.pd.data != nil {
			sealed = append(sealed, h)
			continue
		}
		if len(t.bundles[h.to]) == 0 {
			t.bundled = append(t.bundled, h.to)
		}
		t.bundles[h.to] = append(t.bundles[h.to], h.pd)
	}
	clear(t.held[len(sealed):])
	t.held = sealed
	for _, to := range t.bundled {
		t.sendBundle(to, t.bundles[to])
		clear(t.bundles[to])
		t.bundles[to] = t.bundles[to][:0]
	}
	t.bundled = t.bundled[:0]
	t.ackHeld(false)
	for i, h := range t.held {
		t.writeOut(h.pd.data, h.to)
		t.held[i] = heldDgram{}
	}
	t.held = t.held[:0]
}

// ackHeld acknowledges what came from peers that no data datagram
// acknowledged since, once the oldest of these acknowledgements has
// waited ackDelay (now, if force). An acknowledgement alone is a datagram
// that wakes its receiver for nothing but bookkeeping; under load the
// data going back soon carries it instead. The acknowledgements are held,
// and sent by the caller's sendHeld.
func (t *transport) ackHeld(force bool) {
	if len(t.acksDue) == 0 || !force && t.ackDelay > 0 && time.Since(t.acksSince) < t.ackDelay {
		return
	}
	for _, to := range t.acksDue {
		if t.ackDue[to] {
			t.ack(to)
		}
	}
	t.acksDue = t.acksDue[:0]
}

// maxBundle bounds the body of a datagram of several packets.
const maxBundle = 16 << 10

// sendBundle sends the data pds to peer to in as few datagrams as it can,
// each acknowledging what came from to. One alone is sealed as itself
// (and kept for its retransmissions); several together are bundled again
// if they are sent again.
func (t *transport) sendBundle(to int, pds []*pending) {
	if len(pds) == 1 {
		t.sealData(to, pds[0])
		t.writeOut(pds[0].data, to)
		return
	}
	if !t.raw {
		t.ackDue[to] = false
	}
	t.bundle = t.bundle[:0]
	size := 0
	for i, pd := range pds {
		if !t.raw {
			pd.packet.Ack = t.in[to].Delivered()
		}
		t.bundle = append(t.bundle, pd.packet)
		size += 64 + len(pd.packet.Env.VC)*4 + len(pd.packet.Env.Msg.Vals)*4
		if size >= maxBundle || i == len(pds)-1 {
			t.writeOut(t.sealer.sealAll(t.bundle), to)
			clear(t.bundle)
			t.bundle, size = t.bundle[:0], 0
		}
	}
}

// handle processes one datagram that arrived from addr.
func (t *transport) handle(b []byte, addr netip.AddrPort) {
	ps, err := t.sealer.open(b)
	switch err {
	case nil:
	case errBadMAC:
		t.stats.BadMAC++
		return
	default:
		t.stats.Malformed++
		return
	}
	for _, p := range ps {
		t.handlePacket(p, addr)
	}
}

// handlePacket processes one packet of a datagram that came from addr.
func (t *transport) handlePacket(p *packet, addr netip.AddrPort) {
	if p.To != t.id || p.From < 0 || p.From >= t.n || p.From == t.id || !sameAddr(addr, t.peerAddrs[p.From]) {
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
		t.acked(p.From, p.Ack)
	case "d":
		if p.Env == nil || p.Env.From != p.From || p.Env.To != t.id || p.Seq == 0 {
			t.stats.Malformed++
			return
		}
		if t.raw {
			t.deliver(p.Env) // as it comes: twice if it comes twice
			return
		}
		if p.Ack > 0 {
			t.acked(p.From, p.Ack)
		}
		if p.Base > 0 {
			t.in[p.From].SkipTo(p.Base, t.deliver)
		}
		if !t.in[p.From].Accept(p.Seq, p.U, p.Env, t.deliver) {
			t.stats.Duplicate++
		}
		if !t.hold {
			t.ack(p.From)
		} else if !t.ackDue[p.From] {
			// Acknowledged at the safe point, by the data going back
			// to p.From if there is some.
			t.ackDue[p.From] = true
			if len(t.acksDue) == 0 {
				t.acksSince = time.Now()
			}
			t.acksDue = append(t.acksDue, p.From)
		}
	default:
		t.stats.Malformed++
	}
}

// acked takes peer's acknowledgement of everything up to seq.
func (t *transport) acked(peer int, seq uint64) {
	oc := &t.out[peer]
	k := 0
	for k < len(oc.unacked) && oc.unacked[k].seq <= seq {
		k++
	}
	oc.unacked = oc.unacked[k:]
	oc.heard = time.Now()
}

func (t *transport) ack(to int) {
	t.ackDue[to] = false
	data := t.sealer.seal(&packet{Kind: "a", From: t.id, To: to, Inc: t.inc, RInc: t.peerInc[to], Ack: t.in[to].Delivered()})
	t.emit(to, &pending{data: data}, t.judge(to, "", false), nil, false)
}

// retransmit sends again, on every channel, what has waited for its ack
// longer than its RTO (see resend).
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
// the rest goes. A message whose last link.MaxTries copies the fault layer
// dropped is given up.
func (t *transport) resend(peer int, now time.Time) {
	oc := &t.out[peer]
	n := len(oc.unacked)
	if now.Sub(oc.heard) > t.maxRTO {
		n = min(n, retransmitWindow)
	}
	gaveUp := false
	for _, p := range oc.unacked[:n] {
		if now.Sub(p.sent) < p.rto {
			continue
		}
		if oc.gaveUp && p.base != oc.base() {
			t.reseal(p, oc.base())
		}
		t.stats.Retransmits++
		p.sent = now
		p.rto = min(2*p.rto, t.maxRTO)
		v := t.judge(peer, p.env.Msg.Type, true)
		if v.Drop == "" {
			p.dropped = 0
		} else {
			p.dropped++
		}
		t.emit(peer, p, v, p.env, p.dropped < link.MaxTries)
		gaveUp = gaveUp || p.dropped >= link.MaxTries
	}
	if gaveUp {
		kept := oc.unacked[:0]
		for _, p := range oc.unacked {
			if p.dropped >= link.MaxTries {
				t.stats.GivenUp++
			} else {
				kept = append(kept, p)
			}
		}
		clear(oc.unacked[len(kept):])
		oc.unacked = kept
		oc.gaveUp = true
	}
}

// reseal seals p's datagram again with a new base.
func (t *transport) reseal(p *pending, base uint64) {
	p.packet.Base = base
	p.data, p.base = t.sealer.seal(p.packet), base
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

func sameAddr(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
}

package udp

import (
	"crypto/hmac"
	"crypto/sha256"
	"math/rand/v2"
	"net"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"

	"github.com/dmxlab/dmx/runner/link"

	"github.com/dmxlab/dmx/runner"
)

func listen(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// pump reads datagrams from c into tr until want messages were delivered or
// the deadline passes; drop says which arriving datagrams to lose (a lossy
// network the transport must repair). Retransmission runs on the way.
func pump(t *testing.T, trs []*transport, conns []*net.UDPConn, got *[]*runner.Envelope, want int, drop func(k int) bool) {
	t.Helper()
	pumpAt(t, trs, conns, got, want, drop, time.Now)
}

// pumpAt is pump with the retransmission timers read against clock.
func pumpAt(t *testing.T, trs []*transport, conns []*net.UDPConn, got *[]*runner.Envelope, want int, drop func(k int) bool, clock func() time.Time) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 64<<10)
	k := 0
	for len(*got) < want {
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d of %d messages before the deadline", len(*got), want)
		}
		for i, c := range conns {
			c.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
			n, addr, err := c.ReadFromUDPAddrPort(buf)
			if err == nil {
				k++
				if drop == nil || !drop(k) {
					trs[i].handle(append([]byte(nil), buf[:n]...), addr)
				}
			}
			trs[i].retransmit(clock())
		}
	}
}

func pair(t *testing.T, key []byte, got *[]*runner.Envelope) ([]*transport, []*net.UDPConn) {
	c0, c1 := listen(t), listen(t)
	peers := []*net.UDPAddr{c0.LocalAddr().(*net.UDPAddr), c1.LocalAddr().(*net.UDPAddr)}
	deliver := func(e *runner.Envelope) { *got = append(*got, e) }
	t0 := newTransport(0, 2, key, c0, peers, deliver)
	t1 := newTransport(1, 2, key, c1, peers, deliver)
	t0.rto, t1.rto = 5*time.Millisecond, 5*time.Millisecond
	return []*transport{t0, t1}, []*net.UDPConn{c0, c1}
}

// TestTransportReliableFIFO: over a network that loses every third datagram
// (data and acks alike), every message is delivered once, in send order.
func TestTransportReliableFIFO(t *testing.T) {
	var got []*runner.Envelope
	trs, conns := pair(t, []byte("k"), &got)
	const n = 200
	for i := 1; i <= n; i++ {
		trs[0].send(&runner.Envelope{ID: int64(i), From: 0, To: 1, Msg: algo.Msg{Type: "m"}})
	}
	pump(t, trs, conns, &got, n, func(k int) bool { return k%3 == 0 })
	for i, e := range got {
		if e.ID != int64(i+1) {
			t.Fatalf("delivery %d is message %d: not FIFO or not exactly once", i, e.ID)
		}
	}
	// Let the last acks through so the sender is idle.
	deadline := time.Now().Add(5 * time.Second)
	for !trs[0].idle() && time.Now().Before(deadline) {
		pump(t, trs, conns, &got, len(got), nil)
		for i, c := range conns {
			buf := make([]byte, 64<<10)
			c.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
			if k, addr, err := c.ReadFromUDPAddrPort(buf); err == nil {
				trs[i].handle(buf[:k], addr)
			}
			trs[i].retransmit(time.Now())
		}
	}
	if !trs[0].idle() {
		t.Fatal("sender still has unacknowledged messages")
	}
	if len(got) != n {
		t.Fatalf("delivered %d messages, want %d (duplicates?)", len(got), n)
	}
	if trs[0].stats.Retransmits == 0 {
		t.Fatal("no retransmission counted on a lossy network")
	}
}

// TestTransportRejects: datagrams of another run (other key), garbage, and
// forged senders are counted and never delivered.
func TestTransportRejects(t *testing.T) {
	var got []*runner.Envelope
	trs, _ := pair(t, []byte("this run"), &got)
	from := trs[0].peerAddrs[0]
	other := seal([]byte("another run"), &packet{Kind: "d", From: 0, To: 1, Seq: 1, Env: &runner.Envelope{ID: 1, From: 0, To: 1}})
	trs[1].handle(other, from)
	trs[1].handle([]byte("hello"), from)
	trs[1].handle(append(append([]byte(nil), packetMagic...), make([]byte, 40)...), from)
	bogus := seal([]byte("this run"), &packet{Kind: "d", From: 7, To: 1, Seq: 1, Env: &runner.Envelope{ID: 1, From: 7, To: 1}})
	trs[1].handle(bogus, from)
	spoof := seal([]byte("this run"), &packet{Kind: "d", From: 0, To: 1, Seq: 1, Env: &runner.Envelope{ID: 1, From: 0, To: 1}})
	trs[1].handle(spoof, netip.MustParseAddrPort("127.0.0.1:9"))
	tampered := seal([]byte("this run"), &packet{Kind: "a"})
	tampered[len(tampered)-1] = '!'
	trs[1].handle(tampered, from)
	// Signed with the right key but not a packet: malformed.
	body := []byte("not a packet")
	m := hmac.New(sha256.New, []byte("this run"))
	m.Write(body)
	trs[1].handle(append(m.Sum(append([]byte(nil), packetMagic...)), body...), from)
	if len(got) != 0 {
		t.Fatalf("delivered %d rejected messages", len(got))
	}
	s := trs[1].stats
	if s.BadMAC != 3 || s.Malformed != 2 || s.WrongPeer != 2 {
		t.Fatalf("rejections = %+v, want bad_mac 3 (other key, zero MAC, tampered body), malformed 2, wrong_peer 2", s)
	}
}

// heartbeats sends messages from..to (their ids) from tr's process to
// P1.
func heartbeats(tr *transport, from, to int) {
	for i := from; i <= to; i++ {
		tr.send(&runner.Envelope{ID: int64(i), From: tr.id, To: 1, Msg: algo.Msg{Type: "heartbeat"}})
	}
}

// deliveredInOrder checks that got holds the messages 1, 2, 3... in this order.
func deliveredInOrder(t *testing.T, got []*runner.Envelope) {
	t.Helper()
	for i, e := range got {
		if e.ID != int64(i+1) {
			t.Fatalf("delivered %d at position %d", e.ID, i)
		}
	}
}

// TestTransportNeverGivesUpOnALivePeer: what a peer does not acknowledge
// for a long time (it is paused, or its machine is loaded) is retransmitted
// with back-off for as long as it takes, never given up: once the peer
// answers, it gets every message, in order.
func TestTransportNeverGivesUpOnALivePeer(t *testing.T) {
	var got []*runner.Envelope
	trs, conns := pair(t, []byte("k"), &got)
	heartbeats(trs[0], 1, 3)
	// An hour of silence, one retransmission round a second.
	now := time.Now()
	for i := 0; i < 3600; i++ {
		now = now.Add(time.Second)
		trs[0].retransmit(now)
	}
	if s := trs[0].stats; len(trs[0].out[1].unacked) != 3 || s.Abandoned != 0 {
		t.Fatalf("after an hour: unacked %d, stats %+v; want all 3 still waiting", len(trs[0].out[1].unacked), s)
	}
	// The peer wakes up: the old datagrams are still in its socket, and
	// the next retransmissions come.
	trs[0].out[1].unacked[0].sent = time.Time{}
	pump(t, trs, conns, &got, 3, nil)
	deliveredInOrder(t, got)
}

// TestTransportRetransmitsAWindow: to a peer silent for longer than
// maxRTO, only the oldest retransmitWindow datagrams are retransmitted,
// however long it stays silent: a long pause does not turn into a storm.
// Once it acknowledges again, the rest follows at once, without waiting
// for the backed-off timeouts.
func TestTransportRetransmitsAWindow(t *testing.T) {
	var got []*runner.Envelope
	trs, conns := pair(t, []byte("k"), &got)
	const n = 5 * retransmitWindow
	heartbeats(trs[0], 1, n)
	now := time.Now()
	for i := 0; i < 600; i++ { // ten minutes, a round a second
		now = now.Add(time.Second)
		trs[0].retransmit(now)
	}
	if r := trs[0].stats.Retransmits; r != 600*retransmitWindow {
		t.Fatalf("%d retransmitted in 600 rounds, want %d", r, 600*retransmitWindow)
	}
	// The peer reads its socket again: everything arrives paced by the
	// acknowledgements. The timers are read against a clock that stands
	// still at the last round: were the rest waiting for its backed-off
	// timeouts (maxRTO), nothing more would arrive and pump would fail
	// (a wall-clock bound instead failed on a busy machine).
	pumpAt(t, trs, conns, &got, n, nil, func() time.Time { return now })
	deliveredInOrder(t, got)
}

// TestTransportAbandonsDownPeer: only a peer the runner reports down (its
// process ended) is given up on: what it did not acknowledge, and what is
// sent to it until it comes back, is abandoned and counted (its crash in
// the trace makes those messages lost_to_crash). News of an older
// incarnation's death does not touch the current one.
func TestTransportAbandonsDownPeer(t *testing.T) {
	var got []*runner.Envelope
	trs, conns := pair(t, []byte("k"), &got)
	heartbeats(trs[0], 1, 3)
	trs[0].peerDown(1, 0)
	heartbeats(trs[0], 4, 4)
	if s := trs[0].stats; len(trs[0].out[1].unacked) != 0 || s.Abandoned != 4 {
		t.Fatalf("unacked %d, stats %+v: want 4 abandoned", len(trs[0].out[1].unacked), s)
	}
	// It comes back as incarnation 1; late news of incarnation 0's death
	// changes nothing.
	trs[0].peerRestarted(1, 1)
	trs[1].inc = 1
	trs[0].peerDown(1, 0)
	heartbeats(trs[0], 5, 5)
	pump(t, trs, conns, &got, 1, nil)
	if got[0].ID != 5 || trs[0].stats.Abandoned != 4 {
		t.Fatalf("delivered %d, stats %+v", got[0].ID, trs[0].stats)
	}
}

// TestTransportGivesUpOnFaultsAndResyncs: a message whose copies the fault
// layer drops link.MaxTries times in a row (every "ok" here) is given up,
// its last drop recorded as not sent again, and the receiver, told the
// channel's new base by the next datagrams, stops waiting for it: what
// was sent after it is delivered, in order.
func TestTransportGivesUpOnFaultsAndResyncs(t *testing.T) {
	var got []*runner.Envelope
	trs, conns := pair(t, []byte("k"), &got)
	fs, err := runner.ParseFaults("loss:100%:type=ok")
	if err != nil {
		t.Fatal(err)
	}
	trs[0].net = runner.NewNetFaults(fs, rand.New(rand.NewPCG(1, 2)))
	trs[0].net.Start(0, -1)
	trs[0].maxRTO = 10 * time.Millisecond
	var resends []bool
	trs[0].dropped = func(e *runner.Envelope, fault string, resend bool) { resends = append(resends, resend) }
	for i, typ := range []string{"request", "ok", "request", "request"} {
		trs[0].send(&runner.Envelope{ID: int64(i + 1), From: 0, To: 1, Msg: algo.Msg{Type: typ}})
	}
	pump(t, trs, conns, &got, 3, nil)
	if len(got) != 3 || got[0].ID != 1 || got[1].ID != 3 || got[2].ID != 4 {
		var ids []int64
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		t.Fatalf("delivered %v, want [1 3 4]", ids)
	}
	if len(resends) != link.MaxTries || resends[link.MaxTries-1] || !resends[0] {
		t.Errorf("drops recorded (resend?): %v; want %d, the last not sent again", resends, link.MaxTries)
	}
	if s := trs[0].stats; s.GivenUp != 1 || s.Abandoned != 0 {
		t.Errorf("stats %+v: want 1 given up", s)
	}
}

// TestPacketRoundTrip: a sealed packet opens as it was, and one cut
// anywhere, or with bytes after it, is malformed; several sealed into one
// datagram open as they were, in order.
func TestPacketRoundTrip(t *testing.T) {
	key := []byte("this run")
	ps := []*packet{
		{Kind: "a", From: 1, To: 0, Inc: 2, RInc: 1, Ack: 1 << 40},
		{Kind: "d", From: 0, To: 4, Seq: 7, U: true, Base: 3, Env: &runner.Envelope{ID: trace.MsgID(0, 7), From: 0, To: 4, Lamport: 99,
			VC: trace.VC{1, 0, 1 << 63, 4, 5}, Msg: algo.Msg{Type: "token", Resource: "cs", Stamp: 12, ID: -1, Term: 3, Vals: []uint64{0, 9, 1 << 50}}}},
		{Kind: "d", From: 2, To: 1, Seq: 1, Env: &runner.Envelope{ID: 1, From: 2, To: 1, Msg: algo.Msg{Type: "ok"}}},
	}
	for _, p := range ps {
		s := newSealer(key)
		b := s.seal(p)
		got, err := s.open(b)
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], p) {
			t.Fatalf("%+v came back as %+v, %v", p, got, err)
		}
		// Cut or lengthened, and signed again: still refused.
		body := b[len(packetMagic)+macLen:]
		for _, bad := range [][]byte{body[:len(body)-1], append(append([]byte(nil), body...), 0)} {
			m := hmac.New(sha256.New, key)
			m.Write(bad)
			if _, err := s.open(append(m.Sum(append([]byte(nil), packetMagic...)), bad...)); err != errMalformed {
				t.Errorf("%+v, body %q: %v, want %v", p, bad, err, errMalformed)
			}
		}
	}
	s := newSealer(key)
	if got, err := s.open(s.sealAll(ps)); err != nil || !reflect.DeepEqual(got, ps) {
		t.Errorf("%d packets in one datagram came back as %v, %v", len(ps), got, err)
	}
}

// TestDelayedAck: with ackDelay, a safe point does not acknowledge alone
// what came until the acknowledgement has waited ackDelay; data going back
// meanwhile carries it, and nothing is left unacknowledged either way.
func TestDelayedAck(t *testing.T) {
	var got []*runner.Envelope
	trs, conns := pair(t, []byte("k"), &got)
	for _, tr := range trs {
		tr.hold = true
		tr.ackDelay = 50 * time.Millisecond
	}
	buf := make([]byte, 64<<10)
	// recv hands transport i the next datagram that came to it.
	recv := func(i int) {
		t.Helper()
		conns[i].SetReadDeadline(time.Now().Add(5 * time.Second))
		n, addr, err := conns[i].ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatalf("P%d: no datagram: %v", i, err)
		}
		trs[i].handle(buf[:n], addr)
	}
	trs[0].send(&runner.Envelope{ID: 1, From: 0, To: 1, Msg: algo.Msg{Type: "m"}})
	trs[0].sendHeld()
	recv(1)
	start := time.Now()
	trs[1].sendHeld()
	if trs[1].stats.Sent != 0 && time.Since(start) < trs[1].ackDelay {
		t.Fatal("an acknowledgement alone left at once")
	}
	// acked checks that P1 has sent sent datagrams in all, and that P0,
	// given the last, waits for no acknowledgement.
	acked := func(sent int64, what string) {
		t.Helper()
		if trs[1].stats.Sent != sent {
			t.Fatalf("P1 sent %d datagrams, want %d: %s", trs[1].stats.Sent, sent, what)
		}
		recv(0)
		if !trs[0].idle() {
			t.Fatalf("P0 still waits for an acknowledgement after %s", what)
		}
	}
	time.Sleep(trs[1].ackDelay)
	trs[1].sendHeld()
	acked(1, "the acknowledgement alone, after ackDelay")

	// Data going back within ackDelay carries the acknowledgement.
	trs[0].send(&runner.Envelope{ID: 2, From: 0, To: 1, Msg: algo.Msg{Type: "m"}})
	trs[0].sendHeld()
	recv(1)
	trs[1].send(&runner.Envelope{ID: 3, From: 1, To: 0, Msg: algo.Msg{Type: "r"}})
	trs[1].sendHeld()
	acked(2, "the reply, carrying the acknowledgement")
	if len(got) != 3 {
		t.Fatalf("delivered %d messages, want 3", len(got))
	}
}

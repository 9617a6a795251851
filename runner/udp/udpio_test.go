package udp

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestSockBatch: datagrams written in one sendmmsg to two peers arrive
// whole, in the order written, each with its sender's address; reads
// take several at a time, and a read that does not wait finds nothing
// once they are all read.
func TestSockBatch(t *testing.T) {
	conns := [3]*net.UDPConn{}
	socks := [3]*sock{}
	addrs := make([]netip.AddrPort, 3)
	for i := range conns {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetReadBuffer(1 << 20)
		conns[i] = c
		if socks[i], err = newSock(c); err != nil {
			t.Fatal(err)
		}
		addrs[i] = c.LocalAddr().(*net.UDPAddr).AddrPort()
	}
	// 40 datagrams from 0, alternating between 1 and 2, of various sizes
	// (the last two larger than a bundle).
	size := func(k int) int {
		if k >= 38 {
			return 20000
		}
		return 1 + k%10*200
	}
	var out []outDgram
	for k := range 40 {
		out = append(out, outDgram{b: bytes.Repeat([]byte{byte(k)}, size(k)), to: 1 + k%2})
	}
	socks[0].send(out, addrs)
	for peer := 1; peer <= 2; peer++ {
		want := peer - 1 // the first datagram peer gets
		reads := 0
		deadline := time.Now().Add(5 * time.Second)
		for want < 40 && time.Now().Before(deadline) {
			n, err := socks[peer].read(false)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				time.Sleep(time.Millisecond)
				continue
			}
			reads++
			for b, from, ok := socks[peer].datagram(); ok; b, from, ok = socks[peer].datagram() {
				if from != addrs[0] {
					t.Fatalf("P%d: datagram from %v, want %v", peer, from, addrs[0])
				}
				if len(b) != size(want) || b[0] != byte(want) || b[len(b)-1] != byte(want) {
					t.Fatalf("P%d: got a datagram of %d bytes of %d, want datagram %d", peer, len(b), b[0], want)
				}
				want += 2
			}
		}
		if want < 40 {
			t.Fatalf("P%d: got datagrams up to %d of 40", peer, want)
		}
		if reads >= 20 {
			t.Errorf("P%d: 20 datagrams took %d reads, want fewer (several a read)", peer, reads)
		}
		if n, err := socks[peer].read(false); n != 0 || err != nil {
			t.Errorf("P%d: a read after the last datagram got %d, %v", peer, n, err)
		}
	}
}

// TestSockWake: a read that waits returns when another goroutine wakes
// it, and after that waits again for a datagram (the wake is not left
// standing), which it then gets.
func TestSockWake(t *testing.T) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := newSock(c)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		go func() {
			time.Sleep(20 * time.Millisecond)
			s.wake()
		}()
		start := time.Now()
		// A woken read returns nothing, at most twice (the deadline is
		// put back), then waits.
		for k := 0; ; k++ {
			n, err := s.read(true)
			if err != nil || n != 0 {
				t.Fatalf("round %d: woken read got %d, %v", round, n, err)
			}
			if s.woken.Load() || s.clear {
				continue
			}
			if k > 2 {
				t.Fatalf("round %d: %d reads to take a wake", round, k)
			}
			break
		}
		if el := time.Since(start); el < 15*time.Millisecond {
			t.Fatalf("round %d: read returned after %v, before the wake", round, el)
		}
	}
	got := make(chan string, 1)
	go func() {
		n, err := s.read(true)
		b, _, _ := s.datagram()
		got <- fmt.Sprintf("%d %v %q", n, err, b)
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case g := <-got:
		t.Fatalf("a read with no wake and no datagram returned: %s", g)
	default:
	}
	w, err := net.DialUDP("udp4", nil, c.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write([]byte("hi"))
	select {
	case g := <-got:
		if g != `1 <nil> "hi"` {
			t.Fatalf("got %s, want the datagram", g)
		}
	case <-time.After(time.Minute):
		t.Fatal("the datagram did not end the read")
	}
}

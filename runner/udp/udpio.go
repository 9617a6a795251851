package udp

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sock is a node's UDP socket as the node's loop uses it. Under a
// workload with no think or hold time a node's CPU goes mostly to system
// calls and to waking threads and goroutines for each datagram, so:
//
//   - the loop reads the socket itself, with no goroutine in between to
//     hand each datagram over (a wake-up of a goroutine, often of a
//     thread, per datagram);
//   - it reads what is waiting several datagrams to a call (recvmmsg), and
//     writes the datagrams of a safe point in one call (sendmmsg);
//   - whatever else the loop waits for (timers, the runner's control
//     lines, the retransmission tick) is posted to it by other goroutines,
//     which then call wake: it ends the loop's wait for the socket by
//     moving the read deadline into the past.
//
// A sock is used from the loop's goroutine, but for wake.
type sock struct {
	conn *net.UDPConn
	raw  syscall.RawConn

	// Receiving: up to recvBatch datagrams read by one call, handed out
	// one by one (next), each valid until the next read.
	bufs   [recvBatch][]byte
	hdrs   [recvBatch]mmsghdr
	iovs   [recvBatch]unix.Iovec
	names  [recvBatch]unix.RawSockaddrInet4
	got    int
	next   int
	woken  atomic.Bool // wake moved the deadline: the loop puts it back
	clear  bool        // the deadline is in the past: put it back before waiting
	recvFn func(fd uintptr) bool
	block  bool
	err    error

	// Sending: the datagrams of one sendmmsg.
	out     []mmsghdr
	outIovs []unix.Iovec
	outTo   []unix.RawSockaddrInet4
	sendFn  func(fd uintptr) bool
	sent    int
}

// recvBatch is the most datagrams one read takes; recvSize the most bytes
// of one (a bundle is at most maxBundle and a packet).
const (
	recvBatch = 16
	recvSize  = 64 << 10
)

// mmsghdr is the kernel's struct mmsghdr.
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
}

func newSock(conn *net.UDPConn) (*sock, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("udp socket: %w", err)
	}
	s := &sock{conn: conn, raw: raw}
	for i := range s.bufs {
		s.bufs[i] = make([]byte, recvSize)
		s.iovs[i].Base = &s.bufs[i][0]
		s.iovs[i].SetLen(recvSize)
		s.hdrs[i].hdr.Iov = &s.iovs[i]
		s.hdrs[i].hdr.SetIovlen(1)
		s.hdrs[i].hdr.Name = (*byte)(unsafe.Pointer(&s.names[i]))
	}
	s.recvFn = s.recvmmsg
	s.sendFn = s.sendmmsg
	return s, nil
}

// The socket calls are raw system calls: the socket does not block, and
// a call through the runtime's syscall.Syscall would, on a process idle
// between datagrams, wake the runtime's monitor thread every time (a
// futex wake and a thread switch per call: a fifth of a node's CPU).

// recvmmsg is the read the runtime's poller retries when the socket
// becomes readable; it reports whether to stop (something read, an error,
// or nothing and the caller does not wait).
func (s *sock) recvmmsg(fd uintptr) bool {
	for i := range s.hdrs {
		s.hdrs[i].hdr.Namelen = unix.SizeofSockaddrInet4
		s.hdrs[i].hdr.Flags = 0
	}
	n, _, errno := unix.RawSyscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&s.hdrs[0])), recvBatch, 0, 0, 0)
	switch {
	case errno == unix.EAGAIN:
		return !s.block
	case errno == unix.EINTR:
		return false
	case errno != 0:
		s.err = errno
		return true
	}
	s.got = int(n)
	return true
}

// read reads what is waiting on the socket, up to recvBatch datagrams,
// without waiting if block is false; with block, it waits for a datagram
// or a wake. It reports how many datagrams it read.
func (s *sock) read(block bool) (int, error) {
	s.got, s.next, s.err, s.block = 0, 0, nil, block
	if !block {
		// Not through the poller, which would refuse to read once wake
		// moved the deadline.
		err := s.raw.Control(func(fd uintptr) { s.recvmmsg(fd) })
		if err == nil {
			err = s.err
		}
		return s.got, err
	}
	if s.woken.Swap(false) || s.clear {
		// Anything posted before this is seen by the loop's check that
		// follows; anything posted after moves the deadline again.
		if err := s.conn.SetReadDeadline(time.Time{}); err != nil {
			return 0, err
		}
		s.clear = false
		return 0, nil // the caller looks at what was posted, then comes back
	}
	err := s.raw.Read(s.recvFn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		s.clear = true
		return 0, nil
	}
	if err == nil {
		err = s.err
	}
	return s.got, err
}

// datagram is the next datagram read, and who sent it; ok is false when
// every datagram read has been handed out.
func (s *sock) datagram() (b []byte, from netip.AddrPort, ok bool) {
	if s.next >= s.got {
		return nil, netip.AddrPort{}, false
	}
	i := s.next
	s.next++
	a := &s.names[i]
	port := uint16(a.Port>>8) | uint16(a.Port<<8) // network byte order
	return s.bufs[i][:s.hdrs[i].len], netip.AddrPortFrom(netip.AddrFrom4(a.Addr), port), true
}

// pending reports whether datagrams read are still to be handed out.
func (s *sock) pending() bool { return s.next < s.got }

// wake ends the loop's wait for the socket (or its next one), so that it
// looks at what was posted to it: call it after posting.
func (s *sock) wake() {
	if s.woken.CompareAndSwap(false, true) {
		s.conn.SetReadDeadline(time.Unix(1, 0))
	}
}

// send writes datagrams to their peers, as many as it can a call. A
// datagram the kernel refuses is skipped: the transport's retransmission
// covers it, as it covers one lost.
func (s *sock) send(ds []outDgram, peers []netip.AddrPort) {
	s.out, s.outIovs, s.outTo = s.out[:0], s.outIovs[:0], s.outTo[:0]
	for _, d := range ds {
		ap := peers[d.to]
		port := ap.Port()
		s.outTo = append(s.outTo, unix.RawSockaddrInet4{Family: unix.AF_INET, Port: port>>8 | port<<8, Addr: ap.Addr().As4()})
		s.outIovs = append(s.outIovs, unix.Iovec{Base: &d.b[0]})
		s.outIovs[len(s.outIovs)-1].SetLen(len(d.b))
		s.out = append(s.out, mmsghdr{})
	}
	// Pointers are taken once the slices no longer grow.
	for i := range s.out {
		h := &s.out[i].hdr
		h.Name = (*byte)(unsafe.Pointer(&s.outTo[i]))
		h.Namelen = unix.SizeofSockaddrInet4
		h.Iov = &s.outIovs[i]
		h.SetIovlen(1)
	}
	for s.sent = 0; s.sent < len(s.out); {
		if err := s.raw.Write(s.sendFn); err != nil {
			return // the socket is closed
		}
	}
	clear(s.outIovs) // let the datagrams go
}

// sendmmsg writes the datagrams from s.sent on; it reports whether to stop
// (false: wait until the socket can be written).
func (s *sock) sendmmsg(fd uintptr) bool {
	rest := s.out[s.sent:]
	n, _, errno := unix.RawSyscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)), 0, 0, 0)
	switch {
	case errno == unix.EAGAIN:
		return false
	case errno == unix.EINTR:
		return true
	case errno != 0:
		s.sent++ // refused: skip it
		return true
	}
	s.sent += int(n)
	return true
}

// outDgram is a datagram for peer to.
type outDgram struct {
	b  []byte
	to int
}

package udp

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"

	"github.com/dmxlab/dmx/runner"
)

// orderCheck is a node's pipe to the runner that, at each write, looks
// whether a datagram already reached the peer socket: none may have, for
// the events written are what led to it.
type orderCheck struct {
	t      *testing.T
	peer   func() bool // whether a datagram is waiting at the peer
	writes int
	buf    bytes.Buffer
}

func (o *orderCheck) Write(b []byte) (int, error) {
	o.writes++
	if o.peer() {
		o.t.Errorf("write %d to the runner came after a datagram left", o.writes)
	}
	return o.buf.Write(b)
}

// TestSafePoint: a node's events and the datagrams a step writes wait for
// the safe point (settle), and there the events go to the runner, in one
// write, before the datagrams leave.
func TestSafePoint(t *testing.T) {
	var got []*runner.Envelope
	trs, conns := pair(t, []byte("this run"), &got)
	peerHas := func() bool {
		conns[1].SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		buf := make([]byte, 2048)
		n, addr, err := conns[1].ReadFromUDPAddrPort(buf)
		if err != nil {
			return false
		}
		trs[1].handle(buf[:n], addr)
		return true
	}
	pipe := &orderCheck{t: t, peer: peerHas}
	tr := trs[0]
	tr.hold = true
	env := &udpEnv{out: &pipeWriter{w: pipe}, tr: tr}
	for k := int64(1); k <= 3; k++ {
		env.Record(&trace.Event{Proc: 0, Seq: k, Kind: trace.KindSend, VC: trace.VC{uint64(k), 0}, Peer: 1, Msg: trace.MsgID(0, k)})
		tr.send(&runner.Envelope{ID: trace.MsgID(0, k), From: 0, To: 1, Msg: algo.Msg{Type: "m"}})
	}
	if pipe.writes != 0 || len(tr.held) != 3 {
		t.Fatalf("before the safe point: %d writes to the runner, %d datagrams held; want 0 and 3", pipe.writes, len(tr.held))
	}
	env.settle()
	if pipe.writes != 1 {
		t.Fatalf("the safe point wrote %d times to the runner, want once", pipe.writes)
	}
	for len(got) < 3 && peerHas() {
	}
	if len(got) != 3 {
		t.Fatalf("the peer got %d messages, want 3", len(got))
	}
	var evs []trace.Event
	if err := decodeNode(0, &pipe.buf, io.Discard, func(m nodeMsg) { evs = append(evs, m.evs...) }); err != io.EOF {
		t.Fatal(err)
	}
	if len(evs) != 3 || evs[2].Seq != 3 {
		t.Fatalf("the runner read %v", evs)
	}
}

// TestDecodeNode: what the runner reads of a node's pipe, a cut frame at
// the end (the node killed while writing it) and frames it cannot read.
func TestDecodeNode(t *testing.T) {
	var whole pipeWriter
	whole.event(&trace.Event{Proc: 2, Seq: 1, Kind: trace.KindStart, Peer: trace.NoPeer})
	whole.send(fromNode{Done: true})
	whole.event(&trace.Event{Proc: 2, Seq: 2, Kind: trace.KindStop, Peer: trace.NoPeer})
	good := whole.buf
	for _, tc := range []struct {
		name   string
		pipe   []byte
		want   []string // what the runner got, in order: events by seq, messages by (part of) their error, or "done"
		stderr string
	}{
		{"whole", good, []string{"1", "done", "2"}, ""},
		{"cut body", good[:len(good)-3], []string{"1", "done"}, "cut frame"},
		{"cut length", append(append([]byte(nil), good...), 9, 0), []string{"1", "done", "2"}, "cut frame"},
		{"unknown kind", append(append([]byte(nil), good...), 1, 0, 0, 0, 'x'), []string{"1", "done", "2", "unknown kind 'x'"}, ""},
		{"bad event", append(append([]byte(nil), good...), 2, 0, 0, 0, 'e', 'E'), []string{"1", "done", "2", "wire event"}, ""},
		{"huge", append(append([]byte(nil), good...), 0xff, 0xff, 0xff, 0xff), []string{"1", "done", "2", "4294967295 bytes"}, ""},
	} {
		var got []string
		var stderr bytes.Buffer
		err := decodeNode(2, bytes.NewReader(tc.pipe), &stderr, func(m nodeMsg) {
			for _, e := range m.evs {
				got = append(got, string(rune('0'+e.Seq)))
			}
			switch {
			case m.m == nil:
			case m.m.Done:
				got = append(got, "done")
			case m.m.Error != "":
				got = append(got, m.m.Error)
			}
		})
		if err != io.EOF {
			t.Errorf("%s: %v, want io.EOF", tc.name, err)
		}
		ok := len(got) == len(tc.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.Contains(got[i], tc.want[i])
		}
		if !ok {
			t.Errorf("%s: the runner got %q, want %q", tc.name, got, tc.want)
		}
		if !strings.Contains(stderr.String(), tc.stderr) || (tc.stderr == "") != (stderr.Len() == 0) {
			t.Errorf("%s: stderr %q, want %q", tc.name, stderr.String(), tc.stderr)
		}
	}
}

// TestBundleRetransmit: the messages a safe point sends one peer travel in
// one datagram; lost, they are sent again, and all arrive.
func TestBundleRetransmit(t *testing.T) {
	var got []*runner.Envelope
	trs, conns := pair(t, []byte("this run"), &got)
	tr := trs[0]
	tr.hold = true
	for k := int64(1); k <= 3; k++ {
		tr.send(&runner.Envelope{ID: trace.MsgID(0, k), From: 0, To: 1, Msg: algo.Msg{Type: "m"}})
	}
	tr.sendHeld()
	buf := make([]byte, 64<<10)
	// read counts the datagrams that reach the peer, and hands them to it
	// if deliver.
	read := func(deliver bool) int {
		n := 0
		for {
			conns[1].SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			k, addr, err := conns[1].ReadFromUDPAddrPort(buf)
			if err != nil {
				return n
			}
			n++
			if deliver {
				trs[1].handle(buf[:k], addr)
			}
		}
	}
	if n := read(false); n != 1 {
		t.Fatalf("3 messages to one peer went in %d datagrams, want 1", n)
	}
	// That datagram was lost (read, never handled): after the time-out,
	// the messages go again.
	time.Sleep(2 * tr.rto)
	tr.retransmit(time.Now())
	tr.sendHeld()
	if n := read(true); n != 1 || len(got) != 3 || tr.stats.Retransmits != 3 {
		t.Fatalf("the retransmission of 3 was %d datagrams, counted %d, and delivered %d messages; want 1, 3, 3",
			n, tr.stats.Retransmits, len(got))
	}
}

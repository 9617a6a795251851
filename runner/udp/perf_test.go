package udp

import (
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"

	"github.com/dmxlab/dmx/runner"
)

// Per-event and per-message costs of the node runtime under dmx run,
// reported as CPU time (user and system, of the whole test process, the
// garbage collector and the reading ends included): beside a rate, which
// depends on what else a shared machine does, the CPU time says what the
// work costs.

// steps are the events of a simulated Ricart-Agrawala run (5 processes,
// high contention, no think or hold time: the run dmx bench measures)
// grouped as the node loop records them: the events one process records
// at one instant come from one step of its loop.
func benchSteps(b *testing.B) [][]trace.Event {
	p := runner.NewPlan(runner.DriverSim)
	p.Spec, p.N, p.Seed = registry.Lookup("ricart-agrawala"), 5, 1
	p.Workload.Entries, p.Workload.Contention = 200, runner.ContentionHigh
	p.Workload.Think, p.Workload.Hold = runner.Fixed(0), runner.Fixed(0)
	var c runner.Collector
	if _, err := runner.Simulate(p, &c, nil); err != nil {
		b.Fatal(err)
	}
	var steps [][]trace.Event
	for i, e := range c.Events {
		if i == 0 || e.Proc != c.Events[i-1].Proc || e.Wall != c.Events[i-1].Wall {
			steps = append(steps, nil)
		}
		steps[len(steps)-1] = append(steps[len(steps)-1], e)
	}
	return steps
}

// BenchmarkNodeEvent is the cost of recording an event on a node and
// handing it to the runner: the node's Env.Record of every event of a
// step, and what the loop does at the end of the step, into a pipe whose
// other end the runner's reader decodes (the events parsed, as the
// launcher gets them).
func BenchmarkNodeEvent(b *testing.B) {
	steps := benchSteps(b)
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	drained := make(chan struct{})
	got := 0
	go func() {
		decodeNode(0, pr, io.Discard, func(m nodeMsg) { got += len(m.evs) })
		close(drained)
	}()
	env := &udpEnv{out: &pipeWriter{w: pw}}
	b.ResetTimer()
	start, cpu0 := time.Now(), ProcessCPU()
	events := 0
	for i := 0; events < b.N; i++ {
		step := steps[i%len(steps)]
		for k := range step {
			env.Record(&step[k])
		}
		env.settle() // the loop's safe point, before it waits
		events += len(step)
	}
	pw.Close()
	<-drained
	el, cpu := time.Since(start), ProcessCPU()-cpu0
	b.StopTimer()
	pr.Close()
	if got != events {
		b.Fatalf("the reader got %d events of %d", got, events)
	}
	b.ReportMetric(float64(events)/el.Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(events), "cpu-ns/event")
}

// BenchmarkMessage is the cost of a message between two nodes: encode,
// authenticate, send, receive, hand to the loop, authenticate and decode,
// acknowledge. Two transports on loopback sockets, each with the node
// loop's receiving path, play ping-pong: each delivery sends the next
// message back (an algorithm's request and its reply).
func BenchmarkMessage(b *testing.B) {
	key := []byte("0123456789abcdef0123456789abcdef")
	conns := loopbackPair(b)
	peers := []*net.UDPAddr{conns[0].LocalAddr().(*net.UDPAddr), conns[1].LocalAddr().(*net.UDPAddr)}
	delivered := 0
	done := make(chan struct{})
	var trs [2]*transport
	msg := func(from, k int) *runner.Envelope {
		return &runner.Envelope{ID: trace.MsgID(from, int64(k)), From: from, To: 1 - from, Lamport: uint64(100 + k),
			VC: trace.VC{uint64(k), uint64(k), 7, 9, 11}, Msg: algo.Msg{Type: "request", Resource: "cs", Stamp: uint64(99 + k), ID: 1}}
	}
	var loops [2]*benchLoop
	for i := range trs {
		i := i
		trs[i] = newTransport(i, 2, key, conns[i], peers, func(e *runner.Envelope) {
			delivered++ // the loops take turns: one message in flight
			if delivered == b.N {
				close(done)
				return
			}
			if delivered < b.N {
				trs[i].send(msg(i, delivered))
			}
		})
		loops[i] = newBenchLoop(b, conns[i], trs[i])
	}
	b.ResetTimer()
	start, cpu0 := time.Now(), ProcessCPU()
	loops[0].do(func() { trs[0].send(msg(0, 0)) })
	<-done
	el, cpu := time.Since(start), ProcessCPU()-cpu0
	b.StopTimer()
	for _, l := range loops {
		l.close()
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "msgs/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/msg")
}

// benchLoop is the receiving path of NodeMain's loop: the loop reads the
// socket itself (sock), and holds the datagrams it writes until it has
// nothing ready (its safe point), when it writes them in one call; what
// other goroutines post wakes it.
type benchLoop struct {
	loop chan func()
	sk   *sock
	stop atomic.Bool
	done chan struct{}
}

func newBenchLoop(b *testing.B, conn *net.UDPConn, tr *transport) *benchLoop {
	sk, err := newSock(conn)
	if err != nil {
		b.Fatal(err)
	}
	l := &benchLoop{loop: make(chan func(), 1024), sk: sk, done: make(chan struct{})}
	tr.hold = true
	tr.sock = sk
	go func() {
		defer close(l.done)
		for !l.stop.Load() {
			if b, addr, ok := sk.datagram(); ok {
				tr.handle(b, addr)
				continue
			}
			select {
			case f := <-l.loop:
				f()
				continue
			default:
			}
			tr.sendHeld()
			if _, err := sk.read(true); err != nil {
				return
			}
		}
	}()
	return l
}

func (l *benchLoop) do(f func()) { l.loop <- f; l.sk.wake() }

func (l *benchLoop) close() { l.stop.Store(true); l.sk.wake(); <-l.done }

// BenchmarkDatagram is the floor of BenchmarkMessage: the same ping-pong
// between two loopback sockets, of bare datagrams of a message's size,
// each goroutine reading its socket and writing the reply at once: what
// the network costs, beside which BenchmarkMessage says what dmx adds.
func BenchmarkDatagram(b *testing.B) {
	conns := loopbackPair(b)
	addrs := [2]netip.AddrPort{conns[0].LocalAddr().(*net.UDPAddr).AddrPort(), conns[1].LocalAddr().(*net.UDPAddr).AddrPort()}
	msg := make([]byte, 120) // about a sealed request's size
	var wg sync.WaitGroup
	// Each side replies to what it reads until it has sent its share.
	play := func(i, share int) {
		defer wg.Done()
		buf := make([]byte, 2048)
		for k := 0; k < share; k++ {
			if _, _, err := conns[i].ReadFromUDPAddrPort(buf); err != nil {
				return
			}
			conns[i].WriteToUDPAddrPort(msg, addrs[1-i])
		}
	}
	b.ResetTimer()
	start, cpu0 := time.Now(), ProcessCPU()
	wg.Add(2)
	// P0 sends the first; the two then alternate: b.N datagrams in all.
	go play(1, b.N/2)
	go play(0, (b.N-1)/2)
	conns[0].WriteToUDPAddrPort(msg, addrs[1])
	wg.Wait()
	el, cpu := time.Since(start), ProcessCPU()-cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "msgs/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/msg")
}

// loopbackPair is two UDP sockets on loopback, closed when b ends.
func loopbackPair(b *testing.B) [2]*net.UDPConn {
	var conns [2]*net.UDPConn
	for i := range conns {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		c.SetReadBuffer(4 << 20)
		conns[i] = c
	}
	return conns
}

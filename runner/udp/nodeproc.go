package udp

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dmxlab/dmx/internal/cputime"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"

	"github.com/dmxlab/dmx/runner"
)

// The runner and each node process talk over the node's stdin and stdout
// (the "control pipe"). The runner writes one JSON object a line: the
// node's configuration, then the peers' addresses, then stop. The node
// answers in frames (pipeWriter): its UDP address, then every event it
// records, "done" when its workload is finished, and its transport
// statistics before it exits. Events are buffered and written at the
// node's safe points, in one write for all those of a step: before the
// node sends a datagram, waits, pauses or exits, so that an event is in
// the runner's hands before anything it led to is seen outside, and
// survives a SIGKILL of the node.
// Faults come as "fault" lines: a network fault starts or ends, the node
// pauses (it records the pause and waits; the runner, once it has the
// event, stops it with SIGSTOP, and after the pause sends SIGCONT and a
// "resume" line, upon which it records the resume and goes on), its clock
// is set off, or it records that a fault was not applied.

type nodeConfig struct {
	ID       int               `json:"id"`
	N        int               `json:"n"`
	Algo     string            `json:"algo"`
	Params   map[string]string `json:"params,omitempty"`
	Seed     uint64            `json:"seed"`
	Workload runner.Workload   `json:"workload"`
	Key      []byte            `json:"key"`
	Port     int               `json:"port"` // 0: any free port
	// Host is the address to listen on ("": 127.0.0.1); Netns names the
	// network namespace the node was started in, if it has one of its
	// own (runner/netns). Its start event records both.
	Host  string `json:"host,omitempty"`
	Netns string `json:"netns,omitempty"`
	// A restarted process: its incarnation (0 first), everyone's current
	// incarnations, and what it resumes from.
	Inc    int            `json:"inc,omitempty"`
	Incs   []int          `json:"incs,omitempty"`
	Resume *runner.Resume `json:"resume,omitempty"`
	// MaxRTO, if set, caps the transport's retransmission timeout
	// (maxRTO); tests lower it to make minutes of retransmission fit in
	// seconds.
	MaxRTO time.Duration `json:"max_rto,omitempty"`
	// The plan's faults (canonical text: the network fault layer judges
	// by them), those in force when the node starts, raw channels, and
	// the skew a restarted process's clock keeps.
	Faults []string           `json:"faults,omitempty"`
	Active []runner.ActiveNet `json:"active,omitempty"`
	Raw    bool               `json:"raw,omitempty"`
	Skew   time.Duration      `json:"skew,omitempty"`
}

// faultCmd is a fault line from the runner.
type faultCmd struct {
	Op     string `json:"op"` // net-start, net-end, process (Spec: a process or clock fault), resume, note
	Index  int    `json:"i,omitempty"`
	Proc   int    `json:"p,omitempty"`
	Spec   string `json:"spec,omitempty"`
	Reason string `json:"reason,omitempty"`
	// By and How, with net-start and net-end: what makes the fault
	// (trace.FaultByKernel: the node only records it; else its
	// transport judges every datagram by it) and how.
	By  string `json:"by,omitempty"`
	How string `json:"how,omitempty"`
}

type toNode struct {
	Config    *nodeConfig `json:"config,omitempty"`
	Peers     []string    `json:"peers,omitempty"`
	Stop      bool        `json:"stop,omitempty"`
	Restarted *restarted  `json:"restarted,omitempty"` // a peer came back as a new incarnation
	Down      *restarted  `json:"down,omitempty"`      // an incarnation of a peer is down: its process ended
	Fault     *faultCmd   `json:"fault,omitempty"`
	T0        int64       `json:"t0,omitempty"`  // with Peers: the run's start (Unix ns), the origin of Input.Now everywhere
	End       int64       `json:"end,omitempty"` // with Peers: when an election run ends (Unix ns); 0: when the runner says stop
}

// restarted names an incarnation of a process.
type restarted struct {
	Proc int `json:"proc"`
	Inc  int `json:"inc"`
}

type fromNode struct {
	Hello string      `json:"hello,omitempty"`
	Done  bool        `json:"done,omitempty"`
	Stats *Rejections `json:"stats,omitempty"`
	// CPU, with Stats, is the CPU time the node used since it got the
	// peers line: its part of the run, its start-up left out.
	CPU   time.Duration `json:"cpu,omitempty"`
	Error string        `json:"error,omitempty"`
}

// NodeMain is the body of a node process (dmx-node, or the hidden `dmx
// node`): one node of a run, driven by the runner over stdin/stdout. It
// returns when the runner says stop or closes stdin. lookup finds the
// algorithm the runner names (the runtime imports no algorithm: the
// command hands it the registry's Lookup).
func NodeMain(lookup func(name string) *algo.Spec, stdin io.Reader, stdout io.Writer) error {
	// The runner handles Ctrl-C for the whole run and tells nodes to stop;
	// a node must not die half-way through writing an event.
	signal.Ignore(syscall.SIGINT, syscall.SIGPIPE)
	// A node is one loop: a second processor for the runtime only makes
	// it wake and spin a second thread when a timer or the control reader
	// readies a goroutine (a tenth of a busy node's CPU).
	runtime.GOMAXPROCS(1)
	np := &nodeProcess{in: bufio.NewReader(polled(stdin)), out: &pipeWriter{w: stdout}}
	defer np.out.flush()
	spec, err := np.configure(lookup)
	if np.conn != nil {
		defer np.conn.Close()
	}
	if err != nil {
		return err
	}
	if run, err := np.meet(); !run {
		return err
	}
	if err := np.build(spec); err != nil {
		return err
	}
	go np.control()
	tickStop := np.ticker()
	defer close(tickStop)
	np.begin()
	return np.loop()
}

// nodeProcess is one node process: its control pipe, its socket, its node
// and transport, and the loop that feeds the node its inputs. NodeMain
// goes through its phases in order: configure (the configuration line,
// the socket, the hello), meet (the peers line), build (the node, its
// transport and fault layer), then the loop, with the control reader and
// the retransmission tick beside it.
type nodeProcess struct {
	in    *bufio.Reader
	out   *pipeWriter
	cfg   *nodeConfig
	conn  *net.UDPConn
	peers toNode // the peers line: addresses, the run's start and end
	addrs []*net.UDPAddr
	cpu0  time.Duration // the CPU used before the run began

	env  *udpEnv
	node *runner.Node
	tr   *transport
	sk   *sock

	stop    chan struct{} // closed when the runner says stop or is gone
	resumed chan struct{} // the runner's resume line, for a paused loop
	tickDue atomic.Bool   // the retransmission tick is due
	halted  bool          // the machine halted (its foreign program died): the process ends
}

// configure reads the configuration line, opens the node's socket and
// tells the runner its address. It returns the algorithm to run.
func (np *nodeProcess) configure(lookup func(name string) *algo.Spec) (*algo.Spec, error) {
	var first toNode
	if err := readLine(np.in, &first); err != nil || first.Config == nil {
		return nil, fmt.Errorf("node: want a configuration line on stdin: %v", err)
	}
	cfg := first.Config
	np.cfg = cfg
	spec := lookup(cfg.Algo)
	if spec == nil {
		return nil, fmt.Errorf("node: unknown algorithm %q", cfg.Algo)
	}
	if err := cfg.Workload.FromWire(); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	host := net.IPv4(127, 0, 0, 1)
	if cfg.Host != "" {
		if host = net.ParseIP(cfg.Host); host == nil {
			return nil, fmt.Errorf("node P%d: host %q: not an IP address", cfg.ID, cfg.Host)
		}
	}
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: host, Port: cfg.Port})
	if err != nil {
		np.out.send(fromNode{Error: fmt.Sprintf("P%d: %v", cfg.ID, err)})
		return nil, err
	}
	np.conn = conn
	conn.SetReadBuffer(4 << 20)
	np.out.send(fromNode{Hello: conn.LocalAddr().String()})
	np.out.flush()
	return spec, nil
}

// meet reads the peers line: everyone's address, the run's start and, for
// an election run, its end. It reports false if the run is not to begin
// (the runner said stop first, or the line is wrong: err says why).
func (np *nodeProcess) meet() (bool, error) {
	cfg := np.cfg
	if err := readLine(np.in, &np.peers); err != nil {
		return false, fmt.Errorf("node P%d: want the peers line: %v", cfg.ID, err)
	}
	if np.peers.Stop {
		return false, nil
	}
	np.cpu0 = ProcessCPU()
	if len(np.peers.Peers) != cfg.N {
		return false, fmt.Errorf("node P%d: got %d peer addresses, want %d", cfg.ID, len(np.peers.Peers), cfg.N)
	}
	np.addrs = make([]*net.UDPAddr, cfg.N)
	for i, a := range np.peers.Peers {
		var err error
		if np.addrs[i], err = net.ResolveUDPAddr("udp4", a); err != nil {
			return false, fmt.Errorf("node P%d: peer %d address %q: %v", cfg.ID, i, a, err)
		}
	}
	return true, nil
}

// build makes the node, its transport and its fault layer, and its Env.
func (np *nodeProcess) build(spec *algo.Spec) error {
	cfg, second := np.cfg, np.peers
	start := time.Now()
	if second.T0 != 0 {
		// All processes of a run, restarted ones too, count time from the
		// same origin, so that a schedule of time slots means the same to
		// everyone.
		start = start.Add(-time.Duration(time.Now().UnixNano() - second.T0))
	}
	// over reports that the run is over. The simulator stops every process
	// of an election run at the same instant; the runner's stop reaches
	// processes one by one, and on a busy machine a process may wake after
	// others have stopped, find them silent and act on it (suspect them,
	// elect itself). So nothing is taken after the end: the check comes
	// right before each input, since a process can be descheduled between
	// any two instructions.
	over := func() bool { return second.End != 0 && time.Now().UnixNano() >= second.End }
	env := &udpEnv{start: start, loop: make(chan func(), 1024), out: np.out, over: over}
	// The machines' Input.Now counts from the run's start in wall time,
	// which the start event records (Node.Origin): a replay gives them the
	// same Now.
	origin := second.T0
	if origin == 0 {
		origin = start.UnixNano()
	}
	node, err := runner.NewNode(runner.NodeSetup{ID: cfg.ID, N: cfg.N, Spec: spec, Params: cfg.Params, Seed: cfg.Seed, Workload: cfg.Workload, Resume: cfg.Resume, Origin: origin,
		Addr: np.conn.LocalAddr().String(), Netns: cfg.Netns}, env)
	if err != nil {
		np.out.send(fromNode{Error: err.Error()})
		return err
	}
	tr := newTransport(cfg.ID, cfg.N, cfg.Key, np.conn, np.addrs, node.Receive)
	tr.inc = cfg.Inc
	if cfg.MaxRTO > 0 {
		tr.maxRTO = cfg.MaxRTO
	}
	if len(cfg.Incs) == cfg.N {
		copy(tr.peerInc, cfg.Incs)
	}
	tr.raw = cfg.Raw
	node.SetSkew(cfg.Skew)
	if len(cfg.Faults) > 0 {
		faults, err := runner.ParseFaults(strings.Join(cfg.Faults, ","))
		if err != nil {
			return fmt.Errorf("node P%d: %w", cfg.ID, err)
		}
		seed := uint64(runner.StreamFault + cfg.ID + cfg.Inc<<32)
		tr.net = runner.NewNetFaults(faults, rand.New(rand.NewPCG(cfg.Seed, seed)))
		tr.dropped = node.Dropped
		tr.later = func(d time.Duration, f func()) { env.After(d, f) }
		for _, a := range cfg.Active {
			if a.By != trace.FaultByKernel {
				tr.net.Start(a.Index, a.Proc)
			}
		}
	}
	tr.hold = true
	tr.ackDelay = ackDelay
	env.tr = tr
	env.node = node
	node.OnDone = func() { np.out.send(fromNode{Done: true}) }
	// A machine that halts (a foreign program died: runner/exec) has put
	// the node down and recorded its crash; the process then ends, so
	// that the runner knows it is down and can restart it.
	node.OnHalt = func() { np.halted = true }

	sk, err := newSock(np.conn)
	if err != nil {
		return fmt.Errorf("node P%d: %w", cfg.ID, err)
	}
	tr.sock = sk
	env.wake = sk.wake
	env.catchUp = np.catchUp
	np.env, np.node, np.tr, np.sk = env, node, tr, sk
	np.stop, np.resumed = make(chan struct{}), make(chan struct{}, 1)
	return nil
}

// catchUp handles the datagrams that came while the process did not run
// (after a pause): those that arrive within catchUpQuiet of each other,
// for at most catchUpMax.
func (np *nodeProcess) catchUp() {
	const catchUpQuiet, catchUpMax = 5 * time.Millisecond, 100 * time.Millisecond
	env, sk := np.env, np.sk
	end := time.Now().Add(catchUpMax)
	quiet := time.Now().Add(catchUpQuiet)
	for now := time.Now(); now.Before(end) && !env.over(); now = time.Now() {
		if !sk.pending() {
			n, err := sk.read(false)
			if err != nil {
				return
			}
			if n == 0 {
				if !now.Before(quiet) {
					return
				}
				time.Sleep(time.Millisecond)
				continue
			}
		}
		b, addr, _ := sk.datagram()
		np.tr.handle(b, addr)
		// What it led to (acknowledgements, replies) goes at once, as it
		// would outside a catch-up.
		env.settle()
		quiet = time.Now().Add(catchUpQuiet)
	}
}

// control reads the control pipe (on its own goroutine): news of peers
// that went down or came back, and faults, each posted to the loop; stop,
// or EOF when the runner is gone, closes np.stop.
func (np *nodeProcess) control() {
	env, tr := np.env, np.tr
	defer func() { close(np.stop); np.sk.wake() }()
	for {
		var m toNode
		if err := readLine(np.in, &m); err != nil || m.Stop {
			return
		}
		if r := m.Restarted; r != nil {
			env.post(func() { tr.peerRestarted(r.Proc, r.Inc) })
		}
		if d := m.Down; d != nil {
			env.post(func() { tr.peerDown(d.Proc, d.Inc) })
		}
		switch c := m.Fault; {
		case c == nil:
		case c.Op == "resume":
			// The loop is waiting in its pause, not reading loop.
			select {
			case np.resumed <- struct{}{}:
			default:
			}
		default:
			env.post(func() { nodeFault(c, np.node, tr, env.settle, np.resumed, np.stop) })
		}
	}
}

// ticker starts the retransmission tick: a flag the loop looks at when it
// wakes. Closing the channel it returns stops it.
func (np *nodeProcess) ticker() chan struct{} {
	tickStop := make(chan struct{})
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				np.tickDue.Store(true)
				np.sk.wake()
			case <-tickStop:
				return
			}
		}
	}()
	return tickStop
}

// begin starts the node; a restarted process records the network faults
// in force that it starts under.
func (np *nodeProcess) begin() {
	cfg, tr := np.cfg, np.tr
	np.node.Start()
	if tr.net != nil {
		for _, a := range cfg.Active {
			if tr.net.Affects(a.Index, a.Proc, cfg.ID, cfg.N) {
				np.node.RecordFault(trace.Fault{Fault: tr.net.Faults[a.Index].String(), Phase: trace.FaultStart, By: a.By, How: a.How})
			}
		}
	}
}

// finish records the stop, reports the transport's statistics and sends
// what is still held (the safe point of the last step).
func (np *nodeProcess) finish() error {
	np.node.Stop()
	st := np.tr.stats
	np.out.send(fromNode{Stats: &st, CPU: ProcessCPU() - np.cpu0})
	np.env.settle()
	return np.out.err
}

// loop feeds the node its inputs until the run is over. What is ready is
// handled first; what it recorded and sent goes out (env.settle) before
// the loop waits, and after maxUnsettled inputs if it never has to: a busy
// node must not hold its sends back.
func (np *nodeProcess) loop() error {
	const maxUnsettled = 32
	env, node, tr, sk := np.env, np.node, np.tr, np.sk
	unsettled := 0
	// read says that something was handled since the socket was last
	// read: what came meanwhile must be read before a timer is taken.
	read := true
	for {
		if err := node.Err(); err != nil {
			np.out.send(fromNode{Error: err.Error()})
			return err
		}
		if np.out.err != nil {
			return np.out.err // the runner is gone
		}
		if np.halted {
			env.settle()
			return np.out.err
		}
		// The next input: a message to oneself first, then what has
		// arrived, then timers. After a stall a timer and a datagram are
		// both ready, and a timer taken first could act on a silence that
		// the waiting message ends (an answer that cancels a time-out); in
		// the simulator each input comes at its own time. Nothing is taken
		// after the run's end (over): the loop waits, with what the last
		// steps recorded and sent out first, for the runner's stop.
		if env.over() {
			env.settle()
			<-np.stop
			return np.finish()
		}
		if len(env.self) > 0 {
			e := env.self[0]
			env.self = env.self[1:]
			node.Receive(e)
			continue
		}
		if unsettled++; unsettled > maxUnsettled {
			env.runSoon()
			env.settle()
			unsettled = 0
		}
		if b, addr, ok := sk.datagram(); ok {
			tr.handle(b, addr)
			read = true
			continue
		}
		if len(env.loop) > 0 || np.tickDue.Load() {
			if read {
				// Arrivals first.
				if _, err := sk.read(false); err != nil {
					return fmt.Errorf("udp socket: %w", err)
				}
				read = false
				continue
			}
			if np.tickDue.Swap(false) {
				tr.retransmit(time.Now())
			}
			select {
			case f := <-env.loop: // a timer, news of a peer, a fault
				f()
			default:
			}
			read = true
			continue
		}
		select {
		case <-np.stop:
			return np.finish()
		default:
		}
		if len(env.soon) > 0 {
			// Timers due now, once nothing else is ready.
			env.runSoon()
			continue
		}
		// Nothing is ready: the safe point, then wait for a datagram or
		// for something posted to the loop.
		env.settle()
		unsettled = 0
		if _, err := sk.read(true); err != nil {
			return fmt.Errorf("udp socket: %w", err)
		}
		read = false
	}
}

// nodeFault carries out a fault line on the node's loop. A pause holds
// the loop until the runner's resume line (or stop) comes.
func nodeFault(c *faultCmd, node *runner.Node, tr *transport, settle func(), resumed, stop <-chan struct{}) {
	switch c.Op {
	case "net-start", "net-end":
		if tr.net == nil || c.Index < 0 || c.Index >= len(tr.net.Faults) {
			return
		}
		// A fault the kernel makes is only recorded: the transport
		// does not judge by it.
		kernel := c.By == trace.FaultByKernel
		phase := trace.FaultStart
		if c.Op == "net-start" {
			if !kernel {
				tr.net.Start(c.Index, c.Proc)
			}
		} else {
			phase = trace.FaultEnd
		}
		if tr.net.Affects(c.Index, c.Proc, node.ID, node.N) {
			node.RecordFault(trace.Fault{Fault: tr.net.Faults[c.Index].String(), Phase: phase, By: c.By, How: c.How})
		}
		if c.Op == "net-end" {
			tr.net.End(c.Index)
		}
	case "process":
		fs, err := runner.ParseFaults(c.Spec)
		if err != nil || len(fs) != 1 {
			return // the runner prints what it sends: not from this runner
		}
		nodeProcessFault(&fs[0], c.Spec, node, settle, resumed, stop)
	case "note":
		node.FaultEvent(c.Spec, trace.FaultNotApplied, c.Reason)
	}
}

// nodeProcessFault carries out a process or clock fault on the node (the
// effect of runner.FaultDriver.Process under dmx run, the node's part).
func nodeProcessFault(f *runner.Fault, spec string, node *runner.Node, settle func(), resumed, stop <-chan struct{}) {
	switch f.Kind {
	case runner.FaultPause:
		// The pause is recorded first (the event is in the runner's hands
		// when the write returns), and the loop does nothing more until
		// the resume: the runner stops the whole process with SIGSTOP when
		// it has the event, and after the pause sends SIGCONT and the
		// resume line. Timers and datagrams wait, as on a stopped machine.
		node.FaultEvent(spec, trace.FaultStart, "")
		settle()
		select {
		case <-resumed:
			node.FaultEvent(spec, trace.FaultEnd, "")
		case <-stop:
		}
	case runner.FaultSkew:
		node.SetSkew(f.Skew)
		node.FaultEvent(spec, trace.FaultStart, "")
	}
}

type udpEnv struct {
	start time.Time
	loop  chan func()
	wake  func() // after something is posted to loop: the loop looks at it
	out   *pipeWriter
	tr    *transport
	node  *runner.Node
	self  []*runner.Envelope // messages to oneself, not yet delivered
	soon  []*soonTimer       // timers of no delay, to run when nothing else is ready
	// catchUp handles the datagrams that arrived while the process did
	// not run (see After); caughtUp is when it last did.
	catchUp  func()
	caughtUp time.Time
	// over reports that the run is over: no input is taken after it.
	over func() bool
}

// lateTimer is how late a timer must fire for the process to be taken as
// having not run meanwhile (paused by SIGSTOP, or starved).
const lateTimer = 250 * time.Millisecond

func (e *udpEnv) Now() int64  { return int64(time.Since(e.start)) }
func (e *udpEnv) Wall() int64 { return time.Now().UnixNano() }

type udpTimer struct{ t *time.Timer }

func (t udpTimer) Stop() { t.t.Stop() }

// After runs f on the loop after d. A timer that fires much later than
// due means that the process did not run for a while (SIGSTOP, a loaded
// machine): every timer is then due at once, and the datagrams that
// arrived meanwhile wait in the socket. They came before the timer is
// handled, so they are handled first: a failure detector must hear the
// heartbeats sent while it slept before it decides that their sender went
// silent.
func (e *udpEnv) After(d time.Duration, f func()) runner.Timer {
	if d <= 0 {
		// Due now: the loop runs it once what is ready is handled,
		// without a runtime timer and a goroutine to hand it over.
		t := &soonTimer{f: f}
		e.soon = append(e.soon, t)
		return t
	}
	stopped := false
	due := time.Now().Add(d)
	t := time.AfterFunc(d, func() {
		e.post(func() {
			if stopped {
				return
			}
			if now := time.Now(); now.Sub(due) > lateTimer && now.Sub(e.caughtUp) > lateTimer && e.catchUp != nil {
				e.catchUp()
				e.caughtUp = time.Now()
			}
			// The catching up may have reached the run's end.
			if !stopped && !e.over() {
				f()
			}
		})
	})
	return runner.TimerFunc(func() { stopped = true; t.Stop() })
}

// post has the loop run f, from another goroutine.
func (e *udpEnv) post(f func()) {
	e.loop <- f
	if e.wake != nil {
		e.wake()
	}
}

// soonTimer is a timer of no delay (After 0: a think or hold time of 0).
type soonTimer struct {
	f       func()
	stopped bool
}

func (t *soonTimer) Stop() { t.stopped = true }

// runSoon runs the timers of no delay set so far; those they set run at
// the loop's next turn.
func (e *udpEnv) runSoon() {
	batch := e.soon
	e.soon = nil
	for _, t := range batch {
		if !t.stopped {
			t.f()
		}
	}
}

func (e *udpEnv) Transmit(env *runner.Envelope) {
	if env.To == env.From {
		// Delivered by the loop after the current step, in order.
		e.self = append(e.self, env)
		return
	}
	e.tr.send(env)
}

func (e *udpEnv) Record(ev *trace.Event) { e.out.event(ev) }

// settle is the node's safe point: the events recorded go to the runner,
// then the datagrams that followed them to the network.
func (e *udpEnv) settle() {
	e.out.flush()
	if e.tr != nil {
		e.tr.sendHeld()
	}
}

// pipeWriter writes what a node tells the runner as frames (see
// frameEvent), gathered in a buffer and written to the pipe with one write
// at the points where the node is about to act on the world: before it
// sends a datagram, before its loop waits for something to happen, before
// a pause and before it exits. An event is thus in the pipe before anything
// that follows it is seen outside, and a node killed in the middle of a
// step loses only events nobody outside could have seen the effects of:
// as if it had been killed a moment earlier.
type pipeWriter struct {
	w   io.Writer
	buf []byte
	err error
}

// flushAt is the size of the buffer beyond which it is written at once.
const flushAt = 32 << 10

// Frames on the pipe from a node: a 4-byte length (little-endian) of what
// follows, a tag, and the body: an event in trace's wire encoding
// (trace.AppendWire), or any other message as a JSON fromNode.
const (
	frameEvent = 'e'
	frameJSON  = 'j'
	// maxFrame bounds a frame the runner accepts.
	maxFrame = 16 << 20
)

// event frames an event.
func (l *pipeWriter) event(ev *trace.Event) {
	at := l.begin(frameEvent)
	l.buf = trace.AppendWire(l.buf, ev)
	l.end(at)
}

// send frames a message other than an event.
func (l *pipeWriter) send(m fromNode) {
	b, err := json.Marshal(m)
	if err != nil {
		l.err = err
		return
	}
	at := l.begin(frameJSON)
	l.buf = append(l.buf, b...)
	l.end(at)
}

// begin starts a frame of kind tag, its length to be filled in by end.
func (l *pipeWriter) begin(tag byte) int {
	at := len(l.buf)
	l.buf = append(l.buf, 0, 0, 0, 0, tag)
	return at
}

func (l *pipeWriter) end(at int) {
	binary.LittleEndian.PutUint32(l.buf[at:], uint32(len(l.buf)-at-4))
	if l.err == nil && len(l.buf) >= flushAt {
		l.flush()
	}
}

// flush writes what is buffered, in one write.
func (l *pipeWriter) flush() {
	if l.err != nil || len(l.buf) == 0 {
		return
	}
	b := l.buf
	if f, ok := l.w.(*os.File); ok {
		b = rawWrite(f, b)
	}
	if len(b) > 0 {
		_, l.err = l.w.Write(b)
	}
	l.buf = l.buf[:0]
}

// rawWrite writes b to f with raw write system calls and returns what it
// could not write that way (on an error, or a pipe that would block while
// f does not block), which the caller writes through f. A node writes its
// pipe at every safe point, and a write through the runtime's
// syscall.Syscall, on a process idle between datagrams, wakes the
// runtime's monitor thread every time (a futex wake and a thread switch).
// A pipe that blocks holds the node in the write, as os.File's would:
// the node has nothing else to do before its events are out.
func rawWrite(f *os.File, b []byte) []byte {
	sc, err := f.SyscallConn()
	if err != nil {
		return b
	}
	sc.Control(func(fd uintptr) {
		for len(b) > 0 {
			n, _, errno := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			if errno == unix.EINTR {
				continue
			}
			if errno != 0 {
				return
			}
			b = b[n:]
		}
	})
	return b
}

// polled returns the node's control pipe read through the runtime's
// poller, if it is a pipe. A node runs on one Go processor, and a read of a
// pipe in blocking mode is a system call that keeps that processor while it
// waits: the control reader's read, begun whenever the loop waits for the
// socket, left no thread waiting on the poller, so a datagram that came
// meanwhile waited for the runtime's monitor thread, which in a process
// that was idle (a node at its start) looks only every 10 ms: the first
// grant of a central run arrived 10 to 18 ms late, the whole run waiting
// for it. Through the poller the read parks the reader like the socket's
// wait parks the loop, and one thread waits for both.
func polled(r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok {
		return r
	}
	var st unix.Stat_t
	fd := int(f.Fd())
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return r
	}
	// The pipe's read end is the node's alone (the runner keeps the write
	// end), so its mode concerns no one else.
	if unix.SetNonblock(fd, true) != nil {
		return r
	}
	return os.NewFile(uintptr(fd), f.Name())
}

func readLine(r *bufio.Reader, v any) error {
	line, err := r.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return err
	}
	return json.Unmarshal(line, v)
}

// ProcessCPU is the CPU time (user and system) this process used so far.
func ProcessCPU() time.Duration { return cputime.Self() }

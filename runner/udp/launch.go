package udp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"

	"github.com/dmxlab/dmx/runner"
)

// LaunchHooks connect a run of processes to its caller. None of them
// changes what the run does: that is the Plan's.
type LaunchHooks struct {
	// Command starts one node process; by default NodeBinary beside the
	// running executable if it comes from the same build, or the
	// executable itself with the argument "node" (a notice on Stderr says
	// when NodeBinary is there but from another build).
	Command func() *exec.Cmd
	// Stderr receives the nodes' own diagnostics, each line prefixed "P3: ".
	Stderr io.Writer
	// Hurry, if set, is closed when the caller wants the run over at once
	// (a second Ctrl-C), not in the few seconds nodes take to stop when
	// ctx is cancelled: the nodes still running are killed. What they
	// recorded so far is kept.
	Hurry <-chan struct{}
	// MaxRTO, if set, caps the nodes' retransmission time-out (by default
	// link.MaxRTO): a test sees in seconds what a minute of
	// retransmissions does.
	MaxRTO time.Duration
	// Net, if set, places the nodes somewhere else than on loopback and
	// has the kernel make the network faults it can (runner/netns); the
	// plan's UDP.Net names it. Nil: every node on 127.0.0.1, every
	// network fault made by the nodes' transport.
	Net Network
	// NodeArgs are added to each node process's command line: the name
	// and kind of a program of the user's own (runner/exec.NodeArgs).
	NodeArgs []string
}

// Network is where a driver places the nodes of a run instead of on
// loopback, and how it has network faults made: runner/netns gives each
// node a network namespace of its own and has nftables drop what
// partitions and loss drop. The launcher calls Place and Start from its
// loop, for every incarnation of a node (a restarted node goes back to
// its place), and NetStart and NetEnd from a goroutine of their own, one
// call at a time and in the schedule's order: the kernel can take
// seconds to commit a rule change on a loaded machine (nf_tables waits
// for an RCU grace period), and the loop must go on reading the nodes
// meanwhile. The launcher holds a lock around each call, so the methods
// need none against each other.
type Network interface {
	// Place says where node i runs: the IP address it listens on, and the
	// name of its place (a namespace), which its start event records.
	Place(i int) (host, name string)
	// Start starts the process of node i in its place, as cmd.Start
	// does.
	Start(i int, cmd *exec.Cmd) error
	// Applies is the network's word on a fault (runner.Plan.CheckFaults),
	// in place of Applies.
	Applies(f *runner.Fault) error
	// NetStart puts network fault i of the plan (isolating proc) in force
	// if the kernel can make it, and says so (kernel); how says by what
	// means, or why the nodes' transport makes it instead.
	NetStart(i, proc int) (kernel bool, how string)
	// NetEnd takes kernel fault i out of force; how says what it did
	// (what it dropped).
	NetEnd(i int) (how string)
}

// LaunchResult says how a run of processes ended.
type LaunchResult struct {
	Complete  bool
	Status    string
	Events    int64
	Transport Rejections // summed over the nodes
	// Notes are the faults that did not apply, and why (each also an event
	// of the trace).
	Notes []string
	// NodeCPU is the CPU time (user and system) the node processes used,
	// summed over those reaped: what running the nodes cost, beside the
	// runner's own.
	NodeCPU time.Duration
	// NodeRunCPU is the part of NodeCPU the nodes used from the run's
	// start to their stop, as they report it: their start-up (the
	// program's initialisation, the hello phase) left out.
	NodeRunCPU time.Duration
	// NodeMaxRSS is the largest peak resident set of the node processes
	// reaped, in bytes: what one node costs in memory.
	NodeMaxRSS int64
}

// add sums a node's counts into r.
func (r *Rejections) add(s Rejections) {
	r.Malformed += s.Malformed
	r.BadMAC += s.BadMAC
	r.WrongPeer += s.WrongPeer
	r.Stale += s.Stale
	r.Duplicate += s.Duplicate
	r.Retransmits += s.Retransmits
	r.Abandoned += s.Abandoned
	r.GivenUp += s.GivenUp
	r.FaultDrops += s.FaultDrops
	r.Sent += s.Sent
}

type nodeProc struct {
	id       int
	inc      int // incarnation: 0, then 1 after the first restart...
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	exited   bool // its stdout reached EOF
	stopSent bool
	fault    string // the fault that killed it, if any
	killedAt int64  // wall ns when the runner sent the fault's SIGKILL
	// recoverAfter: a recovery came while the process was killed but its
	// end not yet seen; it is carried out when the end is.
	recoverAfter *runner.Fault
	waitErr      error
	pausing      *runner.Fault // a pause was asked for
	paused       bool          // its pause event came: it is stopped (SIGSTOP) until resumed
}

// signal sends sig to the node's process group, which it leads (spawn
// sets Setpgid): a foreign program the node runs (runner/exec) is in it,
// so that a crash kills the program too and a pause stops it.
func (p *nodeProc) signal(sig syscall.Signal) {
	if pid := p.cmd.Process.Pid; pid <= 1 || syscall.Kill(-pid, sig) != nil {
		p.cmd.Process.Signal(sig)
	}
}

// procState is what the runner knows of a process across its incarnations:
// its History, read from its events, to record its crash and to restart it,
// its address and whether its workload is done.
type procState struct {
	*runner.History
	addr string
	done bool
	skew time.Duration // a skew fault's: a restart keeps it
}

type nodeMsg struct {
	p   *nodeProc
	m   *fromNode
	evs []trace.Event // events, in the order emitted (m is nil)
	err error         // non-nil: the pipe ended (io.EOF) or broke
}

// Launch carries out p (a DriverUDP plan; no Driver means one) as N node
// processes and records every event they emit through rec, from one
// goroutine. It returns when the run is over: every workload finished (and
// the network went quiet), an election run's Duration passed, another
// run's Duration cut it short, the run stalled, a node failed, or ctx was
// cancelled (Ctrl-C), in which case the result is marked incomplete.
// Events recorded before any of these are never lost.
func Launch(ctx context.Context, p runner.Plan, rec runner.Recorder, hooks LaunchHooks) (LaunchResult, error) {
	if p.Driver == "" {
		p.Driver = runner.DriverUDP
	}
	if p.Driver != runner.DriverUDP {
		return LaunchResult{}, fmt.Errorf("launch a %s plan: processes carry out %s plans", p.Driver, runner.DriverUDP)
	}
	if err := p.Validate(); err != nil {
		return LaunchResult{}, err
	}
	applies := Applies
	switch {
	case hooks.Net != nil:
		applies = hooks.Net.Applies
	case p.UDP.Net != runner.NetLoopback:
		return LaunchResult{}, fmt.Errorf("launch a plan over %s: its driver (runner/netns) places the nodes", p.UDP.Net.String())
	}
	if err := p.CheckFaults(applies); err != nil {
		return LaunchResult{}, err
	}
	l, err := newLauncher(p.WithDefaults(), rec, hooks)
	if err != nil {
		return LaunchResult{}, err
	}
	if err := l.startAll(); err != nil {
		return LaunchResult{}, err
	}
	if err := l.hello(ctx); err != nil {
		if ctx.Err() != nil {
			// Interrupted: not a failure of the run, which never began.
			return LaunchResult{Status: "interrupted before the run started"}, nil
		}
		return LaunchResult{Status: "failed: " + err.Error()}, err
	}
	l.watch(ctx)
	l.kernelDrain()
	if l.res.Status == "" && l.failure == nil {
		// Every process ended of its own, each recording its crash (its
		// program died: runner/exec), before anything stopped the run.
		l.res.Status, l.res.Complete = l.endStatus(), true
		if !l.finished {
			l.finished = true
			l.inj.Finish()
		}
	}
	return l.res, l.failure
}

// launcher is one run of processes. Its duties, one method each: start
// (startAll, spawn, read), the hello phase (hello), watching the run
// (watch, handle, event, tick), recording (record), faults (scheduleFaults,
// inject, crash, recover), crash accounting (died), and stopping (stopAll,
// fail, killAll, abort). Everything but the readers and the fault timer
// runs on the goroutine of Launch, so the state needs no lock.
type launcher struct {
	plan     runner.Plan     // with its defaults
	wl       runner.Workload // the plan's workload as the nodes get it
	election bool
	rec      runner.Recorder
	hooks    LaunchHooks
	key      []byte // the run's datagram key

	msgs    chan nodeMsg // the readers hand in every line of every node here
	readers sync.WaitGroup
	procs   []*nodeProc  // each process's current incarnation
	state   []*procState // each process across its incarnations
	incs    []int        // each process's current incarnation number
	started int          // processes started, restarts included
	ended   int          // of those, the ones whose output has ended

	t0           time.Time // when the run started (after the hello phase)
	res          LaunchResult
	failure      error
	lastEvent    time.Time
	lastStopped  time.Time // when a node was last seen stopped while the run was quiet
	allDoneSince time.Time // when every live node last became done
	stopping     bool
	stopDeadline <-chan time.Time // nodes still running then are killed

	inj        *runner.Injector
	due        chan func()        // fault steps and timers due, run on the loop
	quit       chan struct{}      // closed when the run is over: timers stop
	recovering int                // recoveries waiting for a killed process's end
	netActive  []runner.ActiveNet // network faults in force (a restarted node starts under them)
	finished   bool               // the injector said which faults did not apply

	// The kernel's side of network faults (Network.NetStart, NetEnd), off
	// the loop: kwork takes the calls in order, kdone hands back to the
	// loop what each did, knet serialises the calls into hooks.Net.
	kwork chan func() func()
	kdone chan func()
	kidle sync.WaitGroup
	knet  sync.Mutex
	kslow []string // faults whose kernel change came only after the run's end
	// kpending counts the kernel changes not yet handed back, kbusy
	// since when there have been some.
	kpending int
	kbusy    time.Time
}

// kernelWait is how long a run that is otherwise over waits for a
// network fault's change in the kernel.
const kernelWait = 10 * time.Second

func newLauncher(p runner.Plan, rec runner.Recorder, hooks LaunchHooks) (*launcher, error) {
	if hooks.Stderr == nil {
		hooks.Stderr = io.Discard
	}
	if hooks.Command == nil {
		cmd, err := nodeCommand(hooks.Stderr)
		if err != nil {
			return nil, err
		}
		hooks.Command = cmd
	}
	if args := hooks.NodeArgs; len(args) > 0 {
		command := hooks.Command
		hooks.Command = func() *exec.Cmd {
			c := command()
			c.Args = append(c.Args, args...)
			return c
		}
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("make the run's key: %w", err)
	}
	wl := p.Workload
	wl.Normalize()
	l := &launcher{
		plan: p, wl: wl, election: p.Spec.Kind == algo.Election, rec: rec, hooks: hooks, key: key,
		msgs:  make(chan nodeMsg, 4096),
		procs: make([]*nodeProc, p.N),
		state: make([]*procState, p.N),
		incs:  make([]int, p.N),
		due:   make(chan func(), 64),
		quit:  make(chan struct{}),
	}
	l.inj = runner.NewInjector(p, l)
	for i := range l.state {
		l.state[i] = &procState{History: runner.NewHistory(i)}
	}
	return l, nil
}

// startAll starts every process; if one cannot start, the others are
// killed and reaped.
func (l *launcher) startAll() error {
	for i := range l.procs {
		if err := l.spawn(i, 0, l.config(i)); err != nil {
			l.abort()
			return err
		}
	}
	return nil
}

// config is the configuration process i starts from.
func (l *launcher) config(i int) *nodeConfig {
	port := 0
	if l.plan.UDP.BasePort != 0 {
		port = l.plan.UDP.BasePort + i
	}
	c := &nodeConfig{ID: i, N: l.plan.N, Algo: l.plan.Spec.Name, Params: l.plan.Params, Seed: l.plan.Seed, Workload: l.wl, Key: l.key, Port: port,
		Raw: l.plan.Raw(), Skew: l.state[i].skew, Active: slices.Clone(l.netActive), MaxRTO: l.hooks.MaxRTO}
	if l.hooks.Net != nil {
		c.Host, c.Netns = l.hooks.Net.Place(i)
	}
	for _, f := range l.plan.Faults {
		if f.Network() {
			// The node's fault layer judges by the plan's faults, named
			// by their index: it gets them all.
			for _, g := range l.plan.Faults {
				c.Faults = append(c.Faults, g.String())
			}
			break
		}
	}
	return c
}

// spawn starts incarnation inc of process i.
func (l *launcher) spawn(i, inc int, c *nodeConfig) error {
	cmd := l.hooks.Command()
	// Own process group: Ctrl-C reaches the runner only, which stops the
	// nodes in order; Pdeathsig: nodes die with the runner.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = &prefixWriter{w: l.hooks.Stderr, prefix: fmt.Sprintf("P%d: ", i)}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, w, err := newNodePipe(pipeSize(l.plan.N))
	if err != nil {
		return err
	}
	cmd.Stdout = w
	if l.hooks.Net != nil {
		l.knet.Lock()
		err = l.hooks.Net.Start(i, cmd)
		l.knet.Unlock()
	} else {
		err = cmd.Start()
	}
	w.Close()
	if err != nil {
		stdout.Close()
		return fmt.Errorf("start node P%d: %w", i, err)
	}
	p := &nodeProc{id: i, inc: inc, cmd: cmd, stdin: stdin}
	l.procs[i] = p
	l.started++
	l.readers.Add(1)
	go l.read(p, stdout)
	l.send(p, toNode{Config: c})
	return nil
}

// read hands what process p writes to the launcher's loop, then the end
// of its output. It runs on its own goroutine.
func (l *launcher) read(p *nodeProc, stdout io.ReadCloser) {
	defer l.readers.Done()
	defer stdout.Close()
	err := decodeNode(p.id, stdout, l.hooks.Stderr, func(m nodeMsg) {
		m.p = p
		l.msgs <- m
	})
	l.msgs <- nodeMsg{p: p, err: err}
}

// decodeNode reads the frames node id writes on its control pipe (see
// pipeWriter) and hands them to out, events already parsed and gathered
// while more are at hand, until the pipe ends (io.EOF) or breaks. A frame
// cut short by the end of the pipe is dropped: the node was killed while
// writing it, and what it emitted before is whole.
func decodeNode(id int, r io.Reader, stderr io.Writer, out func(nodeMsg)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var evs []trace.Event
	var frame []byte
	var parser trace.WireParser
	pass := func() {
		if len(evs) > 0 {
			out(nodeMsg{evs: evs})
			evs = nil
		}
	}
	defer pass()
	for {
		if br.Buffered() == 0 {
			// Nothing more at hand: what was gathered goes before the
			// reader waits.
			pass()
		}
		var head [4]byte
		if _, err := io.ReadFull(br, head[:]); err != nil {
			if err == io.ErrUnexpectedEOF {
				fmt.Fprintf(stderr, "dmx: P%d's output ends in a cut frame (killed while writing it); dropped\n", id)
				err = io.EOF
			}
			return err
		}
		n := binary.LittleEndian.Uint32(head[:])
		if n == 0 || n > maxFrame {
			pass()
			out(nodeMsg{m: &fromNode{Error: fmt.Sprintf("P%d sent a frame of %d bytes, which the runner cannot read", id, n)}})
			return io.EOF
		}
		if cap(frame) < int(n) {
			frame = make([]byte, n)
		}
		frame = frame[:n]
		if _, err := io.ReadFull(br, frame); err != nil {
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				fmt.Fprintf(stderr, "dmx: P%d's output ends in a cut frame (killed while writing it); dropped\n", id)
				err = io.EOF
			}
			return err
		}
		switch frame[0] {
		case frameEvent:
			var ev trace.Event
			if err := parser.Parse(frame[1:], &ev); err != nil {
				pass()
				out(nodeMsg{m: &fromNode{Error: err.Error()}})
				continue
			}
			evs = append(evs, ev)
		case frameJSON:
			var m fromNode
			pass()
			if err := json.Unmarshal(frame[1:], &m); err != nil {
				m = fromNode{Error: fmt.Sprintf("P%d sent a message the runner cannot read: %v", id, err)}
			}
			out(nodeMsg{m: &m})
		default:
			pass()
			out(nodeMsg{m: &fromNode{Error: fmt.Sprintf("P%d sent a frame of unknown kind %q", id, frame[0])}})
		}
	}
}

func (l *launcher) send(p *nodeProc, m toNode) {
	b, _ := json.Marshal(m)
	p.stdin.Write(append(b, '\n'))
}

// hello is the first phase: every node reports its address, then everyone
// gets everyone's, and the run's clock starts. On failure every node is
// killed and reaped.
func (l *launcher) hello(ctx context.Context) error {
	addrs := make([]string, l.plan.N)
	got := 0
	timeout := time.NewTimer(15 * time.Second)
	defer timeout.Stop()
	var failure error
	for got < l.plan.N && failure == nil {
		select {
		case m := <-l.msgs:
			switch {
			case m.m == nil && m.err == nil:
				// Events: none come before the peers line.
			case m.err != nil:
				l.reap(m.p)
				failure = fmt.Errorf("node P%d ended before it was ready: %v", m.p.id, exitReason(m.p))
			case m.m.Error != "":
				failure = errors.New(m.m.Error)
			case m.m.Hello != "":
				addrs[m.p.id] = m.m.Hello
				l.state[m.p.id].addr = m.m.Hello
				got++
			}
		case <-timeout.C:
			failure = errors.New("nodes did not report their UDP addresses within 15s")
		case <-ctx.Done():
			failure = fmt.Errorf("interrupted before the run started: %w", context.Cause(ctx))
		}
	}
	if failure != nil {
		l.abort()
		return failure
	}
	l.t0 = time.Now()
	for _, p := range l.procs {
		l.send(p, l.peers(addrs))
	}
	return nil
}

// peers is the message that gives a node everyone's address, the run's
// start and, for an election run, its end.
func (l *launcher) peers(addrs []string) toNode {
	m := toNode{Peers: addrs, T0: l.t0.UnixNano()}
	if l.election {
		m.End = l.t0.Add(l.plan.Duration).UnixNano()
	}
	return m
}

// watch is the run: one goroutine (this one) handles what the nodes send,
// records every event, fires the faults and decides when the run ends. It
// returns when every process has ended and no fault is still to come.
func (l *launcher) watch(ctx context.Context) {
	l.lastEvent = time.Now()
	defer close(l.quit)
	go l.scheduleFaults(l.inj.Steps())

	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	ctxDone := ctx.Done()
	hurry := l.hooks.Hurry
	for l.ended < l.started || (l.inj.Waiting() && !l.stopping) {
		select {
		case <-hurry:
			hurry = nil
			l.stopAll("interrupted", false)
			l.killAll()
		case m := <-l.msgs:
			l.handle(m)
		case f := <-l.due:
			f()
		case f := <-l.kdone:
			f()
		case <-ctxDone:
			ctxDone = nil
			status := "interrupted"
			if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
				status = "cut short: " + cause.Error()
			}
			l.stopAll(status, false)
		case now := <-tick.C:
			l.tick(now)
		case <-l.stopDeadline:
			// Nodes that do not stop when told are killed; what they
			// recorded so far is kept.
			l.killAll()
			l.stopDeadline = nil
		}
	}
	l.readers.Wait()
}

// handle acts on one message from a node.
func (l *launcher) handle(m nodeMsg) {
	p, st := m.p, l.state[m.p.id]
	switch {
	case m.err != nil:
		l.reap(p)
		if !p.stopSent || p.fault != "" {
			// Not asked to stop, or killed by a fault before it was: the
			// node died.
			l.died(p)
		}
	case m.evs != nil:
		for _, ev := range m.evs {
			l.event(p, ev)
		}
	case m.m.Done:
		st.done = true
	case m.m.Hello != "":
		st.addr = m.m.Hello // a restarted node
		addrs := make([]string, l.plan.N)
		for i := range addrs {
			addrs[i] = l.state[i].addr
		}
		l.send(p, l.peers(addrs))
	case m.m.Stats != nil:
		l.res.Transport.add(*m.m.Stats)
		l.res.NodeRunCPU += m.m.CPU
	case m.m.Error != "":
		l.fail(fmt.Errorf("node P%d: %s", p.id, m.m.Error))
	}
}

// event records an event of process p and keeps what a restart or the
// record of its crash will need.
func (l *launcher) event(p *nodeProc, ev trace.Event) {
	if ev.Proc != p.id {
		l.fail(fmt.Errorf("node P%d sent an event of P%d", p.id, ev.Proc))
		return
	}
	l.record(&ev)
	l.state[p.id].Add(&ev, l.plan.Spec.Kind == algo.Multicast)
	l.inj.Observe(&ev)
	if ev.Kind == trace.KindFault {
		l.pauseEvent(p, &ev)
	}
}

// record hands ev to the recorder.
func (l *launcher) record(ev *trace.Event) {
	if err := l.rec.Record(ev); err != nil {
		l.fail(err)
	}
	l.res.Events++
	l.lastEvent = time.Now()
}

// died is the crash accounting of a process that died (killed by a fault,
// or of its own): its crash is recorded on its behalf, after its last
// event, and a recovery that waited for its end is carried out.
func (l *launcher) died(p *nodeProc) {
	st := l.state[p.id]
	// A fault's crash happened when the SIGKILL was sent; an unexpected
	// death is known when its pipe ends, which on a loaded machine can be
	// much later. Either way it comes after the process's last event
	// (History.Crash sees to that).
	wall := time.Now().UnixNano()
	if p.killedAt != 0 {
		wall = p.killedAt
	}
	halted := false
	if last := st.Last(); last.Kind == trace.KindCrash && p.fault == "" && last.Seq > 0 {
		// It recorded its own crash and ended (a foreign program died:
		// runner/exec, Node.OnHalt): the crash is in the trace already,
		// and the run goes on as after a crash fault.
		halted = true
	} else {
		crash := st.Crash(wall, l.plan.N, trace.Crash{Reason: exitReason(p), Fault: p.fault})
		l.record(&crash)
		st.Add(&crash, false)
		l.inj.Observe(&crash)
	}
	// Only now may the others give up on what they sent it: it is down,
	// not just silent (see transport.go).
	for _, q := range l.procs {
		if q.id != p.id && !q.exited && !q.stopSent {
			l.send(q, toNode{Down: &restarted{Proc: p.id, Inc: p.inc}})
		}
	}
	if f := p.recoverAfter; f != nil {
		p.recoverAfter = nil
		l.recovering--
		l.Recover(p.id, f)
	}
	if p.fault == "" && !halted && l.res.Status == "" {
		l.res.Status = fmt.Sprintf("node P%d died: %s", p.id, exitReason(p))
	}
}

// tick decides, every 50ms, whether the run is over.
func (l *launcher) tick(now time.Time) {
	quiet := now.Sub(l.lastEvent)
	live, done := 0, 0
	for i, p := range l.procs {
		if !p.exited {
			live++
			if l.state[i].done {
				done++
			}
		}
	}
	if done >= live && live > 0 {
		if l.allDoneSince.IsZero() {
			l.allDoneSince = now
		}
	} else {
		l.allDoneSince = time.Time{}
	}
	linger := l.plan.UDP.Linger
	switch {
	case l.stopping:
	case l.election && now.Sub(l.t0) >= l.plan.Duration:
		l.stopAll(fmt.Sprintf("ran for %v", l.plan.Duration), true)
	case l.election:
	case now.Sub(l.t0) >= l.plan.Duration:
		l.stopAll(fmt.Sprintf("cut short: duration %v reached", l.plan.Duration), false)
	case l.inj.Waiting() || l.recovering > 0:
	case l.kpending > 0 && now.Sub(l.kbusy) < kernelWait:
		// A network fault is still changing in the kernel: it is part
		// of the schedule, to be seen in the trace before the end.
	case done >= live && (quiet >= linger || now.Sub(l.allDoneSince) >= 5*linger):
		// Quiet, or as quiet as it gets: a token ring's token
		// circulates for ever.
		l.stopAll(l.endStatus(), true)
	case now.Sub(l.lastStopped) < l.plan.UDP.Stall:
		// A node was seen stopped lately: once it resumes, it gets
		// --stall to say something.
	case quiet >= l.plan.UDP.Stall:
		// A node whose process exists but is stopped (SIGSTOP from outside
		// dmx, a debugger, a suspended job) is alive: the run waits for
		// it, as for a paused one, and --stall counts again from when it
		// resumes. Only nodes gone, or running and silent, make a stall.
		if who := l.stopped(); who != "" {
			if l.lastStopped.IsZero() {
				l.res.Notes = append(l.res.Notes, fmt.Sprintf("%s stopped (state T: SIGSTOP, a debugger, a suspended job) while the run was quiet: the run waited for it rather than call it stalled (--duration still bounds the run)", who))
			}
			l.lastStopped = now
			break
		}
		l.stopAll(fmt.Sprintf("stalled: no event for %v while %d of %d nodes had not finished", l.plan.UDP.Stall, live-done, l.plan.N), true)
	}
	if l.stopping && l.stopDeadline == nil {
		l.stopDeadline = time.After(5 * time.Second)
	}
}

// stopped names the nodes of the run that are stopped (job control or
// ptrace: state T or t in /proc/PID/stat), "" if none is or it cannot be
// told (no /proc: a quiet run is then a stall, as before).
func (l *launcher) stopped() string {
	var who []string
	for i, p := range l.procs {
		// A node done with its workload counts too: the others may
		// wait for its answers.
		if p.exited || p.cmd.Process == nil {
			continue
		}
		if procStopped(p.cmd.Process.Pid) {
			who = append(who, fmt.Sprintf("P%d", i))
		}
	}
	return strings.Join(who, ", ")
}

// procStopped reports whether process pid is stopped, from the state
// field of /proc/PID/stat (after the command name, which is in brackets
// and may hold any byte, hence the last ')').
func procStopped(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'T' || b[i+2] == 't'
}

// scheduleFaults fires the plan's fault steps into the loop at their
// times. One goroutine fires them in time order, and those due at the same
// time in the order given (as the simulator does): separate timers could
// fire a recover:1@T before the crash:1@T it follows.
func (l *launcher) scheduleFaults(steps []runner.FaultStep) {
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].At < steps[j].At })
	for _, st := range steps {
		t := time.NewTimer(st.At - time.Since(l.t0))
		select {
		case <-t.C:
			select {
			case l.due <- st.Do:
			case <-l.quit:
				return
			}
		case <-l.quit:
			t.Stop()
			return
		}
	}
}

// endStatus is the status of a run whose live nodes all finished.
func (l *launcher) endStatus() string {
	var down []string
	for i, p := range l.procs {
		if p.exited && !l.state[i].done {
			down = append(down, fmt.Sprintf("P%d", i))
		}
	}
	return runner.EndStatus(l.plan.Spec.Kind, time.Since(l.t0), 0, l.plan.N, down)
}

// The launcher's side of the faults (runner.FaultDriver): the injector decides
// what happens when, these carry it out on the processes.

func (l *launcher) Elapsed() time.Duration { return time.Since(l.t0) }

// After runs f on the loop d from now; with d 0 at once (the loop is
// where the injector calls it from): a crash triggered by an event is the
// SIGKILL sent as soon as the runner has recorded the event, which lands
// while the process may be recording a few more.
func (l *launcher) After(d time.Duration, f func()) {
	if d <= 0 {
		f()
		return
	}
	time.AfterFunc(d, func() {
		select {
		case l.due <- f:
		case <-l.quit:
		}
	})
}

func (l *launcher) Up(i int) bool { p := l.procs[i]; return !p.exited && p.fault == "" }

// Crash SIGKILLs process i, unless it is already down. Its crash is
// recorded when its end is seen (died).
func (l *launcher) Crash(i int, f *runner.Fault) {
	p := l.procs[i]
	if !p.exited && p.fault == "" {
		p.fault = f.String()
		p.killedAt = time.Now().UnixNano()
		p.signal(syscall.SIGKILL)
		p.pausing, p.paused = nil, false // SIGKILL ends a stopped process too
	}
}

// Recover restarts crashed process i as a new incarnation on the same
// address, resuming from what the trace says of it (without what it
// persisted, with amnesia); the others learn of the new incarnation.
func (l *launcher) Recover(i int, f *runner.Fault) {
	p := l.procs[i]
	if !p.exited {
		if p.fault != "" && p.recoverAfter == nil {
			// Killed, but its end is not in yet: recover it then.
			p.recoverAfter = f
			l.recovering++
		}
		return
	}
	st := l.state[i]
	if f.Amnesia {
		st.Forget()
	}
	l.incs[i]++
	c := l.config(i)
	if _, port, err := net.SplitHostPort(st.addr); err == nil {
		// The same address, so that peers need no news of where.
		fmt.Sscan(port, &c.Port)
	}
	c.Inc, c.Incs = l.incs[i], append([]int(nil), l.incs...)
	c.Resume = st.Resume(l.wl.For(i))
	c.Resume.Amnesia = f.Amnesia
	st.done = false
	if err := l.spawn(i, l.incs[i], c); err != nil {
		l.fail(err)
		return
	}
	for _, q := range l.procs {
		if q.id != i && !q.exited {
			l.send(q, toNode{Restarted: &restarted{Proc: i, Inc: l.incs[i]}})
		}
	}
}

// Applies is dmx run's word on a fault (runner.Plan.CheckFaults): a crash
// is a SIGKILL and a recovery a new process, a pause SIGSTOP and SIGCONT
// after the node recorded it, a skew the node's clock; network faults are
// judged by each node's fault layer on every datagram it sends.
func Applies(f *runner.Fault) error {
	switch f.Kind {
	case runner.FaultCrash, runner.FaultRecover, runner.FaultPause, runner.FaultSkew:
		return nil
	}
	if f.Kind.Target() == runner.TargetNetwork {
		return nil
	}
	return fmt.Errorf("dmx run cannot apply %s faults", f.Kind)
}

// Process carries out a pause or a skew of process i: the node gets the
// fault in a "process" control line and applies it (nodeFault). A pause
// asks the node to record the pause and wait; pauseEvent stops it
// (SIGSTOP) when the pause event comes, and resumes it after the pause
// (SIGCONT, then the resume line it waits for). A skew is kept for the
// node's restarts.
func (l *launcher) Process(i int, f *runner.Fault) {
	switch f.Kind {
	case runner.FaultPause:
		l.procs[i].pausing = f
	case runner.FaultSkew:
		l.state[i].skew = f.Skew
		if !l.Up(i) {
			return
		}
	default:
		l.NotApplied(f, "dmx run cannot apply it")
		return
	}
	l.send(l.procs[i], toNode{Fault: &faultCmd{Op: "process", Spec: f.String()}})
}

// pauseEvent follows the fault events of p's pause.
func (l *launcher) pauseEvent(p *nodeProc, ev *trace.Event) {
	d, err := ev.Fault()
	if err != nil || p.pausing == nil || d.Fault != p.pausing.String() {
		return
	}
	switch d.Phase {
	case trace.FaultStart:
		if p.exited || p.fault != "" || p.stopSent {
			return
		}
		p.paused = true
		p.signal(syscall.SIGSTOP)
		f := p.pausing
		l.After(f.End-f.At, func() { l.resume(p) })
	case trace.FaultEnd:
		p.pausing, p.paused = nil, false
	}
}

// resume ends p's pause: SIGCONT, then the line its loop waits for.
func (l *launcher) resume(p *nodeProc) {
	if p.exited || !p.paused || p.fault != "" {
		return
	}
	p.signal(syscall.SIGCONT)
	l.send(p, toNode{Fault: &faultCmd{Op: "resume"}})
}

// NetStart puts network fault i in force: by the kernel if the run's
// Network can make it, else by every node's transport. Either way the
// nodes it acts on record its start, saying which made it, once it is in
// force.
func (l *launcher) NetStart(i, proc int) {
	if l.hooks.Net == nil {
		l.netStarted(runner.ActiveNet{Index: i, Proc: proc, By: trace.FaultByTransport})
		return
	}
	l.kernel(i, "start", func() func() {
		a := runner.ActiveNet{Index: i, Proc: proc, By: trace.FaultByTransport}
		kernel, how := l.hooks.Net.NetStart(i, proc)
		a.How = how
		if kernel {
			a.By = trace.FaultByKernel
		}
		return func() { l.netStarted(a) }
	})
}

func (l *launcher) netStarted(a runner.ActiveNet) {
	l.netActive = append(l.netActive, a)
	l.tellAll(&faultCmd{Op: "net-start", Index: a.Index, Proc: a.Proc, By: a.By, How: a.How})
}

// NetEnd takes network fault i out of force; the nodes record its end
// once the kernel has taken its rules away (at once for a fault their
// transport makes).
func (l *launcher) NetEnd(i int) {
	if l.hooks.Net == nil {
		l.netEnded(i, "")
		return
	}
	l.kernel(i, "end", func() func() {
		// NetEnd of a fault the kernel does not make does nothing.
		how := l.hooks.Net.NetEnd(i)
		return func() { l.netEnded(i, how) }
	})
}

func (l *launcher) netEnded(i int, how string) {
	for k, a := range l.netActive {
		if a.Index == i {
			if a.By != trace.FaultByKernel {
				how = ""
			}
			l.tellAll(&faultCmd{Op: "net-end", Index: i, Proc: a.Proc, By: a.By, How: how})
			l.netActive = slices.Delete(l.netActive, k, k+1)
			return
		}
	}
}

// kernel has op carried out off the loop, after the kernel operations
// before it; what op returns runs on the loop when op is done. Were the
// run over by then, the nodes no longer record: the run's notes say that
// the fault's change came too late to be in the trace.
func (l *launcher) kernel(i int, change string, op func() func()) {
	if l.kwork == nil {
		l.kwork, l.kdone = make(chan func() func(), 64), make(chan func(), 64)
		l.kidle.Add(1)
		go func() {
			defer l.kidle.Done()
			for op := range l.kwork {
				l.knet.Lock()
				then := op()
				l.knet.Unlock()
				l.kdone <- then
			}
		}()
	}
	at := l.Elapsed()
	if l.kpending == 0 {
		l.kbusy = time.Now()
	}
	l.kpending++
	l.kwork <- func() func() {
		then := op()
		took := l.Elapsed() - at
		return func() {
			l.kpending--
			if l.stopping {
				l.kslow = append(l.kslow, fmt.Sprintf("fault %s: the kernel took %v to carry out its %s, due at %v, until after the run's end: the nodes did not record it", &l.plan.Faults[i], took.Round(time.Millisecond), change, at.Round(time.Millisecond)))
			}
			then()
		}
	}
}

// kernelDrain waits, after the loop, for the kernel operations still
// under way (the network may not be torn down beneath them), and runs
// what they hand back.
func (l *launcher) kernelDrain() {
	if l.kwork == nil {
		return
	}
	close(l.kwork)
	go func() { l.kidle.Wait(); close(l.kdone) }()
	for then := range l.kdone {
		then()
	}
	l.res.Notes = append(l.res.Notes, l.kslow...)
}

// tellAll sends a fault line to every process that is up.
func (l *launcher) tellAll(c *faultCmd) {
	for _, p := range l.procs {
		if !p.exited && !p.stopSent {
			l.send(p, toNode{Fault: c})
		}
	}
}

func (l *launcher) NotApplied(f *runner.Fault, reason string) {
	l.res.Notes = append(l.res.Notes, runner.FaultNote(f, reason))
	for i, p := range l.procs {
		if l.Up(i) && !p.stopSent {
			l.send(p, toNode{Fault: &faultCmd{Op: "note", Spec: f.String(), Reason: reason}})
			return
		}
	}
}

// stopAll tells every node to stop; the first status set is the run's.
func (l *launcher) stopAll(status string, complete bool) {
	if l.stopping {
		return
	}
	l.stopping = true
	if l.res.Status == "" {
		l.res.Status, l.res.Complete = status, complete
	}
	if !l.finished {
		l.finished = true
		l.inj.Finish()
	}
	for _, p := range l.procs {
		if !p.exited && !p.stopSent {
			p.stopSent = true
			l.send(p, toNode{Stop: true})
			if p.paused {
				// A stopped process cannot read its stop line.
				p.signal(syscall.SIGCONT)
				p.paused = false
			}
		}
	}
}

// fail stops the run because of err; the first failure is Launch's error.
func (l *launcher) fail(err error) {
	if l.failure == nil {
		l.failure = err
	}
	l.stopAll("failed: "+err.Error(), false)
}

// reap notes that p's output has ended and collects its exit status.
func (l *launcher) reap(p *nodeProc) {
	if p.exited {
		return
	}
	p.exited = true
	l.ended++
	p.waitErr = p.cmd.Wait()
	if ps := p.cmd.ProcessState; ps != nil {
		l.res.NodeCPU += ps.UserTime() + ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			l.res.NodeMaxRSS = max(l.res.NodeMaxRSS, ru.Maxrss<<10) // Linux counts kB
		}
	}
}

func (l *launcher) killAll() {
	for _, p := range l.procs {
		if p != nil && p.cmd.Process != nil && !p.exited {
			// SIGKILL ends a stopped process too; SIGCONT first all the
			// same, so that nothing is left stopped whatever comes.
			p.signal(syscall.SIGCONT)
			p.signal(syscall.SIGKILL)
		}
	}
}

// abort kills every node started so far and reaps it.
func (l *launcher) abort() {
	l.killAll()
	go func() { l.readers.Wait(); close(l.msgs) }()
	for m := range l.msgs {
		if m.err != nil {
			l.reap(m.p)
		}
	}
}

func exitReason(p *nodeProc) string {
	if p.waitErr == nil {
		if p.cmd.ProcessState != nil {
			return p.cmd.ProcessState.String()
		}
		return "exited"
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by " + unix.SignalName(ws.Signal())
		}
	}
	return p.waitErr.Error()
}

// prefixWriter prefixes every line written to it.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	part   []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.part = append(p.part, b...)
	for {
		i := strings.IndexByte(string(p.part), '\n')
		if i < 0 {
			break
		}
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.part[:i])
		p.part = p.part[i+1:]
	}
	return len(b), nil
}

package runner

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// LaunchConfig is a run of real OS processes talking UDP on 127.0.0.1.
type LaunchConfig struct {
	Spec     *algo.Spec
	N        int
	Seed     uint64
	Params   map[string]string
	Workload Workload
	// BasePort, if not 0, makes node i listen on BasePort+i; otherwise each
	// node takes a free port and the runner tells everyone.
	BasePort int
	// Stall ends the run when no event has arrived for this long while some
	// workload is unfinished (a deadlock, or a starved request). Default 5s.
	Stall time.Duration
	// Linger is how long the runner waits, after every workload is done and
	// the events have stopped, before it stops the nodes. Default 200ms.
	Linger time.Duration
	// Command starts one node process; by default the running executable
	// with the argument "node".
	Command func() *exec.Cmd
	// Stderr receives the nodes' own diagnostics, each line prefixed "P3: ".
	Stderr io.Writer
	// Progress, if set, is called about every 200ms.
	Progress func(Progress)
	// Faults are injected at their times after the start: a crash is a
	// SIGKILL, a recovery starts a new process for the id, which resumes
	// from the trace.
	Faults []Fault
	// Duration is how long an election run lasts; zero means 2s.
	Duration time.Duration
}

// Progress is how far a run has got.
type Progress struct {
	Entries, Total int   // critical-section exits so far, and the workload's total
	Events         int64 // events recorded
}

// LaunchResult says how a run of processes ended.
type LaunchResult struct {
	Complete  bool
	Status    string
	Events    int64
	Transport Rejections // summed over the nodes
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
	recoverAfter *Fault
	waitErr      error
}

// procState is what the runner knows of a process across its incarnations,
// read from its events: enough to record its crash and to restart it.
type procState struct {
	last  trace.Event // its last event
	sent  int64       // messages it sent (the low half of its message ids)
	exits map[string]int
	saved map[string]algo.Msg
	addr  string
	done  bool
}

type nodeMsg struct {
	p   *nodeProc
	m   *fromNode
	err error // non-nil: the pipe ended (io.EOF) or broke
}

// Launch runs cfg as N node processes and records every event they emit
// through rec, from one goroutine. It returns when the run is over: every
// workload finished (and the network went quiet), an election run's
// Duration passed, the run stalled, a node failed, or ctx was cancelled
// (Ctrl-C, --duration), in which case the result is marked incomplete.
// Events recorded before any of these are never lost.
func Launch(ctx context.Context, cfg LaunchConfig, rec Recorder) (LaunchResult, error) {
	if cfg.N < 1 {
		return LaunchResult{}, fmt.Errorf("--nodes %d: need at least 1 node", cfg.N)
	}
	if err := cfg.Workload.Validate(); err != nil {
		return LaunchResult{}, err
	}
	if cfg.BasePort < 0 || cfg.BasePort+cfg.N-1 > 65535 {
		return LaunchResult{}, fmt.Errorf("--port %d: nodes would listen on ports %d..%d, outside 1..65535", cfg.BasePort, cfg.BasePort, cfg.BasePort+cfg.N-1)
	}
	for _, f := range cfg.Faults {
		if f.Proc >= cfg.N {
			return LaunchResult{}, fmt.Errorf("fault %s: process %d does not exist (N=%d)", f, f.Proc, cfg.N)
		}
	}
	if cfg.Stall == 0 {
		cfg.Stall = 5 * time.Second
	}
	if cfg.Linger == 0 {
		cfg.Linger = 200 * time.Millisecond
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.Command == nil {
		exe, err := os.Executable()
		if err != nil {
			return LaunchResult{}, fmt.Errorf("find dmx's own executable to start nodes: %w", err)
		}
		cfg.Command = func() *exec.Cmd { return exec.Command(exe, "node") }
	}
	election := cfg.Spec.Kind == algo.Election
	if election && cfg.Duration == 0 {
		cfg.Duration = 2 * time.Second
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return LaunchResult{}, fmt.Errorf("make the run's key: %w", err)
	}
	wl := cfg.Workload
	wl.normalize()
	if wl.Contention == ContentionNone && wl.Slot == 0 {
		// Loopback delivers in well under a millisecond; the margin is for
		// the scheduler of a busy machine.
		wl.Slot = 20*time.Millisecond + wl.Hold.Max
	}

	msgs := make(chan nodeMsg, 4096)
	procs := make([]*nodeProc, cfg.N)
	state := make([]*procState, cfg.N)
	incs := make([]int, cfg.N)
	var readers sync.WaitGroup
	started, ended := 0, 0
	killAll := func() {
		for _, p := range procs {
			if p != nil && p.cmd.Process != nil && !p.exited {
				p.cmd.Process.Kill()
			}
		}
	}
	send := func(p *nodeProc, m toNode) {
		b, _ := json.Marshal(m)
		p.stdin.Write(append(b, '\n'))
	}
	// spawn starts incarnation inc of process i.
	spawn := func(i, inc int, c *nodeConfig) error {
		cmd := cfg.Command()
		// Own process group: Ctrl-C reaches the runner only, which stops the
		// nodes in order; Pdeathsig: nodes die with the runner.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		cmd.Stderr = &prefixWriter{w: cfg.Stderr, prefix: fmt.Sprintf("P%d: ", i)}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start node P%d: %w", i, err)
		}
		p := &nodeProc{id: i, inc: inc, cmd: cmd, stdin: stdin}
		procs[i] = p
		started++
		readers.Add(1)
		go func() {
			defer readers.Done()
			sc := bufio.NewScanner(stdout)
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			// A line that does not parse is held back one line: if it was
			// the last, the node was killed while writing it (a write of
			// one event is atomic below 4 KiB, but a kill can still land
			// between two writes of a longer line), and what it emitted
			// before is whole.
			var bad error
			for sc.Scan() {
				if bad != nil {
					msgs <- nodeMsg{p: p, m: &fromNode{Error: bad.Error()}}
					bad = nil
				}
				var m fromNode
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					bad = fmt.Errorf("P%d sent a line the runner cannot read: %v", i, err)
					continue
				}
				msgs <- nodeMsg{p: p, m: &m}
			}
			if bad != nil {
				fmt.Fprintf(cfg.Stderr, "dmx: P%d's output ends in a cut line (killed while writing it); dropped\n", i)
			}
			err := sc.Err()
			if err == nil {
				err = io.EOF
			}
			msgs <- nodeMsg{p: p, err: err}
		}()
		send(p, toNode{Config: c})
		return nil
	}
	config := func(i int) *nodeConfig {
		port := 0
		if cfg.BasePort != 0 {
			port = cfg.BasePort + i
		}
		return &nodeConfig{ID: i, N: cfg.N, Algo: cfg.Spec.Name, Params: cfg.Params, Seed: cfg.Seed, Workload: wl, Key: key, Port: port}
	}
	handleEnd := func(p *nodeProc) {
		if p.exited {
			return
		}
		p.exited = true
		ended++
		p.waitErr = p.cmd.Wait()
	}
	// abort kills every node started so far and reaps it.
	abort := func() {
		killAll()
		go func() { readers.Wait(); close(msgs) }()
		for m := range msgs {
			if m.err != nil {
				handleEnd(m.p)
			}
		}
	}
	for i := range procs {
		state[i] = &procState{exits: map[string]int{}, saved: map[string]algo.Msg{}}
		state[i].last.Proc = i
		if err := spawn(i, 0, config(i)); err != nil {
			abort()
			return LaunchResult{}, err
		}
	}

	res := LaunchResult{Complete: true}
	var failure error

	// Phase 1: every node reports its address.
	addrs := make([]string, cfg.N)
	got := 0
	hello := time.NewTimer(15 * time.Second)
	defer hello.Stop()
	for got < cfg.N && failure == nil {
		select {
		case m := <-msgs:
			switch {
			case m.err != nil:
				handleEnd(m.p)
				failure = fmt.Errorf("node P%d ended before it was ready: %v", m.p.id, exitReason(m.p))
			case m.m.Error != "":
				failure = errors.New(m.m.Error)
			case m.m.Hello != "":
				addrs[m.p.id] = m.m.Hello
				state[m.p.id].addr = m.m.Hello
				got++
			}
		case <-hello.C:
			failure = errors.New("nodes did not report their UDP addresses within 15s")
		case <-ctx.Done():
			failure = fmt.Errorf("interrupted before the run started: %w", context.Cause(ctx))
		}
	}
	if failure != nil {
		abort()
		return LaunchResult{Status: "failed: " + failure.Error()}, failure
	}
	t0 := time.Now()
	for _, p := range procs {
		send(p, toNode{Peers: addrs, T0: t0.UnixNano()})
	}

	// Phase 2: the run. One goroutine (this one) records every event.
	total := 0
	for i := 0; i < cfg.N; i++ {
		w := wl.For(i)
		total += w.Entries * len(w.Resources)
	}
	if cfg.Spec.Kind != algo.MutualExclusion {
		total = 0
	}
	prog := Progress{Total: total}
	lastEvent := time.Now()
	var allDoneSince time.Time // when every live node last became done
	stopping := false
	leader := -1
	stopAll := func(status string, complete bool) {
		if stopping {
			return
		}
		stopping = true
		if res.Status == "" {
			res.Status, res.Complete = status, complete
		}
		for _, p := range procs {
			if !p.exited && !p.stopSent {
				p.stopSent = true
				send(p, toNode{Stop: true})
			}
		}
	}
	fail := func(err error) {
		if failure == nil {
			failure = err
		}
		stopAll("failed: "+err.Error(), false)
	}
	record := func(ev *trace.Event) {
		if err := rec.Record(ev); err != nil {
			fail(err)
		}
		res.Events++
		prog.Events = res.Events
		lastEvent = time.Now()
	}

	// Faults fire from timers into this loop.
	type firing struct{ f Fault }
	faults := make(chan firing, len(cfg.Faults))
	pendingFaults := len(cfg.Faults)
	// One goroutine fires them in time order, and those due at the same
	// time in the order given (as the simulator does): separate timers
	// could fire a recover:1@T before the crash:1@T it follows.
	sorted := append([]Fault(nil), cfg.Faults...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].At < sorted[j].At })
	quitFaults := make(chan struct{})
	defer close(quitFaults)
	go func() {
		for _, f := range sorted {
			t := time.NewTimer(f.At - time.Since(t0))
			select {
			case <-t.C:
				faults <- firing{f} // buffered for every fault: never blocks
			case <-quitFaults:
				t.Stop()
				return
			}
		}
	}()
	inject := func(f Fault) {
		pendingFaults--
		if stopping {
			return
		}
		i := f.Proc
		if i == Leader {
			if i = leader; i < 0 {
				fmt.Fprintf(cfg.Stderr, "dmx: fault %s: no leader yet; nothing crashed\n", f)
				return
			}
		}
		p := procs[i]
		switch f.Kind {
		case FaultCrash:
			if !p.exited && p.fault == "" {
				p.fault = f.String()
				p.killedAt = time.Now().UnixNano()
				p.cmd.Process.Kill()
			}
		case FaultRecover:
			if !p.exited {
				if p.fault != "" && p.recoverAfter == nil {
					// Killed, but its end is not in yet: recover it then.
					p.recoverAfter = &f
					pendingFaults++
				}
				return // otherwise it is up: nothing to recover
			}
			st := state[i]
			incs[i]++
			c := config(i)
			if _, port, err := net.SplitHostPort(st.addr); err == nil {
				// The same address, so that peers need no news of where.
				fmt.Sscan(port, &c.Port)
			}
			c.Inc, c.Incs = incs[i], append([]int(nil), incs...)
			left := map[string]int{}
			own := wl.For(i)
			for _, r := range own.Resources {
				left[r] = own.Entries - st.exits[r]
			}
			c.Resume = &Resume{Seq: st.last.Seq, Lamport: st.last.Lamport, VC: st.last.VC.Clone(), Sent: st.sent, Saved: st.saved, Left: left}
			st.done = false
			if err := spawn(i, incs[i], c); err != nil {
				fail(err)
				return
			}
			for _, q := range procs {
				if q.id != i && !q.exited {
					send(q, toNode{Restarted: &restarted{Proc: i, Inc: incs[i]}})
				}
			}
		}
	}

	var stopDeadline <-chan time.Time
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	lastProgress := time.Time{}
	ctxDone := ctx.Done()
	for ended < started || (pendingFaults > 0 && !stopping) {
		select {
		case m := <-msgs:
			p, st := m.p, state[m.p.id]
			switch {
			case m.err != nil:
				handleEnd(p)
				if !p.stopSent || p.fault != "" {
					// Not asked to stop, or killed by a fault before it was:
					// the node died. Its crash is recorded on its behalf,
					// after its last event.
					crash := st.last
					crash.Seq++
					crash.Kind = trace.KindCrash
					crash.Lamport++
					crash.VC = crash.VC.Clone()
					if len(crash.VC) == cfg.N {
						crash.VC[p.id]++
					} else {
						crash.VC = nil
					}
					// A fault's crash happened when the SIGKILL was sent;
					// an unexpected death is known when its pipe ends,
					// which on a loaded machine can be much later. Either
					// way it comes after the process's last event.
					crash.Wall = time.Now().UnixNano()
					if p.killedAt != 0 {
						crash.Wall = p.killedAt
					}
					if crash.Wall <= st.last.Wall {
						crash.Wall = st.last.Wall + 1
					}
					crash.Msg, crash.MsgType, crash.Peer, crash.Resource = 0, "", trace.NoPeer, ""
					crash.Detail = trace.EncodeDetail(trace.Crash{Reason: exitReason(p), Fault: p.fault})
					record(&crash)
					st.last = crash
					if f := p.recoverAfter; f != nil {
						p.recoverAfter = nil
						inject(*f)
					}
					if p.fault == "" && res.Status == "" {
						res.Status = fmt.Sprintf("node P%d died: %s", p.id, exitReason(p))
					}
				}
			case m.m.Ev != nil:
				var ev trace.Event
				if err := trace.ParseWire(m.m.Ev, &ev); err != nil {
					fail(fmt.Errorf("node P%d: %w", p.id, err))
					continue
				}
				if ev.Proc != p.id {
					fail(fmt.Errorf("node P%d sent an event of P%d", p.id, ev.Proc))
					continue
				}
				record(&ev)
				st.last = ev
				st.last.VC = ev.VC.Clone()
				switch ev.Kind {
				case trace.KindCSExit:
					prog.Entries++
					st.exits[ev.Resource]++
				case trace.KindSend:
					if k := ev.Msg & 0xffffffff; k > st.sent {
						st.sent = k
					}
				case trace.KindLeader:
					if ev.Peer >= 0 {
						leader = ev.Peer
					}
				case trace.KindInternal:
					// Notes, errors and details the runner cannot read are
					// recorded and not its business.
					switch d, _ := ev.Details(); d := d.(type) {
					case trace.Persist:
						st.saved[ev.Resource] = algo.Msg(d.State)
					case trace.Multicast:
						if d.Entry > 0 && cfg.Spec.Kind == algo.Multicast {
							// A multicast algorithm's entry is a multicast.
							st.exits[d.Resource]++
						}
					}
				}
			case m.m.Done:
				st.done = true
			case m.m.Hello != "":
				st.addr = m.m.Hello // a restarted node
				addrsNow := make([]string, cfg.N)
				for i := range addrsNow {
					addrsNow[i] = state[i].addr
				}
				send(p, toNode{Peers: addrsNow, T0: t0.UnixNano()})
			case m.m.Stats != nil:
				s := m.m.Stats
				res.Transport.Malformed += s.Malformed
				res.Transport.BadMAC += s.BadMAC
				res.Transport.WrongPeer += s.WrongPeer
				res.Transport.Stale += s.Stale
				res.Transport.Duplicate += s.Duplicate
				res.Transport.Retransmits += s.Retransmits
				res.Transport.Abandoned += s.Abandoned
			case m.m.Error != "":
				fail(fmt.Errorf("node P%d: %s", p.id, m.m.Error))
			}
		case fi := <-faults:
			inject(fi.f)
		case <-ctxDone:
			ctxDone = nil
			status := "interrupted"
			if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
				status = "cut short: " + cause.Error()
			}
			stopAll(status, false)
		case now := <-tick.C:
			if cfg.Progress != nil && now.Sub(lastProgress) >= 200*time.Millisecond {
				lastProgress = now
				cfg.Progress(prog)
			}
			quiet := now.Sub(lastEvent)
			live, done := 0, 0
			for i, p := range procs {
				if !p.exited {
					live++
					if state[i].done {
						done++
					}
				}
			}
			if done >= live && live > 0 {
				if allDoneSince.IsZero() {
					allDoneSince = now
				}
			} else {
				allDoneSince = time.Time{}
			}
			switch {
			case stopping:
			case election && now.Sub(t0) >= cfg.Duration:
				stopAll(fmt.Sprintf("ran for %v", cfg.Duration), true)
			case election:
			case pendingFaults > 0:
			case done >= live && (quiet >= cfg.Linger || now.Sub(allDoneSince) >= 5*cfg.Linger):
				// Quiet, or as quiet as it gets: a token ring's token
				// circulates for ever.
				stopAll("every workload finished", true)
			case quiet >= cfg.Stall:
				stopAll(fmt.Sprintf("stalled: no event for %v while %d of %d nodes had not finished", cfg.Stall, live-done, cfg.N), true)
			}
			if stopping && stopDeadline == nil {
				stopDeadline = time.After(5 * time.Second)
			}
		case <-stopDeadline:
			// Nodes that do not stop when told are killed; what they
			// recorded so far is kept.
			killAll()
			stopDeadline = nil
		}
	}
	readers.Wait()
	if cfg.Progress != nil {
		cfg.Progress(prog)
	}
	return res, failure
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

package runner

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

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
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	exited   bool // its stdout reached EOF
	stopSent bool
	last     trace.Event // its last event, to stamp a crash recorded on its behalf
	waitErr  error
}

type nodeMsg struct {
	id  int
	m   *fromNode
	err error // non-nil: the pipe ended (io.EOF) or broke
}

// Launch runs cfg as N node processes and records every event they emit
// through rec, from one goroutine. It returns when the run is over: every
// workload finished (and the network went quiet), the run stalled, a node
// failed, or ctx was cancelled (Ctrl-C, --duration), in which case the
// result is marked incomplete. Events recorded before any of these are
// never lost.
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
	var readers sync.WaitGroup
	killAll := func() {
		for _, p := range procs {
			if p != nil && p.cmd.Process != nil && !p.exited {
				p.cmd.Process.Kill()
			}
		}
	}
	for i := range procs {
		cmd := cfg.Command()
		// Own process group: Ctrl-C reaches the runner only, which stops the
		// nodes in order; Pdeathsig: nodes die with the runner.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		cmd.Stderr = &prefixWriter{w: cfg.Stderr, prefix: fmt.Sprintf("P%d: ", i)}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			killAll()
			return LaunchResult{}, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			killAll()
			return LaunchResult{}, err
		}
		if err := cmd.Start(); err != nil {
			killAll()
			return LaunchResult{}, fmt.Errorf("start node P%d: %w", i, err)
		}
		p := &nodeProc{id: i, cmd: cmd, stdin: stdin}
		p.last.Proc = i
		procs[i] = p
		readers.Add(1)
		go func(id int, r io.Reader) {
			defer readers.Done()
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			for sc.Scan() {
				var m fromNode
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					msgs <- nodeMsg{id: id, err: fmt.Errorf("P%d sent a line the runner cannot read: %v", id, err)}
					continue
				}
				msgs <- nodeMsg{id: id, m: &m}
			}
			err := sc.Err()
			if err == nil {
				err = io.EOF
			}
			msgs <- nodeMsg{id: id, err: err}
		}(i, stdout)
	}
	send := func(p *nodeProc, m toNode) {
		b, _ := json.Marshal(m)
		p.stdin.Write(append(b, '\n'))
	}
	for i, p := range procs {
		port := 0
		if cfg.BasePort != 0 {
			port = cfg.BasePort + i
		}
		send(p, toNode{Config: &nodeConfig{ID: i, N: cfg.N, Algo: cfg.Spec.Name, Params: cfg.Params, Seed: cfg.Seed, Workload: wl, Key: key, Port: port}})
	}

	res := LaunchResult{Complete: true}
	var failure error
	var ended int
	handleEnd := func(m nodeMsg) {
		p := procs[m.id]
		if p.exited {
			return
		}
		p.exited = true
		ended++
		p.waitErr = p.cmd.Wait()
	}

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
				handleEnd(m)
				failure = fmt.Errorf("node P%d ended before it was ready: %v", m.id, exitReason(procs[m.id]))
			case m.m.Error != "":
				failure = errors.New(m.m.Error)
			case m.m.Hello != "":
				addrs[m.id] = m.m.Hello
				got++
			}
		case <-hello.C:
			failure = errors.New("nodes did not report their UDP addresses within 15s")
		case <-ctx.Done():
			failure = fmt.Errorf("interrupted before the run started: %w", context.Cause(ctx))
		}
	}
	if failure != nil {
		killAll()
		go func() { readers.Wait(); close(msgs) }()
		for m := range msgs {
			if m.err != nil {
				handleEnd(m)
			}
		}
		return LaunchResult{Status: "failed: " + failure.Error()}, failure
	}
	for _, p := range procs {
		send(p, toNode{Peers: addrs})
	}

	// Phase 2: the run. One goroutine (this one) records every event.
	total := cfg.N * wl.Entries * len(wl.Resources)
	if cfg.Spec.Kind != algo.MutualExclusion {
		total = 0
	}
	var prog Progress
	prog.Total = total
	done := 0
	lastEvent := time.Now()
	stopping := false
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
	var stopDeadline <-chan time.Time
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	lastProgress := time.Time{}
	ctxDone := ctx.Done()
	for ended < cfg.N {
		select {
		case m := <-msgs:
			switch {
			case m.err != nil:
				p := procs[m.id]
				handleEnd(m)
				if !p.stopSent {
					// Not asked to stop: the node died (killed, or crashed).
					// Its crash is recorded on its behalf, after its last event.
					crash := p.last
					crash.Seq++
					crash.Kind = trace.KindCrash
					crash.Lamport++
					crash.VC = crash.VC.Clone()
					if len(crash.VC) == cfg.N {
						crash.VC[m.id]++
					} else {
						crash.VC = nil
					}
					crash.Wall = time.Now().UnixNano()
					crash.Msg, crash.MsgType, crash.Peer, crash.Resource = 0, "", trace.NoPeer, ""
					crash.Detail, _ = json.Marshal(map[string]string{"reason": exitReason(p)})
					if err := rec.Record(&crash); err != nil && failure == nil {
						failure = err
					}
					res.Events++
					p.last = crash
					if res.Status == "" {
						res.Status = fmt.Sprintf("node P%d died: %s", m.id, exitReason(p))
					}
				}
			case m.m.Ev != nil:
				ev := m.m.Ev.event()
				if ev.Proc != m.id {
					failure = fmt.Errorf("node P%d sent an event of P%d", m.id, ev.Proc)
					stopAll("failed", false)
					continue
				}
				if err := rec.Record(&ev); err != nil {
					if failure == nil {
						failure = err
					}
					stopAll("failed: "+err.Error(), false)
				}
				procs[m.id].last = ev
				res.Events++
				prog.Events = res.Events
				if ev.Kind == trace.KindCSExit {
					prog.Entries++
				}
				lastEvent = time.Now()
			case m.m.Done:
				done++
			case m.m.Stats != nil:
				s := m.m.Stats
				res.Transport.Malformed += s.Malformed
				res.Transport.BadMAC += s.BadMAC
				res.Transport.WrongPeer += s.WrongPeer
				res.Transport.Duplicate += s.Duplicate
				res.Transport.Retransmits += s.Retransmits
			case m.m.Error != "":
				if failure == nil {
					failure = fmt.Errorf("node P%d: %s", m.id, m.m.Error)
				}
				stopAll("failed: "+m.m.Error, false)
			}
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
			live := 0
			for _, p := range procs {
				if !p.exited {
					live++
				}
			}
			switch {
			case stopping:
			case done >= live && quiet >= cfg.Linger:
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
			return "killed by " + ws.Signal().String()
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

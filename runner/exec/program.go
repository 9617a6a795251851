package exec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Limits on what a program may write answering one input. Beyond them it
// is flooding: it is stopped, and the run goes on without it.
const (
	maxLine  = 1 << 20 // bytes of one output line
	maxLines = 10000   // output lines (stdout) answering one input
	maxNotes = 10000   // stderr lines answering one input
	maxNote  = 4096    // bytes of a stderr line kept in the trace (the rest is cut)
	maxBody  = 32 << 10
	// closeGrace is how long a program that is let go (the run is over:
	// its stdin closed) may take to exit before it is killed.
	closeGrace = 500 * time.Millisecond
)

// program is one running foreign program: its process and the parent's
// ends of its three pipes, read and written without blocking (poll), so
// that one goroutine can feed it, read its answer and its stderr at once,
// and give up at a deadline.
type program struct {
	cmd    *osexec.Cmd
	pid    int // read once: never taken from cmd after it is reaped
	stdin  int // -1 once closed
	stdout int
	stderr int
	out    []byte // stdout read but not yet taken as lines
	errb   []byte // stderr read but not yet taken as lines
	outEOF bool
	errEOF bool
	exited bool // reaped
	status string
}

// start starts cmdline through the shell. own puts it in a process group
// of its own (the simulator: a crash signals the group); otherwise it
// stays in its parent's, which the runner of dmx run signals (a node
// process and its program are killed and stopped together).
func start(cmdline string, own bool, env []string) (*program, error) {
	var fds [3][2]int
	made := 0
	closeAll := func() {
		for i := 0; i < made; i++ {
			unix.Close(fds[i][0])
			unix.Close(fds[i][1])
		}
	}
	for i := range fds {
		if err := unix.Pipe2(fds[i][:], unix.O_CLOEXEC); err != nil {
			closeAll()
			return nil, fmt.Errorf("make a pipe: %w", err)
		}
		made++
	}
	// The child's ends stay blocking: programs read and write as usual.
	childIn := os.NewFile(uintptr(fds[0][0]), "stdin")
	childOut := os.NewFile(uintptr(fds[1][1]), "stdout")
	childErr := os.NewFile(uintptr(fds[2][1]), "stderr")
	p := &program{stdin: fds[0][1], stdout: fds[1][0], stderr: fds[2][0]}
	for _, fd := range []int{p.stdin, p.stdout, p.stderr} {
		if err := unix.SetNonblock(fd, true); err != nil {
			closeAll()
			return nil, fmt.Errorf("pipe: %w", err)
		}
	}
	cmd := osexec.Command("/bin/sh", "-c", cmdline)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = childIn, childOut, childErr
	cmd.Env = env
	// Pdeathsig: a program dies with the process that runs it, even
	// when that one is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: own, Pdeathsig: syscall.SIGKILL}
	err := cmd.Start()
	childIn.Close()
	childOut.Close()
	childErr.Close()
	if err != nil {
		unix.Close(p.stdin)
		unix.Close(p.stdout)
		unix.Close(p.stderr)
		return nil, fmt.Errorf("start %q: %w", cmdline, err)
	}
	p.cmd, p.pid = cmd, cmd.Process.Pid
	return p, nil
}

// errTimeout: the program did not answer by the deadline.
var errTimeout = errors.New("deadline")

// errFlood: the program wrote more than the limits allow for one input.
type errFlood struct{ what string }

func (e *errFlood) Error() string { return e.what }

// exchange writes line (with its newline) to the program and reads what
// it writes until line(out) says it has answered (done), the program's
// output ends (outEOF), or the deadline passes (errTimeout). Stdout lines
// go to line in the order written; stderr lines to note. It never blocks
// past the deadline, and reads stderr while it writes and waits, so that
// a program writing much to either never stalls.
func (p *program) exchange(in []byte, deadline time.Time, line func([]byte) (done bool, err error), note func([]byte) error) error {
	pending := in
	lines, notes := 0, 0
	// takeOut hands the complete lines read so far to line.
	takeOut := func() (bool, error) {
		for {
			i := bytes.IndexByte(p.out, '\n')
			if i < 0 {
				if len(p.out) > maxLine {
					return false, &errFlood{fmt.Sprintf("an output line longer than %d bytes", maxLine)}
				}
				return false, nil
			}
			l := p.out[:i]
			p.out = p.out[i+1:]
			if lines++; lines > maxLines {
				return false, &errFlood{fmt.Sprintf("more than %d output lines answering one input", maxLines)}
			}
			done, err := line(bytes.TrimRight(l, "\r"))
			if err != nil || done {
				return done, err
			}
		}
	}
	takeErr := func(final bool) error { return p.takeErr(final, &notes, note) }
	for {
		// What is at hand first: a line read earlier may be the answer.
		if done, err := takeOut(); err != nil || done {
			if err == nil {
				// Whatever it wrote on stderr before it answered is in
				// the pipe now: it comes with this answer.
				p.drainErr()
				err = takeErr(false)
			}
			return err
		}
		if err := takeErr(false); err != nil {
			return err
		}
		if p.outEOF {
			p.drainErr()
			return takeErr(true)
		}
		fds := make([]unix.PollFd, 0, 3)
		fds = append(fds, unix.PollFd{Fd: int32(p.stdout), Events: unix.POLLIN})
		if !p.errEOF {
			fds = append(fds, unix.PollFd{Fd: int32(p.stderr), Events: unix.POLLIN})
		}
		if len(pending) > 0 && p.stdin >= 0 {
			fds = append(fds, unix.PollFd{Fd: int32(p.stdin), Events: unix.POLLOUT})
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return errTimeout
		}
		ms := int(wait / time.Millisecond)
		if ms == 0 {
			ms = 1
		}
		if _, err := unix.Poll(fds, ms); err != nil && err != unix.EINTR {
			return fmt.Errorf("poll: %w", err)
		}
		for _, f := range fds {
			if f.Revents == 0 {
				continue
			}
			switch int(f.Fd) {
			case p.stdin:
				n, err := unix.Write(p.stdin, pending)
				switch {
				case n > 0:
					pending = pending[n:]
				case err == unix.EAGAIN || err == unix.EINTR:
				case err != nil:
					// It closed its stdin (or died): what it wrote
					// still counts; its output's end will say more.
					pending = nil
				}
			case p.stdout:
				p.out, p.outEOF = readSome(p.stdout, p.out)
			case p.stderr:
				p.errb, p.errEOF = readSome(p.stderr, p.errb)
			}
		}
	}
}

// takeErr hands the complete stderr lines read so far to note (with
// final, the last one too, unended), a line longer than maxLine as its
// head; notes counts them against maxNotes.
func (p *program) takeErr(final bool, notes *int, note func([]byte) error) error {
	for {
		i := bytes.IndexByte(p.errb, '\n')
		if i < 0 {
			if final && len(p.errb) > 0 {
				i = len(p.errb)
			} else {
				if len(p.errb) > maxLine {
					// A line without end: keep its head as a note.
					i = maxLine
				} else {
					return nil
				}
			}
		}
		l := p.errb[:i]
		if i < len(p.errb) {
			p.errb = p.errb[i+1:]
		} else {
			p.errb = p.errb[:0]
		}
		if *notes++; *notes > maxNotes {
			return &errFlood{fmt.Sprintf("more than %d stderr lines answering one input", maxNotes)}
		}
		if err := note(bytes.TrimRight(l, "\r")); err != nil {
			return err
		}
	}
}

// readSome reads what fd has at hand onto b; eof says the pipe ended.
func readSome(fd int, b []byte) ([]byte, bool) {
	var buf [64 << 10]byte
	for {
		n, err := unix.Read(fd, buf[:])
		switch {
		case n > 0:
			b = append(b, buf[:n]...)
			if n < len(buf) {
				return b, false
			}
		case n == 0 && err == nil:
			return b, true
		case err == unix.EINTR:
		case err == unix.EAGAIN:
			return b, false
		default:
			return b, true
		}
	}
}

// drainErr reads what stderr has at hand, without waiting.
func (p *program) drainErr() {
	if !p.errEOF {
		p.errb, p.errEOF = readSome(p.stderr, p.errb)
	}
}

// pending reads what the program wrote since it last answered, without
// waiting: stdout that no input asked for, and stderr.
func (p *program) pending() {
	if !p.outEOF {
		p.out, p.outEOF = readSome(p.stdout, p.out)
	}
	p.drainErr()
}

// finishErr waits a little for the rest of a dead program's stderr (its
// last words: a traceback), until the pipe ends or wait passes.
func (p *program) finishErr(wait time.Duration) {
	end := time.Now().Add(wait)
	for !p.errEOF {
		left := time.Until(end)
		if left <= 0 {
			return
		}
		fds := []unix.PollFd{{Fd: int32(p.stderr), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, int(left/time.Millisecond)+1); err != nil && err != unix.EINTR {
			return
		}
		p.drainErr()
	}
}

// kill ends the program at once: SIGKILL to its process group when it has
// one of its own (else to it), and reaps it.
func (p *program) kill() {
	if p.exited {
		return
	}
	pid := p.pid
	if pid <= 1 {
		return // never: a pid is read at the start
	}
	if p.cmd.SysProcAttr != nil && p.cmd.SysProcAttr.Setpgid {
		syscall.Kill(-pid, syscall.SIGKILL)
	} else {
		// In the group of the node process, which must live on: the
		// program and what it started, found through /proc, stopped
		// first so that none starts another meanwhile.
		for _, q := range descendants(pid) {
			syscall.Kill(q, syscall.SIGKILL)
		}
	}
	p.cmd.Process.Kill()
	p.reap()
}

// descendants returns pid's descendants (Linux: /proc/PID/task/TID/children).
func descendants(pid int) []int {
	var out []int
	todo := []int{pid}
	for len(todo) > 0 && len(out) < 10000 {
		q := todo[0]
		todo = todo[1:]
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", q))
		for _, t := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", q, t.Name()))
			if err != nil {
				continue
			}
			for _, f := range bytes.Fields(b) {
				var c int
				if _, err := fmt.Sscan(string(f), &c); err == nil && c > 0 {
					syscall.Kill(c, syscall.SIGSTOP)
					out = append(out, c)
					todo = append(todo, c)
				}
			}
		}
	}
	return out
}

// reap waits for the program's end and notes its status.
func (p *program) reap() {
	if p.exited {
		return
	}
	p.exited = true
	err := p.cmd.Wait()
	p.status = exitStatus(p.cmd, err)
}

// wait waits up to d for the program to exit by itself; it reports
// whether it did (and then reaps it).
func (p *program) wait(d time.Duration) bool {
	if p.exited {
		return true
	}
	end := time.Now().Add(d)
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		if pid == p.pid || err == syscall.ECHILD {
			// Reaped here: cmd.Wait would find nothing, so the status
			// is read from ws.
			p.exited = true
			p.status = waitStatus(ws)
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// close lets the program go: its stdin closed (a program that reads to
// the end stops there), a little time to exit, then SIGKILL. With crash,
// SIGKILL at once.
func (p *program) close(crash bool) {
	if p.stdin >= 0 {
		unix.Close(p.stdin)
		p.stdin = -1
	}
	if !crash && !p.wait(closeGrace) {
		crash = true
	}
	if crash {
		p.kill()
	} else if p.cmd.SysProcAttr != nil && p.cmd.SysProcAttr.Setpgid {
		// It exited: what it left running in its group goes too.
		syscall.Kill(-p.pid, syscall.SIGKILL)
	}
	if p.stdout >= 0 {
		unix.Close(p.stdout)
		unix.Close(p.stderr)
		p.stdout, p.stderr = -1, -1
	}
}

func exitStatus(cmd *osexec.Cmd, err error) string {
	if ps := cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
			return waitStatus(ws)
		}
		return ps.String()
	}
	if err != nil {
		return err.Error()
	}
	return "exited"
}

func waitStatus(ws syscall.WaitStatus) string {
	switch {
	case ws.Signaled():
		return "killed by " + unix.SignalName(ws.Signal())
	case ws.Exited():
		return fmt.Sprintf("exit status %d", ws.ExitStatus())
	}
	return fmt.Sprintf("wait status %#x", uint32(ws))
}

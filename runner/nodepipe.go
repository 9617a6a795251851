package runner

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// A node writes what it records to the runner at every safe point,
// thousands of times a second under load. Were the runner waiting on the
// pipe (as the runtime's poller does for every file it watches), each of
// those writes would wake it: a wake-up the writing node pays for in its
// system call (about a twelfth of a node's CPU), and a thread woken in the
// runner that competes for a core with the node the write's datagrams are
// about to wake. So the runner reads a node's pipe by polling it: a read
// that finds nothing sleeps readPace and looks again, and a write to a
// pipe nobody waits on wakes nobody. The pipe (pipeSize) holds far more
// than a node writes in that time, so the node never waits for it; the
// runner's reactions to events (a pause's SIGSTOP, a crash on an event,
// the end of the workloads) come at most readPace later.

// readPace is how long the runner waits before it looks again at a node's
// pipe that had nothing to read.
const readPace = time.Millisecond

// pipeSize is the capacity asked for a node's pipe (Linux grants up to
// /proc/sys/fs/pipe-max-size, 1 MiB by default, to anyone).
const pipeSize = 1 << 20

// polledPipe is the runner's end of a node's output pipe, read by polling.
type polledPipe struct{ fd int }

// newNodePipe makes a node's output pipe: the runner's end, and the end
// the node's process writes (its standard output), which the runner
// closes once the process has started.
func newNodePipe() (*polledPipe, *os.File, error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, fmt.Errorf("node pipe: %w", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("node pipe: %w", err)
	}
	unix.FcntlInt(uintptr(fds[0]), unix.F_SETPIPE_SZ, pipeSize) // a smaller pipe only makes the node wait sooner
	return &polledPipe{fd: fds[0]}, os.NewFile(uintptr(fds[1]), "node-output"), nil
}

// Read reads what is in the pipe, waiting for something by polling; it
// returns io.EOF once the node's end is closed (the process ended) and
// everything it wrote was read.
func (p *polledPipe) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(p.fd, b)
		switch {
		case err == unix.EINTR:
		case err == unix.EAGAIN:
			time.Sleep(readPace)
		case err != nil:
			return 0, fmt.Errorf("read node pipe: %w", err)
		case n == 0:
			return 0, io.EOF
		default:
			return n, nil
		}
	}
}

// Close closes the runner's end.
func (p *polledPipe) Close() error { return unix.Close(p.fd) }

package udp

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
// than a node writes in that time, so that a busy node does not wait for
// it even when the runner falls behind for a while (its trace writer, a
// loaded machine); the runner's reactions to events (a pause's SIGSTOP, a
// crash on an event, the end of the workloads) come at most readPace
// later.

// readPace is how long the runner waits before it looks again at a node's
// pipe that had nothing to read.
const readPace = time.Millisecond

// pipeSize is the capacity asked for the pipe of each of n nodes: up to
// 1 MiB (what Linux grants anyone, /proc/sys/fs/pipe-max-size), less for
// many nodes, so that a run's pipes take at most 16 MiB of the user's pipe
// quota (pipe-user-pages-soft, 64 MiB by default: beyond it new pipes get
// a page or two); 0 keeps Linux's 64 KiB.
func pipeSize(n int) int {
	size := min(1<<20, (16<<20)/max(n, 1))
	if size <= 64<<10 {
		return 0
	}
	return size
}

// polledPipe is the runner's end of a node's output pipe, read by polling.
type polledPipe struct{ fd int }

// newNodePipe makes a node's output pipe of size bytes (0: the default):
// the runner's end, and the end the node's process writes (its standard
// output), which the runner closes once the process has started.
func newNodePipe(size int) (*polledPipe, *os.File, error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, fmt.Errorf("node pipe: %w", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("node pipe: %w", err)
	}
	if size > 0 {
		unix.FcntlInt(uintptr(fds[0]), unix.F_SETPIPE_SZ, size) // a smaller pipe only makes the node wait sooner
	}
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

package netns

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// nsDir is where named network namespaces live (iproute2's convention:
// `ip netns list` shows them, `ip netns exec NAME` and `nsenter
// --net=/run/netns/NAME` enter them).
const nsDir = "/run/netns"

// prefix starts the name of every namespace dmx makes: dmx-RUN-hub for a
// run's bridge, dmx-RUN-I for its node I. RUN is the run's own id, so that
// runs at once never share a name and a sweep tells their objects apart.
const prefix = "dmx-"

// nsName is the name of namespace what ("hub" or a node's number) of run
// id.
func nsName(id, what string) string { return prefix + id + "-" + what }

// newNamed makes a new network namespace named name (bound on
// nsDir/name, as `ip netns add` does) and returns an open descriptor of
// it. With lock, the descriptor holds the run's lock (lockRun) before the
// name appears, so that no sweep ever sees the name unlocked. The calling
// goroutine's thread is not touched: the namespace is made on a thread of
// its own, which is never given back.
func newNamed(name string, lock bool) (int, error) {
	path := filepath.Join(nsDir, name)
	type result struct {
		fd  int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// Locked and never unlocked: the thread ends with this goroutine,
		// so no other goroutine ever runs in the namespace it unshared
		// into. (Only a process started from it would care, and none is.)
		runtime.LockOSThread()
		fd, err := func() (int, error) {
			if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
				return -1, fmt.Errorf("make network namespace %s: %w", name, err)
			}
			self := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
			// The namespace's own file: it outlives this thread, and the
			// name bound below opens the same inode, whose lock a sweep
			// tries.
			fd, err := unix.Open(self, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return -1, fmt.Errorf("open network namespace %s: %w", name, err)
			}
			if lock {
				if err := lockRun(fd); err != nil {
					unix.Close(fd)
					return -1, err
				}
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o444)
			for try := 0; errors.Is(err, os.ErrNotExist) && try < 3; try++ {
				// No nsDir (or another run's close just removed it, empty).
				if err = os.Mkdir(nsDir, 0o755); err == nil || errors.Is(err, os.ErrExist) {
					f, err = os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o444)
				}
			}
			if err != nil {
				unix.Close(fd)
				return -1, fmt.Errorf("name network namespace: %w", err)
			}
			f.Close()
			if err := unix.Mount(self, path, "none", unix.MS_BIND, ""); err != nil {
				unix.Close(fd)
				os.Remove(path)
				return -1, fmt.Errorf("name network namespace %s (bind mount on %s): %w", name, path, err)
			}
			return fd, nil
		}()
		ch <- result{fd, err}
	}()
	r := <-ch
	return r.fd, r.err
}

// removeNamed unbinds and removes namespace name. The namespace itself,
// and with it every interface and rule in it, goes when nothing holds it
// any more (its processes ended, its descriptors closed): the kernel
// sees to that. A name already gone is no error.
func removeNamed(name string) error {
	path := filepath.Join(nsDir, name)
	err := unix.Unmount(path, unix.MNT_DETACH)
	if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unbind network namespace %s: %w", name, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove network namespace %s: %w", name, err)
	}
	return nil
}

// removeDir removes nsDir if it is empty: a run that made it leaves no
// trace of itself, not even the directory (iproute2 would leave it).
func removeDir() { os.Remove(nsDir) }

// starter starts processes in network namespaces, from a thread of its
// own: a child inherits the namespaces of the thread that forks it, so
// the thread switches into a node's namespace (setns) and starts the
// node's process there; everything the process opens (the node's UDP
// socket, the sockets of a program of the user's own) is then in the
// namespace.
//
// The thread is locked to the starter's goroutine for good and ends with
// it (close), never running another goroutine in whatever namespace it
// was last switched to. It must live as long as the processes it started:
// they run with Pdeathsig (they die with the runner), which the kernel
// sends when the thread that forked them ends, not the process. The
// launcher reaps every node before the network is closed.
type starter struct {
	reqs chan startReq
}

type startReq struct {
	fd   int
	cmd  *exec.Cmd
	done chan error
}

func newStarter() *starter {
	s := &starter{reqs: make(chan startReq)}
	go func() {
		runtime.LockOSThread() // never unlocked: see starter
		for r := range s.reqs {
			if err := unix.Setns(r.fd, unix.CLONE_NEWNET); err != nil {
				r.done <- fmt.Errorf("enter the node's network namespace: %w", err)
				continue
			}
			r.done <- r.cmd.Start()
		}
	}()
	return s
}

// start starts cmd in the namespace fd names, as cmd.Start does.
func (s *starter) start(fd int, cmd *exec.Cmd) error {
	done := make(chan error, 1)
	s.reqs <- startReq{fd: fd, cmd: cmd, done: done}
	return <-done
}

// close ends the starter's thread: call it once the processes it started
// have ended.
func (s *starter) close() { close(s.reqs) }

// lockRun takes the lock that says a run is alive: an exclusive flock on
// its hub namespace (the nsfs inode, which its name opens too), held until
// the runner ends (the kernel drops it when the process dies, however it
// dies). A sweep that can take the lock knows that the runner that made
// the namespaces is gone.
func lockRun(fd int) error {
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fmt.Errorf("lock the run's namespaces: %w", err)
	}
	return nil
}

// Left is what a sweep removed: the namespaces of runs whose runner
// died without removing them (SIGKILL, a power cut), by run.
type Left struct {
	Runs       []string // the runs' ids
	Namespaces int      // how many namespaces (hubs and nodes)
	// Errors are what could not be removed, and why.
	Errors []string
}

// String says what a sweep removed, for the user.
func (l Left) String() string {
	if len(l.Runs) == 0 && len(l.Errors) == 0 {
		return ""
	}
	var b strings.Builder
	if len(l.Runs) > 0 {
		fmt.Fprintf(&b, "removed what an earlier run left (its runner was killed before it could): %d network namespaces of run %s (%s*, with their interfaces and rules)",
			l.Namespaces, strings.Join(l.Runs, ", "), filepath.Join(nsDir, prefix))
	}
	for _, e := range l.Errors {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e)
	}
	return b.String()
}

// Sweep removes the namespaces of dead runs: every nsDir/dmx-RUN-* whose
// run's hub lock (lockRun) can be taken, or whose hub is gone. Runs alive
// (their runner holds the lock) are left alone. It touches nothing but
// names dmx makes.
func Sweep() Left {
	var left Left
	entries, err := os.ReadDir(nsDir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			left.Errors = append(left.Errors, fmt.Sprintf("read %s: %v", nsDir, err))
		}
		return left
	}
	runs := map[string][]string{}
	for _, e := range entries {
		id, ok := runOf(e.Name())
		if ok {
			runs[id] = append(runs[id], e.Name())
		}
	}
	ids := make([]string, 0, len(runs))
	for id := range runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		names := runs[id]
		hub := nsName(id, "hub")
		if slices.Contains(names, hub) {
			fd, err := unix.Open(filepath.Join(nsDir, hub), unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				continue // gone meanwhile: its runner is removing it
			}
			if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
				unix.Close(fd)
				continue // alive
			}
			// Held until the names are gone, so that two sweeps do not
			// race over them.
			defer unix.Close(fd)
		}
		// The hub goes last, as when a run ends: a run without a hub was
		// killed while it ended.
		sort.Slice(names, func(i, j int) bool { return names[j] == hub })
		removed := 0
		for _, n := range names {
			if err := removeNamed(n); err != nil {
				left.Errors = append(left.Errors, err.Error())
				continue
			}
			removed++
		}
		if removed > 0 {
			left.Runs = append(left.Runs, id)
			left.Namespaces += removed
		}
	}
	if left.Namespaces > 0 {
		// What a dmx run made, if it made the directory too; a directory
		// with anything else in it stays.
		removeDir()
	}
	return left
}

// runOf returns the run id of a namespace name dmx made (dmx-RUN-WHAT).
func runOf(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return "", false
	}
	id, what, ok := strings.Cut(rest, "-")
	if !ok || len(id) != idLen || what == "" || strings.Trim(id, idAlphabet) != "" {
		return "", false
	}
	return id, true
}

// A run's id: idLen characters of idAlphabet, random.
const (
	idLen      = 6
	idAlphabet = "abcdefghijklmnopqrstuvwxyz234567"
)

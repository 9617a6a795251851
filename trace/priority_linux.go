package trace

import "golang.org/x/sys/unix"

// lowerThreadPriority gives the calling OS thread the lowest priority, nice
// 19: it runs when the machine has a core nobody else wants. It returns
// the thread's id. It is a hint; a system that refuses it leaves the
// thread as it was.
func lowerThreadPriority() int {
	tid := unix.Gettid()
	unix.Setpriority(unix.PRIO_PROCESS, tid, 19)
	return tid
}

// restoreThreadPriority gives thread tid (of lowerThreadPriority) its
// normal priority back, if the user may (root, or a raised RLIMIT_NICE):
// an unprivileged user may lower a priority, not raise it again.
func restoreThreadPriority(tid int) {
	if tid != 0 {
		unix.Setpriority(unix.PRIO_PROCESS, tid, 0)
	}
}

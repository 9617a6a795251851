package trace

import "golang.org/x/sys/unix"

// lowerThreadPriority gives the calling OS thread the lowest priority, nice
// 19: it runs when the machine has a core nobody else wants. It is a hint;
// a system that refuses it leaves the thread as it was.
func lowerThreadPriority() {
	unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 19)
}

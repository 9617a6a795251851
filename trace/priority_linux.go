package trace

import "golang.org/x/sys/unix"

// lowerThreadPriority gives the calling OS thread the lowest priority: the
// SCHED_IDLE policy (and nice 19, which a system that refuses the policy
// still gives). It runs when the machine has a core nobody else wants.
// SCHED_IDLE rather than nice 19 alone because Linux counts a core that
// runs only SCHED_IDLE threads as idle when it places a thread that
// wakes: a node woken by a datagram goes to the converter's core at once,
// where with nice 19 it could queue on the other core behind the node that
// woke it (central's median in the default dmx bench, 20 rounds pooled a
// side: 63 % at nice 19, 76 % with SCHED_IDLE). It returns the thread's
// id. It is a hint; a system that refuses it leaves the thread as it was.
func lowerThreadPriority() int {
	tid := unix.Gettid()
	unix.Setpriority(unix.PRIO_PROCESS, tid, 19)
	unix.SchedSetAttr(tid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE, Nice: 19}, 0)
	return tid
}

// restoreThreadPriority gives thread tid (of lowerThreadPriority) its
// normal priority back, if the user may (root, or a raised RLIMIT_NICE):
// an unprivileged user may lower a priority, not raise it again; it may
// still leave SCHED_IDLE for the normal policy at nice 19.
func restoreThreadPriority(tid int) {
	if tid == 0 {
		return
	}
	const normal = 0 // SCHED_OTHER
	if unix.SchedSetAttr(tid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: normal}, 0) != nil {
		unix.SchedSetAttr(tid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: normal, Nice: 19}, 0)
	}
}

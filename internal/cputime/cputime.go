// Package cputime says how much processor time this process has used:
// beside wall time, which depends on what else the machine is doing, the
// CPU time a piece of work took says what it costs. Benchmarks report it
// (cpu-ns/event, cpu-s/op) and runs record it (explore's statistics, a
// node's stats).
package cputime

import (
	"syscall"
	"time"
)

// Self is the CPU time (user and system, every thread's) this process has
// used so far; 0 where the kernel does not say.
func Self() time.Duration { return usage(syscall.RUSAGE_SELF) }

// Children is the CPU time (user and system) of this process's children
// that ended and were waited for.
func Children() time.Duration { return usage(syscall.RUSAGE_CHILDREN) }

func usage(who int) time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// WithChildren is Self and Children together: what work costs that
// programs this process ran (and reaped) did in part.
func WithChildren() time.Duration { return Self() + Children() }

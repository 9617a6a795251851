//go:build !linux

package trace

// lowerThreadPriority does nothing where threads have no priority of their
// own that dmx knows how to set.
func lowerThreadPriority() int { return 0 }

// restoreThreadPriority does nothing either.
func restoreThreadPriority(int) {}

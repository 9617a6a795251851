//go:build !linux

package trace

// lowerThreadPriority does nothing where threads have no priority of their
// own that dmx knows how to set.
func lowerThreadPriority() {}

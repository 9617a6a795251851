package analyze

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/dmxlab/dmx/trace"
)

// csSpan is one critical section: the k-th cs_enter of a process on a
// resource paired with the k-th cs_exit of that process on that resource,
// or with its crash (a crashed process no longer holds anything), or with
// nothing if the run ended first.
type csSpan struct {
	proc        int
	enter, exit trace.Ref // exit.Seq 0: not exited
	crashed     bool      // exit is the process's crash event
	t0, t1      int64     // wall times of enter and exit (t1: end of run if not exited)
	// For mutex-causal: the provisional violations to settle at the
	// section's end, and how many of its resource's crash-ended sections
	// (the first ones) its entry knew the crash of.
	settle      []*causalViolation
	knewCrashes int
	undecided   bool // crash-ended, no wall time: a later entry is undecided against it
}

// String formats the span as "P0 [P0#3..P0#5]", "[P0#3..P0#9 crash]" or
// "[P0#3..no exit]".
func (s *csSpan) String() string {
	switch {
	case s.exit.Seq == 0:
		return fmt.Sprintf("P%d [%v..no exit]", s.proc, s.enter)
	case s.crashed:
		return fmt.Sprintf("P%d [%v..%v crash]", s.proc, s.enter, s.exit)
	}
	return fmt.Sprintf("P%d [%v..%v]", s.proc, s.enter, s.exit)
}

// refs appends the span's events to dst.
func (s *csSpan) refs(dst []trace.Ref) []trace.Ref {
	dst = append(dst, s.enter)
	if s.exit.Seq != 0 {
		dst = append(dst, s.exit)
	}
	return dst
}

// openSpans are the critical sections entered and not yet exited on one
// resource, in the order they were entered. Normally there is at most one.
type openSpans []*csSpan

// close pairs an exit (or crash) of proc with its earliest open span, and
// returns that span, or nil if proc has none open.
func (o *openSpans) close(proc int, exit trace.Ref, wall int64, crashed bool) *csSpan {
	i := slices.IndexFunc(*o, func(s *csSpan) bool { return s.proc == proc })
	if i < 0 {
		return nil
	}
	s := (*o)[i]
	*o = slices.Delete(*o, i, i+1)
	s.exit, s.t1, s.crashed = exit, wall, crashed
	return s
}

// sortedKeys returns the keys of m in order, for deterministic findings.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// entry returns m's entry at k, made (and added reported) if m had none:
// the per-resource state a check makes on a resource's first event.
func entry[K comparable, V any](m map[K]*V, k K) (v *V, added bool) {
	if v = m[k]; v == nil {
		v, added = new(V), true
		m[k] = v
	}
	return v, added
}

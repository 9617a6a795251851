// Package freelist keeps values of one type for reuse. The happens-before
// walk (analyze.HB) and the statistics walk (analyze/stats) each make one
// value per message in flight; reusing the values a receive frees keeps
// their allocations, and the garbage collector's work, to the most
// messages in flight at once.
package freelist

// List is the values kept for reuse, the last kept first out.
type List[T any] []*T

// Get returns a kept value, or a new zero one when none is kept. A kept
// value still holds what it held when it was put: the caller overwrites
// what it uses (and may reuse its slices' storage).
func (l *List[T]) Get() *T {
	if n := len(*l); n > 0 {
		v := (*l)[n-1]
		*l = (*l)[:n-1]
		return v
	}
	return new(T)
}

// Put keeps vs for later Gets.
func (l *List[T]) Put(vs ...*T) { *l = append(*l, vs...) }

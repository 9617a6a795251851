package runner

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// Dist is a duration that is either fixed (Min == Max) or drawn uniformly
// from [Min, Max] with the run's seeded randomness.
type Dist struct {
	Min, Max time.Duration
}

// MaxDuration bounds think, hold and delay times: runs count time in int64
// nanoseconds, and a workload of entries x a century would overflow it.
const MaxDuration = 24 * time.Hour

// Fixed returns a Dist that is always d.
func Fixed(d time.Duration) Dist { return Dist{d, d} }

// Draw returns a value of the distribution.
func (d Dist) Draw(r *rand.Rand) time.Duration {
	if d.Max <= d.Min {
		return d.Min
	}
	return d.Min + time.Duration(r.Uint64N(uint64(d.Max-d.Min)+1))
}

// String formats d the way ParseDist reads it: "5ms" or "1ms-10ms".
func (d Dist) String() string {
	if d.Max <= d.Min {
		return d.Min.String()
	}
	return d.Min.String() + "-" + d.Max.String()
}

// ParseDist reads "5ms" (fixed) or "1ms-10ms" (uniform).
func ParseDist(s string) (Dist, error) {
	lo, hi, ok := strings.Cut(s, "-")
	a, err := time.ParseDuration(strings.TrimSpace(lo))
	if err != nil {
		return Dist{}, fmt.Errorf("duration %q: want e.g. 5ms or 1ms-10ms", s)
	}
	if a < 0 {
		return Dist{}, fmt.Errorf("duration %q: must not be negative", s)
	}
	if !ok {
		return Fixed(a), nil
	}
	b, err := time.ParseDuration(strings.TrimSpace(hi))
	if err != nil || b < a {
		return Dist{}, fmt.Errorf("duration range %q: want MIN-MAX with MIN <= MAX, e.g. 1ms-10ms", s)
	}
	return Dist{a, b}, nil
}

// Set implements pflag.Value.
func (d *Dist) Set(s string) error {
	v, err := ParseDist(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Type implements pflag.Value.
func (d *Dist) Type() string { return "duration[-duration]" }

// Workload is what each node's user does: Entries critical-section entries on
// each of Resources, thinking Think before each request and holding the
// critical section for Hold.
type Workload struct {
	Entries   int      `json:"entries"`
	Resources []string `json:"resources"`
	Think     Dist     `json:"-"`
	Hold      Dist     `json:"-"`
	ThinkS    string   `json:"think"`
	HoldS     string   `json:"hold"`
	// Contention ContentionNone replaces Think by a global schedule of time
	// slots: process i makes its k-th request at the start of slot k*N+i, so
	// that (if Slot is long enough for one request to be served) no two
	// requests are ever pending at once. Stats use such runs to measure the
	// contention-free message counts the seeds give.
	Contention Contention    `json:"contention"`
	Slot       time.Duration `json:"slot"`
	// Nested makes each entry take every resource, one inside the other (a
	// process holds the first while it asks for the second, and so on), in
	// the order Order says, then release them in reverse. Processes that
	// take two resources in opposite orders can deadlock, as seed 001's
	// last section describes.
	Nested bool   `json:"nested,omitempty"`
	Order  string `json:"order,omitempty"` // same (default), reverse-odd, random
	// Procs overrides the workload of single processes (a scenario file's
	// "procs"): their own entries, think and hold times, and resources in
	// their own lock order.
	Procs map[int]ProcWorkload `json:"procs,omitempty"`
}

// ProcWorkload is what one process does differently from the others.
type ProcWorkload struct {
	Entries   *int     `json:"entries,omitempty"`
	Think     string   `json:"think,omitempty"`
	Hold      string   `json:"hold,omitempty"`
	Resources []string `json:"resources,omitempty"` // in this process's lock order
}

// AllResources returns every resource any process uses, in order of first
// mention: each one has an instance of the algorithm at every process.
func (w *Workload) AllResources() []string {
	seen := map[string]bool{}
	var out []string
	add := func(rs []string) {
		for _, r := range rs {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	add(w.Resources)
	ids := make([]int, 0, len(w.Procs))
	for id := range w.Procs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		add(w.Procs[id].Resources)
	}
	if len(out) == 0 {
		out = []string{DefaultResource}
	}
	return out
}

// For returns the workload of process id: the common one with id's
// overrides applied. Validate must have accepted w.
func (w Workload) For(id int) Workload {
	p, ok := w.Procs[id]
	if !ok {
		return w
	}
	if p.Entries != nil {
		w.Entries = *p.Entries
	}
	if p.Think != "" {
		w.Think, _ = ParseDist(p.Think)
	}
	if p.Hold != "" {
		w.Hold, _ = ParseDist(p.Hold)
	}
	if len(p.Resources) > 0 {
		w.Resources = p.Resources
		w.Order = OrderSame // the process's own list is its lock order
	}
	w.ThinkS, w.HoldS = w.Think.String(), w.Hold.String()
	return w
}

// Lock orders of nested workloads.
const (
	OrderSame       = "same"        // every process locks in the listed order: no resource deadlock
	OrderReverseOdd = "reverse-odd" // odd processes lock in reverse order: the classic deadlock
	OrderRandom     = "random"      // each entry draws an order from the seed
)

// Contention selects how requests are timed.
type Contention int

// Contention levels.
const (
	ContentionRandom Contention = iota // think times as Think says
	ContentionNone                     // one request at a time in the whole system
)

// DefaultResource is the resource a workload uses when none is named.
const DefaultResource = "cs"

func (w *Workload) normalize() {
	if len(w.Resources) == 0 {
		w.Resources = []string{DefaultResource}
	}
	w.ThinkS, w.HoldS = w.Think.String(), w.Hold.String()
}

// wire restores the Dists after a JSON round trip.
func (w *Workload) fromWire() error {
	var err error
	if w.Think, err = ParseDist(w.ThinkS); err != nil {
		return err
	}
	w.Hold, err = ParseDist(w.HoldS)
	return err
}

// Validate checks the workload's numbers.
func (w *Workload) Validate() error {
	if w.Entries < 0 {
		return fmt.Errorf("--entries %d: must be 0 or more", w.Entries)
	}
	for _, d := range []struct {
		name string
		v    Dist
	}{{"--think", w.Think}, {"--hold", w.Hold}} {
		if d.v.Max > MaxDuration {
			return fmt.Errorf("%s %v: at most %v (simulated time would overflow)", d.name, d.v, MaxDuration)
		}
	}
	seen := map[string]bool{}
	for _, r := range w.Resources {
		if r == "" {
			return fmt.Errorf("--resources: empty resource name")
		}
		if seen[r] {
			return fmt.Errorf("--resources: %q named twice", r)
		}
		seen[r] = true
	}
	switch w.Order {
	case "", OrderSame, OrderReverseOdd, OrderRandom:
	default:
		return fmt.Errorf("--order %q: want %s, %s or %s", w.Order, OrderSame, OrderReverseOdd, OrderRandom)
	}
	for id, p := range w.Procs {
		if p.Entries != nil && *p.Entries < 0 {
			return fmt.Errorf("process %d: entries %d: must be 0 or more", id, *p.Entries)
		}
		for _, d := range []string{p.Think, p.Hold} {
			if d != "" {
				if _, err := ParseDist(d); err != nil {
					return fmt.Errorf("process %d: %w", id, err)
				}
			}
		}
		seen := map[string]bool{}
		for _, r := range p.Resources {
			if r == "" || seen[r] {
				return fmt.Errorf("process %d: resources %q: empty or repeated name", id, p.Resources)
			}
			seen[r] = true
		}
	}
	return nil
}

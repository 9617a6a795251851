package runner

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Dist is a duration that is either fixed (Min == Max), drawn uniformly
// from [Min, Max], or (Mean set) drawn from the exponential distribution
// of that mean, with the run's seeded randomness.
type Dist struct {
	Min, Max time.Duration
	Mean     time.Duration // exponential when not 0 (Min and Max are then 0)
}

// MaxDuration bounds think, hold and delay times: runs count time in int64
// nanoseconds, and a workload of entries x a century would overflow it.
const MaxDuration = 24 * time.Hour

// Fixed returns a Dist that is always d.
func Fixed(d time.Duration) Dist { return Dist{Min: d, Max: d} }

// Draw returns a value of the distribution.
func (d Dist) Draw(r *rand.Rand) time.Duration {
	if d.Mean > 0 {
		x := r.ExpFloat64() * float64(d.Mean)
		if x > float64(MaxDuration) {
			return MaxDuration
		}
		return time.Duration(x)
	}
	if d.Max <= d.Min {
		return d.Min
	}
	return d.Min + time.Duration(r.Uint64N(uint64(d.Max-d.Min)+1))
}

// String formats d the way ParseDist reads it: "5ms", "1ms-10ms" or
// "exp=20ms".
func (d Dist) String() string {
	if d.Mean > 0 {
		return "exp=" + d.Mean.String()
	}
	if d.Max <= d.Min {
		return d.Min.String()
	}
	return d.Min.String() + "-" + d.Max.String()
}

// ParseDist reads "5ms" (fixed), "1ms-10ms" (uniform) or "exp=20ms"
// (exponential with that mean).
func ParseDist(s string) (Dist, error) {
	if mean, ok := strings.CutPrefix(s, "exp="); ok {
		m, err := time.ParseDuration(strings.TrimSpace(mean))
		if err != nil || m <= 0 {
			return Dist{}, fmt.Errorf("mean %q: want a positive duration, e.g. exp=20ms", mean)
		}
		return Dist{Mean: m}, nil
	}
	lo, hi, ok := strings.Cut(s, "-")
	a, err := time.ParseDuration(strings.TrimSpace(lo))
	if err != nil {
		return Dist{}, fmt.Errorf("duration %q: want e.g. 5ms, 1ms-10ms or exp=20ms", s)
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
	return Dist{Min: a, Max: b}, nil
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
	ContentionHigh                     // no think time: everyone asks again at once
)

var contentionNames = []string{ContentionRandom: "random", ContentionNone: "none", ContentionHigh: "high"}

// String returns the contention's name: random, none or high.
func (c Contention) String() string {
	if c < 0 || int(c) >= len(contentionNames) {
		return "contention(" + strconv.Itoa(int(c)) + ")"
	}
	return contentionNames[c]
}

// Set implements pflag.Value: it reads random, none or high.
func (c *Contention) Set(s string) error {
	for i, n := range contentionNames {
		if s == n {
			*c = Contention(i)
			return nil
		}
	}
	return fmt.Errorf("want random, none or high")
}

// Type implements pflag.Value.
func (c *Contention) Type() string { return "random|none|high" }

// DefaultResource is the resource a workload uses when none is named.
const DefaultResource = "cs"

// Normalize fills in what a workload leaves to its defaults (the
// resource), what its contention implies, and the text of its
// distributions that travels with it (FromWire reads it back).
func (w *Workload) Normalize() {
	if len(w.Resources) == 0 {
		w.Resources = []string{DefaultResource}
	}
	if w.Contention == ContentionHigh {
		w.Think = Fixed(0) // per-process think times still apply (For)
	}
	w.ThinkS, w.HoldS = w.Think.String(), w.Hold.String()
}

// FromWire restores the Dists after a JSON round trip (a node process
// gets its workload so).
func (w *Workload) FromWire() error {
	var err error
	if w.Think, err = ParseDist(w.ThinkS); err != nil {
		return err
	}
	w.Hold, err = ParseDist(w.HoldS)
	return err
}

// Validate checks the workload's numbers. A *PlanError names the part
// that is wrong.
func (w *Workload) Validate() error {
	if w.Entries < 0 {
		return planErr("entries", w.Entries, "must be 0 or more")
	}
	for _, d := range []struct {
		name string
		v    Dist
	}{{"think", w.Think}, {"hold", w.Hold}} {
		if d.v.Max > MaxDuration {
			return planErr(d.name, d.v, "at most %v (simulated time would overflow)", MaxDuration)
		}
	}
	seen := map[string]bool{}
	for _, r := range w.Resources {
		if r == "" {
			return &PlanError{Field: "resources", Err: errors.New("empty resource name")}
		}
		if seen[r] {
			return &PlanError{Field: "resources", Err: fmt.Errorf("%q named twice", r)}
		}
		seen[r] = true
	}
	switch w.Order {
	case "", OrderSame, OrderReverseOdd, OrderRandom:
	default:
		return planErr("order", fmt.Sprintf("%q", w.Order), "want %s, %s or %s", OrderSame, OrderReverseOdd, OrderRandom)
	}
	if w.Contention < 0 || int(w.Contention) >= len(contentionNames) {
		return planErr("contention", int(w.Contention), "want random, none or high")
	}
	for _, id := range slices.Sorted(maps.Keys(w.Procs)) {
		p := w.Procs[id]
		proc := fmt.Sprintf("P%d", id)
		if p.Entries != nil && *p.Entries < 0 {
			return planErr("procs", proc, "entries %d: must be 0 or more", *p.Entries)
		}
		for _, d := range []string{p.Think, p.Hold} {
			if d != "" {
				if _, err := ParseDist(d); err != nil {
					return &PlanError{Field: "procs", Value: proc, Err: err}
				}
			}
		}
		seen := map[string]bool{}
		for _, r := range p.Resources {
			if r == "" || seen[r] {
				return planErr("procs", proc, "resources %q: empty or repeated name", p.Resources)
			}
			seen[r] = true
		}
	}
	return nil
}

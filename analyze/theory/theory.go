package theory

import "time"

// Measure is what a cost counts. Delays are counted in message hops
// (message transmission times), as the seeds count them.
type Measure string

// The measures of the seeds' figures, and those dmx adds for its own
// extensions (failover, lease renewal). dmx stats measures the first five.
const (
	MessagesPerCS        Measure = "messages per CS"        // messages for one critical section, entry and exit
	ClientDelay          Measure = "client delay"           // from a request to its entry
	SyncDelay            Measure = "sync delay"             // from an exit to the next entry by a process that waited
	MessagesPerElection  Measure = "messages per election"  // from the first start to everyone's decision
	Completion           Measure = "completion time"        // of an election
	MessagesPerMulticast Measure = "messages per multicast" // to deliver one multicast everywhere
	Bandwidth            Measure = "bandwidth"              // seed 004's messages per entry and exit
	MessagesPerRecovery  Measure = "messages per recovery"  // to replace a crashed coordinator or a lost token
	MessagesPerRenewal   Measure = "messages per renewal"   // to renew a lease
	Heartbeats           Measure = "heartbeats"             // of the failure detector, per period
)

// Cost is one figure of what an algorithm costs: a formula in N as the
// course notes write it, what it counts, where it comes from, and its
// value in a run. dmx list shows every cost of an algorithm; dmx stats
// puts the value of each cost a seed gives beside what the run measured.
type Cost struct {
	Measure Measure
	// Formula is the figure as text, "2(N-1)": dmx stats shows it in its
	// seeds column, followed by its value.
	Formula string
	// Note says what the formula counts or assumes ("N-1 requests, N-1
	// replies"), for dmx list.
	Note string
	// Seed is where the figure comes from: the seed and its section, "004
	// Ricart and Agrawala, properties". "" means that the seeds give no
	// figure and this is dmx's own count of what its implementation sends;
	// dmx stats, which compares runs with the seeds, leaves it out.
	Seed string
	// Eval gives the figure's value in a run; nil when the formula has no
	// number (O(N^2), inf).
	Eval func(Setting) Estimate
	// Every, if set, makes the cost periodic: it recurs every Every(s) of
	// a run (a lease renewal every L/3, heartbeats every T) instead of
	// once per critical section, election or multicast; 0 means that it
	// does not occur in that setting (a detector the parameters turn
	// off). A run's size is estimated from its costs before it starts
	// (runner.Plan.Estimate), and over an election run of 2s at N = 1000,
	// heartbeats are most of it.
	Every func(Setting) time.Duration
}

// Setting is what a formula's value depends on: the run's group, its
// parameters and what its processes did.
type Setting struct {
	N      int               // processes
	Params map[string]string // the algorithm's parameters as the run recorded them (defaults may be absent)
	CS     []int64           // critical sections each process made, by id; len N
}

// Estimate is a formula's value in a setting: one number, a range, or a
// typical number within a range. A nil field is one the formula does not
// give: "1..inf" has a Min and no Max.
type Estimate struct {
	// Formula is the formula as it reads in this setting, when that
	// differs from Cost.Formula (maekawa's "3(K-1), K = 3"); else "".
	Formula string
	Value   *float64 // the figure, or the typical value of a range
	Min     *float64
	Max     *float64
}

// Exact is a formula's single value.
func Exact(v float64) Estimate { return Estimate{Value: &v} }

// Between is a range without a typical value.
func Between(lo, hi float64) Estimate { return Estimate{Min: &lo, Max: &hi} }

// Typical is a range with a typical (average) value.
func Typical(v, lo, hi float64) Estimate { return Estimate{Value: &v, Min: &lo, Max: &hi} }

// AtLeast is a range without an upper bound.
func AtLeast(lo float64) Estimate { return Estimate{Min: &lo} }

// Const is the Eval of a formula that does not depend on the run. Each
// call returns numbers of its own, so that no two runs' figures share one.
func Const(e Estimate) func(Setting) Estimate {
	return func(Setting) Estimate {
		c := e
		for _, p := range []**float64{&c.Value, &c.Min, &c.Max} {
			if *p != nil {
				v := **p
				*p = &v
			}
		}
		return c
	}
}

// InN is the Eval of a formula of N alone.
func InN(f func(n float64) Estimate) func(Setting) Estimate {
	return func(s Setting) Estimate { return f(float64(s.N)) }
}

// Evaluate returns c's value in s, its Formula filled in: the zero
// Estimate but for the formula when c has no Eval.
func (c Cost) Evaluate(s Setting) Estimate {
	var e Estimate
	if c.Eval != nil {
		e = c.Eval(s)
	}
	if e.Formula == "" {
		e.Formula = c.Formula
	}
	return e
}

package runner

import (
	"math"
	"time"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner/algo"
)

// Size is what a run is expected to record, estimated from its plan
// before it starts (Plan.Estimate).
type Size struct {
	Events   int64         // events in the trace
	Messages int64         // messages sent
	Bytes    int64         // the trace file
	Span     time.Duration // how long the run lasts, in its own time (simulated under sim)
}

// What one event and one message take in a trace file beside the vector
// clock, measured on simulated runs of every algorithm at N = 5 to 100: the
// events row and its indexes (the time indexes, events_lamport and
// events_wall, added about 30 bytes: without them the estimate was 14 to
// 19 % low, and the figure printed for a million events said 165 MB of
// 197), and the messages row and its index.
const (
	bytesPerEvent   = 121
	bytesPerMessage = 60
	bytesEmpty      = 64 << 10 // the schema of an empty trace
)

// Estimate says how large p's run will be, from the algorithm's costs
// (algo.Spec.Costs) and the workload, so that dmx can say before it
// starts that a run will be very large: events grow with the messages
// and the trace with events x N, for each event's vector clock holds N
// numbers. It is a rough figure, meant to be right within a small factor:
//
//   - messages: the cost per critical section (mutual exclusion) or per
//     multicast times the entries, or per election times the elections
//     (one, and one more per crash), plus each periodic cost (heartbeats,
//     lease renewals) for every period of the run's expected span. A cost
//     that is a range counts at its low end, so that the figure errs
//     towards too small: a range from 0 (ra-token's "N, or 0") counts half
//     its top, and costs beyond the seeds' figures (majority's retries
//     under contention) are not counted at all;
//   - events: a send and a receive per message, and per critical section
//     its request, entry and exit and about one change of its wait set per
//     two messages; per multicast a delivery at each process;
//   - bytes: each event's row with its vector clock, N numbers of the
//     digits its entries have on average, and each message's row.
func (p Plan) Estimate() Size {
	p = p.WithDefaults()
	if p.Spec == nil || p.N < 1 {
		return Size{}
	}
	n := float64(p.N)
	span, cs := p.expected()
	var entries int64
	for _, c := range cs {
		entries += c
	}
	setting := theory.Setting{N: p.N, Params: p.Params, CS: cs}

	crashes := 0
	for _, f := range p.Faults {
		if f.Kind == FaultCrash {
			crashes++
		}
	}
	var msgs, events float64
	counted := false // the per-activity cost is counted once (ring has two)
	for _, c := range p.Spec.Costs {
		v := low(c.Evaluate(setting))
		if v <= 0 {
			continue
		}
		if c.Every != nil {
			if every := c.Every(setting); every > 0 {
				msgs += v * math.Floor(float64(span)/float64(every))
			}
			continue
		}
		if counted {
			continue
		}
		switch {
		case c.Measure == theory.MessagesPerCS && p.Spec.Kind == algo.MutualExclusion:
			msgs += v * float64(entries)
			events += float64(entries) * (3 + v/2)
		case c.Measure == theory.MessagesPerMulticast && p.Spec.Kind == algo.Multicast:
			msgs += v * float64(entries)
			events += float64(entries) * (1 + n)
		case c.Measure == theory.MessagesPerElection && p.Spec.Kind == algo.Election:
			elections := float64(1 + crashes)
			msgs += v * elections
			events += elections * 2 * n // each process starts and decides
		default:
			continue
		}
		counted = true
	}
	events += 2*msgs + 2*n + 2*float64(len(p.Faults))
	perProc := events / n
	// A vector clock entry counts events of one process: from 0 to about
	// perProc over the run, of the digits of perProc/2 on average, and a
	// comma.
	digits := 1 + math.Floor(math.Log10(math.Max(1, perProc/2)))
	vc := n*(digits+1) + 1
	bytes := bytesEmpty + events*(bytesPerEvent+vc) + msgs*bytesPerMessage
	return Size{Events: int64(events), Messages: int64(msgs), Bytes: int64(bytes), Span: span}
}

// expected is how long p's run is expected to last (span) and the
// critical-section entries of each process over its resources.
func (p Plan) expected() (time.Duration, []int64) {
	cs := make([]int64, p.N)
	for i := range cs {
		w := p.Workload.For(i)
		cs[i] = int64(w.Entries) * int64(max(1, len(w.Resources)))
	}
	return p.span(cs), cs
}

// low is the figure of an estimate that Estimate counts: the low end of a
// range, half its top for a range from 0, else its typical value.
func low(e theory.Estimate) float64 {
	switch {
	case e.Min != nil && *e.Min > 0:
		return *e.Min
	case e.Value != nil:
		return *e.Value
	case e.Max != nil:
		return *e.Max / 2
	}
	return 0
}

// span is how long the run of p (with its defaults) is expected to last:
// an election run its Duration; else the longer of the busiest process's
// think and hold times and the holds of all processes on one resource one
// after the other (mutual exclusion serializes them), or the time slots
// of a run without contention.
func (p Plan) span(cs []int64) time.Duration {
	if p.Spec.Kind == algo.Election {
		return p.Duration
	}
	mean := func(d Dist) time.Duration { return (d.Min + d.Max) / 2 }
	var busiest, held time.Duration
	var entries int64
	for i := range cs {
		w := p.Workload.For(i)
		busiest = max(busiest, time.Duration(cs[i])*(mean(w.Think)+mean(w.Hold)))
		held += time.Duration(cs[i]) * mean(w.Hold)
		entries += cs[i]
	}
	if r := len(p.Workload.AllResources()); r > 1 && !p.Workload.Nested {
		held /= time.Duration(r)
	}
	span := max(busiest, held)
	if p.Workload.Contention == ContentionNone {
		span = max(span, time.Duration(entries)*p.Workload.Slot)
	}
	if p.driver() == DriverUDP && p.Duration > 0 {
		span = min(span, p.Duration)
	}
	return span
}

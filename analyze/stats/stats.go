package stats

import (
	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/trace"
)

// Stats is what one run cost. Its JSON form is documented in the package
// doc and stable.
type Stats struct {
	Run        int64      `json:"run"`
	Algorithm  string     `json:"algorithm"`
	Mode       string     `json:"mode"` // the trace's runs.mode: udp, sim (times are simulated) or import
	Nodes      int        `json:"nodes"`
	Complete   bool       `json:"complete"`
	Status     string     `json:"status"` // the trace's runs.status: "every workload finished", "stalled: ...", "interrupted"...
	Events     int64      `json:"events"`
	DurationNS int64      `json:"duration_ns"`
	Messages   Messages   `json:"messages"`
	Mutex      *Mutex     `json:"mutex,omitempty"`
	Multicast  *Multicast `json:"multicast,omitempty"`
	Election   *Election  `json:"election,omitempty"`
}

// Messages counts the send events.
type Messages struct {
	Total     int64            `json:"total"`     // the algorithm's messages (heartbeats apart)
	ByType    map[string]int64 `json:"by_type"`   // the algorithm's messages by type
	Heartbeat int64            `json:"heartbeat"` // failure-detector heartbeats
	Lost      int64            `json:"lost"`      // sent and never received, heartbeats included
}

// Mutex is the mutual-exclusion part of a run.
type Mutex struct {
	Resources        int     `json:"resources"`
	Requests         int64   `json:"requests"`
	Contended        int64   `json:"contended_requests"`
	CriticalSections int64   `json:"critical_sections"`
	Throughput       float64 `json:"throughput_cs_per_s"`
	MessagesPerCS    PerCS   `json:"messages_per_cs"`
	ClientDelay      Delay   `json:"client_delay"`
	SyncDelay        Delay   `json:"sync_delay"`
}

// PerCS is messages per critical section.
type PerCS struct {
	Measured float64            `json:"measured"`
	ByType   map[string]float64 `json:"by_type"`
	// Each counts the requests by the messages sent from one request to
	// the next: message count -> requests. Only without contention.
	Each  map[int64]int64 `json:"each,omitempty"`
	Seeds *Figure         `json:"seeds,omitempty"`
}

// Delay is a delay in message hops and in wall time.
type Delay struct {
	Hops   Dist    `json:"hops"`
	WallNS Dist    `json:"wall_ns"`
	Seeds  *Figure `json:"seeds,omitempty"` // in hops
}

// Multicast is the totally-ordered multicast part of a run.
type Multicast struct {
	Multicasts           int64   `json:"multicasts"`
	Deliveries           int64   `json:"deliveries"`
	MessagesPerMulticast float64 `json:"messages_per_multicast"`
}

// Election is the election part of a run.
type Election struct {
	Starts              int64    `json:"election_starts"`
	Decisions           int64    `json:"decisions"`
	Elections           int64    `json:"elections"`  // rounds that ended
	Unfinished          int64    `json:"unfinished"` // a round still open at the end
	MessagesOutside     int64    `json:"messages_outside_elections"`
	MessagesPerElection Measured `json:"messages_per_election"`
	Completion          Delay    `json:"completion"`
}

// Measured is a measure beside the seeds' figure.
type Measured struct {
	Measured float64 `json:"measured"`
	Seeds    *Figure `json:"seeds,omitempty"`
}

// HeartbeatType is the message type of the failure detector's heartbeats.
const HeartbeatType = "heartbeat"

// Compute reads the run's events from r in one pass and measures them,
// beside the figures of costs that a seed gives (the algorithm's
// algo.Spec.Costs; nil for none, as for a trace of another program). Its
// error is Walk's: the trace could not be read or is broken.
func Compute(run trace.Run, r trace.Reader, costs []theory.Cost) (*Stats, error) {
	w := newWalker(run)
	w.costs = costs
	end, err := analyze.Walk(run, r, w.event)
	if err != nil {
		return nil, err
	}
	return w.finish(end), nil
}

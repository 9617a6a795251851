// Package stats measures what a recorded run cost: messages per critical
// section, per multicast and per election, client and synchronization
// delays in message hops and in wall time, throughput and contention, each
// beside the figure the course notes give (DESIGN.md, "Message complexity
// the seeds give").
//
// The figures are not stats' own: Compute is handed the algorithm's costs
// (algo.Spec.Costs, found by the caller in the registry) and evaluates, for
// each measure it has (messages per CS, client delay, sync delay, messages
// per election, completion time), the first cost of that measure that a
// seed gives, in the run's setting: its N, its recorded algorithm
// parameters and the critical sections each process made. Costs that are
// dmx's own counts (no seed) and measures stats does not take (bandwidth,
// recovery) are for dmx list only. stats imports no algorithm; a run
// without costs (a trace of another program) has no figures. Package render
// writes Stats as tables, CSV and JSON.
//
// Compute reads one run in one pass of analyze.Walk, in a causal order, and
// keeps per process a few counters per resource and per process, and per
// message in flight a copy of its sender's counters: nothing per event.
// Quantiles come from a log-scale histogram (exact up to 64, within 1/32
// beyond), so memory does not grow with the run either.
//
// Definitions:
//
//   - Messages are the send events; the heartbeats of the failure detector
//     (type "heartbeat") are counted apart from the algorithm's messages.
//     A message never received (dropped, lost to a crash, in flight at the
//     end) is counted as lost.
//   - A critical section is a cs_enter; its request is the process's
//     matching cs_request on that resource (k-th request, k-th enter).
//     Messages per critical section are the algorithm's messages over the
//     critical sections. When no request was contended, each request also
//     opens a window that the next one closes, and the messages of each
//     window are tallied (messages_each_cs): the seeds' figures are per
//     critical section without contention, and "ra-token: N, or 0" shows
//     as two counts.
//   - A request is contended if, when it is made, another process has a
//     request pending on the resource or holds it. The seeds' figures are
//     for requests without contention.
//   - Client delay: from a cs_request to its cs_enter. In hops: the length
//     of the longest causal chain of messages that starts at the request
//     and ends at the enter, counted by a counter that starts at 0 at the
//     request, travels on messages, grows by one at each receive and takes
//     the maximum where chains merge. (A token that does not travel because
//     of the request, as in token-ring, is not on such a chain.)
//   - Synchronization delay: from a cs_exit to the next cs_enter on the
//     same resource by another process that was waiting: its request did
//     not happen after the exit. In hops: the length of the shortest causal
//     chain of messages from the exit to the enter, by a counter reset to 0
//     at each exit, carried on messages, one more at each receive, the
//     minimum where chains merge.
//   - An election is a round: it opens at an election_start when none is
//     open and closes when every live process believes in one leader that
//     it decided after the round opened. Its messages are those sent while
//     it was open by processes that a start of the round happened before,
//     and, after it closed, those sent on receiving one of them (a ring's
//     elected message goes on round the ring after the last decision; a
//     lease master's renewals, sent on a timer, are not the election's);
//     its completion time runs from its first start to the
//     decision that closed it, in wall time and in hops (the longest chain
//     from a start of the round to that decision).
//   - Throughput: critical sections a second, from the run's first event
//     to its last cs_exit (a run that stalled at its end, which dmx run
//     ends after --stall of silence, is not counted slow for it).
//   - A multicast is counted once however many processes deliver it: the
//     count is the largest number of deliver events of one process.
//
// The JSON form of Stats is stable: fields are only ever added. Durations
// are integer nanoseconds (suffix _ns), hops are counts; they are of
// simulated time in a run whose mode is "sim", of wall-clock time
// otherwise. duration_ns runs from the first event to the last. A section
// (mutex, multicast, election) is present only when the run has its
// events:
//
//	{
//	  "run": 1, "algorithm": "ricart-agrawala", "mode": "udp", "nodes": 5,
//	  "complete": true, "status": "every workload finished",
//	  "events": 412, "duration_ns": 60000000,
//	  "messages": {"total": 80, "by_type": {"reply": 40, "request": 40},
//	               "heartbeat": 0, "lost": 0},
//	  "mutex": {
//	    "resources": 1, "requests": 10, "contended_requests": 0,
//	    "critical_sections": 10, "throughput_cs_per_s": 166.7,
//	    "messages_per_cs": {"measured": 8, "by_type": {"reply": 4, "request": 4},
//	                        "each": {"8": 10},
//	                        "seeds": {"formula": "2(N-1)", "value": 8}},
//	    "client_delay": {"hops": DIST, "wall_ns": DIST, "seeds": FIGURE},
//	    "sync_delay":   {"hops": DIST, "wall_ns": DIST, "seeds": FIGURE}
//	  },
//	  "multicast": {"multicasts": 20, "deliveries": 100, "messages_per_multicast": 28},
//	  "election": {"election_starts": 4, "decisions": 5, "elections": 1, "unfinished": 0,
//	               "messages_outside_elections": 0,
//	               "messages_per_election": {"measured": 14, "seeds": FIGURE},
//	               "completion": {"hops": DIST, "wall_ns": DIST, "seeds": FIGURE}}
//	}
//
// where DIST is {"count", "mean", "p50", "p99", "max"} (all 0 when count
// is 0) and FIGURE is {"formula", "value", "min", "max"}, value, min and
// max present only when the seeds give a number (token-ring's "1..inf" has
// a min and no max).
package stats

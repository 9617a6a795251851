// Package runner runs dmx's algorithms: the node runtime that wraps an
// algorithm's state machine (clocks, trace events, workload, timers), and the
// two drivers that move its messages: the deterministic simulator
// (Simulate), and real OS processes talking UDP on 127.0.0.1 (Launch on the
// runner's side, NodeMain in each re-executed `dmx node` process).
//
// The runtime is the only place where clocks are stamped. For every input a
// machine gets it records one event first (receive, timeout, cs_request,
// cs_exit, recover) and for every output one more (send, cs_enter, leader,
// wait, ...), ticking the node's Lamport clock and its vector clock on each,
// so that a trace can be re-executed event for event and analyzers can rebuild
// happens-before from it.
package runner

// Package algotest is the test bench shared by dmx's algorithm packages. It
// drives algo.Machines without the runtime, in two ways:
//
//   - Run: a seeded, deterministic in-memory network (discrete-event
//     simulation with random message delays, optionally FIFO per channel)
//     that runs one machine per node under a random request/hold workload
//     and checks, after every step, that no two nodes are in the critical
//     section at once (safety), that the machines keep the contract of
//     package algo (Enter only when requested, Wait sets that name other
//     nodes and are empty in the critical section), and at the end that every
//     request was entered (liveness). A run that stops with requests pending
//     and nothing left to deliver fails with the nodes' Wait sets and any
//     cycle among them, so a test can look for a seed that deadlocks. Sweep
//     runs many seeds and prints the one that fails.
//   - RunScripts: interaction scripts in the style of etcd-io/raft's
//     testdata (a command, "----", the expected output), checked against the
//     machines' outputs and rewritten with go test -rewrite.
//
// The real simulator lives in package runner; this bench exists so that an
// algorithm can be tested on its own, rule by rule, and so that its tests do
// not depend on the runtime's clocks or trace format. It mimics the runtime
// where machines can tell: the node's Lamport clock ticks once for the input
// (max(local, message)+1 for a delivery) and once per output, and
// Input.Clock is the value after the input's tick.
package algotest

// Package algo is the contract between dmx's runtime and its algorithms.
//
// Every algorithm is a deterministic state machine in the style of
// etcd-io/raft: it sees no sockets, goroutines, wall clock or global
// randomness. The runtime (package runner) owns all of those and, for each
// node, does the following in order:
//
//  1. Builds the machine with New(Config), where Config carries the node's
//     id, the group size, the algorithm's parameters and a seeded random
//     source (every draw the machine makes is reproducible from the run's
//     seed).
//  2. Calls Step with one Input at a time: Start once, then deliveries,
//     timer firings, the workload's requests and releases, recoveries. Before
//     each Step the runtime records the input as a trace event and ticks the
//     node's Lamport and vector clocks; Input.Clock is that Lamport value, so
//     an algorithm that timestamps a request ([RA1] of seed 003) uses it.
//  3. Carries out the returned Outputs in order: each Send becomes a send
//     event and a datagram (or a simulated delivery), each Enter a cs_enter
//     event, each Leader a leader event, and so on. Step must not keep or
//     modify the Input's slices after it returns.
//
// Crashes: a crashed node gets no input. When it recovers, the runtime builds
// a fresh machine with New and steps it with Recover, whose Msg is the last
// value the old machine Persisted (zero Msg if none): that is the node's
// stable storage, and everything else is forgotten, as a restarted process
// forgets it. Under `dmx run` the restarted node is a new OS process; the
// persisted value reaches it from the trace.
//
// Machines are single-resource: the runtime keeps one instance per resource
// and routes messages by Msg.Resource.
//
// Besides its machines, a Spec carries what the algorithm costs (Costs):
// each Cost is a formula as the course notes write it ("2(N-1)"), the
// measure it counts, the seed it comes from ("" for dmx's own count of an
// extension such as failover) and Eval, its value in a run's Setting (N,
// parameters, critical sections per process). dmx list shows the formulas;
// analyze/stats, handed the Costs, puts the seeds' values beside what a
// run measured; runner.Plan.Estimate sizes a run from them before it
// starts, a periodic cost (Every: heartbeats, lease renewals) once per
// period. An algorithm's figures live next to its rules, so that neither
// stats nor list knows any algorithm by name.
//
// A Spec also carries its package documentation (Doc, the algorithm's
// doc.go embedded and read by PackageDoc), which quotes the seeds' rules:
// dmx list ALGO prints it.
package algo

// Package central is the central coordinator algorithm for mutual exclusion
// (dmx name "central"), as the course notes give it: seed 000 ("Centralized
// algorithm"), seed 002 ("Centralized Algorithm"), seed 003 (slides 5-6,
// "Central Coordinator Algorithm") and seed 004 ("Centralized Algorithm").
//
// One process is the coordinator (parameter "coordinator", default 0). The
// notes' protocol, which the machine follows as written:
//
//   - To enter a CS, a process sends a request message to the coordinator and
//     then waits for a reply (seed 003 slide 5; seed 000 steps 1-2).
//   - The reply ("OK" in seed 003, "grant" in seed 000; message type "grant"
//     here) gives the right to enter the CS (seed 003; seed 000 steps 3-4).
//   - After finishing work in the CS the process notifies the coordinator with
//     a release message (seed 003; seed 000 step 5).
//   - If another process claimed the resource, the coordinator does not reply
//     until release; it maintains a queue and services requests in FIFO
//     order (seed 000; seed 002 "基于队列的公平性").
//
// "The coordinator can be one of the processes competing for access" (seed
// 003 slide 6): the coordinator's own requests and releases go into the same
// queue but are local, so they cost no message. The seeds' "three messages
// per use of a CS (request, OK, release)" (seed 003 slide 6, seed 002, seed
// 004 "Bandwidth: 3") is therefore the cost of a client's entry; an entry by
// the coordinator costs 0. Synchronization delay is 2 (release + grant).
//
// Weaknesses kept as the notes state them: the coordinator is a single point
// of failure and a bottleneck; a client cannot tell being queued from a dead
// coordinator (seed 000 "Problems"); a coordinator that recovers (Recover)
// starts afresh with an empty queue and no holder, so queued clients wait
// for ever and a client still in the CS is not accounted for; the order is
// FIFO by arrival at the coordinator, not by happens-before (seed 004
// "Ordering: No!"). The notes assume reliable channels: a duplicated request
// is queued twice, and a grant that arrives when its receiver has not asked
// is ignored (with a note), leaving the coordinator waiting for a release.
//
// Wait sets: a waiting client waits for the coordinator; the coordinator,
// when it waits itself, waits for the current holder (it cannot wait for
// itself), and its Wait set changes as the holder does.
//
// Messages: request (ID: requester, Stamp: the request's Lamport time, kept
// for the trace only), grant (ID: grantee), release (ID: releaser).
package central

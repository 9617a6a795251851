// Package central is the central coordinator algorithm for mutual exclusion
// (dmx name "central"), as the course notes give it: seed 000 ("Centralized
// algorithm"), seed 002 ("Centralized Algorithm"), seed 003 (slides 5-6,
// "Central Coordinator Algorithm") and seed 004 ("Centralized Algorithm").
//
// One process is the coordinator (parameter "coordinator", default 0;
// failover below elects it instead). The notes' protocol, which the
// machine follows as written:
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
//
// # Failover
//
// With the parameter failover=bully (or failover=ring) the coordinator is
// not fixed: "If the coordinator crashes, a new coordinator must be created
// ... an election algorithm has to be run in order to choose one and only
// one new coordinator" (seed 003 slide 6; seed 001 "Election Algorithms ...
// Examples with mutual exclusion"). Each process embeds a machine of the
// election (package bully, or package ring) with its heartbeat detector
// (package fd, seed 004); the election's own parameters are timeout,
// initiators (default 0) and fd-period, fd-allowance, fd-stall. Its messages,
// timers, Leader, Suspect and Trust outputs are the process's, so a trace
// shows who was elected when, and `--faults crash:leader@T` crashes the
// coordinator. The rest, as designed here (the notes say no more):
//
//  1. Epochs. A process that the election names leader becomes the
//     coordinator of a new epoch, a number above every epoch it knows and
//     unique to it (as election numbers are, election.NextTerm), and asks every
//     process its detector does not suspect for its state (state-query).
//     It grants nothing until every one of them has answered or is
//     suspected. A process that learns that another one won steps down at
//     once.
//  2. State transfer. A process answers a query of an epoch above the one
//     it promised by promising that epoch (kept in stable storage) and
//     saying what it does: state-idle, state-requesting or state-holding,
//     with the time of its request (Stamp: its Lamport clock when it
//     asked). A pending request is thus re-sent within the answer. The
//     coordinator takes the holder from the one that says it holds, and
//     builds the queue of the others ordered by their requests' original
//     times (then ids), so that a request does not lose its turn to the
//     failure; then it grants. Later requests queue in arrival order, as
//     in the notes. A query of an older epoch gets a nack naming the newer
//     one; the coordinator then collects again above it if the election
//     still names it, and otherwise steps down. A process that answers a
//     newer epoch while its election names it collects again above it:
//     the election says who leads, the epochs only fence the loser off.
//  3. Fencing. Requests, grants and releases carry the epoch (Term) and
//     the request's time (Stamp). A grant counts only if it comes from the
//     coordinator of the epoch the process promised, for its current
//     request: a deposed coordinator's grant is refused. A coordinator
//     ignores what comes for another epoch. Stamps order what one process
//     says (a process asks for one thing at a time and its clock only
//     grows, across restarts too), so that a release, a request and a
//     state reply of one process may overtake each other.
//  4. Crashes of others. The coordinator stops waiting for the state of a
//     process its detector suspects, drops its requests, and skips it when
//     granting; when it hears from it again (Trust) it asks it for its
//     state. A restarted process has forgotten its requests: its restart
//     time, as its stamp, tells the next query that every request it made
//     before is over (a grant it held is freed). Every restart holds an
//     election (seeds 000, 001), so a new epoch follows it.
//  5. A holder that crashes. With revoke=false (the default) the
//     coordinator leaves the grant of a suspected holder standing: the
//     others wait until the holder restarts (its restart frees the grant)
//     or until a new epoch's collection, which waits only for processes it
//     does not suspect, forgets it. A holder that crashes for good while
//     the coordinator lives blocks every other process: seed 004's
//     "Deadlock if Coordinator fails", the holder's version. With
//     revoke=true the coordinator takes the grant of a suspected holder
//     back and grants the next: nobody is blocked by a dead holder, but a
//     falsely suspected holder is still in the critical section when the
//     next one enters.
//
// What the variant cannot handle. Safety rests on the detector being right
// (seed 004 "We can only suspect a crash!"; "Safe and Live, assuming ...
// Failure detection is reliable"): a coordinator skips the processes it
// suspects. With D (fd-allowance) below the spread of message delays, live
// processes are suspected: with revoke=true most such runs break mutual
// exclusion; with revoke=false few do, but some do, e.g. a process that
// suspects all others elects itself, collects from nobody and enters while
// the real coordinator's grant is on its way to another process (tests:
// TestFalseSuspicions, TestFalseSuspicionLoneCoordinator). The election's
// own weaknesses remain (bully's split brain with a tight time-out; two
// processes may collect at once, and the epochs fence one off, but while
// the election is unsettled they may take the coordinator's role from each
// other in turn). Messages are assumed not lost (a lost release with
// revoke=false blocks as a crashed holder does), and a message that spends
// longer in the network than a crash, a detection and an election is
// assumed not to exist.
//
// Cost: without failures, the notes' 3 messages per client entry (a
// request collected by the state query needs no request message), plus
// the election, N-1 state queries and N-1 answers per new coordinator,
// plus the detector's heartbeats, N(N-1) every T.
//
// Messages of the variant: request (ID, Stamp: the request's time, Term:
// the epoch), grant (ID: grantee, Stamp, Term), release (ID, Stamp, Term),
// state-query (Term: the new epoch), state-idle, state-requesting,
// state-holding (Stamp, Term), nack (Term: the epoch promised), and the
// election's and the detector's messages. Stable storage (Persist): the
// election's number (Term) and the epoch promised (Stamp).
package central

// Package bully is the bully election algorithm (dmx name "bully"), as the
// course notes give it: the rules [RE1], [RH1] and [RH2] of seed 001 ("The
// Bully Algorithm"), the prose of seeds 000, 001 and 002, and seed 004's
// analysis. Ids are 0..N-1 and the highest id wins.
//
// By default a process is ELECTION-OFF.
//
//	[RE1] (a process that starts an election, or that starts one after
//	      receiving an election message) state := ELECTION-ON; send an
//	      election message to every process with a higher id; wait for an
//	      answer message. If none arrives before the time-out, the process
//	      is the coordinator and sends a coordinator message to all
//	      processes. Else it waits for a coordinator message, and if none
//	      arrives before the time-out it restarts the election by [RE1].
//	[RH1] on an election message from P_i: reply with an answer to P_i.
//	[RH2] then, if state = ELECTION-OFF, start an election by [RE1].
//	      (seed 000: "Hold election (unless it is already holding one)")
//	coordinator message from P_j: P_j leads; state := ELECTION-OFF.
//
// Seed 001 does not say what a process does with a coordinator message from
// a lower id (it comes only when the sender missed the receiver: a too
// tight time-out, a false suspicion, a recovery). Here the receiver, up and
// higher, does not accept it ("the process with the highest identifier,
// among those which are up, is selected"): it holds an election by [RE1]
// (restarting the one it holds), as a recovered process does (seed 000), so
// that its own coordinator message comes after the lower one everywhere.
// (Two coordinator messages racing are otherwise taken in arrival order,
// and the group could stay split for good.)
//
// Who starts an election:
//
//   - at Start, the processes listed in the parameter initiators (default
//     "0", the lowest id: seed 001's worst case; "all" makes every process
//     an initiator at once, "none" nobody);
//   - a process whose failure detector (package fd, seed 004's heartbeat)
//     suspects the leader it knows ("When process P detects dead
//     coordinator", seed 000), if it is not holding an election already;
//   - a recovered process (seed 000: "If a dead process recovers, it holds
//     an election to find the coordinator"). The only thing it keeps
//     across the crash is its election number (persisted at each [RE1]),
//     so that the numbers of its elections never repeat.
//
// The failure detector also decides who "all processes" are: election and
// coordinator messages go to the processes the detector does not suspect.
// That is how seed 001's best case reads: "the process with the second
// highest identifier notices the coordinator's failure. It can immediately
// select itself and then send n-2 coordinator messages": it sends no
// election message to the dead highest process and no coordinator message
// to it. [RE1] is otherwise followed literally: a process waits for the
// time-out even when it sent no election message, so the best case costs
// exactly N-2 messages but completes one time-out later than "immediately".
//
// Time-outs: the parameter timeout (default 50ms) is both [RE1] waits, for
// an answer and for the coordinator message. Seed 001: the protocol is live
// only in a synchronous system, where it exceeds the worst round trip.
//
// Weaknesses kept as written (seed 004 "Safety is broken if too tight
// deadline, process ID's reappear, or system is not synchronous"):
//
//   - a time-out shorter than a round trip lets a process declare itself
//     coordinator while a higher one is alive: two processes believe they
//     lead at once (a split brain), and with a time-out that stays too
//     tight the higher ones' elections may go on for ever;
//   - a detector allowance D too small makes false suspicions: a live
//     higher process is skipped, with the same effect;
//   - a recovered process with a higher id bullies its way in: until its
//     coordinator message arrives, it and the old leader both believe they
//     lead.
//
// Cost without failures (seed 001 "The Bully Algorithm: Analysis"): when
// the lowest id starts, every process but the highest starts an election
// and the i-th highest sends i-1 election messages, N(N-1)/2 in all; each
// is answered, N(N-1)/2 answers; then N-1 coordinator messages: N²-1
// messages, O(N²). Best case: the second highest notices the leader's
// failure: N-2 coordinator messages and nothing else.
//
// Messages: election, answer, coordinator (Term: the number of the
// sender's election; ID of a coordinator message: the coordinator), and the
// detector's heartbeat. Each election a process starts gets a number above
// every number it has seen, equal to its id modulo N (election.NextTerm), so that
// numbers never repeat across processes; it persists the number, so that
// they do not repeat across its restarts either.
// Leader outputs carry the election number of the coordinator message that
// decided them in Msg.Term, StartElection outputs the new election number.
package bully

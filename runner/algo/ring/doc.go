// Package ring is the ring election algorithm of seed 000 ("Ring algorithm
// (环选举算法)") and seed 001 ("The Ring Algorithm") (dmx name "ring"): the
// election message collects the ids of the live processes around the ring.
// Ids are 0..N-1, P_i's successor is P_(i+1) mod N, and the highest id wins
// (seed 000 says "e.g. lowest numbered process"; seed 001 and DESIGN.md
// choose the highest).
//
// Seed 000, as written:
//
//	If any process detects failure of coordinator: construct election
//	message with process ID and send to next process. If successor is down,
//	skip over. Repeat until a running process is located.
//	Upon receiving an election message: process forwards the message,
//	adding its process ID to the body.
//	Eventually message returns to originator: process sees its ID on list.
//	Circulates (or multicasts) a coordinator message announcing
//	coordinator.
//
// Here:
//
//   - "down" is what the failure detector (package fd, seed 004) suspects:
//     a message goes to the first successor not suspected;
//   - the process that sees its id on the list picks the highest id of the
//     list, decides it (a Leader output) and circulates a coordinator
//     message; every process that gets it decides the same and forwards
//     it. The coordinator message collects ids too, so that it stops where
//     it was already seen: back at its sender when nobody was skipped;
//   - who starts: at Start the processes listed in initiators (default "0";
//     "all", "none" or ids); then any process whose detector suspects the
//     leader it knows and that is not in an election; and a recovered
//     process (it knows no leader);
//   - failures during an election (seed 001 "Failures?", first option: "May
//     re-initiate election if receives an Election message but times out
//     waiting for an Elected message"): a process that started or forwarded
//     an election and gets no coordinator message within the parameter
//     timeout (default 200ms, more than 2N message delays) starts a new
//     one;
//   - a process that gets a coordinator message naming a lower id than its
//     own (an election that skipped it: it was down, or falsely suspected)
//     does not take it on and holds an election, since it is up and higher;
//     the seeds do not cover this case, and taking it on would leave a
//     recovered process under a lower leader for good.
//
// Several elections may run at once; each circulates in full and ends with
// its own coordinator message (the Chang-Roberts variant, package
// changroberts, is the one that kills them).
//
// Cost without failures: 2N messages per initiator, whoever it is (N
// election messages to come back, N coordinator messages to come back); k
// simultaneous initiators cost 2kN. Seed 001's best 2N, worst 3N-1 and
// average 2.5N are for the single-id protocol (chang-roberts), where the
// message must first reach the would-be leader; here it does not need to.
//
// Weaknesses kept: a D too small (false suspicion) skips a live process,
// whose id is then missing from the list and may lose; a process that
// crashes after adding its id can be chosen, and is replaced only when the
// detectors suspect it; a detector that never suspects a dead process (D
// too large, seed 004 "incomplete") leaves the election stuck until the
// time-out.
//
// Messages: election (Vals: the ids collected; Term: the election number
// of its originator), coordinator (ID: the leader, Vals: the ids that have
// seen it, Term), and the detector's heartbeat. Leader outputs carry the
// coordinator message's Term. Election numbers are above every number the
// originator has seen and equal to its id modulo N (election.NextTerm): unique to
// one election; each is persisted, so that a restart does not reuse it.
package ring

// Package changroberts is the Chang and Roberts ring election (dmx name
// "chang-roberts"), as seed 001 gives it ("Leader Election: The Ring
// Algorithm, Multiple Initiators", rules [RE1], [RE2], [RH1], [RD1]; "The
// Ring Election Protocol"; "Failures?"), with seed 000's prose ("Chang &
// Roberts Ring Algorithm") and seed 004's ("Chang Roberts": "3N-1 messages
// per election"). Ids are 0..N-1, P_i's neighbour is P_(i+1) mod N, and the
// highest id wins. The message carries one id.
//
// By default a process is NON-PARTICIPANT.
//
//	[RE1] (the initiator) state := PARTICIPANT.
//	[RE2] send an election message with message.id := i to the neighbour.
//	[RH1] on an election message at P_j:
//	      if message.id > j: forward it; state := PARTICIPANT.
//	      elseif message.id < j: if NON-PARTICIPANT, forward an election
//	        message with message.id := j and state := PARTICIPANT;
//	        otherwise discard it ("we're already circulating our ID").
//	      else: P_j is the coordinator: send an elected message with
//	        message.id := j to the neighbour; state := NON-PARTICIPANT.
//	[RD1] on an elected message at P_i: if message.id != i, forward it and
//	      state := NON-PARTICIPANT (and P_i's elected := message.id,
//	      seed 001 "sets its variable elected").
//
// Leader outputs: the coordinator decides itself in [RH1]'s last case,
// every other process in [RD1].
//
// Who starts: at Start the processes listed in initiators (default "0";
// "all", "none" or ids); then a non-participant whose failure detector
// (package fd, seed 004) suspects the leader it knows; and a recovered
// process (it knows no leader).
//
// Failures (seed 001 "Failures?" and "Fixing for failures (2)"):
//
//   - the neighbour is the first successor the detector does not suspect
//     (seed 000's ring: "If successor is down, skip over");
//   - "use the failure detector: any process, after receiving Election:80
//     message, can detect failure of N80 via its own local failure
//     detector. If so, start a new run of leader election": an election or
//     elected message naming a suspected process is not passed on, and its
//     receiver starts a new election by [RE1], [RE2] (so no message circles
//     for ever around a dead id);
//   - "May re-initiate election if receives an Election message but times
//     out waiting for an Elected message": a participant that gets no
//     elected message within the parameter timeout (default 200ms) starts
//     a new election;
//   - an elected message naming a lower id than the receiver's own comes
//     from an election that skipped it (down, or falsely suspected); the
//     seeds do not cover it. The receiver is up and higher, so it does not
//     take it on and starts an election.
//
// Cost without failures, one initiator (seed 001 "Worst/Best/Avg Case
// Analysis"): N-1-i election messages to get from the initiator P_i to the
// would-be leader P(N-1), N for its message to go around, N for the elected
// message: 2N + (N-1-i). Best case, the initiator is the would-be leader:
// 2N. Worst case, its ring successor P0: 3N-1. Averaged over the N possible
// initiators: (5N-1)/2, seed 001's "2N + N/2" less one half.
//
// Weaknesses kept (seed 001): "Incompleteness in FD => N80's failure might
// be missed => Violation of Safety"; "Inaccuracy in FD => N80 mistakenly
// detected as failed => new election runs initiated forever => Violation of
// Liveness"; the participant flag is not persisted, so a process that
// crashes while its id circulates forgets it.
//
// Messages: election (ID: the candidate; Term: the number of the run, set
// by its initiator and kept when [RH1] replaces the id), elected (ID: the
// coordinator; Term), and the detector's heartbeat. Run numbers are above
// every number the initiator has seen and equal to its id modulo N
// (election.NextTerm): unique to one run; each is persisted, so that a restart does
// not reuse it.
package changroberts

// Package tokenring is the token ring algorithm for mutual exclusion (dmx
// name "token-ring"), as the course notes give it: seed 000 ("Token Ring
// algorithm"), seed 001 ("Token Ring Algorithm" slides), seed 002 and seed
// 004 ("Token Ring Algorithm").
//
// The rules, as the notes state them:
//
//   - Initialization: "Process 0 creates a token for resource R" (seed 000);
//     "The token is initially given to one process" (seed 001). Here P0
//     creates it at Start.
//   - The token circulates from P_i to P_(i+1) mod N (seed 000, 001).
//   - "When a process requires entry to the CS, it waits to receive a token
//     from its neighbor and retains it; enters the CS; when done, it passes
//     the token to its [next] neighbor" (seed 001; seed 000 "Hold token until
//     done").
//   - "When a process receives the token, but does not require entry to CS,
//     it passes it along the ring" (seed 001; seed 000 "If no, send [token]
//     to neighbor").
//
// A machine cannot know whether its user is about to ask, so "does not
// require entry" means "no request is pending when the token arrives". The
// token is then passed on after the parameter pass-delay (a timer, default
// 1ms) rather than at once, so that an idle ring does not spin a CPU; a
// request that arrives during that delay keeps the token and enters. With
// pass-delay=0 the token is passed in the same step. The notes' cost follows:
// "Messages are sent around the ring even when no process requires the
// token" (seed 001): 1 to infinitely many messages per CS, N/2 on average
// under load (seed 004 "Bandwidth: ∞", "Entry: n/2 avg, n-1 worst case").
// On Release the token goes on at once. With N = 1 the token never moves.
//
// Weaknesses kept as written (by default; see Regeneration for the
// variant): a lost token (its holder crashed, or the message was dropped)
// is never regenerated, since that needs an election (seed 001) and
// detecting the loss is the problem (seed 000); a recovered process, P0
// included, starts without a token. A duplicated token makes two
// holders possible. The order is the ring's, not first-come first-served
// (seed 000).
//
// Wait sets: a process that wants the CS and has no token waits for its
// predecessor P_(i-1) mod N, the only process the token can come from. When
// every process of a loaded ring wants the CS while the token is in transit
// these edges form a cycle; it is not a deadlock, because the message that
// breaks it is in flight. A deadlock check must discount edges whose
// awaited message is in a channel (as for Ricart-Agrawala's replies).
//
// Messages: token (no fields).
//
// # Regeneration
//
// With the parameter regenerate=true a lost token is made again: "If the
// process holding the token fails -> a unique process has to be picked to
// regenerate token and pass it along the ring (election algorithm)" (seed
// 001); "Token loss ... It will have to be regenerated" (seed 000). Each
// process embeds a machine of Chang and Roberts' election (package
// changroberts; election=ring for package ring) with its heartbeat
// detector (package fd, seed 004), which starts no election of its own at
// Start. As designed here:
//
//  1. Generations. Every token carries a generation number (Term). P0's
//     first token is generation 0. A process keeps the newest generation it
//     has seen (in stable storage, so that a restart does not forget it)
//     and discards a token of an older one.
//  2. Skipping. The token, probes and election messages go to the next
//     process the detector does not suspect (seed 000 "Process loss: what
//     if you can't talk to your neighbor?"; "If successor is down, skip
//     over"); a process waiting for the token waits for its live
//     predecessor. A token left with nobody live to pass it to stays until
//     a successor is heard from again.
//  3. Detecting the loss is the weak point (seed 000: "Detecting loss may
//     be a problem (is the token lost or in just use by someone?)"). A
//     process suspects a loss when it has not seen the token for
//     token-timeout (default 200ms: make it longer than a full circulation,
//     holding times included), or when the detector suspects the process
//     it last passed the token to and the token has not come by since. A
//     restarted process holds an election anyway (as the elections do). So
//     a token held long, or slow in transit, looks lost: every alarm is
//     only a reason to hold an election (none starts while one the process
//     takes part in is under way).
//  4. One maker. The elected process proposes the election's number as the
//     new generation (or, if it knows that one already, the next number of
//     its own above what it knows) and sends a probe round the ring before
//     it makes anything. Every process the probe passes takes the new
//     generation, so it refuses an older token from then on; a process
//     that holds the token marks the probe and its token takes the new
//     generation (it was not lost); one that knew the generation or a
//     newer one marks the probe stale. When its probe comes back unmarked,
//     and no token came by meanwhile, the elected process makes the token,
//     once. Any older token still in transit then reaches a process that
//     has seen the new generation and is discarded (or, if it reaches the
//     elected process while its probe is out, takes the new generation
//     there and the probe is forgotten): never two tokens. A
//     stale probe makes the elected process try again above the newer
//     generation; a probe lost to a crash is replaced at the next alarm.
//
// What the variant cannot handle. The probe skips the processes the
// detector suspects, so "never two tokens" rests on the detector being
// right (seed 004 "We can only suspect a crash!"). With D (fd-allowance)
// below the spread of delays, a probe skips live processes: one that holds
// or is about to receive the old token, or the origin of another probe,
// does not learn of the new generation, and two tokens can be in use at
// once (TestRegenFalseSuspicionTwoTokens). A token that spends longer in the
// network than a crash, a detection and an election (and reaches a process
// that restarted meanwhile without seeing the new generation) would be a
// second one; the seeds' synchronous model excludes it. Every false alarm
// costs an election and a probe round.
//
// Cost: without failures, the notes' token messages and nothing else but
// the detector's heartbeats (N(N-1) every T); per suspected loss, an
// election (chang-roberts 2N..3N-1) and a probe round (N). Messages:
// token (Term: generation), probe (ID: its origin, Term: the generation
// proposed, Stamp: a newer generation known on the way, Vals: the holder
// found), the election's and the detector's. Stable storage (Persist): the
// election's number (Term) and the newest generation seen (Stamp).
package tokenring

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
// Weaknesses kept as written: a lost token (its holder crashed, or the
// message was dropped) is never regenerated, since that needs an election
// (seed 001) and detecting the loss is the problem (seed 000); a recovered
// process, P0 included, starts without a token. A duplicated token makes two
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
package tokenring

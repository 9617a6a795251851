// Package ricart is the Ricart-Agrawala algorithm for mutual exclusion (dmx
// name "ricart-agrawala"), as the course notes give it: the rules [RI1],
// [RA1]-[RA3], [RE1] and [RH1] of seed 003 (slides 7-9), the pseudocode of
// seed 004 ("Ricard and Agrawala's Algorithm") and the prose of seeds 000 and
// 002.
//
// Each process is RELEASED, REQUESTED (seed 004: WANTED) or HELD:
//
//	[RI1] state := RELEASED.
//	[RA1] state := REQUESTED; T_Pi := the local logical clock of this request
//	      (Input.Clock of the Request input: the runtime ticks the Lamport
//	      clock before the machine sees the input).
//	[RA2] send the request (T_Pi, i) to all other processes.
//	[RA3] wait until replies from all other n-1 processes have arrived.
//	[RE1] state := HELD; enter the CS.
//	[RH1] on a request (T_Pj, j): if state = HELD, or state = REQUESTED and
//	      (T_Pi, i) < (T_Pj, j), queue the request without replying; else
//	      reply at once. Requests are totally ordered by timestamp, equal
//	      timestamps by process id (seed 003 slide 7).
//	exit  state := RELEASED; reply to every queued request (seed 004 "To exit
//	      mutex"; seed 000 "When done with critical section, send OK to all
//	      queued requests").
//
// Seed 003's text breaks off inside [RH1]; the condition above is the one of
// seed 004's pseudocode and seed 000's prose, which agree.
//
// Cost: exactly 2(N-1) messages per CS entry, N-1 requests and N-1 replies
// (seed 002; seed 004 "Bandwidth: 2(n-1)"); synchronization delay 1. With
// N = 1 a request enters at once with no message.
//
// Weaknesses kept as written: the failure of any process blocks every
// request (seed 000 "N points of failure"; seed 004 "Deadlock if any process
// fails"); replies are counted per process without naming the request they
// answer, as the notes count them, so a duplicated reply that arrives during
// a later request counts toward it (the notes assume reliable channels).
//
// Wait sets: while REQUESTED the machine waits for the processes whose reply
// is still missing.
//
// Messages: request (Stamp: T_Pi, ID: i); reply (Stamp: the T_Pj of the
// request it answers, ID: the replier), the notes' "OK".
package ricart

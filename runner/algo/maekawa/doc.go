// Package maekawa is Maekawa's voting-set algorithm for mutual exclusion
// (dmx name "maekawa"), as seeds 001 ("Maekawa's Algorithm") and 004
// ("Maekawas Algorithm") give it.
//
// Voting sets (seed 001): the N processes are put in a √N by √N grid and
// V_i is the row containing P_i plus the column containing P_i, of size
// 2√N-1; every process is in its own set and any two sets intersect. When N
// is not a perfect square the grid has c = ⌈√N⌉ columns and is filled row
// by row, so only the last row is short; P_i sits at row i/c, column i%c,
// and V_i is every process of its row and of its column. Any two sets still
// meet: if P_i and P_j share a row they meet there, else one of the cells
// (row of i, column of j) and (row of j, column of i) lies in a full row
// and holds a process. Sets near the short row are smaller, so the sizes
// are not all equal as seed 004's K = M condition wants (see VotingSet).
//
// The basic algorithm (parameter variant=basic, the default) is seed 001's
// "Maekawa's Algorithm - Actions", as written:
//
//	init:     state = RELEASED, voted = false
//	enter():  state = WANTED; multicast request to all processes in V_i;
//	          wait for reply (vote) messages from all processes in V_i,
//	          including the vote from self; state = HELD
//	exit():   state = RELEASED; multicast release to all processes in V_i
//	on request from P_j: if state == HELD or voted == true: queue the
//	          request; else send reply to P_j and set voted = true
//	on release from P_j: if the queue is empty: voted = false; else
//	          dequeue its head P_k, send reply only to P_k, voted = true
//
// The process's own request, vote and release are handled locally, as
// messages to itself that are never sent, so a CS entry costs 3(K-1)
// messages for |V_i| = K (about 3√N: seed 004 "Bandwidth: 3√n";
// synchronization delay 2).
//
// It is safe (seed 001 "Safety": the sets intersect and a process votes
// once at a time) but not live: "Since can have a deadlock. Example: all 4
// processes need access: P1 is waiting for P3, P3 is waiting for P4, P4 is
// waiting for P2, P2 is waiting for P1" (seed 001; seed 004 "Deadlock can
// happen with three processes!"). Two processes that ask at once while each
// has voted for itself already deadlock. The tests find such runs.
//
// The deadlock-free variant (variant=inquire) is Maekawa's own fix, "using
// Lamport clocks" (seed 004; seed 001 "There are deadlock-free versions"):
// requests carry (T_i, i), ordered by timestamp then id, and voters queue
// them in that order.
//
//   - A voter that has voted for L and gets a request R: if R precedes L and
//     every queued request, it sends inquire to L (once per vote) and a
//     failed to the request R displaced from the head of the queue, if that
//     one had none; otherwise it sends failed to R.
//   - A requester that gets inquire from v while it has received a failed
//     (from any voter, not yet followed by that voter's reply) gives v's vote
//     back with relinquish; otherwise it defers the inquire until a failed
//     arrives (then it relinquishes every deferred one) or it enters (then
//     its release answers). Giving a vote back counts as failed by that
//     voter until it votes again.
//   - A voter that gets relinquish queues L's request again and votes for
//     the head of its queue; on release it votes for the head, or for nobody.
//
// The variant assumes FIFO channels, as Maekawa does: an inquire must not
// overtake the vote it asks about.
//
// Wait sets combine the process's two roles so that the wait-for graph shows
// the notes' cycles: a requesting process waits for the members of V_i whose
// vote it lacks (other than itself), and a voter whose queue is not empty
// waits for the process it voted for, which must release before the queued
// requests get its vote (this is the edge through the process's own vote).
//
// Messages: request (Stamp: T_i, ID: i), reply (the vote), release; with
// variant=inquire also inquire (Stamp: the T of the request voted for),
// relinquish and failed (Stamp: the T of the request concerned).
package maekawa

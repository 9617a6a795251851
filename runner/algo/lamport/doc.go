// Package lamport is Lamport's mutual exclusion algorithm (dmx name
// "lamport"), as seeds 000 ("Lamport's Mutual Exclusion") and 002 ("Lamport
// Mutual Exclusion") give it:
//
//   - Each process maintains a request queue, ordered by Lamport timestamp
//     (seed 002); equal timestamps are ordered by process id, the total
//     order of seed 003 slide 7.
//   - Requesting: P_i sends request(i, T_i) to all other nodes, T_i its
//     Lamport time, and places the request on its own queue (seed 000; seed
//     002's "including itself" is this local placement, not a message).
//   - When P_j receives a request it enters it in its queue and returns a
//     timestamped ack to the sender only (seed 000; seed 002 "这个回复是单播的").
//   - P_i enters when (1) it has received a message, ack or release, from
//     every other process with a timestamp larger than T_i, and (2) its own
//     request has the earliest timestamp in its queue (seed 000).
//   - Releasing: P_i removes its request from its own queue and sends a
//     timestamped release message to every other process; a process
//     receiving it removes that process's request from its queue, which may
//     put its own request at the head (seed 000).
//
// Message timestamps: an ack or release carries the sender's Lamport clock
// at the input that caused it (Input.Clock), which for an ack is larger
// than the request's timestamp because the runtime merged the request's
// clock first.
//
// The algorithm assumes FIFO channels, as Lamport's original does and seed
// 002 states for the same scheme in totally-ordered multicast ("假设一个发送者
// 发送的所有消息都按照它们发送的顺序被接收"): otherwise P_j's ack, stamped
// after T_i, can overtake P_j's own earlier request, P_i sees condition (1)
// hold with its request at the head of its queue, and both enter. Run it
// on FIFO channels; the tests show the violation without them.
//
// Cost: 3(N-1) messages per CS entry, N-1 each of request, ack and release
// (DESIGN.md; seed 000 "Everyone responds (acks) ... always - no
// hold-back"). With N = 1 a request enters at once.
//
// Wait sets: a waiting process waits for the processes it has not yet heard
// from after T_i (condition 1) and those whose requests are ahead of its own
// in its queue (condition 2).
//
// Messages: request (Stamp: T_i, ID: i), ack (Stamp: the sender's clock),
// release (Stamp: the sender's clock, ID: the releaser).
package lamport

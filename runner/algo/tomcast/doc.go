// Package tomcast is Lamport's totally-ordered multicast with
// acknowledgements (dmx name "tomcast", kind algo.Multicast), as seed 002
// gives it ("Totally-Ordered Multicasting", 完全有序的多播); seed 000 uses
// the same queue-and-ack scheme for Lamport's mutual exclusion.
//
// The problem (seed 002): every process must deliver a group of messages in
// the same order ("多播操作是所有消息以相同顺序传递给每个接收者"). Seed 002's
// "Lamport details", as implemented:
//
//  1. Each message is timestamped with its sender's current logical time
//     (每条消息都使用其发送者的当前逻辑时间作为时间戳): Input.Clock of the
//     Request input that begins the multicast.
//  2. A multicast message is also sent to its sender (多播消息也都被发送到消
//     息的发送者): the machine sends it to every process, itself included,
//     as a real message (a Send whose To is its own id); it is queued when
//     that message arrives, like everyone else's copy.
//  3. The messages of one sender are received in the order sent, and none
//     is lost (假设一个发送者发送的所有消息都按照它们发送的顺序被接收，并且没有
//     消息丢失): the algorithm ASSUMES FIFO, reliable channels, its own
//     channel to itself included. It does not check them; without FIFO the
//     processes can deliver in different orders, and the tests find a run
//     that does.
//  4. A process puts each message it receives in a local queue ordered by
//     timestamp (进程把接收到的消息放入一个本地的队列中，按照消息的时间戳顺序);
//     equal timestamps are ordered by sender id, which is the seed's
//     L(e) = M*Li(e) + i made explicit (使用进程ID保证不同进程的逻辑时钟的不
//     一致).
//  5. The receiver multicasts an ACK to all the other processes (消息的接受
//     者向其他所有进程多播一个ACK): to every process, itself included, as
//     for the message (the sender acks its own message too).
//  6. A message is delivered only when it is at the head of the queue and
//     every participant has acknowledged it (只有在队列头部和所有参与者都认
//     可的情况下才能发送消息). The seed asks "what does acknowledged at the
//     head mean?"; here: the head of the queue is delivered once an ACK for
//     it has arrived from all N processes, and then the next head is
//     examined.
//
// Why it works (seed 002 "实现原理"): an ACK is stamped later than the
// message it acknowledges (Lamport clock), so once P_j has acked m, every
// message P_j multicasts later has a larger timestamp; and by FIFO every
// message P_j multicast earlier, with a smaller timestamp, has reached the
// receiver before P_j's ACK. So when the head m has ACKs from everyone, no
// message that precedes m can still arrive, and every process's queue
// yields the same order.
//
// An ACK can arrive before the message it acknowledges (it comes from a
// third process, on another channel): it is kept in the queue entry, which
// is not deliverable until the message itself has arrived.
//
// Multicasts are begun by the workload: each Request input multicasts one
// new message. The machine outputs nothing for the Request but the sends;
// there is no Enter and no Release for a multicast algorithm.
//
// Cost: a multicast sends N copies of the message and N ACKs from each of
// the N processes, N + N² sends in all. N+1 of them are to oneself (the
// origin's own copy, and each process's ACK to itself), so (N-1) + N(N-1) =
// N²-1 messages cross the network.
//
// Outputs: Delivered{From: the origin, Msg: {Type: "msg", Stamp: the
// timestamp, ID: the origin's sequence number of the multicast, from 1}}.
//
// Messages: msg (Stamp: the timestamp, ID: the origin's sequence number;
// the origin is the sender), ack (Stamp: the timestamp of the message
// acknowledged, ID: its origin).
package tomcast

// Package link is the reliable, in-order link that dmx's drivers give the
// algorithms (seed 004, "Assumptions": reliable communication, the
// underlying protocol handles re-transmission; Lamport's algorithms add
// FIFO channels). Two drivers use it: the UDP transport (runner/udp),
// which numbers, acknowledges and retransmits real datagrams, and the
// simulator's model of that transport (runner), which must do to a message
// what the transport does to a datagram so that a seed means the same
// under dmx sim and dmx run.
//
// It holds what both share and nothing of either: the receiving end of a
// channel (InOrder), and the retransmission constants (InitialRTO, MaxRTO,
// MaxTries). After stateright's ordered_reliable_link.rs, which both its
// model checker and its UDP runtime use.
package link

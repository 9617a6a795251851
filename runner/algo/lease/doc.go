// Package lease is the Chubby-style election with a master lease (dmx name
// "lease"), as seed 001 gives it ("Election in Google Chubby"):
//
//	Election protocol: potential leader tries to get votes from other
//	servers; each server votes for at most one leader; server with
//	majority of votes becomes new leader, informs everyone.
//	Why safe? Each potential leader tries to reach a quorum. Since any two
//	quorums intersect, and each server votes at most once, cannot have two
//	leaders elected simultaneously.
//	After election finishes, other servers promise not to run election
//	again for "a while" ("master lease", a few seconds). Master lease can
//	be renewed by the master as long as it continues to win a majority
//	each time. Lease technique ensures automatic re-election on master
//	failure.
//	Why live? Only eventually live! Failures may keep happening so that no
//	leader is ever elected.
//
// Here, with L the parameter lease (default 100ms):
//
//  1. Candidacy. A server stands when no lease it granted runs: it takes
//     the next term, votes for itself, and sends vote-request(term) to all.
//  2. Votes. A server votes (vote(term)) for at most one candidate per term,
//     and for none while a lease it granted to another runs. Its vote is a
//     grant: it promises not to stand and not to vote for anyone else for
//     L from the moment it votes. The vote (term, candidate) is Persisted,
//     so that a restarted server does not vote twice in one term. A
//     candidate's vote for itself is the one exception: asked by a
//     candidate of a higher term, it gives its own candidacy up and may
//     vote (otherwise two candidates standing in turn could refuse each
//     other for ever).
//  3. Master. A candidate with votes from a majority (itself included) is
//     master for the term. Its lease runs L from the moment it asked for
//     the votes, so it ends before any of its voters' promises does. It
//     informs everyone at once with renew(term).
//  4. Renewal. Every L/3 the master sends renew(term, round) to all; a
//     server that gets it takes the sender as master (a Leader output),
//     renews its promise to it for L and answers renew-ack(term, round).
//     When a majority (the master included) has acked a round, the lease
//     runs L from the moment the round was sent.
//  5. Step down. A master whose lease runs out without a renewed majority
//     no longer leads: it outputs Leader with Leader = -1 (none).
//  6. Re-election. A server whose promise runs out stands, after a back-off
//     of (N - id) times the parameter backoff (default 10ms): the highest
//     ids stand first, so that candidates seldom split the votes. This
//     order is this package's choice; the seed leaves it open ("It doesn't
//     matter which process is elected").
//  7. Restart. A restarted server has forgotten the promises it made (only
//     its vote is stable): it neither votes nor stands for L after its
//     restart, by which time any promise it made has run out.
//
// No two servers believe they are master at once: a new master needs a
// majority of votes, one of them from a server that acked the old master's
// last renewed round (any two majorities intersect) and refuses to vote
// until its promise, which outlasts the old lease, runs out; the old master
// steps down when its lease ends. This needs clocks that run at the same
// rate, as the simulator's do; leases are the seed's answer to crashes, not
// to partitions. Term numbers order renewals: a server ignores the renewal
// and vote requests of a term lower than one it has seen.
//
// Cost: an election without competition costs N-1 vote-requests and N-1
// votes; every renewal round N-1 renews and N-1 acks.
//
// Messages: vote-request (Term), vote (Term), renew (Term, Stamp: the
// round), renew-ack (Term, Stamp). Persisted: vote (Term: the term of the
// last vote, ID: whom it went to, Stamp: the highest term seen).
package lease

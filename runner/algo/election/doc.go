// Package election is what dmx's election machines (bully, ring,
// chang-roberts) have in common, and how a mutual-exclusion machine embeds
// one of them (central with failover, token-ring with regenerate=true).
//
// The machines share their parameters (timeout, initiators and the failure
// detector's fd-period, fd-allowance and fd-stall, read by Configure), their
// election numbers (NextTerm), the ring neighbour that skips suspected
// processes (Successor), and the record of the leader decided (Decision). Each keeps
// its own Step: the rules of the algorithms differ, and each cites its own.
//
// A host machine that embeds an election builds it with SubConfig and
// passes every output of it through a Host, which keeps what the
// election's detector suspects and folds the election's Persist into the
// host's own record (stable storage holds one value per process).
package election

// Package majority is the decentralized voting algorithm for mutual exclusion
// (dmx name "majority"), as seed 002 gives it ("Decentralized Algorithm",
// 非集中式): the resource is replicated on n coordinators, and a process
// needs the votes of a majority of them.
//
// The seed's points, as implemented:
//
//  1. There are n coordinators (有n个协作者): parameter coordinators=k, the
//     processes 0..k-1 (default every process, k = N). Every process can
//     request; a coordinator is a requester too.
//  2. A process needs the agreement of m > n/2 coordinators (需要获得 m (>
//     n/2) 个协作者的同意): m = ⌊k/2⌋+1, the smallest majority.
//  3. A coordinator answers a request with GRANT or DENY (协作者用GRANT或DENY
//     响应一个请求), exactly one answer per request, and has one vote to
//     give at a time.
//  4. A coordinator that crashes and restarts forgets the vote it gave and
//     votes again, so more than one process can hold more than n/2 votes
//     (协作者奔溃后重启，会忘记已经投过票，然后重新投票): parameter forget=true.
//     With forget=false (the default) the coordinator keeps its vote in
//     stable storage (see Persist below) and a restart changes nothing.
//  5. A process short of votes backs off and retries, and may never get the
//     resource: starvation (进程的票数不够时，会退回重试，也可能一直不得到资源，
//     造成饥饿). It gives back the votes it got and retries after a random
//     back-off drawn from parameter backoff (Config.Rand).
//  6. Many requesters hurt availability (大量请求访问的节点会影响可用性): under
//     contention attempts fail and are retried.
//
// Timestamps. The seed adds: "so that many simultaneous requesters do not
// leave everyone without access, the requester timestamps its request, the
// coordinators vote in timestamp order, and the requester tells the
// coordinators when it has finished" (请求带上时间戳，其他协作者按照时间戳的先
// 后顺序进行投票允许，同时请求者还需要在访问结束后通知所有其他协作者访问已释放).
// A request is (T, i): T is the Lamport clock of the attempt (Input.Clock of
// the Request input, or of the back-off timer for a retry), ties broken by
// process id. "Vote in timestamp order" is implemented so that each vote
// goes to the earliest request the coordinator knows of, and answers stay
// GRANT or DENY:
//
//   - A free coordinator grants at once (its queue is empty: see below).
//   - A coordinator whose vote is with H holds back its answer to a request
//     R that precedes H, queued in timestamp order: R comes before H and
//     would have had the vote. It answers DENY at once to a request that
//     follows H: in timestamp order that one comes after a vote already
//     given.
//   - When the vote comes back (release), the coordinator grants the
//     earliest queued request and denies the others, which follow it.
//
// So the globally earliest request is never denied by a coordinator whose
// vote is with a live later request, which is what the seed wants the
// timestamps for; it can still be denied by a vote that went to an attempt
// that has just ended, its release still on the way, and that is how
// attempts keep failing under contention. Every held-back answer waits for a holder with a later
// timestamp, so the waits cannot form a cycle: no deadlock. Two
// alternatives were rejected: denying whenever the vote is taken ignores
// the timestamps altogether, and queueing every request (never denying) is
// Maekawa's scheme, which deadlocks when the votes split (seed 001).
//
// A process decides as soon as it can: it enters the CS when it holds m
// grants, and it gives up when more than k-m coordinators have denied (m
// grants are out of reach); it does not wait for the answers still
// missing. Each attempt ends with a release (Stamp: the attempt's T) to
// every coordinator, after the CS as the seed says (通知所有其他协作者), and
// after giving up: that gives back the votes it got and withdraws the
// requests still queued. A coordinator that receives release(T) from P_j
// forgets every request of P_j up to T (its vote, its queue entry) and
// remembers T, so that a request overtaken by its own release on a non-FIFO
// channel is ignored when it arrives. A new request from P_j likewise ends
// P_j's older ones (a process asks again only after its release). A grant
// for an attempt the process has already released is dropped (the release
// is on its way to that coordinator); a grant for an attempt it knows
// nothing of (it crashed since) is given back with a release.
//
// Each attempt uses a fresh timestamp: a retry is a new request. This is
// what makes point 5 true; a process that kept its first timestamp would
// become the earliest and could not starve. Retries with fresh, later
// timestamps can lose again and again to processes that ask in between, and
// processes that back off for the same time can collide again and again
// (livelock). The tests show both; with a random back-off wide enough
// against the message delays runs finish.
//
// Crashes (seed 002 summary point 4: none of these algorithms tolerates a
// crash or a lost message). A crashed process loses its queue, its
// remembered releases and its own request. Requesters whose answer was held
// back by a crashed coordinator, or whose request or release was lost, may
// wait for ever; a vote given to a process that crashed holding it stays
// given (a grant that reaches the restarted process is given back, one
// lost with the crash is not). With forget=false the coordinator's vote
// survives: it outputs an algo.Persist of the vote (Msg{Type: "vote", ID:
// holder, Stamp: T}; Stamp 0 for no vote) whenever the vote changes, before
// the grant that gives it, and on Recover it restores the vote from
// Input.Msg. With forget=true it persists nothing and a restart votes
// afresh: two processes can be in the CS at once, as point 4 warns.
//
// Cost per attempt of a process, with k' coordinators other than itself
// (k' = k-1 for a coordinator, k for any other process): k' requests, at
// most k' answers (a withdrawn request gets none), k' releases. An
// uncontended CS entry costs exactly 3k' messages (3(N-1) by default); a
// failed attempt costs up to 3k' more. Its own request, answer and release
// are handled locally, never sent. With N = 1 a request enters at once.
//
// Wait sets: while an attempt is open, the coordinators whose answer is
// missing; when its own coordinator holds its answer back, the process its
// own vote is with (which must release first). A process backing off waits
// for nobody (only for its timer).
//
// Messages: request (Stamp: T, ID: requester), grant (Stamp: the T of the
// request answered), deny (likewise), release (Stamp: T, ID: requester).
package majority

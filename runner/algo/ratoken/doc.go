// Package ratoken is Ricart and Agrawala's second, token-based algorithm
// for mutual exclusion (dmx name "ra-token"), with the rules of seed 001
// ("Ricart-Agrawala Second Algorithm"):
//
//	[RI1] state := NO-TOKEN at every process except one, P_x, whose state is
//	      TOKEN-PRESENT (parameter "initial", default 0).
//	[RI2] token[k] := 0 and request[k] := 0 for all k.
//	[RA1] if state = NO-TOKEN: send the request (T_Pi, i), T_Pi := C_Pi, to
//	      all other processes and wait for the token. Then state :=
//	      TOKEN-HELD and P_i enters the CS. (P_i may already possess the
//	      token: it then enters at once, without a message.)
//	[RH1] on a request (T_Pj, j): request[j] := max(request[j], T_Pj).
//	[RH2] if state = TOKEN-PRESENT, release the token as in [RR2].
//	[RR1] on leaving the CS: state := TOKEN-PRESENT.
//	[RR2] for k in i+1, ..., n, 1, ..., i-1: if request[k] > token[k] then
//	      state := NO-TOKEN, token[i] := C_Pi, send the token to P_k, stop.
//
// Ids here are 0..N-1, so the search order is (i+1) mod N, ..., (i+N-1) mod
// N. C_Pi is the Lamport clock of the input being handled (Input.Clock). If
// no request is pending the holder keeps the token (TOKEN-PRESENT) and may
// enter again without a message; an incoming request then makes it pass the
// token ([RH2]).
//
// Cost: N messages per CS entry, N-1 requests and one token, or 0 when the
// process already holds the token (seed 001). Synchronization delay 1.
//
// Weaknesses kept as written: the token is lost with its holder (seed 001:
// "The failure of a process, except the one which holds the token, doesn't
// prevent progress"). A recovered process starts with [RI2]'s request[] and
// NO-TOKEN, even the initial holder P_x: [RI1] hands out the one token when
// the system starts, not when a process restarts (which would make two).
// The order is that of the search, not of the requests' timestamps.
//
// Wait sets: a waiting process needs the token, and does not know who holds
// it, so it reports none. (Edges to every other process would make any two
// waiting processes look deadlocked; the algorithm cannot deadlock while the
// token exists.)
//
// Messages: request (Stamp: T_Pi, ID: i); token (Vals: token[0..N-1]).
package ratoken

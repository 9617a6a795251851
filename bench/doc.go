// Package bench measures what recording costs a real run: dmx measures
// algorithms in wall time, so its own overhead must stay small next to a
// network hop, or its figures describe dmx and not the algorithm.
//
// Two measures, taken in the same run so that their ratio holds on a busy
// machine:
//
//   - The floor (Ring): a token passed round a ring of N OS processes over
//     loopback UDP, nothing else. Its hop time is what one message costs
//     when nothing records anything: 1/(2 hops) critical sections a second
//     is the most the central algorithm can do (a release to the
//     coordinator, a grant to the next), 1/(1 hop) the most Ricart-Agrawala
//     can do under high contention (the leaver's deferred OK lets the next
//     one in).
//   - The real thing (Sections): critical sections per second of `dmx run`
//     with no think and no hold time, everyone asking again at once,
//     recorded into a trace as dmx run records it.
//
// `dmx bench` (a hidden command) prints both, paired round by round; the
// ring's processes are dmx itself, re-executed as `dmx bench ring-node`.
package bench

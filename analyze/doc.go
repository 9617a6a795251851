// Package analyze checks properties of recorded runs after the fact.
//
// It reads the events of one run through a trace.Reader, in one pass, and
// needs nothing but the event model: traces of programs dmx did not write
// are analyzed the same way as dmx's own.
//
// Walk rebuilds happens-before from program order and send/receive pairs
// (it does not trust the recorded clocks) and hands the events to a visitor
// in a causal order, with an HB that answers "did this event happen before
// the current one?" in O(1). Its memory is one vector clock per process plus
// one per message in flight, never one per event, so million-event traces
// are checked in memory that does not grow with their length.
//
// Checks are values (Check: a name, a doc string, what they need, and a
// constructor of a streaming Checker), in the manner of go/analysis.
// Evaluate drives any set of them over one pass of a trace; its options
// (a Config) say what the trace cannot: the validity rule the run's
// algorithm promises, the bound on overtaking, the checks whose data is
// required. A violation is a Finding that names the events involved (and,
// for a trace imported from a log, the file and line each came from, and
// its processes by the names the log gives them); a Result's Verdict is ok,
// violated, unknown when the trace cannot decide (a run cut short, a crash
// that nothing orders against another's entry, a request still in progress
// at the run's end), not applicable when the run has nothing the check
// judges, or skipped when it lacks the data the check needs (no wall
// times). Neither of the last two counts as ok (Summarize), and no check
// says ok of a run the trace does not hold whole (Incomplete says why).
// Evaluate returns an error only when the trace could not be read or breaks
// the event model's rules, or has a detail a check must read and cannot (a
// BrokenError names the event). docs/checks.md says what each verdict rests
// on.
//
// Every check holds on traces of other programs that have the events it
// needs: each resource's election is judged on its own, a multicast's
// group is who it was sent to, a foreign trace's leaders are held to the
// weak validity rule unless its run names its algorithm, what only wall
// times can order is unknown without them, and a run may declare Raft's
// step-down rule ({"step_down": "higher-term"}: a leader stops leading on
// hearing a higher term). The checks only some algorithms promise (fairness, starvation:
// Check.Promise) are left out of General, what such a trace gets.
//
// A trace that breaks the event model is an error, not a finding: a gap or
// repeat in a process's sequence numbers, a receive whose message is never
// sent (or only after the receive, a causal cycle), a message id sent twice,
// a message received by two processes, a process id out of range. The rows
// of a process may come in any order (the schema's id is only insertion
// order): Walk takes them by sequence number. Program order and the
// message pairs are what every check stands on; past such an event, any verdict would rest on a
// guessed happens-before, so Evaluate reports the events (*BrokenError, all
// parked receives joined at the end, each cause once with the receives
// that wait behind it) and gives no verdicts. What the rebuilt
// happens-before can go on from is a finding of a check: wrong recorded
// clocks, a receive naming the wrong sender (check "clocks"). A message id
// received twice by the same process is a duplicated delivery, not an
// error.
//
// The checks are in All; Lookup finds one by name. A check's findings are
// capped at MaxFindings, the rest counted in its Note.
package analyze

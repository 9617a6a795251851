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
// constructor of a streaming Checker), in the manner of go/analysis. Run
// drives any set of them over one pass of a trace. A violation is a Finding
// that names the events involved; a Result's Verdict is ok, violated, or
// unknown when the trace cannot decide (a run cut short, no wall-clock
// times). Run returns an error only when the trace could not be read or
// breaks the event model's rules (a BrokenError names the event).
//
// The checks are in All; Lookup finds one by name.
package analyze

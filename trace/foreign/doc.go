// Package foreign turns the logs of programs dmx did not write into dmx
// traces, and dmx traces into the formats other tools read. It holds what
// every format shares; one subpackage per format (trace/format/shiviz,
// govector, perfetto) parses or writes its own syntax, and trace/format
// lists them all by name.
//
// Import is three steps. A format's parser reads the files into a Log: per
// execution, each event's host, vector clock (host -> count, as ShiViz and
// GoVector write it), text, other named fields and the file and line it
// came from. Build checks the log against ShiViz's validity rules, maps
// texts to event kinds with Rules, rebuilds the messages from the clocks,
// derives Lamport clocks and gives one trace run per execution. Write
// stores the runs.
//
// The rules Build applies (also in dmx import --help):
//
//  1. Hosts are processes, numbered in the order they first appear.
//  2. A host's events are ordered by their own clock entry, which starts
//     at 1 and rises by exactly 1 from one event to the next (ShiViz's
//     rule; the log may list them in another order, as ShiViz allows): the
//     own entry of an event is its sequence number. Every other entry never
//     falls from one event of the host to the next, and names a host of the
//     log and an event that host logged.
//  3. An event merged host X's event t when its clock shows X at t, more
//     than the event before it on the same host showed. Of the events so
//     merged, those that another merged event already knew (its clock
//     shows X at t or more) came along with it and are not merged
//     directly; each of the others is a message from it to the event.
//     So a receive is matched with the send whose clock it merged, however
//     many sends of that host came before without a receive between them
//     (only the last one can be merged: each send's clock holds the ones
//     before it), and one send merged by several hosts (GoVector sends one
//     event per message, but a broadcast of one buffer is one event) is
//     one message to each of them. An event that merged several clocks
//     directly receives several messages.
//  4. The clock of an event must dominate the clock of every event it
//     merged (a receive's clock dominates its send's), and no two events
//     may merge each other (a causal cycle).
//  5. An event whose text a rule matches gets the rule's kind (cs_request,
//     cs_enter, cs_exit, wait, election_start, leader, step_down (a leader
//     event naming no leader), crash, recover, or send and receive with a
//     message id that pairs them when clocks cannot: a send nobody
//     received, or a receive whose send the receiver already knew, and the
//     term a message carries); otherwise it is a receive if it merged a
//     message, a send if one was merged from it, else internal. A log that
//     dmx export wrote gets DMXRules without being asked (Import). The first message of
//     a send or receive is its msg column; the others, and all those of an
//     event of another kind, are the event's trace.Links.
//  6. Lamport clocks are derived from happens-before: one more than the
//     largest of the event before and the events merged.
//
// Before Build, Import gives the events the wall times a field of theirs
// holds (WallTimes: a timestamp, date or time group, its layout given or
// inferred). Parsers skip a byte-order mark, read clocks whose quotes are
// escaped (TLA+ traces), and skip the text a ShiViz regex does not match,
// as ShiViz does (Log.Notes counts it).
//
// Anything that breaks these rules is a Problem naming the file and line:
// an error, unless the import is lenient, which skips what it cannot use
// (an event, or a clock entry) and counts what it skipped and why.
//
// Export goes the other way: Load reads runs of a trace with clocks
// rebuilt from happens-before (never trusting the recorded ones) in a
// causal order, and Text writes each event as a line of text that the
// rules of DMXRules read back.
package foreign

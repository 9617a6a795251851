// Package trace is dmx's event model and its storage.
//
// An Event is one causally stamped thing that happened at one process: a
// send, a receive, a critical-section entry, a leader decision. Events carry
// a Lamport clock and a vector clock as the recording runtime stamped them;
// analyzers rebuild happens-before from program order and send/receive pairs
// and only verify those recorded clocks, so traces of programs dmx did not
// write (imported GoVector or ShiViz logs) are analyzed the same way.
//
// The package owns the event model: Event and its kinds, and the shape of
// each kind's detail. Each shape is a Go type (Start, Leader, Wait, Crash,
// Timeout, Delivery, Message, ...; detail.go); AppendDetail is the one
// encoder, which the runtime records with, and the accessors on Event
// (Leader, Wait, Delivery, ..., and Details for any kind) are the one
// decoder, which checks, renderers and importers read with. The decoder
// accepts what foreign traces write (extra keys, 3.0 or "3" for 3) and
// names the event and the key when it cannot read a detail. The same goes
// for an event on the pipe from a node process to the runner: AppendWire
// and ParseWire are its only encoding.
//
// An event imported from another program's log (see trace/foreign) also
// says where it came from (Origin: the file and line, its text, the log's
// fields; Source gives the file and line that findings name) and may send
// or receive more messages than its Msg column holds (Links: an event of a
// foreign log may merge several clocks at once). EncodeImported writes
// both beside the kind's detail; the Writer puts the Links into the
// messages table, and happens-before follows them.
//
// A trace is one SQLite file (see Store) holding one or more runs. Its schema
// is public and versioned with PRAGMA user_version (Schema documents every
// table and column; the README quotes it). Readers hand events out one at a
// time (Reader, ending in io.EOF) so that analyses of million-event traces
// run in memory that does not grow with the trace.
//
// Recording: Create opens a file for writing (WAL mode, so that several dmx
// processes may append runs at once and readers may look while it grows),
// BeginRun adds a run, a Writer per run batches events into transactions and
// keeps the messages table (a Spool puts a spool file and a low-priority
// thread in front of one, for a recorder whose SQLite work must not take
// cores from what it records), EndRun marks the run complete or not, and Close
// folds the WAL back so that the file is self-contained. Analysis: Open
// checks the file and opens it read-only; Events streams a run.
package trace

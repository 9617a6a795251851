// Package perfetto writes runs as Chrome trace-event JSON, which
// ui.perfetto.dev (and chrome://tracing) open: a track per process, each
// event a point on it, critical sections and the waits before them as
// slices, messages as flow arrows from send to receive, crashes as instant
// events. Time is the events' wall time from the start of the run; a run
// without wall times (an imported log) is laid out by Lamport clock, one
// microsecond per tick.
package perfetto

// Package govector reads and writes GoVector's logs
// (DistributedClocks/GoVector).
//
// GoVector writes one log per process, two lines per event: the process's
// name and its vector clock as JSON ("p1 {"p1":3, "p2":4}"), then the
// message. The first event is "Initialization Complete". Current GoVector
// puts the event's priority before the message ("INFO Sending Message"),
// older versions and sends and receives do not; Parse keeps the priority
// as the field "priority" and the rest as the text. With timestamps on,
// the clock line starts with the wall time in ns. A log appended to over
// several executions has a "=== Execution #... ===" line before each;
// execution k of every file makes run k. GoVector's own tool merges the
// logs into one ShiViz file (its regex on line 1): Parse reads that as
// package shiviz does.
//
// WriteDir writes GoVector's logs back, one file NAME-Log.txt per process,
// with the clocks that happens-before gives.
package govector

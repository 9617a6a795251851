// Package shiviz reads and writes ShiViz logs (DistributedClocks/shiviz).
//
// A ShiViz file has the parser regex on line 1 (ShiViz's default when the
// line is empty), the execution separator regex on line 2 (none when
// empty), then the log. The regex, in JavaScript's syntax, is matched over
// the whole log (multi-line: ^ and $ match at line ends); each match is an
// event whose named groups host, clock (a JSON object of host -> count)
// and event (its text) ShiViz requires, and whose other named groups are
// fields. The separator splits the log into executions, each named by its
// "trace" group. Parse also reads a bare log, given the regex; text that
// the regex does not match, which ShiViz skips silently, is a problem here
// (a cut clock or a missing text line is the usual cause).
//
// Write writes a file ShiViz opens as it is: GoVector's regex on line 1,
// one execution per run (a separator line when there are several), each
// event as "host {clock}" and its text on the next line, with the clocks
// that happens-before gives.
package shiviz

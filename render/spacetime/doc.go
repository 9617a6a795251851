// Package spacetime draws space-time (Lamport) diagrams of recorded runs,
// the pictures the course notes draw by hand: one lane per process, time
// flowing right, an arrow per message, and the findings of the checks drawn
// in.
//
// Drawing is three steps, each its own function:
//
//  1. Build reads a run's events (twice, streaming: once to find the
//     window, once to keep what is in it) into a Diagram: the lanes, the
//     events of the window, the messages with their fates, the critical
//     sections, the down times of crashed processes, and the findings of
//     analyze with their events resolved. A window holding more than
//     Options.MaxEvents events is refused with the advice to narrow it.
//  2. Layout places everything: events in columns by Lamport time (one
//     column per distinct clock value, so a message always points right)
//     or by wall time (idle stretches cut short and marked), lanes in
//     rows, labels where they do not cover each other. Runs of three or
//     more local events are collapsed into one node, as ShiViz does. The
//     result is a Picture: shapes and lines at fixed positions, in points.
//  3. A writer turns the Picture into a file: WriteDOT (Graphviz with every
//     position pinned, so Graphviz lays nothing out and its time is linear
//     in the picture), WriteSVG (that DOT drawn by Graphviz compiled to
//     WebAssembly, through go-graphviz: nothing to install), WritePNG
//     (painted by this package with golang.org/x/image and the Go fonts,
//     embedded: no Graphviz and no font on the machine needed). The three
//     come from one Picture, so they show the same thing. WriteMermaid
//     writes a Mermaid sequence diagram of a small window instead.
//
// What is drawn: lanes labelled with the process and its role at the start
// (Options.Roles); messages coloured by type and labelled with it, a cross
// where one was dropped or lost to a crash, an open arrow to the edge for
// one in flight at the end, short stubs for messages from or to outside the
// window; critical sections as bars coloured by resource, with the wait
// from request to entry dashed; crashes as red crosses, the lane dashed
// while down, recoveries as green rings; suspicions, elections and leader
// decisions marked and named; a key; and each finding in red: its sections
// and reigns as red bars, a missing ordering as a dashed red arrow from the
// event that should have come first, a deadlock's wait-for cycle edge by
// edge right of the lanes (where the run ended) with the events that made
// each edge tagged, the deliveries of two multicasts joined across
// processes so that a divergence of total order shows as crossing lines.
package spacetime

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
//     sections, the reigns (a process believing it leads), the faults
//     acting (partitions, pauses), the down times of crashed processes, and
//     the findings of analyze with their events resolved. Whatever began
//     before the window and lasts into it is kept, to be drawn from the
//     window's edge. A window nobody gave (Options.Auto) is chosen by what
//     matters: the first finding; else the faults, each with what followed
//     it; else the whole run if it is short; else its start (Diagram.Why
//     says which, Diagram.Rest what lies outside and how to draw it). A
//     failure detector's heartbeats are left out and counted. A window
//     holding more than Options.MaxEvents events is refused with the
//     advice to narrow it.
//  2. Pages places everything: events in columns by happens-before (each
//     one right of its process's previous event and of the send of what it
//     receives, as ShiViz lays out), or by wall time with idle stretches
//     cut short; where the run's clock agrees with happens-before, a fault
//     starting or ending and a recovery are aligned after everything
//     before them in wall time, so that a paused process resumes where
//     the others are. A long window wraps into rows and rows into
//     numbered pages of bounded width, height and aspect (MaxWidth,
//     MaxHeight, MaxAspect), cut where fewest messages cross; runs of three
//     or more local events become one node; labels are placed last, most
//     important first, where they cover no other text nor any event, and
//     a mark with no room is left to a numbered note under the key. Each
//     page is a Picture: shapes and lines at fixed positions, in points.
//     Draw builds and lays out in one call, choosing a smaller window when
//     a chosen one would take more than one page.
//  3. A writer turns a Picture into a file: WriteSVG (written directly:
//     dmx computed every position), WritePNG (painted by this package with
//     golang.org/x/image and the Go fonts, embedded: no font on the machine
//     needed), WriteDOT (Graphviz with every position pinned; DOTToSVG
//     draws it). The three come from one Picture, so they show the same
//     thing. WriteMermaid writes a Mermaid sequence diagram of a small
//     window instead. Graphviz (go-graphviz) lays out what dmx does not
//     place itself: the wait-for graph of a deadlock.
//
// What is drawn: lanes named as the run names them (an imported log's
// hosts, with dmx's P2 under the name) and the processes' roles at the
// start; messages coloured by type (render/palette, the colours dmx serve
// uses too) and labelled with it, a grey cross where one was dropped or
// lost to a crash, an open arrow to the edge for one in flight at the end,
// short stubs for messages from or to outside the window or another row;
// critical sections as bars coloured by resource, with the wait from
// request to entry dashed under the lane; reigns as thin gold bars over the
// lane; partitions and pauses as bands (faults of the network, a delay or a
// loss, named at the head); messages a process sends itself as arcs over
// its lane; crashes as black crosses, the lane
// dashed while down, recoveries as green rings; suspicions, elections and
// leader decisions marked and named; a head that says which window this
// is, why, and how to draw the rest; a key; and each finding in red, the
// only red of the picture: its sections and reigns as red bars, a missing
// ordering as a dashed red arrow from the event that should have come
// first, a deadlock's wait-for edges tagged at the events that made them,
// the deliveries of two multicasts joined across processes so that a
// divergence of total order shows as crossing lines.
package spacetime

// Package htmlreport writes the report of recorded runs as one
// self-contained HTML file (dmx report, dmx check --report): what CI
// publishes as a single artifact. For each run it has the verdict table of
// its checks, each finding with its space-time picture (the window of the
// finding, a deadlock with its wait-for graph), the picture of the faults
// or of the whole run when nothing was found, the plots of throughput,
// waiting and latency over time, the measures beside the seeds' figures,
// and the command that runs it again.
//
// Self-contained means no network and no other file: the pictures are
// inline SVG (written by render/spacetime and render/plot, in dmx's one
// palette, render/palette), the style is inline, there is no script, and
// nothing is fetched (the only URL is SVG's namespace). The caller
// computes the parts (cmd/dmx, which has the trace, the checks and the
// registry); Write lays them out, escaping every text of the run as
// html/template would (Page: markup written as it is, text escaped).
// It does not use html/template itself: its templates call methods by
// reflection, which makes the linker keep every exported method of every
// type in dmx's binary (cmd/dmx's TestLayers keeps it out).
package htmlreport

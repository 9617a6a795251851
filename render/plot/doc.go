// Package plot draws what Jepsen and Maelstrom users look at first: a
// run's throughput and latencies over wall time. Three panels share one
// time axis: critical sections entered per second, the waiting time of
// each entry (request to entry) with its median, and message latency
// (send to receipt: the median per receiver and of all, and the 99th
// percentile of all). Each process has its colour of the one palette
// (render/palette), the total is black; the stretches in which a fault
// acted (a crashed process until its recovery, a partition, a pause) are
// shaded across the panels and named above them, and the findings of dmx
// check are red lines at their first event, numbered as dmx check numbers
// them.
//
// Read reads a run's events into Data (one pass, streaming); Draw lays the
// plot out as a spacetime.Picture, written as SVG (spacetime.WriteSVG) or
// PNG (spacetime.WritePNG) by the writers of the diagrams. dmx plot and the
// HTML report (dmx report) draw it.
package plot

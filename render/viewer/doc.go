// Package viewer is dmx serve: a local web server and the page it serves,
// an interactive space-time diagram of recorded runs that stays fast at a
// million events.
//
// The page never holds a whole run. It asks the server for windows: the
// events of a stretch of Lamport or wall time, with both ends of their
// messages, the critical sections and down times that overlap it. A window
// is one SQL query through the trace's time indexes (trace.LamportIndex,
// trace.WallIndex) joined with the messages table, plus what the server
// keeps in memory for each run: its critical sections and crashes (read
// once from their partial indexes) and per-process event counts in 4,096
// slices of the run on each axis, from which the overview strip and the
// zoomed-out views (too many events to draw one by one) are drawn. A trace
// recorded before the time indexes existed is read by scanning, and the
// page says so.
//
// Around the diagram the page has the findings of dmx check (computed in
// the background when a run is first shown; a click moves the window to a
// finding and draws its structure), a SQL box whose result rows are
// highlighted in the diagram (read-only, with a time limit), the details of
// a clicked event with its causal past and future (from vector clocks: a
// handful of indexed lookups, never a walk over the run), the algorithm's
// state after the event where a replay is wired in (Options.State), and a
// second run below the first with the first event where each process's
// history differs marked.
//
// Security: the server is meant to listen on loopback. It answers only
// requests whose Host is an IP address or localhost with its own port (a
// page of another site that rebinds its DNS name to 127.0.0.1 is refused),
// refuses cross-origin writes, opens every trace read-only, and answers a
// bad request with a 4xx status and a message; a panic in a handler is a
// 500, not a crash of the server.
//
// The page is plain HTML, CSS and JavaScript drawing on canvases, embedded
// in the binary (go:embed): no build step, no network.
package viewer

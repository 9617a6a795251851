// Package render turns results into what people and scripts read. It owns
// every presentation of dmx's output: commands in cmd/dmx compute a result
// with a library call (analyze, analyze/stats, trace, the registry) and
// hand it to one function here with the --format the user chose.
//
//   - Reports: the checks of runs (dmx check, dmx run, dmx sim) as a table
//     followed by the findings and the verdict, a summary whatever the
//     size of the run (long notes and findings cut, and said so); as JSON
//     ({"verdict", "runs"}), or as JUnit XML for CI, both whole; Verdict
//     is their overall verdict.
//   - Stats: what runs cost beside the seeds' figures (dmx stats), as a
//     table per run, as JSON (the stable form of package analyze/stats), or
//     as CSV, one row per measure.
//   - List: the algorithms of the registry (dmx list) as a short table, JSON
//     or CSV; Algorithm one of them in full (dmx list ALGO), its package
//     documentation included; Costs writes an algorithm's costs
//     (algo.Spec.Costs) as one line of text, the same values dmx stats puts
//     beside a run; Clock names the time a run's durations count in.
//   - Rows: the result of an SQL query (dmx sql) as a table, CSV or JSON.
//   - ReplayResult and ReplayStep: what dmx replay found (matches, or the
//     first divergence with the process's state) and each step of --step,
//     as text or as JSON lines; Event is the JSON form of an event they
//     share; ReplayState, a process's state after one of its events as
//     JSON (dmx serve's /api/state, the step as --step writes it).
//   - Table, CSV and JSON: the three building blocks the others share.
//
// Counts of things in any of it ("1 event", "2 events") are written by the
// leaf package trace/plural, which analyze, runner and trace use too.
//
// Each renderer has its formats in a variable (ReportFormats, ...), the
// default first, so that a command validates --format against the same
// list the renderer accepts. Output is byte for byte stable: the golden
// files in testdata/ show each renderer in each format (go test ./render
// -update rewrites them), and the README pastes some of them.
//
// The space-time diagrams are the subpackage render/spacetime (a window of
// a run laid out once, written as DOT, SVG, PNG or Mermaid); the
// interactive viewer of dmx serve, a web server with its page embedded,
// is render/viewer (under render because it is one more presentation of
// runs and findings, drawn with spacetime's words for events). A new
// renderer goes into its own file here (or subpackage), with its formats
// and golden files; render imports analyze, analyze/stats, trace,
// runner/algo and runner/replay, never cmd.
package render

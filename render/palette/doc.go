// Package palette is the one set of colours every picture of dmx uses: the
// space-time diagrams (render/spacetime), the plots (render/plot), the
// HTML report and the page of dmx serve (render/viewer, which serves it as
// palette.js), so that a message type, a resource or a fault has the same
// colour wherever a run is drawn.
//
// The colours are chosen to stay apart for readers with the common colour
// vision deficiencies: message types take the Okabe-Ito colours (less
// vermillion and yellow) completed from Paul Tol's muted scheme; critical
// sections take pale colours of their own, so that a section's bar is
// never the colour of a message; marks have their own shape as well as a
// colour. Red belongs to findings alone: a crash is a black cross, a lost
// message a grey one.
//
// Colours are given by name, never by order of appearance in a window:
// a message type has the colour of its index in the algorithm's declared
// message types (algo.Spec.MsgTypes), then the types no algorithm declares
// (those of an imported log) in the order of their names; a resource the
// colour of its index among the run's resources sorted by name. A window,
// a page of the report and the viewer therefore agree.
package palette

// Package theory holds what the course notes say an algorithm costs: a
// Cost is a formula in N (messages per critical section, synchronisation
// delay, messages per election...) with where it comes from and its value
// in a run's setting. Each algorithm package declares its costs
// (algo.Spec.Costs); dmx stats (analyze/stats) puts their values beside
// what a run measured, dmx list shows them, and runner estimates a run's
// size from them before it starts. It is a leaf package under analyze so
// that the algorithms (in runner) and the statistics (in analyze) can both
// use it without analyze importing runner.
package theory

// Package tally sums the verdicts of many runs (a sweep's seeds, the
// merged traces of a CI matrix) per check: how many runs were ok,
// violated, inconclusive or had nothing to judge, the violation rate with
// its Wilson confidence interval, and the first and the smallest failing
// run with the command line that reruns it; and per fault kind, how often
// the runs it was injected into violated each check, beside the runs
// without it.
//
// A Tally depends on the runs' rows and verdicts alone, never on the
// order they were added in, so that the shards of a sweep merged into one
// trace give the table of the whole sweep.
package tally

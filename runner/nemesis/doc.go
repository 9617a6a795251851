// Package nemesis draws random fault schedules: each seed of a sweep its
// own, from the seed alone, so that the same seed always gets the same
// schedule and every failing run is one rerun line away.
//
// After Jepsen's nemesis packages, a fault kind is kept apart from when
// it happens: a Spec lists the kinds a sweep injects, each with how often
// (every: the mean gap between two of its faults, drawn exponentially, so
// that some runs get none and some several) and how long each lasts
// (for), and whom it hits (who: any process, or a part such as the
// leader). Draw turns a Spec, a run's horizon and a seed into faults of
// the fault language of package runner (crash:2@310ms,
// pause:leader@1.2s-1.5s, partition:0+3@40ms-95ms, ...), which the run
// records in runs.faults like any faults given on the command line: a
// drawn schedule reruns with --faults, no nemesis needed.
//
// The spec language, printed back the same by Spec.String:
//
//	spec = item { "," item }
//	item = KIND { ":" option }
//	option = every=DURATION | for=DIST | who=WHO | rate=RATE | by=DIST | max=K | amnesia
//
// Kinds: crash (for good), restart (a crash and a recovery after for),
// pause, partition (two random groups), isolate, cut (one way), loss,
// duplicate, delay, reorder, skew. "random" is every kind that applies to
// the algorithm (Default).
package nemesis

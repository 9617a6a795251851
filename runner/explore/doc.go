// Package explore searches the schedules of a run for one that violates a
// property (dmx explore): which message arrives next, when a timer fires,
// when a process asks for or leaves the critical section, and, within a
// budget, where a process crashes or restarts and which message is lost.
//
// The model is runner.World: the algorithm's own machines in the node
// runtime, driven one Step at a time, with time abstracted away (any
// enabled step may come next; channels deliver in order unless the plan
// reorders). Two searches:
//
//   - Exhaustive (Search): depth first over every schedule of a small run,
//     with state hashing (a 128-bit fingerprint of the machines, clocks,
//     persisted state, timers, workload and messages in flight; a state
//     met again is not explored again; a machine that implements
//     algo.Abstracter counts by its Abstract value, which leaves out
//     exactly what no longer decides anything, as Lamport's stale
//     timestamps; where every machine is an algo.Shifter and no process
//     may crash, states that differ only by the same amount added to
//     every Lamport timestamp, clocks and stamps in flight included, are
//     one state, hashed with every timestamp less the smallest clock:
//     such machines only compare timestamps and take their maximum, so the
//     futures of the two are the same but for the shift; there, too, the
//     timestamps that can no longer compare differently with anything
//     still to come count alike: one below every clock, a stamp in flight
//     as its receiver's algo.StampAbstracter keeps it, and, once no
//     process will request again, every one above every waiting request
//     (algo.Pender), which TestFingerprintBisimulation in runner proves
//     exact on small runs; the states are kept in a lean table,
//     visited.go) and
//     sleep sets, a partial-order
//     reduction that is sound here: a step belongs to the process it
//     happens at (a delivery to its receiver; a loss to both its sender,
//     which records the drop, and its receiver), steps of different
//     processes commute (neither disables the other and both orders reach
//     the same state), and a sleep set carries the steps already explored
//     from an earlier sibling past the steps they commute with, so that
//     the two orders of two independent steps are not both taken. With
//     state caching, a state met again with a sleep set that the stored one
//     is not a subset of is explored again for the difference (Godefroid's
//     rule), so every reachable state is still visited: the properties
//     checked on states (mutual exclusion, total order, a final state
//     where someone waits for ever) are checked on all of them. The search
//     says how many states it visited and whether it exhausted them.
//   - Random walks (Options.Walks): seeded walks to the end of a run, for
//     runs too large to exhaust.
//
// The properties are watched on the model after every step (two processes
// in a critical section at once, two processes delivering multicasts in
// different orders, and a state from which nothing more can happen while a
// process waits); every final state and every suspected violation is then
// confirmed on the trace its schedule records, with analyze.Evaluate and
// the checks the algorithm claims, the same checks dmx check runs. A
// violation is a schedule: runner.Plan.Schedule, which dmx sim follows to
// record the same trace again, and which a scenario file carries.
//
// Shrink makes a violation smaller: fewer processes, fewer entries, and
// fewer steps (faults included), each cut kept only if the checks still
// find a violation, steps that a cut leaves without a cause dropped.
package explore

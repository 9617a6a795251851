// Package algotest is the test bench shared by dmx's algorithm packages. It
// has no simulator and no property checks of its own: it drives the
// runtime's runner.Node, the way dmx sim does, and asks package analyze
// whether the recorded trace keeps the algorithm's properties, in the two
// ways below. It sits beside runner's explore and replay, above runner and
// analyze, which it imports; the algorithm packages under runner/algo
// import it only in their tests.
//
// Random runs (Run, Sweep). Run hands an algorithm, a workload, random
// message delays and a crash schedule to runner.Simulate, records the
// trace, and runs analyze.Evaluate with the checks the algorithm claims
// (algo.Spec.Properties: mutex-causal, mutex-realtime, liveness, deadlock,
// agreement, validity, split-brain, termination, total-order). A run fails
// with a *Failure that names the check, the finding and the events up to
// it; Options.Allow keeps the violations of named checks in the Result
// without failing the run, for runs that show a weakness the seeds
// describe. Sweep runs many group sizes and seeds, prints the failing seed
// and how to rerun it (-algotest.seed=S), and -algotest.seeds=K changes
// the count. Crashes may aim, when they happen, at the leader, a process in
// its critical section, a random one or one a test picks (runner.SimHooks's
// Aim).
//
// What analyze cannot see in a trace the bench checks step by step, by
// wrapping the machines: the contract of package algo (Enter only for a
// pending request and once; Wait sets that name other nodes and are empty
// in the critical section; each kind's own outputs; leaders, suspects and
// deliveries that name group members; no timer in the past), the test's
// own Options.Invariant, and, at the end, that an election settled on a
// live leader (the highest, if the algorithm claims validity), that no
// live node of a finished workload still waits, and that every multicast
// was delivered somewhere. Robustness against arbitrary inputs, unchanged
// input slices and determinism are robust_test.go's.
//
// Interaction scripts (RunScripts, Bench). A Bench steps runner Nodes by
// hand in a runner.World (runner.NewHandWorld): a message sent stays in
// flight until delivered, a timer fires only when told (the clock moves
// to its due time), crashes and recoveries are the runtime's own, and the
// machines' steps are printed, input and outputs, with the node's Lamport
// clock as the runtime keeps it. RunScripts runs testdata/*.txt scripts in
// the style of etcd-io/raft's (a command, "----", the expected output),
// rewritten with go test -update; each command is one entry of Commands,
// a small function over the Bench. Tests that count the messages of an
// exactly staged run use the Bench directly (NewBench, Elect).
//
// What every algorithm package's tests do alike (check.go, sweep.go):
// CheckParams and CheckConfigs are TestNewValidates's loop (New accepts
// these configurations, refuses those); Build makes a machine of its own
// type for a test that steps it by hand; FirstViolation and
// CountViolations run seeds until a property breaks, to show that an
// assumption (FIFO channels) is real; SweepCases runs Sweep once per
// named configuration.
package algotest

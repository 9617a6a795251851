// Package runner runs dmx's algorithms: the node runtime that wraps an
// algorithm's state machine (clocks, trace events, workload, timers), the
// description of a run (Plan) and its faults, and the deterministic
// simulator (Simulate, World). The drivers that run nodes for real are
// packages of their own beside it (runner/udp: one OS process per node
// talking UDP on 127.0.0.1), talking to the runtime through what this
// package exports: a driver builds a Node per process (NewNode) with an
// Env of its own (time, timers, the network, the recorder), carries out a
// plan's faults for an Injector (FaultDriver), judges messages with a
// NetFaults where it applies network faults itself, and rebuilds a
// crashed process from its History. runner/link is the reliable in-order
// link that the UDP transport and the simulator's model of it share.
// runner/exec is the other way round: a driver of the algorithm, not of
// the network: its machines run a program of the user's own (the node
// protocol) under any of the drivers, and tell the runtime through
// algo.Fail, algo.Halt and algo.Closer when the program breaks the
// protocol, dies, or must be killed with its node.
//
// # A run's description
//
// A Plan is the one description of a run: the algorithm and its
// parameters, the group size, the seed, the workload (with per-process
// overrides), the faults, the duration, and the parts only one driver has
// (SimOptions: delay, reorder, limit; UDPOptions: base port, stall). Its
// defaults live in plan.go, side by side for the two drivers (NewPlan for
// the values a command line starts from, WithDefaults for the zeros that
// mean "the default"), and Validate makes every check a run needs before
// anything starts, with *PlanError naming the part that is wrong. A plan
// comes from flags (cmd/dmx maps them), from a scenario file
// (Scenario.Apply) or from a recorded run (PlanFromRun); it gives the
// trace's runs row (RunRow), the command line that runs it again (Args),
// and an estimate of its size before it starts (Estimate: events,
// messages, trace bytes, from the algorithm's costs). Simulate and the
// drivers' entry points (udp.Launch) each take one.
//
// # Faults
//
// fault.go is the fault language: the kinds, the parser (errors name the
// token and what was expected), the canonical printing runs.faults stores,
// and the checks of a schedule against the run (Plan.Validate refuses what
// can never apply). The Injector (inject.go) carries a schedule out for
// any driver through the FaultDriver interface: it turns faults into
// timed steps, follows from the events who plays which part (leader,
// coordinator, token holder, a process in the critical section) so that a
// crash can wait for a condition, restarts crashed processes after their
// delay, and says at the end which faults never applied. Network faults
// act on the send path (netfault.go): in the simulator on every message,
// through a model of the transport (simnet.go); under dmx run on every
// datagram, in each node's transport (runner/udp). A new fault kind is a
// constant and an entry in faultKinds, which says what it acts on (a
// process, its clock, the network), how it reads, prints and is checked;
// its effect is a case of FaultDriver.Process in each driver that can
// apply it, or for a network fault a case of NetFaults.Judge. A driver
// says which faults it can carry out (SimApplies, udp.Applies), and
// Plan.CheckFaults refuses the others before anything starts.
//
// # Clocks
//
// The runtime is the only place where clocks are stamped. For every input a
// machine gets it records one event first (receive, timeout, cs_request,
// cs_exit, recover) and for every output one more (send, cs_enter, leader,
// wait, ...), ticking the node's Lamport clock and its vector clock on each,
// so that a trace can be re-executed event for event and analyzers can rebuild
// happens-before from it.
package runner

// Package replay re-executes a recorded run: the same algorithm state
// machines, inside the same node runtime (runner.Node), are fed per process
// the inputs the trace recorded, and every event they produce is compared
// with the recording (dmx replay).
//
// A process's inputs are its start, the messages delivered to it in the
// recorded order (with the clocks their send events carry), its timer
// firings, its workload's requests and releases (multicasts for a
// multicast algorithm), its crashes and recoveries and its stop. Everything
// else a node records (sends, cs_enter, wait, leader, persist and notes) is
// an output, which the replayed machine must produce again, field for
// field: kind, sequence number, Lamport and vector clock, message id, type
// and peer, resource and detail. Wall times are not compared.
//
// What makes this possible for any run dmx recorded, real UDP runs
// included, is that the trace holds every input a machine gets:
//
//  1. Deliveries, timer firings, requests and releases are events of their
//     own, recorded before the machine sees them.
//  2. Random draws come from streams the runtime seeds from the run's seed,
//     the process, the resource's index in the workload and the
//     incarnation (the sequence number of the crash a recovery follows):
//     the runs row and the events hold all four, so a replay draws the same
//     numbers without the trace storing them.
//  3. Input.Now is the wall time of the input's event minus the run's
//     origin, which the start event of a real run records ("t0"; 0 in the
//     simulator, whose wall times are simulated time).
//  4. A recovered process gets back what its machines persisted (internal
//     persist events) and the runtime's counters of its last event: the
//     replay restarts it from its History as the launcher did.
//
// A process killed in the middle of handling an input (SIGKILL lands
// between two of its outputs) has recorded only some of the outputs: the
// replay drops the rest when it reaches the crash. A run cut short (Ctrl-C,
// a time limit) is replayed up to the cut; Result.Cut says so.
//
// Replay walks the run in a causal order (analyze.Walk): every event after
// its process's previous one and every receive after its send. Options.Visit
// sees each event with the state of its process's machines (algo.Inspector)
// and what the event changed in it: dmx replay --step prints that.
//
// A process's machines depend on nothing but its own inputs, and a
// receive's message and clocks are those its recorded send carries: Proc
// replays one process by itself, in its program order, looking the sends
// of the messages it gets up in the trace, with the same checks. States
// builds on it to answer "the state of P3 after P3#120" for dmx serve
// without walking the run: it replays only that process, skips the state
// bookkeeping (Proc.Skip) for all but the last events before the one
// asked about, and keeps a few replays per process where they stopped, so
// that the next question about a later event goes on from there. A
// receive whose send an abandoned run never wrote is where a process's
// replay ends (CutError).
package replay

// Package exec runs a program of the user's own as a node of a run (dmx
// run --exec CMD, dmx sim --exec CMD): a driver of the runtime, like the
// UDP launcher and the simulator, for a foreign program. The program is
// the algorithm; everything else is dmx's: the network (real UDP under
// dmx run, the simulated network under dmx sim), the faults, the clocks
// (the runtime stamps Lamport and vector clocks on every event), the
// workload, the trace, the checks, the diagrams and replay.
//
// A Spec's machines (one per node, and per resource for a workload of
// several: each resource has its own instance of the algorithm, as for
// dmx's own) each start the command through /bin/sh -c and speak the
// node protocol with it, version 1: one JSON object a line, inputs on
// its stdin, outputs on its stdout, every input answered by the outputs
// it causes and then {"type":"done"}. The protocol is the contract,
// documented in docs/protocol.md:
//
//	to the program      init, request, release, message, timer
//	from the program    send, enter, exit, leader, waiting, timer, note, done
//	                    (and the additions cancel, election)
//
// Each Step writes the input's line and reads the answer, with the
// program's stderr, until done; one goroutine does both through poll(2),
// so that a program writing much on either never stalls, and gives up at
// a deadline (the parameter timeout). What the program wrote on stderr
// before done comes with that answer, as note events ("stderr: ...") and
// on the terminal: under the simulator a program that writes its stderr
// before its done (unbuffered, or flushed) gives the same trace for the
// same seed, notes included.
//
// A line that is not valid protocol is a finding about the program, not
// an error of dmx: an algo.Fail output (a failure event that check
// protocol reports, naming the node, the line and the input it answered)
// and the line is ignored. A program that ends before its done, does not
// answer within the time-out, or floods (more than 10,000 lines, or a
// line over 1 MiB, for one input) is recorded so (a failure event), its
// process is killed, and its node goes down (algo.Halt: a crash event
// whose reason says why); a restart fault starts it again with
// "restart":true. A crash fault is SIGKILL of the program (the node's
// process group under dmx run), a pause SIGSTOP.
//
// Under dmx sim the program gets its inputs one at a time and time is
// dmx's: its timers fire in simulated time, and its init carries a seed.
// A program that uses only these is deterministic, so a seed reproduces
// a run of it event for event and dmx replay re-executes it.
package exec

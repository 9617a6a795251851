// Package udp is dmx's driver of real processes: `dmx run` runs a plan as
// one OS process per node, the nodes talking UDP on 127.0.0.1, and records
// every event they emit. It is a driver of the runtime in package runner:
// each node process builds a runner.Node with an Env of its own (udpEnv:
// the wall clock, timers on the node's loop, the transport, the control
// pipe as recorder), the launcher carries out the plan's faults for a
// runner.Injector (it implements runner.FaultDriver), and the transport
// judges every datagram with a runner.NetFaults and delivers through the
// reliable in-order link of runner/link.
//
// # The launcher
//
// Launch runs a plan as one process per node. Its state is a launcher,
// whose methods each do one duty: start the processes (startAll, spawn,
// read), the hello phase that exchanges addresses (hello), watch the run
// (watch, with handle and event for what the nodes send, and tick for
// when the run is over), record (record), faults (scheduleFaults fires
// the injector's steps; Crash, Recover, Process, NetStart, NetEnd and
// NotApplied carry them out), crash accounting (died records a killed
// node's crash on its behalf), and stop (stopAll, fail, killAll, abort).
//
// # The node process
//
// NodeMain is one node (nodeproc.go): it reads its configuration and its
// peers' addresses from the control pipe (its stdin), runs the node's loop
// over its UDP socket (udpio.go: batched reads and writes), and writes its
// events back in frames (pipeWriter) at its safe points. The transport
// (transport.go, packet.go) numbers, acknowledges, retransmits and
// authenticates datagrams.
package udp

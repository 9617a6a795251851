// Package netns is the driver of `dmx run --net netns`: the processes of
// runner/udp, each in a network namespace of its own, and the network
// faults made by the kernel where it can. It changes where a node runs
// and how its network is made, nothing else: the node process, its
// transport, the launcher, the injector and the trace are runner/udp's
// and runner's, and it plugs into the launcher as its udp.Network.
//
// # The network
//
// A run has a hub namespace (dmx-RUN-hub) holding a bridge (br0), and a
// namespace per node (dmx-RUN-I) whose eth0 is one end of a veth pair,
// the other end (pI) on the bridge. Node I has 198.18.0.(I+1) of
// 198.18.0.0/15, RFC 2544's benchmarking range, which no real network
// routes; there is no default route, no uplink and no NAT, so traffic
// never leaves the namespaces the run made. Nothing is made in the
// host's own namespace: no interface, no rule. The node process is
// started from a thread switched into its namespace (starter), so its
// socket, and any socket of a program of the user's own it starts (dmx
// run --exec), is there; it learns where it is from its configuration
// and from the environment (EnvNetns, EnvAddr, EnvPeers). Its start
// event records its address and namespace.
//
// # Faults
//
// Partition, isolate, cut and loss (without type=) are nftables rules in
// each receiver's namespace (rules.go): a base chain per fault hooked at
// prerouting, priority raw (-300), before conntrack, so that established
// flows are dropped too; loss draws with numgen. Delay, duplicate and
// reorder are netem qdiscs on the senders' interfaces where the kernel
// has sch_netem and the fault acts on everything its senders send
// (netem.go); otherwise, and for faults on some message types, the nodes'
// transport makes them, as over loopback. Launch says at the start what
// makes each fault and why; every fault event says it too (trace.Fault
// By and How), and the end of a kernel fault what its rules dropped.
// A fault made by the kernel is invisible to the sender: no drop event,
// the transport retransmits as on a lossy network.
//
// # Cleanup
//
// Everything a run makes is in its namespaces, named per run (the run's
// random id), and goes with them: close unbinds the names at the end,
// whatever ends the run (its end, Ctrl-C, an error), and the kernel
// frees the namespaces, their veth pairs, bridge and rules, once their
// processes have ended (they die with the runner: Pdeathsig). A runner
// killed outright (SIGKILL) cannot; its run's hub carries an flock that
// dies with it, and the next run's Sweep removes the names of every run
// whose lock is free, and says so.
//
// # Privileges
//
// Making namespaces needs CAP_SYS_ADMIN and CAP_NET_ADMIN (root): Check
// says what is missing before anything is made; Probe tries it (tests
// skip on its error).
package netns

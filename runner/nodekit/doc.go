// Package nodekit writes a node of dmx's node protocol in Go: a program
// that dmx runs once per node (dmx run --exec CMD, dmx sim --exec CMD),
// which gets its inputs as handlers (init, request, release, message,
// timer) and answers with Send, Enter, Exit, Leader, Waiting, Timer and
// Note. Run reads the inputs on stdin, calls the handler of each, and
// writes what the handler asked for, then done, on stdout. The protocol
// itself (docs/protocol.md) is one JSON object a line; nodekit is one way
// to speak it, with the standard library only.
//
// A node is a value with handlers:
//
//	n := nodekit.New()
//	n.OnRequest = func(resource string) { n.Send(0, nodekit.Body{Type: "request", ID: n.ID}) }
//	n.OnMessage = func(m nodekit.Message) { ... }
//	if err := n.Run(); err != nil { ... }
//
// Handlers run one at a time, in the order dmx gives the inputs; a handler
// must not block. The node's fields (ID, N, Seed, Params, Clock...) are
// set before the handler of each input runs. What a program needs to be
// deterministic under dmx sim is here: time only as timers, randomness
// only from Seed (Rand), and no goroutines writing on their own.
package nodekit

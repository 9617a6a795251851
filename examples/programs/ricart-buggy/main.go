// Command ricart-buggy is examples/programs/ricart with a classic student
// bug: [RH1] defers a request only while the node waits with an earlier
// request of its own, and forgets the HELD case, so a node replies while
// it is inside the critical section and lets the requester in with it.
//
// The one command that finds it (exit code 1: mutex-causal and
// mutex-realtime name the two overlapping critical sections; the diagram
// is drawn beside the trace):
//
//	go build -o ricart-buggy ./examples/programs/ricart-buggy
//	dmx sim --exec ./ricart-buggy --seed 1
//
// dmx check --conform ricart-agrawala on its trace names the first reply
// that dmx's machine would have deferred, and the rule: [RH1].
package main

import "github.com/dmxlab/dmx/examples/programs/internal/ricart"

func main() {
	ricart.Main(func(st ricart.State, mine bool) bool {
		return st == ricart.Requested && mine // BUG: forgets st == ricart.Held
	})
}

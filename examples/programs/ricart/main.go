// Command ricart is Ricart-Agrawala's mutual exclusion, the rules of seed
// 003 (slides 7-9), written as a student would for the course, in Go with
// dmx's nodekit: a node of dmx's node protocol.
//
//	go build -o ricart ./examples/programs/ricart
//	dmx sim --exec ./ricart                 # the simulator: same seed, same run
//	dmx run --exec ./ricart -n 3            # real processes over UDP
//	dmx check --conform ricart-agrawala dmx-ricart-SEED.db
//
// The node is examples/programs/internal/ricart, which ricart-buggy shares
// with one rule broken.
package main

import "github.com/dmxlab/dmx/examples/programs/internal/ricart"

func main() { ricart.Main(ricart.Defers) }

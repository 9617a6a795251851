package election

import (
	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/runner/algo/fd"
)

// RingCosts are seed 001's figures for an election round a ring: messages
// and completion time, best 2N (the would-be leader initiates), worst 3N-1
// (its successor does), 2.5N on average. note says how they apply to the
// algorithm, for dmx list.
func RingCosts(note string) []theory.Cost {
	const seed = "001 ring election: worst, best and average case analysis"
	cases := theory.InN(func(n float64) theory.Estimate { return theory.Typical(2.5*n, 2*n, 3*n-1) })
	return []theory.Cost{
		{Measure: theory.MessagesPerElection, Formula: "best 2N, avg 2.5N, worst 3N-1", Note: note, Seed: seed, Eval: cases},
		{Measure: theory.Completion, Formula: "best 2N, avg 2.5N, worst 3N-1 message transmission times", Seed: seed, Eval: cases},
	}
}

// RingUDPParams are a ring election's parameters over real UDP
// (algo.Spec.UDPParams; ring and chang-roberts, and the elections of
// central's and token-ring's failover by ring): the detector's
// (fd.UDPParams), and 600ms waited for the coordinator message, 2N hops
// of a loaded machine. With more parameters as key, value pairs.
func RingUDPParams(kv ...string) map[string]string {
	return fd.UDPParams(append([]string{"timeout", "600ms"}, kv...)...)
}

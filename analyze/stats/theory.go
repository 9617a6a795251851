package stats

import (
	"encoding/json"

	"github.com/dmxlab/dmx/analyze/theory"
	"github.com/dmxlab/dmx/trace"
)

// Figure is what the seeds say a measure should be: a cost's formula, and
// its value for this run when it is a number (or a range: Min, Max).
type Figure struct {
	Formula string   `json:"formula"`
	Value   *float64 `json:"value,omitempty"`
	Min     *float64 `json:"min,omitempty"`
	Max     *float64 `json:"max,omitempty"`
}

// seeds are the seeds' figures for the measures stats has.
type seeds struct {
	perCS, sync, client, perElection, completion *Figure
}

// theory evaluates the costs for the run with n processes, csBy[p] the
// critical sections process p made (central's coordinator and maekawa's
// voting sets weigh them). Each measure gets the first cost of its kind
// that a seed gives: dmx's own counts are not the seeds'.
func seedFigures(run trace.Run, costs []theory.Cost, n int, csBy []int64) seeds {
	s := theory.Setting{N: n, Params: algoParams(run), CS: csBy}
	fig := func(m theory.Measure) *Figure {
		for _, c := range costs {
			if c.Measure == m && c.Seed != "" {
				e := c.Evaluate(s)
				return &Figure{Formula: e.Formula, Value: e.Value, Min: e.Min, Max: e.Max}
			}
		}
		return nil
	}
	return seeds{perCS: fig(theory.MessagesPerCS), sync: fig(theory.SyncDelay), client: fig(theory.ClientDelay),
		perElection: fig(theory.MessagesPerElection), completion: fig(theory.Completion)}
}

// algoParams returns the algorithm parameters recorded in the run's
// parameters (dmx run and sim store them under "algorithm"), or nil.
func algoParams(run trace.Run) map[string]string {
	var p struct {
		Algorithm map[string]string `json:"algorithm"`
	}
	if len(run.Params) == 0 || json.Unmarshal(run.Params, &p) != nil {
		return nil
	}
	return p.Algorithm
}

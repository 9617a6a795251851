package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/dmxlab/dmx/runner/algo/maekawa"
	"github.com/dmxlab/dmx/trace"
)

// Figure is what the seeds say a measure should be: a formula, and its
// value for this run's N when it is a number (or a range: Min, Max).
type Figure struct {
	Formula string   `json:"formula"`
	Value   *float64 `json:"value,omitempty"`
	Min     *float64 `json:"min,omitempty"`
	Max     *float64 `json:"max,omitempty"`
}

// String formats the figure as "2(N-1) = 8".
func (f *Figure) String() string {
	if f == nil {
		return ""
	}
	switch {
	case f.Value != nil && f.Formula == num(*f.Value):
		return f.Formula
	case f.Value != nil && f.Min != nil && f.Max != nil && *f.Min != *f.Max:
		// A range with a typical value: "best 2N, avg 2.5N, worst 3N-1:
		// 12..17, typically 15" (the value alone would read as the worst).
		return fmt.Sprintf("%s: %s..%s, typically %s", f.Formula, num(*f.Min), num(*f.Max), num(*f.Value))
	case f.Value != nil:
		return f.Formula + " = " + num(*f.Value)
	case f.Min != nil && f.Max != nil:
		return fmt.Sprintf("%s: %s..%s", f.Formula, num(*f.Min), num(*f.Max))
	}
	return f.Formula
}

func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func val(v float64) *float64 { return &v }

func fig(formula string, v float64) *Figure { return &Figure{Formula: formula, Value: val(v)} }

// seeds is the table of DESIGN.md ("Message complexity the seeds give"),
// with the client delays of seed 004.
type seeds struct {
	perCS, sync, client, perElection, completion *Figure
}

// theory returns the seeds' figures for the run's algorithm with n
// processes. csBy[p] is how many critical sections process p made: the
// central coordinator's own cost no message, and maekawa's voting sets
// differ in size when N is not a square.
func theory(run trace.Run, n int, csBy []int64) seeds {
	N := float64(n)
	var cs float64
	for _, c := range csBy {
		cs += float64(c)
	}
	switch run.Algorithm {
	case "central":
		coord := 0
		if v, ok := algoParam(run, "coordinator"); ok {
			if c, err := strconv.Atoi(v); err == nil {
				coord = c
			}
		}
		f := &Figure{Formula: fmt.Sprintf("3 per CS of a client, 0 for the coordinator P%d's own", coord)}
		if cs > 0 {
			own := 0.0
			if coord >= 0 && coord < len(csBy) {
				own = float64(csBy[coord])
			}
			f.Value = val(3 * (cs - own) / cs)
		}
		return seeds{perCS: f,
			sync:   &Figure{Formula: "2 between clients (1 when the coordinator exits or enters)", Value: val(2), Min: val(1), Max: val(2)},
			client: &Figure{Formula: "2 for a client (request + grant), 0 for the coordinator", Value: val(2), Min: val(0), Max: val(2)}}
	case "token-ring":
		return seeds{perCS: &Figure{Formula: "1..inf", Min: val(1)},
			sync:   &Figure{Formula: "avg N/2, worst N-1", Value: val(N / 2), Min: val(1), Max: val(N - 1)},
			client: &Figure{Formula: "avg N/2 token hops, worst N-1", Value: val(N / 2), Min: val(0), Max: val(N - 1)}}
	case "ricart-agrawala":
		return seeds{perCS: fig("2(N-1)", 2*(N-1)), sync: fig("1", 1), client: fig("2 (multicast + replies)", 2)}
	case "ra-token":
		return seeds{perCS: &Figure{Formula: "N, or 0 when it holds the token", Min: val(0), Max: val(N)}}
	case "lamport":
		return seeds{perCS: fig("3(N-1)", 3*(N-1))}
	case "maekawa":
		// 3(K-1) per critical section of a process whose voting set has K
		// members (itself included: its own vote costs no message).
		var msgs float64
		ks := map[int]bool{}
		for p, c := range csBy {
			k := len(maekawa.VotingSet(p, n))
			ks[k] = true
			msgs += float64(c) * 3 * float64(k-1)
		}
		f := &Figure{Formula: "3(K-1), K = 2*sqrt(N)-1 on a square grid (about 3*sqrt(N))"}
		if len(ks) > 0 {
			lo, hi := n, 0
			for k := range ks {
				lo, hi = min(lo, k), max(hi, k)
			}
			f.Formula = fmt.Sprintf("3(K-1), K = %d", lo)
			if lo != hi {
				f.Formula = fmt.Sprintf("3(K-1), K = %d..%d by voting set, averaged", lo, hi)
			}
		}
		if cs > 0 {
			f.Value = val(msgs / cs)
		}
		return seeds{perCS: f,
			sync:   &Figure{Formula: "2 (1 when the process that leaves is the common voter)", Value: val(2), Min: val(1), Max: val(2)},
			client: fig("2 (multicast + votes)", 2)}
	case "bully":
		return seeds{perElection: &Figure{Formula: "best N-2, worst O(N^2) (N^2-1 when the lowest id starts)", Min: val(N - 2), Max: val(N*N - 1)}}
	case "ring", "chang-roberts":
		f := &Figure{Formula: "best 2N, avg 2.5N, worst 3N-1", Value: val(2.5 * N), Min: val(2 * N), Max: val(3*N - 1)}
		return seeds{perElection: f, completion: &Figure{Formula: f.Formula + " message transmission times", Value: f.Value, Min: f.Min, Max: f.Max}}
	}
	return seeds{}
}

// algoParam returns an algorithm parameter recorded in the run's
// parameters (dmx run and sim store them under "algorithm").
func algoParam(run trace.Run, name string) (string, bool) {
	var p struct {
		Algorithm map[string]string `json:"algorithm"`
	}
	if len(run.Params) == 0 || json.Unmarshal(run.Params, &p) != nil {
		return "", false
	}
	v, ok := p.Algorithm[name]
	return v, ok
}

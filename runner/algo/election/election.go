package election

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algo/fd"
)

// InitiatorsParam is the parameter initiators, the same in every election
// machine.
var InitiatorsParam = algo.Param{Name: "initiators", Default: "0", Doc: "who starts an election at Start: comma-separated ids, all, or none"}

// Params are an election machine's parameters: its own (timeout among
// them), initiators, and the failure detector's, all that Configure reads.
func Params(own ...algo.Param) []algo.Param {
	return slices.Concat(own, []algo.Param{InitiatorsParam}, fd.Params)
}

// AllInitiators is the variant that every election algorithm's tests run
// besides the defaults: every process starts an election at once; seed,
// if not empty, is where the notes speak of it.
func AllInitiators(seed string) algo.Variant {
	doc := "every process starts an election at once"
	if seed != "" {
		doc += " (" + seed + ")"
	}
	return algo.Variant{Params: map[string]string{"initiators": "all"}, Doc: doc}
}

// LeaderString is leader as a machine's String shows it: the id, or ?
// while no leader is known (leader < 0).
func LeaderString(leader int) string {
	if leader < 0 {
		return "?"
	}
	return strconv.Itoa(leader)
}

// Setup is what an election machine reads from its Config.
type Setup struct {
	Timeout   int64        // the parameter timeout, in ns
	Initiator bool         // this process starts an election at Start (parameter initiators)
	FD        *fd.Detector // built from fd-period, fd-allowance and fd-stall
}

// Configure checks c against params (which must declare timeout,
// initiators and fd.Params) and reads the parameters every election machine
// has: timeout (defTimeout ns if unset), initiators and the failure
// detector's.
func Configure(c algo.Config, params []algo.Param, defTimeout int64) (Setup, error) {
	if err := c.Validate(params); err != nil {
		return Setup{}, err
	}
	timeout, err := c.DurationParam("timeout", defTimeout)
	if err != nil {
		return Setup{}, err
	}
	init, err := Initiators(c.Param("initiators", "0"), c.N)
	if err != nil {
		return Setup{}, err
	}
	d, err := fd.FromConfig(c)
	if err != nil {
		return Setup{}, err
	}
	return Setup{Timeout: timeout, Initiator: init[c.ID], FD: d}, nil
}

// Initiators parses the parameter initiators for a group of n: a
// comma-separated list of ids, "all" or "none".
func Initiators(v string, n int) ([]bool, error) {
	is := make([]bool, n)
	switch strings.TrimSpace(v) {
	case "none", "":
		return is, nil
	case "all":
		for i := range is {
			is[i] = true
		}
		return is, nil
	}
	for _, f := range strings.Split(v, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 || i >= n {
			return nil, fmt.Errorf("parameter initiators=%q: want ids in 0..%d, all or none", v, n-1)
		}
		is[i] = true
	}
	return is, nil
}

// NextTerm is the election number process id (of n) takes for a new
// election after seeing seen: the next number above seen that is id modulo
// n, so that no two processes ever number an election alike and a trace's
// elections are told apart by number alone.
func NextTerm(seen uint64, id, n int) uint64 {
	return (seen/uint64(n)+1)*uint64(n) + uint64(id)
}

// Successor is the ring neighbour of process id (of n): the first of
// id+1, id+2, ... (mod n) that is not suspected (seed 000: "If successor is
// down, skip over. Repeat until a running process is located"), or -1 if
// every other process is.
func Successor(id, n int, suspected func(int) bool) int {
	for k := 1; k < n; k++ {
		if j := (id + k) % n; !suspected(j) {
			return j
		}
	}
	return -1
}

// Decision is the leader a process knows and the number of the election
// that chose it.
type Decision struct {
	Leader int    // -1: none
	Term   uint64 // the election number of that decision
}

// Undecided is the Decision of a process that knows no leader.
var Undecided = Decision{Leader: -1}

// Decide records that c leads, by the election numbered term, and outputs
// Leader, unless that is the decision already recorded (a second message
// of the same election changes nothing and is not reported again).
func (d *Decision) Decide(out []algo.Output, c int, term uint64) []algo.Output {
	if d.Leader == c && d.Term == term {
		return out
	}
	d.Leader, d.Term = c, term
	return append(out, algo.Output{Kind: algo.Leader, Leader: c, Msg: algo.Msg{Term: term}})
}

// Package ricart is Ricart-Agrawala's mutual exclusion, the rules of seed
// 003 (slides 7-9), written as a student would for the course, in Go with
// dmx's nodekit: the node of examples/programs/ricart and, with its bug,
// of examples/programs/ricart-buggy.
//
// It uses dmx's Lamport clock for its timestamps (Node.Clock) and the
// message fields of dmx's own ricart-agrawala (request and reply, each
// with stamp and id), so that dmx check --conform compares it, input by
// input, with dmx's reference machine.
package ricart

import (
	"fmt"
	"os"

	"github.com/dmxlab/dmx/runner/nodekit"
)

// State is a node's state in seed 003's rules.
type State int

const (
	Released State = iota
	Requested
	Held
)

// Defers is [RH1]: a request received is deferred while the node is
// HELD, or REQUESTED with a request of its own that comes first (mine).
func Defers(st State, mine bool) bool { return st == Held || st == Requested && mine }

// request is a request (T_Pj, j) that [RH1] deferred.
type request struct {
	from  int
	stamp uint64
}

// Main runs one node of dmx's node protocol until its input ends, deferring
// a request when defers says so (ricart passes Defers, ricart-buggy its
// own); an error ends the process with exit code 1.
func Main(defers func(st State, mine bool) bool) {
	n := nodekit.New()
	var (
		st       State
		t        uint64       // T_Pi of this node's request ([RA1])
		replied  map[int]bool // who replied to it ([RA3])
		deferred []request    // requests queued by [RH1]
	)
	// before is the total order of requests: by timestamp, then by id.
	before := func(t uint64, i int, u uint64, j int) bool { return t < u || t == u && i < j }
	// progress is [RA3] and [RE1]: wait for the n-1 replies, then enter.
	progress := func() {
		var missing []int
		for j := 0; j < n.N; j++ {
			if j != n.ID && !replied[j] {
				missing = append(missing, j)
			}
		}
		n.Waiting(missing...)
		if len(missing) == 0 {
			st = Held // [RE1]
			n.Enter(n.Resource)
		}
	}
	n.OnInit = func() { st = Released } // [RI1]
	n.OnRequest = func(string) {
		st, t, replied = Requested, n.Clock, map[int]bool{}            // [RA1]
		n.Broadcast(nodekit.Body{Type: "request", Stamp: t, ID: n.ID}) // [RA2]
		progress()
	}
	n.OnMessage = func(m nodekit.Message) {
		b := m.Body()
		switch m.Type {
		case "request": // [RH1]
			if defers(st, before(t, n.ID, b.Stamp, b.ID)) {
				deferred = append(deferred, request{m.From, b.Stamp})
				return
			}
			n.Send(m.From, nodekit.Body{Type: "reply", Stamp: b.Stamp, ID: n.ID})
		case "reply":
			if st == Requested && b.Stamp == t {
				replied[m.From] = true
				progress()
			}
		}
	}
	n.OnRelease = func(r string) {
		st = Released
		n.Exit(r)
		for _, q := range deferred { // reply to every queued request
			n.Send(q.from, nodekit.Body{Type: "reply", Stamp: q.stamp, ID: n.ID})
		}
		deferred = nil
	}
	if err := n.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

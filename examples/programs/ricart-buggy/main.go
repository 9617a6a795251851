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

import (
	"fmt"
	"os"

	"github.com/dmxlab/dmx/runner/nodekit"
)

type state int

const (
	released state = iota
	requested
	held
)

// request is a request (T_Pj, j) that [RH1] deferred.
type request struct {
	from  int
	stamp uint64
}

func main() {
	n := nodekit.New()
	var (
		st       state
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
			st = held // [RE1]
			n.Enter(n.Resource)
		}
	}
	n.OnInit = func() { st = released } // [RI1]
	n.OnRequest = func(string) {
		st, t, replied = requested, n.Clock, map[int]bool{}            // [RA1]
		n.Broadcast(nodekit.Body{Type: "request", Stamp: t, ID: n.ID}) // [RA2]
		progress()
	}
	n.OnMessage = func(m nodekit.Message) {
		b := m.Body()
		switch m.Type {
		case "request": // [RH1]
			if st == requested && before(t, n.ID, b.Stamp, b.ID) { // BUG: forgets st == held
				deferred = append(deferred, request{m.From, b.Stamp})
				return
			}
			n.Send(m.From, nodekit.Body{Type: "reply", Stamp: b.Stamp, ID: n.ID})
		case "reply":
			if st == requested && b.Stamp == t {
				replied[m.From] = true
				progress()
			}
		}
	}
	n.OnRelease = func(r string) {
		st = released
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

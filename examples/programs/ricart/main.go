// Command ricart is Ricart-Agrawala's mutual exclusion, the rules of seed
// 003 (slides 7-9), written as a student would for the course, in Go with
// dmx's nodekit: a node of dmx's node protocol.
//
//	go build -o ricart ./examples/programs/ricart
//	dmx sim --exec ./ricart                 # the simulator: same seed, same run
//	dmx run --exec ./ricart -n 3            # real processes over UDP
//	dmx check --conform ricart-agrawala dmx-ricart-SEED.db
//
// It uses dmx's Lamport clock for its timestamps (Node.Clock) and the
// message fields of dmx's own ricart-agrawala (request and reply, each
// with stamp and id), so that dmx check --conform compares it, input by
// input, with dmx's reference machine.
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
			if st == held || st == requested && before(t, n.ID, b.Stamp, b.ID) {
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

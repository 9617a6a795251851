package nodekit_test

import (
	"os"
	"strings"

	"github.com/dmxlab/dmx/runner/nodekit"
)

// A lock with a fixed coordinator, node 0, in a few lines: a request goes
// to the coordinator, which grants one holder at a time; under dmx, n.Run()
// serves stdin and stdout (here Serve is fed three inputs of node 1).
func Example() {
	n := nodekit.New()
	holder, queue := -1, []int{}
	grant := func(j int) {
		holder = j
		if j == n.ID {
			n.Enter(n.Resource)
			return
		}
		n.Send(j, nodekit.Body{Type: "grant", ID: j})
	}
	n.OnRequest = func(string) {
		if n.ID != 0 {
			n.Send(0, nodekit.Body{Type: "request", ID: n.ID, Stamp: n.Clock})
			n.Waiting(0)
		} else if holder < 0 {
			grant(0)
		} else {
			queue = append(queue, 0)
		}
	}
	n.OnRelease = func(r string) {
		n.Exit(r)
		if n.ID != 0 {
			n.Send(0, nodekit.Body{Type: "release", ID: n.ID})
			return
		}
		holder = -1
		if len(queue) > 0 {
			grant(queue[0])
			queue = queue[1:]
		}
	}
	n.OnMessage = func(m nodekit.Message) {
		switch m.Type {
		case "grant":
			n.Waiting()
			n.Enter(n.Resource)
		case "request":
			if holder < 0 {
				grant(m.From)
			} else {
				queue = append(queue, m.From)
			}
		case "release":
			holder = -1
			if len(queue) > 0 {
				grant(queue[0])
				queue = queue[1:]
			}
		}
	}
	in := strings.NewReader(`{"type":"init","node":1,"nodes":3,"seed":7,"params":{},"restart":false,"resource":"cs","clock":1}
{"type":"request","resource":"cs","clock":4}
{"type":"message","from":0,"body":{"type":"grant","id":1},"clock":9}
`)
	if err := n.Serve(in, os.Stdout); err != nil { // under dmx: n.Run()
		panic(err)
	}
	// Output:
	// {"type":"done"}
	// {"type":"send","to":0,"body":{"type":"request","stamp":4,"id":1}}
	// {"type":"waiting","for":[0]}
	// {"type":"done"}
	// {"type":"waiting","for":[]}
	// {"type":"enter","resource":"cs"}
	// {"type":"done"}
}

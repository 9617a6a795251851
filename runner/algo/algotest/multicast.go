package algotest

import (
	"fmt"
	"testing"

	"github.com/dmxlab/dmx/runner/algo"
)

// Failure kinds of multicast runs (beside Safety, Liveness and Contract).
const (
	// Order: two processes delivered different messages at the same
	// position of their delivery sequences (total order broken).
	Order = "order"
)

// Delivery is one multicast as a process delivered it: the Delivered
// output's From (the origin) and its Msg's Stamp and ID.
type Delivery struct {
	From  int
	Stamp uint64
	ID    int
}

func (d Delivery) String() string { return fmt.Sprintf("P%d#%d@%d", d.From, d.ID, d.Stamp) }

// MulticastResult is what a multicast run did.
type MulticastResult struct {
	Seed       uint64
	Multicasts []int          // Request inputs given, per node: multicasts it began
	Delivered  [][]Delivery   // each node's deliveries, in order
	Sent       map[string]int // messages sent, by type, self-sends included
	Messages   int            // messages sent in all, self-sends included
	SelfSends  int            // messages a node sent to itself
	Steps      int
	Now        int64
	Log        []string
}

// recorder wraps a machine and keeps its deliveries and self-sends.
type recorder struct {
	m   algo.Machine
	id  int
	res *MulticastResult
}

func (r recorder) Step(in algo.Input) []algo.Output {
	outs := r.m.Step(in)
	for _, o := range outs {
		switch o.Kind {
		case algo.MulticastDelivered:
			r.res.Delivered[r.id] = append(r.res.Delivered[r.id], Delivery{From: o.From, Stamp: o.Msg.Stamp, ID: o.Msg.ID})
		case algo.Send:
			if o.To == r.id {
				r.res.SelfSends++
			}
		}
	}
	return outs
}

// RunMulticast runs spec's machines (an algo.Multicast algorithm) on a fresh
// in-memory network: each node in opt.Requesters (nil: all) is given
// opt.Entries Request inputs, each read as "multicast one new message", at
// think times drawn from [0, opt.Think] after the previous one, whatever
// has been delivered. The run goes on until no message is in flight and no
// timer is pending (or opt.MaxSteps inputs). Messages to oneself are
// allowed and go through the network like the others (on their own FIFO
// channel when opt.FIFO).
//
// At the end it checks the multicast's properties and returns a *Failure
// if one is broken: every node delivered the same messages in the same
// order (Order), no message twice, and every multicast at every node
// (Liveness: a node delivered fewer than were made); and the contract: no
// Enter, no delivery of a message from a node that made fewer multicasts.
func RunMulticast(spec algo.Spec, opt Options) (*MulticastResult, error) {
	opt.defaults()
	n := newNet(spec, opt)
	mr := &MulticastResult{
		Seed:       opt.Seed,
		Multicasts: make([]int, opt.N),
		Delivered:  make([][]Delivery, opt.N),
	}
	for id := 0; id < opt.N; id++ {
		m, err := n.machine(id, 0)
		if err != nil {
			return nil, err
		}
		n.add(recorder{m: m, id: id, res: mr})
	}
	err := runMulticast(n, mr)
	mr.Sent, mr.Messages, mr.Steps, mr.Now, mr.Log = n.res.Sent, n.res.Messages, n.res.Steps, n.now, n.log
	if err == nil {
		err = checkMulticast(n, mr)
	}
	return mr, err
}

func runMulticast(n *net, mr *MulticastResult) error {
	if err := n.start(n.step); err != nil {
		return err
	}
	for {
		if n.res.Steps >= n.opt.MaxSteps {
			return n.fail(Liveness, "still running after %d steps", n.res.Steps)
		}
		e := n.pop()
		if e == nil {
			return nil
		}
		n.now = e.at
		var in algo.Input
		if e.kind == evRequest {
			// Not the workload's request: a multicast, made whatever has
			// been delivered, and the next one scheduled at once.
			mr.Multicasts[e.node]++
			in = algo.Input{Kind: algo.Request, Resource: n.opt.Resource}
			if mr.Multicasts[e.node] < n.opt.Entries {
				n.push(&event{at: n.now + n.draw(0, n.opt.Think), kind: evRequest, node: e.node})
			}
		} else {
			var ok bool
			if in, ok = n.input(e); !ok {
				continue
			}
		}
		// A multicast machine never enters a critical section; net.step
		// reports an Enter as a contract failure since nd.requested stays
		// false.
		if err := n.step(e.node, in, e.clock); err != nil {
			return err
		}
	}
}

func checkMulticast(n *net, mr *MulticastResult) error {
	total := 0
	for _, k := range mr.Multicasts {
		total += k
	}
	for id, seq := range mr.Delivered {
		seen := map[[2]int]bool{}
		per := make([]int, len(mr.Multicasts))
		for _, d := range seq {
			if d.From < 0 || d.From >= len(mr.Multicasts) {
				return n.fail(Contract, "P%d delivered %v from a node that does not exist", id, d)
			}
			k := [2]int{d.From, d.ID}
			if seen[k] {
				return n.fail(Contract, "P%d delivered %v twice", id, d)
			}
			seen[k] = true
			per[d.From]++
			if per[d.From] > mr.Multicasts[d.From] {
				return n.fail(Contract, "P%d delivered %d messages from P%d, which multicast %d", id, per[d.From], d.From, mr.Multicasts[d.From])
			}
		}
	}
	for id := 1; id < len(mr.Delivered); id++ {
		a, b := mr.Delivered[0], mr.Delivered[id]
		for i := 0; i < min(len(a), len(b)); i++ {
			if a[i] != b[i] {
				return n.fail(Order, "delivery %d: P0 delivered %v, P%d delivered %v (P0: %v; P%d: %v)", i+1, a[i], id, b[i], a, id, b)
			}
		}
	}
	for id, seq := range mr.Delivered {
		if len(seq) != total {
			return n.fail(Liveness, "P%d delivered %d of the %d multicasts (%v)", id, len(seq), total, seq)
		}
	}
	return nil
}

// SweepMulticast is Sweep for RunMulticast: every group size in ns, seeds
// 1..seeds (the -algotest.seed and -algotest.seeds flags apply), check (if
// not nil) on each result, and on the first failure a rerun with a log and
// the seed that reproduces it.
func SweepMulticast(t testing.TB, spec algo.Spec, ns []int, seeds int, base Options, check func(*MulticastResult) error) {
	t.Helper()
	sweep(t, spec.Name, ns, seeds, 60, func(n int, seed uint64, logSteps int) (*MulticastResult, []string, error) {
		opt := base
		opt.N, opt.Seed, opt.Log = n, seed, logSteps
		res, err := RunMulticast(spec, opt)
		if res == nil {
			return nil, nil, err
		}
		return res, res.Log, err
	}, check, nil)
}

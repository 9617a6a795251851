package algotest

import (
	"fmt"
	"slices"

	"github.com/dmxlab/dmx/runner/algo"
)

// tap returns spec with its machines wrapped: built is told of each machine
// New makes (a node's first, and a fresh one at each recovery), and stepped
// of each step, with the input and the outputs, before the runtime carries
// them out. The runtime sees the outputs unchanged.
func tap(spec algo.Spec, built func(id int, m algo.Machine), stepped func(id int, in algo.Input, outs []algo.Output)) *algo.Spec {
	inner := spec.New
	spec.New = func(c algo.Config) (algo.Machine, error) {
		m, err := inner(c)
		if err != nil {
			return nil, err
		}
		if c.Rand == nil {
			return m, nil // built only to validate the parameters (runner.Plan.Validate)
		}
		built(c.ID, m)
		return tapped{m: m, id: c.ID, stepped: stepped}, nil
	}
	return &spec
}

type tapped struct {
	m       algo.Machine
	id      int
	stepped func(id int, in algo.Input, outs []algo.Output)
}

func (t tapped) Step(in algo.Input) []algo.Output {
	outs := t.m.Step(in)
	t.stepped(t.id, in, outs)
	return outs
}

// contract checks one step of node id (of n) of an algorithm of the given
// kind against what package algo asks of a machine and analyze does not
// check: Enter only for a pending request and once for it; Wait sets that
// name other nodes and are empty in the critical section; each kind's own
// outputs only (no Enter or Wait but for mutual exclusion, no delivered
// multicast but for a multicast, no message of an election to itself);
// leaders, suspects and delivered multicasts that name nodes of the group,
// no multicast delivered more often than its origin made multicasts; no
// timer in the past. nd is the node's state, updated here; res counts the
// multicasts and deliveries.
func contract(kind algo.Kind, n, id int, nd *nodeState, res *Result, in algo.Input, outs []algo.Output) error {
	other := func(j int) bool { return j >= 0 && j < n && j != id }
	switch in.Kind {
	case algo.Request:
		if kind == algo.Multicast {
			res.Multicasts[id]++
		}
		nd.requested = kind == algo.MutualExclusion
	case algo.Release:
		nd.requested, nd.inCS = false, false
	}
	for _, o := range outs {
		switch o.Kind {
		case algo.Enter:
			switch {
			case kind != algo.MutualExclusion:
				return fmt.Errorf("P%d entered a critical section: not an output of a %s algorithm", id, kind)
			case !nd.requested:
				return fmt.Errorf("P%d entered the critical section without a pending request", id)
			case nd.inCS:
				return fmt.Errorf("P%d entered the critical section twice for one request", id)
			}
			nd.inCS = true
		case algo.Wait:
			if kind != algo.MutualExclusion {
				return fmt.Errorf("P%d output wait %v: not an output of a %s algorithm", id, o.Set, kind)
			}
			for _, w := range o.Set {
				if !other(w) {
					return fmt.Errorf("P%d waits for %v: %d is not another node", id, o.Set, w)
				}
			}
			nd.wait = slices.Clone(o.Set)
		case algo.MulticastDelivered:
			if kind != algo.Multicast {
				return fmt.Errorf("P%d delivered a multicast: not an output of a %s algorithm", id, kind)
			}
			d := Delivery{From: o.From, Stamp: o.Msg.Stamp, ID: o.Msg.ID}
			if o.From < 0 || o.From >= n {
				return fmt.Errorf("P%d delivered %v from a node that does not exist", id, d)
			}
			res.Delivered[id] = append(res.Delivered[id], d)
			from := 0
			for _, x := range res.Delivered[id] {
				if x.From == o.From {
					from++
				}
			}
			if from > res.Multicasts[o.From] {
				return fmt.Errorf("P%d delivered %d messages from P%d, which multicast %d", id, from, o.From, res.Multicasts[o.From])
			}
		case algo.Send:
			if kind == algo.Election && o.To == id {
				return fmt.Errorf("P%d sent %s to itself", id, o.Msg.Type)
			}
		case algo.Leader:
			if o.Leader >= n {
				return fmt.Errorf("P%d decided leader %d, outside 0..%d", id, o.Leader, n-1)
			}
		case algo.Suspect, algo.Trust:
			if !other(o.To) {
				return fmt.Errorf("P%d output %s: not another node", id, FormatOutput(id, o))
			}
		case algo.SetTimer:
			if o.After < 0 {
				return fmt.Errorf("P%d set timer %s %d ns in the past", id, o.TimerName, o.After)
			}
		}
	}
	if nd.inCS && len(nd.wait) > 0 {
		return fmt.Errorf("P%d is in the critical section but its Wait set is %v", id, nd.wait)
	}
	return nil
}

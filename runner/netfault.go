package runner

import (
	"math/rand/v2"
	"slices"
	"time"
)

// netFaults is the network fault layer: the network faults of a plan that
// are in force, and the verdict on each message (or, under dmx run, each
// datagram) that a sender puts on a link. The simulator keeps one for the
// whole network; under dmx run each node keeps one on the send path of its
// transport, so that faults act on the real datagrams. Either way the
// sender judges, so that a drop is recorded by the process whose message
// it was, right after its send.
//
// Which faults are in force is driven from outside (start, end): by the
// simulator's clock, or by the runner over the control pipe, so that a
// window opens at the same moment for every process and a part named in a
// fault (isolate:leader) is resolved once.
type netFaults struct {
	faults []Fault // the plan's faults; start and end name them by index
	active []activeNet
	rand   *rand.Rand // drawn only for a message a fault in force matches
}

// activeNet is a network fault in force: the index of the fault in the
// plan, and for an isolation the process it isolates.
type activeNet struct {
	Index int `json:"i"`
	Proc  int `json:"p"`
}

func newNetFaults(faults []Fault, r *rand.Rand) *netFaults {
	return &netFaults{faults: faults, rand: r}
}

// start puts fault i in force (proc: the process an isolation isolates).
func (nf *netFaults) start(i, proc int) {
	if nf.on(i) {
		return
	}
	nf.active = append(nf.active, activeNet{Index: i, Proc: proc})
}

// end takes fault i out of force; it reports whether it was in force.
func (nf *netFaults) end(i int) bool {
	k := slices.IndexFunc(nf.active, func(a activeNet) bool { return a.Index == i })
	if k < 0 {
		return false
	}
	nf.active = slices.Delete(nf.active, k, k+1)
	return true
}

func (nf *netFaults) on(i int) bool {
	return slices.ContainsFunc(nf.active, func(a activeNet) bool { return a.Index == i })
}

// any reports whether some network fault is in force.
func (nf *netFaults) any() bool { return nf != nil && len(nf.active) > 0 }

// affects reports whether fault i (isolating proc) acts on some link from
// p to another of the n processes: p records the fault's start and end.
func (nf *netFaults) affects(i, proc, p, n int) bool {
	f := &nf.faults[i]
	for q := 0; q < n; q++ {
		if q == p {
			continue // messages to oneself are not on the network
		}
		if f.severs() && f.cuts(proc, p, q) || !f.severs() && inSet(f.From, p) && inSet(f.To, q) {
			return true
		}
	}
	return false
}

// cuts reports whether the severing fault f (isolating proc) cuts the link
// from -> to.
func (f *Fault) cuts(proc, from, to int) bool {
	switch f.Kind {
	case FaultPartition:
		return groupOf(f.Groups, from) != groupOf(f.Groups, to)
	case FaultIsolate:
		return (from == proc) != (to == proc)
	case FaultCut:
		return inSet(f.From, from) && inSet(f.To, to)
	}
	return false
}

// matches reports whether the non-severing fault f acts on a message of
// type typ (data: an algorithm message, else a transport ack) from -> to.
func (f *Fault) matches(from, to int, typ string, data bool) bool {
	if f.Type != "" && (!data || f.Type != typ) {
		return false
	}
	return inSet(f.From, from) && inSet(f.To, to)
}

// inSet: nil is every process.
func inSet(s []int, p int) bool { return s == nil || slices.Contains(s, p) }

// groupOf returns the index of p's group; the unnamed processes form one
// group of their own.
func groupOf(groups [][]int, p int) int {
	for i, g := range groups {
		if slices.Contains(g, p) {
			return i
		}
	}
	return -1
}

// netVerdict is what the network does to one message.
type netVerdict struct {
	drop      string        // the fault that drops it; "" if it goes through
	delay     time.Duration // extra delay
	unordered bool          // it may overtake earlier ones (reorder)
	dup       bool          // a second copy follows it
	dupDelay  time.Duration // how much later the copy arrives
}

// judge decides the fate of a message of type typ (data: an algorithm
// message; else a transport ack, which has no type) that from puts on the
// link to to. Severing faults come first (a partition drops without a
// draw), then each matching fault in force in the order of the plan, each
// with its own draws, so that the draws do not depend on faults that do
// not match.
func (nf *netFaults) judge(from, to int, typ string, data bool) netVerdict {
	var v netVerdict
	if !nf.any() || from == to {
		// A message to oneself never touches the network (under dmx run
		// the node delivers it itself).
		return v
	}
	for _, a := range nf.active {
		if f := &nf.faults[a.Index]; f.severs() && f.cuts(a.Proc, from, to) {
			v.drop = f.String()
			return v
		}
	}
	for _, a := range nf.active {
		f := &nf.faults[a.Index]
		if f.severs() || !f.matches(from, to, typ, data) {
			continue
		}
		switch f.Kind {
		case FaultLoss:
			if nf.rand.Float64() < f.Rate {
				v.drop = f.String()
				return v
			}
		case FaultDelay:
			v.delay += f.Dist.Draw(nf.rand)
		case FaultReorder:
			v.delay += f.Dist.Draw(nf.rand)
			v.unordered = true
		case FaultDuplicate:
			if nf.rand.Float64() < f.Rate {
				v.dup = true
				// The copy comes up to a millisecond after the original:
				// close enough to arrive while the original is still news.
				v.dupDelay = time.Duration(nf.rand.Int64N(int64(time.Millisecond)) + 1)
			}
		}
	}
	return v
}

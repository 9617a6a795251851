package runner

import (
	"math/rand/v2"
	"slices"
	"time"
)

// NetFaults is the network fault layer: the network faults of a plan that
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
type NetFaults struct {
	Faults []Fault // the plan's faults; start and end name them by index
	active []ActiveNet
	rand   *rand.Rand // drawn only for a message a fault in force matches
}

// ActiveNet is a network fault in force: the index of the fault in the
// plan, and for an isolation the process it isolates.
type ActiveNet struct {
	Index int `json:"i"`
	Proc  int `json:"p"`
	// By and How say what made it (trace.Fault.By and How): a fault the
	// kernel makes (By trace.FaultByKernel) is not the NetFaults' to
	// judge, only to record.
	By  string `json:"by,omitempty"`
	How string `json:"how,omitempty"`
}

// NewNetFaults returns the fault layer of a plan's faults, none in force
// yet, drawing from r (a stream of the run's seed: StreamFault).
func NewNetFaults(faults []Fault, r *rand.Rand) *NetFaults {
	return &NetFaults{Faults: faults, rand: r}
}

// Start puts fault i in force (proc: the process an isolation isolates).
func (nf *NetFaults) Start(i, proc int) {
	if nf.On(i) {
		return
	}
	nf.active = append(nf.active, ActiveNet{Index: i, Proc: proc})
}

// End takes fault i out of force; it reports whether it was in force.
func (nf *NetFaults) End(i int) bool {
	k := slices.IndexFunc(nf.active, func(a ActiveNet) bool { return a.Index == i })
	if k < 0 {
		return false
	}
	nf.active = slices.Delete(nf.active, k, k+1)
	return true
}

// On reports whether fault i is in force.
func (nf *NetFaults) On(i int) bool {
	return slices.ContainsFunc(nf.active, func(a ActiveNet) bool { return a.Index == i })
}

// Any reports whether some network fault is in force.
func (nf *NetFaults) Any() bool { return nf != nil && len(nf.active) > 0 }

// Affects reports whether fault i (isolating proc) acts on some link from
// p to another of the n processes: p records the fault's start and end.
func (nf *NetFaults) Affects(i, proc, p, n int) bool {
	f := &nf.Faults[i]
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

// Cuts reports whether f cuts the link from -> to (isolating proc): a
// fault that severs links (partition, isolate, cut; Severs) and, in
// force, drops everything on it. A driver that has the kernel make the
// fault reads its links from here.
func (f *Fault) Cuts(proc, from, to int) bool { return f.severs() && f.cuts(proc, from, to) }

// Severs reports whether f cuts links (partition, isolate, cut), which
// heal ends.
func (f *Fault) Severs() bool { return f.severs() }

// OnLink reports whether the link from -> to is one of f's LINK
// (from=SET, to=SET; none: every link), whatever the message type.
func (f *Fault) OnLink(from, to int) bool { return inSet(f.From, from) && inSet(f.To, to) }

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

// Verdict is what the network does to one message.
type Verdict struct {
	Drop      string        // the fault that drops it; "" if it goes through
	Delay     time.Duration // extra delay
	Unordered bool          // it may overtake earlier ones (reorder)
	Dup       bool          // a second copy follows it
	DupDelay  time.Duration // how much later the copy arrives
}

// Judge decides the fate of a message of type typ (data: an algorithm
// message; else a transport ack, which has no type) that from puts on the
// link to to. Severing faults come first (a partition drops without a
// draw), then each matching fault in force in the order of the plan, each
// with its own draws, so that the draws do not depend on faults that do
// not match.
func (nf *NetFaults) Judge(from, to int, typ string, data bool) Verdict {
	var v Verdict
	if !nf.Any() || from == to {
		// A message to oneself never touches the network (under dmx run
		// the node delivers it itself).
		return v
	}
	for _, a := range nf.active {
		if f := &nf.Faults[a.Index]; f.severs() && f.cuts(a.Proc, from, to) {
			v.Drop = f.String()
			return v
		}
	}
	for _, a := range nf.active {
		f := &nf.Faults[a.Index]
		if f.severs() || !f.matches(from, to, typ, data) {
			continue
		}
		switch f.Kind {
		case FaultLoss:
			if nf.rand.Float64() < f.Rate {
				v.Drop = f.String()
				return v
			}
		case FaultDelay:
			v.Delay += f.Dist.Draw(nf.rand)
		case FaultReorder:
			v.Delay += f.Dist.Draw(nf.rand)
			v.Unordered = true
		case FaultDuplicate:
			if nf.rand.Float64() < f.Rate {
				v.Dup = true
				// The copy comes up to a millisecond after the original:
				// close enough to arrive while the original is still news.
				v.DupDelay = time.Duration(nf.rand.Int64N(int64(time.Millisecond)) + 1)
			}
		}
	}
	return v
}

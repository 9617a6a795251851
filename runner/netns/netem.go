package netns

import (
	"fmt"
	"math"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/dmxlab/dmx/runner"
)

// The kernel's part of delay, duplicate and reorder: a netem qdisc on the
// interface of each sender the fault names (tc qdisc add dev eth0 root
// netem ...), where the kernel has sch_netem. It acts on everything the
// sender sends, so only a fault on every link from its senders (no to=,
// no type=) goes there, and one at a time per sender; the others are made
// by the nodes' transport, as over loopback. netem's jitter without a
// distribution table is uniform, so an exponential delay (exp=) is the
// transport's too.

// probeNetem returns nil if the kernel makes netem qdiscs, else why not:
// it adds one to the hub's first port and removes it.
func (nw *network) probeNetem() error {
	h, err := netlink.NewHandleAt(netns.NsHandle(nw.hub))
	if err != nil {
		return err
	}
	defer h.Close()
	link, err := h.LinkByName(hubPort(0))
	if err != nil {
		return err
	}
	q := netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		netlink.NetemQdiscAttrs{Latency: 1000})
	if err := h.QdiscAdd(q); err != nil {
		return fmt.Errorf("this kernel has no sch_netem (adding a netem qdisc: %v)", err)
	}
	return h.QdiscDel(q)
}

// netemFor returns the netem settings that make f, or why netem cannot.
func netemFor(f *runner.Fault) (netlink.NetemQdiscAttrs, string, error) {
	var a netlink.NetemQdiscAttrs
	switch {
	case f.Type != "":
		return a, "", fmt.Errorf("netem cannot tell message types apart (type=%s)", f.Type)
	case f.To != nil:
		return a, "", fmt.Errorf("netem acts on all a sender sends, not on some receivers (to=)")
	}
	us := func(d time.Duration) uint32 { return uint32(d / time.Microsecond) }
	switch f.Kind {
	case runner.FaultDelay, runner.FaultReorder:
		d := f.Dist
		if d.Mean > 0 {
			return a, "", fmt.Errorf("netem's jitter is uniform without a distribution table (exp=)")
		}
		if d.Max > time.Duration(math.MaxUint32)*time.Microsecond/2 {
			return a, "", fmt.Errorf("netem's delay counts microseconds in 32 bits (%v)", d.Max)
		}
		a.Latency, a.Jitter = us((d.Min+d.Max)/2), us((d.Max-d.Min)/2)
		how := fmt.Sprintf("netem delay %v", time.Duration(a.Latency)*time.Microsecond)
		if a.Jitter > 0 {
			// Drawn anew per packet, so packets overtake one another
			// (reliable channels put them back in order).
			how += fmt.Sprintf(" ± %v (uniform)", time.Duration(a.Jitter)*time.Microsecond)
		}
		return a, how + " on each sender's interface", nil
	case runner.FaultDuplicate:
		a.Duplicate = float32(f.Rate * 100)
		return a, fmt.Sprintf("netem duplicate %g%% on each sender's interface", a.Duplicate), nil
	}
	return a, "", fmt.Errorf("netem does not make %s faults", f.Kind)
}

// netemFault is a fault in force by netem: the senders whose interface
// has its qdisc.
type netemFault struct {
	senders []int
}

// addNetem puts fault i in force by netem on the interface of each of
// its senders, none of which may have one already.
func (nw *network) addNetem(i int, attrs netlink.NetemQdiscAttrs) (*netemFault, error) {
	f := &nw.faults[i]
	var senders []int
	for p := 0; p < nw.n; p++ {
		if f.OnLink(p, p) { // its senders (f has no to=: netemFor)
			if _, busy := nw.netemAt[p]; busy {
				return nil, fmt.Errorf("P%d's interface has a netem fault in force already (%s)", p, nw.faults[nw.netemAt[p]].String())
			}
			senders = append(senders, p)
		}
	}
	nf := &netemFault{}
	for _, p := range senders {
		if err := nw.qdisc(p, attrs, true); err != nil {
			nw.delNetem(nf)
			return nil, err
		}
		nf.senders = append(nf.senders, p)
		nw.netemAt[p] = i
	}
	return nf, nil
}

// delNetem takes a netem fault out of force.
func (nw *network) delNetem(nf *netemFault) error {
	var first error
	for _, p := range nf.senders {
		if err := nw.qdisc(p, netlink.NetemQdiscAttrs{}, false); err != nil && first == nil {
			first = err
		}
		delete(nw.netemAt, p)
	}
	nf.senders = nil
	return first
}

// qdisc adds (or deletes) the netem qdisc at the root of node p's
// interface.
func (nw *network) qdisc(p int, attrs netlink.NetemQdiscAttrs, add bool) error {
	h, err := netlink.NewHandleAt(netns.NsHandle(nw.nodes[p].fd))
	if err != nil {
		return err
	}
	defer h.Close()
	link, err := h.LinkByName(nodeIf)
	if err != nil {
		return fmt.Errorf("%s in %s: %w", nodeIf, nw.nodes[p].name, err)
	}
	q := netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}, attrs)
	if add {
		err = h.QdiscAdd(q)
	} else {
		err = h.QdiscDel(q)
	}
	if err != nil {
		return fmt.Errorf("netem qdisc on %s in %s: %w", nodeIf, nw.nodes[p].name, err)
	}
	return nil
}

package netns

import (
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"sync"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/dmxlab/dmx/runner"
)

// The kernel's part of the network faults: nftables rules in the node
// namespaces, each fault its own base chain and set, so that it is put in
// force and taken out in one batch per namespace, with nothing to look
// up.
//
// Rules drop on the receiving side, as Jepsen's iptables partitions do
// (each node drops what comes from the nodes it is cut off from): a
// datagram leaves its sender, crosses the bridge and is dropped before
// the receiver's stack sees it, as on a real network. Dropped on the
// sending side (hook output), a datagram would fail its sendmsg with
// EPERM: the sender would know, which a network never tells it. The
// chains hook prerouting at priority raw (-300), before conntrack
// (-200) and before any filter chain: a flow that conntrack knows as
// established is dropped too, whatever other rules accept (in a
// namespace of dmx's own there are none; in a container's or on a host,
// where the same rules would go, there may be).

// lossScale is the modulus of loss rules' random draw: rates to 0.01 %.
const lossScale = 10000

// ruleHow says, for the trace, how the kernel makes fault f.
func ruleHow(f *runner.Fault) string {
	const where = "in prerouting at priority raw (-300): before conntrack, so established flows too"
	if f.Kind == runner.FaultLoss {
		return fmt.Sprintf("nftables: each receiver drops at random (numgen random mod %d < %d) %s", lossScale, lossThreshold(f.Rate), where)
	}
	return "nftables: each receiver drops " + where
}

// lossThreshold is the draw under which a loss rule drops, out of
// lossScale.
func lossThreshold(rate float64) uint32 {
	return uint32(math.Round(rate * lossScale))
}

// sources returns, for network fault f (isolating proc) and each of n
// receivers, the processes whose datagrams the receiver drops (all of
// them, or at random for loss); nil for a receiver the fault does not
// touch. Messages to oneself are never on the network.
func sources(f *runner.Fault, proc, n int) [][]int {
	out := make([][]int, n)
	for q := 0; q < n; q++ {
		for p := 0; p < n; p++ {
			if p == q {
				continue
			}
			if f.Kind == runner.FaultLoss && f.OnLink(p, q) || f.Cuts(proc, p, q) {
				out[q] = append(out[q], p)
			}
		}
	}
	return out
}

// kernelRules are the rules of one fault in force: in the namespace of
// each receiver it touches, a chain and a set.
type kernelRules struct {
	index int
	fault *runner.Fault
	at    []int // the receivers that have rules
}

func (nw *network) table() *nftables.Table {
	return &nftables.Table{Name: prefix + nw.id, Family: nftables.TableFamilyIPv4}
}

func chainOf(t *nftables.Table, i int) *nftables.Chain {
	accept := nftables.ChainPolicyAccept
	return &nftables.Chain{Name: fmt.Sprintf("fault%d", i), Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityRaw, Policy: &accept}
}

func setOf(t *nftables.Table, i int) *nftables.Set {
	return &nftables.Set{Table: t, Name: fmt.Sprintf("from%d", i), KeyType: nftables.TypeIPAddr}
}

// conn is a netlink connection to nftables in node q's namespace.
func (nw *network) conn(q int) (*nftables.Conn, error) {
	c, err := nftables.New(nftables.WithNetNSFd(nw.nodes[q].fd))
	if err != nil {
		return nil, fmt.Errorf("nftables in %s: %w", nw.nodes[q].name, err)
	}
	return c, nil
}

// addRules puts fault i (isolating proc) in force by nftables rules.
func (nw *network) addRules(i, proc int) (*kernelRules, error) {
	f := &nw.faults[i]
	kr := &kernelRules{index: i, fault: f}
	t := nw.table()
	for q, from := range sources(f, proc, nw.n) {
		if len(from) == 0 {
			continue
		}
		c, err := nw.conn(q)
		if err != nil {
			nw.delRules(kr)
			return nil, err
		}
		c.AddTable(t)
		ch := c.AddChain(chainOf(t, i))
		set := setOf(t, i)
		elems := make([]nftables.SetElement, len(from))
		for k, p := range from {
			elems[k] = nftables.SetElement{Key: nw.nodes[p].ip.To4()}
		}
		if err := c.AddSet(set, elems); err != nil {
			nw.delRules(kr)
			return nil, fmt.Errorf("nftables set in %s: %w", nw.nodes[q].name, err)
		}
		// ip saddr @fromI
		saddr := func() []expr.Any {
			return []expr.Any{
				&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
				&expr.Lookup{SourceRegister: 1, SetName: set.Name, SetID: set.ID},
			}
		}
		drop := saddr()
		if f.Kind == runner.FaultLoss {
			// ip saddr @fromI counter: what the fault saw;
			// ip saddr @fromI numgen random mod S < R counter drop. The
			// draw is in host order and cmp compares bytes, big-endian
			// first: hence the byteorder (nft itself emits the same).
			c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: append(saddr(), &expr.Counter{})})
			drop = append(drop,
				&expr.Numgen{Register: 1, Modulus: lossScale, Type: unix.NFT_NG_RANDOM},
				&expr.Byteorder{SourceRegister: 1, DestRegister: 1, Op: expr.ByteorderHton, Len: 4, Size: 4},
				&expr.Cmp{Op: expr.CmpOpLt, Register: 1, Data: binaryutil.BigEndian.PutUint32(lossThreshold(f.Rate))})
		}
		drop = append(drop, &expr.Counter{}, &expr.Verdict{Kind: expr.VerdictDrop})
		c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: drop})
		if err := c.Flush(); err != nil {
			nw.delRules(kr)
			return nil, fmt.Errorf("nftables rules in %s: %w", nw.nodes[q].name, err)
		}
		kr.at = append(kr.at, q)
	}
	return kr, nil
}

// counts are what a fault's rules counted: datagrams they dropped and,
// for loss, those the fault applied to.
type counts struct{ seen, dropped uint64 }

func (c counts) String(loss bool) string {
	if !loss {
		return fmt.Sprintf("nftables dropped %d datagrams", c.dropped)
	}
	pct := 0.0
	if c.seen > 0 {
		pct = 100 * float64(c.dropped) / float64(c.seen)
	}
	return fmt.Sprintf("nftables dropped %d of %d datagrams (%.1f%%)", c.dropped, c.seen, pct)
}

// delRules takes fault kr out of force, and returns what its rules
// counted. A namespace whose rules cannot be read or removed is named in
// the error; the others are done all the same. The namespaces are done
// at once, each by its own netlink socket: a commit that deletes a chain
// waits for the kernel (an RCU grace period), which on a loaded machine
// takes up to seconds, and one after another those waits add up.
func (nw *network) delRules(kr *kernelRules) (counts, error) {
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		total counts
		errs  = make([]string, len(kr.at)) // in the order of kr.at
	)
	for k, q := range kr.at {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := nw.delRulesAt(kr, q)
			mu.Lock()
			defer mu.Unlock()
			total.seen += c.seen
			total.dropped += c.dropped
			if err != nil {
				errs[k] = err.Error()
			}
		}()
	}
	wg.Wait()
	kr.at = nil
	errs = slices.DeleteFunc(errs, func(e string) bool { return e == "" })
	if len(errs) > 0 {
		return total, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return total, nil
}

// delRulesAt removes fault kr's rules from namespace q, and returns what
// they counted.
func (nw *network) delRulesAt(kr *kernelRules, q int) (counts, error) {
	var c counts
	conn, err := nw.conn(q)
	if err != nil {
		return c, err
	}
	t := nw.table()
	ch := chainOf(t, kr.index)
	if rules, err := conn.GetRules(t, ch); err == nil {
		for k, r := range rules {
			for _, e := range r.Exprs {
				if ctr, ok := e.(*expr.Counter); ok {
					if k == len(rules)-1 {
						c.dropped += ctr.Packets
					} else {
						c.seen += ctr.Packets
					}
				}
			}
		}
	}
	conn.FlushChain(ch)
	conn.DelChain(ch)
	conn.DelSet(setOf(t, kr.index))
	if err := conn.Flush(); err != nil {
		return c, fmt.Errorf("remove the rules of %s in %s: %v", kr.fault, nw.nodes[q].name, err)
	}
	return c, nil
}

// ip is the address of node i: 198.18.0.0/15 (RFC 2544: reserved for
// benchmarking, never routed on a real network) counted from .1.
func ip(i int) net.IP {
	v := uint32(198)<<24 | uint32(18)<<16 + uint32(i+1)
	return net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// prefixLen is the length of the nodes' prefix: all of 198.18.0.0/15.
const prefixLen = 15

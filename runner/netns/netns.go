package netns

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/udp"
	"github.com/dmxlab/dmx/trace"
)

// The names of the interfaces, each in a namespace of the run's own: the
// bridge and node i's port on it in the hub, the node's end of its veth
// pair in its namespace.
const (
	bridgeName = "br0"
	nodeIf     = "eth0"
)

func hubPort(i int) string { return "p" + strconv.Itoa(i) }

// The environment variables a node's process (and a program of the
// user's own that it starts, dmx run --exec, which inherits them) gets:
// where it is, for a program that opens sockets of its own.
const (
	EnvNetns     = "DMX_NETNS"      // its namespace's name (ip netns exec NAME)
	EnvNetnsPath = "DMX_NETNS_PATH" // its namespace's path (nsenter --net=PATH)
	EnvAddr      = "DMX_ADDR"       // its IP address
	EnvPeers     = "DMX_PEERS"      // every node's IP address, in node order, comma-separated
)

// ErrPrivilege is wrapped by the error of a runner that lacks what
// network namespaces need.
var ErrPrivilege = errors.New("not privileged")

// Check says whether this process may make what a run over network
// namespaces needs: CAP_SYS_ADMIN (to make network namespaces and name
// them with a bind mount) and CAP_NET_ADMIN (veth pairs, a bridge,
// addresses, nftables rules, netem). Root has both.
func Check() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("--net netns: network namespaces are Linux's (this is %s): %w", runtime.GOOS, ErrPrivilege)
	}
	eff, err := effectiveCaps()
	if err != nil {
		return fmt.Errorf("--net netns: read this process's capabilities: %w", err)
	}
	return checkCaps(eff)
}

// checkCaps is Check's verdict on the effective capabilities eff.
func checkCaps(eff uint64) error {
	var missing []string
	for _, c := range []struct {
		bit  uint
		name string
	}{{unix.CAP_SYS_ADMIN, "CAP_SYS_ADMIN (make network namespaces and name them)"}, {unix.CAP_NET_ADMIN, "CAP_NET_ADMIN (veth pairs, a bridge, nftables rules)"}} {
		if eff&(1<<c.bit) == 0 {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("--net netns needs root: it lacks %s; run it as root (sudo dmx run ... --net netns), or run without --net: %w", strings.Join(missing, " and "), ErrPrivilege)
	}
	return nil
}

// effectiveCaps reads this process's effective capabilities.
func effectiveCaps() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, errors.New("no CapEff in /proc/self/status")
}

// Probe makes what a run needs once, in a namespace that leaves no name
// and goes when Probe returns: a network namespace, a bridge and an
// nftables table in it. Its error says why runs over network namespaces
// cannot be made here (tests skip on it). It wraps ErrPrivilege when the
// process lacks the capabilities (Check).
func Probe() error {
	if err := Check(); err != nil {
		return err
	}
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends in the probe's namespace
		ch <- func() error {
			if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
				return fmt.Errorf("make a network namespace: %w", err)
			}
			h, err := netlink.NewHandle()
			if err != nil {
				return err
			}
			defer h.Close()
			if err := h.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: bridgeName}}); err != nil {
				return fmt.Errorf("make a bridge: %w", err)
			}
			fd, err := unix.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()), unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			c, err := nftables.New(nftables.WithNetNSFd(fd))
			if err != nil {
				return fmt.Errorf("nftables: %w", err)
			}
			c.AddTable(&nftables.Table{Name: "dmx-probe", Family: nftables.TableFamilyIPv4})
			if err := c.Flush(); err != nil {
				return fmt.Errorf("nftables table: %w", err)
			}
			return nil
		}()
	}()
	if err := <-ch; err != nil {
		return fmt.Errorf("--net netns cannot be made here: %w", err)
	}
	return nil
}

// node is one node's place: its namespace and address.
type node struct {
	name string // dmx-RUN-I
	fd   int    // an open descriptor of its namespace
	ip   net.IP
}

// network is one run's namespaces: a hub holding a bridge, and a
// namespace per node whose eth0 is a veth pair's end on the bridge, with
// an address of 198.18.0.0/15 and no other route. It is the run's
// udp.Network.
type network struct {
	id     string
	n      int
	faults []runner.Fault
	hub    int // the hub's namespace (locked: lockRun)
	nodes  []node
	st     *starter
	// madeDir: nsDir was not there before the run; it goes if the run
	// leaves it empty.
	madeDir bool

	netemErr error          // why the kernel cannot make netem faults; nil if it can
	netemAt  map[int]int    // sender -> the netem fault in force on its interface
	kernel   map[int]kfault // the faults in force by the kernel, by index
}

// kfault is a fault the kernel makes: by rules or by netem.
type kfault struct {
	rules *kernelRules
	netem *netemFault
}

// newID returns a fresh run id.
func newID() (string, error) {
	b := make([]byte, idLen)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return string(b), nil
}

// open makes the namespaces of a run of n nodes, the faults of the plan
// to be made by the kernel where it can. On error, whatever it made is
// removed.
func open(n int, faults []runner.Fault) (nw *network, err error) {
	id, err := newID()
	if err != nil {
		return nil, err
	}
	nw = &network{id: id, n: n, faults: faults, hub: -1, st: newStarter(), netemAt: map[int]int{}, kernel: map[int]kfault{}}
	if _, err := os.Stat(nsDir); errors.Is(err, os.ErrNotExist) {
		nw.madeDir = true
	}
	defer func() {
		if err != nil {
			nw.close()
			nw = nil
		}
	}()
	if nw.hub, err = newNamed(nsName(id, "hub"), true); err != nil {
		return nw, err
	}
	hub, err := netlink.NewHandleAt(netns.NsHandle(nw.hub))
	if err != nil {
		return nw, fmt.Errorf("netlink in %s: %w", nsName(id, "hub"), err)
	}
	defer hub.Close()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: bridgeName}}
	if err := hub.LinkAdd(br); err != nil {
		return nw, fmt.Errorf("make bridge %s in %s: %w", bridgeName, nsName(id, "hub"), err)
	}
	if err := hub.LinkSetUp(br); err != nil {
		return nw, fmt.Errorf("bridge %s up: %w", bridgeName, err)
	}
	for i := 0; i < n; i++ {
		nd := node{name: nsName(id, strconv.Itoa(i)), fd: -1, ip: ip(i)}
		if nd.fd, err = newNamed(nd.name, false); err != nil {
			return nw, err
		}
		nw.nodes = append(nw.nodes, nd)
		if err := nw.wire(hub, br, i); err != nil {
			return nw, err
		}
	}
	return nw, nil
}

// wire connects node i to the bridge: a veth pair, one end (p<i>) on the
// bridge, the other (eth0) in the node's namespace with its address; and
// the node's loopback up, for a program that talks to itself.
func (nw *network) wire(hub *netlink.Handle, br *netlink.Bridge, i int) error {
	nd := nw.nodes[i]
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: hubPort(i)}, PeerName: nodeIf, PeerNamespace: netlink.NsFd(nd.fd)}
	if err := hub.LinkAdd(veth); err != nil {
		return fmt.Errorf("make veth pair %s-%s for %s: %w", hubPort(i), nodeIf, nd.name, err)
	}
	if err := hub.LinkSetMasterByIndex(veth, br.Attrs().Index); err != nil {
		return fmt.Errorf("put %s on bridge %s: %w", hubPort(i), bridgeName, err)
	}
	if err := hub.LinkSetUp(veth); err != nil {
		return fmt.Errorf("%s up: %w", hubPort(i), err)
	}
	h, err := netlink.NewHandleAt(netns.NsHandle(nd.fd))
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", nd.name, err)
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err == nil {
		err = h.LinkSetUp(lo)
	}
	if err != nil {
		return fmt.Errorf("loopback up in %s: %w", nd.name, err)
	}
	eth, err := h.LinkByName(nodeIf)
	if err != nil {
		return fmt.Errorf("%s in %s: %w", nodeIf, nd.name, err)
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: nd.ip, Mask: net.CIDRMask(prefixLen, 32)}}
	if err := h.AddrAdd(eth, addr); err != nil {
		return fmt.Errorf("address %s in %s: %w", addr, nd.name, err)
	}
	if err := h.LinkSetUp(eth); err != nil {
		return fmt.Errorf("%s up in %s: %w", nodeIf, nd.name, err)
	}
	return nil
}

// close removes the run's namespaces: the nodes', then the hub's, whose
// lock says the run is alive. With the last reference to a namespace
// gone, the kernel removes everything in it (veth pairs, the bridge, the
// rules). The starter's thread ends with it: every node it started must
// have ended (the launcher reaps them all before it returns).
func (nw *network) close() error {
	var errs []error
	for _, nd := range nw.nodes {
		if nd.fd >= 0 {
			unix.Close(nd.fd)
		}
		if err := removeNamed(nd.name); err != nil {
			errs = append(errs, err)
		}
	}
	nw.nodes = nil
	if nw.hub >= 0 {
		unix.Close(nw.hub)
		nw.hub = -1
		if err := removeNamed(nsName(nw.id, "hub")); err != nil {
			errs = append(errs, err)
		}
	}
	if nw.madeDir {
		removeDir()
	}
	if nw.st != nil {
		nw.st.close()
		nw.st = nil
	}
	return errors.Join(errs...)
}

// Place implements udp.Network.
func (nw *network) Place(i int) (host, name string) {
	return nw.nodes[i].ip.String(), nw.nodes[i].name
}

// Start implements udp.Network: the process starts in node i's
// namespace, told where it is in its environment.
func (nw *network) Start(i int, cmd *exec.Cmd) error {
	nd := nw.nodes[i]
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	peers := make([]string, nw.n)
	for k := range peers {
		peers[k] = nw.nodes[k].ip.String()
	}
	cmd.Env = append(env, EnvNetns+"="+nd.name, EnvNetnsPath+"="+filepath.Join(nsDir, nd.name),
		EnvAddr+"="+nd.ip.String(), EnvPeers+"="+strings.Join(peers, ","))
	return nw.st.start(nd.fd, cmd)
}

// Applies implements udp.Network: what dmx run carries out over loopback,
// it carries out here, network faults by the kernel where it can (see
// NetStart) and by the transport where it cannot.
func (nw *network) Applies(f *runner.Fault) error { return Applies(f) }

// Applies is --net netns's word on a fault (runner.Plan.CheckFaults): the
// same as dmx run's over loopback (udp.Applies).
func Applies(f *runner.Fault) error { return udp.Applies(f) }

// byKernel says whether the kernel can make fault f, and how; or why not
// (then the transport does).
func (nw *network) byKernel(f *runner.Fault) (bool, string) {
	switch {
	case f.Severs():
		return true, ruleHow(f)
	case f.Kind == runner.FaultLoss && f.Type != "":
		return false, fmt.Sprintf("the kernel cannot tell message types apart (type=%s; they are inside dmx's authenticated datagrams)", f.Type)
	case f.Kind == runner.FaultLoss:
		return true, ruleHow(f)
	}
	_, how, err := netemFor(f)
	if err == nil {
		err = nw.netemErr
	}
	if err != nil {
		return false, err.Error()
	}
	return true, how
}

// NetStart implements udp.Network.
func (nw *network) NetStart(i, proc int) (bool, string) {
	f := &nw.faults[i]
	kernel, how := nw.byKernel(f)
	if !kernel {
		return false, how
	}
	var kf kfault
	var err error
	if f.Severs() || f.Kind == runner.FaultLoss {
		kf.rules, err = nw.addRules(i, proc)
	} else {
		attrs, _, _ := netemFor(f)
		kf.netem, err = nw.addNetem(i, attrs)
	}
	if err != nil {
		return false, "the kernel could not: " + err.Error()
	}
	nw.kernel[i] = kf
	return true, how
}

// NetEnd implements udp.Network.
func (nw *network) NetEnd(i int) string {
	kf, ok := nw.kernel[i]
	if !ok {
		return ""
	}
	delete(nw.kernel, i)
	switch {
	case kf.rules != nil:
		c, err := nw.delRules(kf.rules)
		how := c.String(nw.faults[i].Kind == runner.FaultLoss)
		if err != nil {
			how += "; " + err.Error()
		}
		return how
	case kf.netem != nil:
		if err := nw.delNetem(kf.netem); err != nil {
			return err.Error()
		}
		return "netem removed"
	}
	return ""
}

// describe says where the run's nodes are and what makes each network
// fault.
func (nw *network) describe(w io.Writer) {
	last := nw.n - 1
	fmt.Fprintf(w, "net: netns, P0..P%d in namespaces %s..%d at %s..%s on bridge %s in %s (no route out)\n",
		last, nw.nodes[0].name, last, nw.nodes[0].ip, nw.nodes[last].ip, bridgeName, nsName(nw.id, "hub"))
	for i := range nw.faults {
		f := &nw.faults[i]
		if !f.Network() {
			continue
		}
		kernel, how := nw.byKernel(f)
		by := trace.FaultByTransport
		if kernel {
			by = trace.FaultByKernel
		}
		fmt.Fprintf(w, "fault %s: by the %s (%s)\n", f, by, how)
	}
}

// needsNetem reports whether some fault would be netem's.
func needsNetem(faults []runner.Fault) bool {
	for i := range faults {
		if _, _, err := netemFor(&faults[i]); err == nil {
			return true
		}
	}
	return false
}

// Launch carries out p, a plan of real processes over network namespaces
// (p.UDP.Net is runner.NetNS), as udp.Launch does over loopback, each
// node in a network namespace of its own: it removes what runs killed
// earlier left (saying so on hooks.Stderr), makes the run's namespaces,
// bridge and veth pairs, says where the nodes are and what makes each
// network fault, runs the plan through udp.Launch with itself as the
// network, and removes everything it made when the run ends, however it
// ends (Ctrl-C included; a SIGKILL of the runner leaves the namespaces
// to the next run's sweep).
func Launch(ctx context.Context, p runner.Plan, rec runner.Recorder, hooks udp.LaunchHooks) (udp.LaunchResult, error) {
	if p.UDP.Net != runner.NetNS {
		return udp.LaunchResult{}, fmt.Errorf("netns.Launch carries out plans over %s, not %s", runner.NetNS, p.UDP.Net.String())
	}
	if err := p.Validate(); err != nil {
		return udp.LaunchResult{}, err
	}
	if err := p.CheckFaults(Applies); err != nil {
		return udp.LaunchResult{}, err
	}
	if err := Check(); err != nil {
		return udp.LaunchResult{}, err
	}
	stderr := hooks.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	if left := Sweep().String(); left != "" {
		fmt.Fprintf(stderr, "dmx: %s\n", left)
	}
	nw, err := open(p.N, p.Faults)
	if err != nil {
		return udp.LaunchResult{}, fmt.Errorf("--net netns: %w", err)
	}
	defer func() {
		if err := nw.close(); err != nil {
			fmt.Fprintf(stderr, "dmx: removing the run's namespaces: %v\n", err)
		}
	}()
	if needsNetem(p.Faults) {
		nw.netemErr = nw.probeNetem()
	}
	nw.describe(stderr)
	hooks.Net = nw
	return udp.Launch(ctx, p, rec, hooks)
}

// LaunchPlan carries out a plan of real processes over the network its
// UDP.Net names: Launch for network namespaces, udp.Launch for loopback.
func LaunchPlan(ctx context.Context, p runner.Plan, rec runner.Recorder, hooks udp.LaunchHooks) (udp.LaunchResult, error) {
	if p.UDP.Net == runner.NetNS {
		return Launch(ctx, p, rec, hooks)
	}
	return udp.Launch(ctx, p, rec, hooks)
}

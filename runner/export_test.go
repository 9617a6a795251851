package runner

import "github.com/dmxlab/dmx/runner/deep"

// ExactFingerprint hashes everything of w's state that Fingerprint may
// abstract: every node's machines whole, its clock, and every message in
// flight whole. Two states with one exact fingerprint are one state.
func ExactFingerprint(w *World, h *deep.Hasher) {
	for p, nd := range w.nodes {
		h.Word(nd.lamport)
		for _, r := range nd.resources {
			h.Value(nd.machines[r])
		}
		pl := &w.load[p]
		for j := range pl.left {
			h.Word(uint64(pl.left[j])<<8 | uint64(pl.phase[j]))
		}
	}
	for i, ch := range w.chans {
		h.Word(uint64(i)<<32 | uint64(len(ch)))
		for _, e := range ch {
			h.Value(e.Msg)
			h.Word(e.Lamport)
		}
	}
}

// MachinesOf returns n's machines, one a resource.
func MachinesOf(n *Node) []any {
	var ms []any
	for _, r := range n.resources {
		ms = append(ms, n.machines[r])
	}
	return ms
}

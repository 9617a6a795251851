package election

import "github.com/dmxlab/dmx/runner/algo"

// SubConfig is the Config of the election machine that the machine of c
// embeds: the same process, group, resource and random stream, and of c's
// parameters only those named in keys, over initiators=initiators (who
// starts an election at Start is the host's choice, not the user's).
func SubConfig(c algo.Config, initiators string, keys []string) algo.Config {
	sub := map[string]string{"initiators": initiators}
	for _, k := range keys {
		if v, ok := c.Params[k]; ok {
			sub[k] = v
		}
	}
	return algo.Config{ID: c.ID, N: c.N, Resource: c.Resource, Params: sub, Rand: c.Rand}
}

// Host is what a machine that embeds an election keeps of it beside the
// machine itself.
type Host struct {
	Suspected []bool // what the election's detector suspects, from its Suspect and Trust outputs
	Term      uint64 // the election number the election machine persisted last
}

// NewHost is the Host of a process in a group of n.
func NewHost(n int) Host { return Host{Suspected: make([]bool, n)} }

// Restart is for the host's Start and Recover: the election's detector
// restarts with the machine and suspects nobody.
func (h *Host) Restart() { clear(h.Suspected) }

// Absorb passes the election's outputs els on after out, in order, but for
// its Persist: the host has one stable storage, so Absorb keeps the
// election's number in Term and outputs persist() instead, which must
// record Term with the host's own state. It returns the outputs and, in
// order, the election's Suspect, Trust and Leader outputs, for the host to
// react to once all of them are passed on.
func (h *Host) Absorb(out, els []algo.Output, persist func() algo.Output) (all, react []algo.Output) {
	for _, o := range els {
		switch o.Kind {
		case algo.Persist:
			h.Term = o.Msg.Term
			out = append(out, persist())
			continue
		case algo.Suspect:
			if o.To >= 0 && o.To < len(h.Suspected) {
				h.Suspected[o.To] = true
				react = append(react, o)
			}
		case algo.Trust:
			if o.To >= 0 && o.To < len(h.Suspected) {
				h.Suspected[o.To] = false
				react = append(react, o)
			}
		case algo.Leader:
			react = append(react, o)
		}
		out = append(out, o)
	}
	return out, react
}

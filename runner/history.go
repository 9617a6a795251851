package runner

import (
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// History is what a process's recorded events say about it across its
// incarnations: its last event, the messages it sent, the entries it
// made and what its machines persisted. It is enough to record its crash
// on its behalf (Crash) and to restart it where the trace left it
// (Resume). The launcher keeps one per process of a real run; a replay
// keeps one per process of the recorded run, and restarts a recovered
// process from it as the launcher did.
type History struct {
	last  trace.Event    // the last event, its slices its own
	sent  int64          // messages sent: the low half of its largest message id
	exits map[string]int // critical sections left (multicasts made), per resource
	saved map[string]algo.Msg
}

// NewHistory returns the history of process id before its first event.
func NewHistory(id int) *History {
	h := &History{exits: map[string]int{}, saved: map[string]algo.Msg{}}
	h.last.Proc = id
	return h
}

// Add takes in the next event of the process; multicast says that its
// algorithm is a multicast, whose entries are its multicasts. The event
// is copied: the caller may reuse it.
func (h *History) Add(ev *trace.Event, multicast bool) {
	// The last event's clock and detail are copies, into the buffers of
	// the one before: the runner adds every event of a run here.
	vc, detail := h.last.VC, h.last.Detail
	h.last = *ev
	h.last.VC, h.last.Detail = nil, nil
	if ev.VC != nil {
		h.last.VC = append(vc[:0], ev.VC...)
	}
	if len(ev.Detail) > 0 {
		h.last.Detail = append(detail[:0], ev.Detail...)
	}
	switch ev.Kind {
	case trace.KindCSExit:
		h.exits[ev.Resource]++
	case trace.KindSend:
		if k := ev.Msg & 0xffffffff; k > h.sent {
			h.sent = k
		}
	case trace.KindInternal:
		// Notes, errors and details that cannot be read are not the
		// runtime's business.
		switch d, _ := ev.Details(); d := d.(type) {
		case trace.Persist:
			h.saved[ev.Resource] = algo.Msg(d.State)
		case trace.Multicast:
			if d.Entry > 0 && multicast {
				h.exits[d.Resource]++
			}
		}
	}
}

// Last returns the process's last event; the caller must not modify it.
func (h *History) Last() *trace.Event { return &h.last }

// Crash returns the crash event that follows the last event, as the
// runner records it for a process that died: the next sequence number,
// Lamport clock and own vector entry, wall time wall (at least one more
// than the last event's) and detail d. It does not add it.
func (h *History) Crash(wall int64, n int, d trace.Crash) trace.Event {
	crash := h.last
	crash.Seq++
	crash.Kind = trace.KindCrash
	crash.Lamport++
	crash.VC = crash.VC.Clone()
	if len(crash.VC) == n {
		crash.VC[crash.Proc]++
	} else {
		crash.VC = nil
	}
	if wall <= h.last.Wall {
		wall = h.last.Wall + 1
	}
	crash.Wall = wall
	crash.Msg, crash.MsgType, crash.Peer, crash.Resource = 0, "", trace.NoPeer, ""
	crash.Detail = trace.EncodeDetail(d)
	return crash
}

// Resume returns what a restarted incarnation of the process takes over,
// w being its own workload (Workload.For): the counters of its last
// event, the messages it sent, what its machines persisted, and the
// entries it has still to make.
func (h *History) Resume(w Workload) *Resume {
	left := map[string]int{}
	rs := w.Resources
	if len(rs) == 0 {
		rs = []string{DefaultResource}
	}
	for _, r := range rs {
		left[r] = w.Entries - h.exits[r]
	}
	saved := make(map[string]algo.Msg, len(h.saved))
	for k, v := range h.saved {
		saved[k] = v
	}
	return &Resume{Seq: h.last.Seq, Lamport: h.last.Lamport, VC: h.last.VC.Clone(), Sent: h.sent, Saved: saved, Left: left}
}

// Forget drops what the process's machines persisted: it restarts with
// amnesia (a recover fault's), as if its stable storage were lost.
func (h *History) Forget() { clear(h.saved) }

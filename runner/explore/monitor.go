package explore

import (
	"fmt"
	"slices"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/deep"
	"github.com/dmxlab/dmx/trace"
)

// monitor watches the properties on the model as steps happen, so that a
// violation is seen at the step that makes it: two processes inside one
// critical section (mutual exclusion), two processes delivering two
// multicasts in different orders (total order). What it sees is a
// suspicion that the checks confirm on the trace.
type monitor struct {
	w         *runner.World
	multicast bool
	faults    int                // crashes and losses so far
	delivered [][]trace.Delivery // per process, in delivery order
	suspect   string             // what the last step made the monitor suspect
}

func (s *search) newMonitor() *monitor {
	m := &monitor{multicast: s.plan.Spec.Kind == algo.Multicast}
	if m.multicast {
		m.delivered = make([][]trace.Delivery, s.plan.N)
	}
	return m
}

func (m *monitor) clone() *monitor {
	c := *m
	if m.delivered != nil {
		c.delivered = make([][]trace.Delivery, len(m.delivered))
		for i, d := range m.delivered {
			c.delivered[i] = slices.Clip(d) // appends copy: the prefix is shared, never changed
		}
	}
	return &c
}

// attach makes m watch w's events.
func (m *monitor) attach(w *runner.World) {
	m.w = w
	w.Observe = m.event
}

// event watches one event. It keeps only the first suspicion of a step,
// but always takes the event in: what it remembers must depend on the
// run's events alone, not on when it suspected something (its memory is
// part of the state's fingerprint).
func (m *monitor) event(ev *trace.Event) {
	suspect := func(format string, args ...any) {
		if m.suspect == "" {
			m.suspect = fmt.Sprintf(format, args...)
		}
	}
	switch ev.Kind {
	case trace.KindCSEnter:
		if hs := m.w.Holders(ev.Resource); len(hs) > 1 {
			suspect("%s in the critical section of %s at once", procs(hs), ev.Resource)
		}
	case trace.KindDeliver:
		if !m.multicast {
			return
		}
		d, err := ev.Delivery()
		if err != nil {
			return
		}
		p := ev.Proc
		for q, theirs := range m.delivered {
			if q == p {
				continue
			}
			at := slices.Index(theirs, d)
			if at < 0 {
				continue
			}
			// Every multicast p delivered before d, q must have
			// delivered before d too, if it delivered it at all.
			for _, e := range m.delivered[p] {
				if j := slices.Index(theirs, e); j > at {
					suspect("P%d delivered %v before %v, P%d after", p, name(e), name(d), q)
				}
			}
		}
		m.delivered[p] = append(m.delivered[p], d)
	}
}

func name(d trace.Delivery) string { return fmt.Sprintf("P%d's multicast %d", d.From, d.ID) }

// fingerprint mixes into h what the monitor keeps that decides what it
// will see: the faults used and the deliveries.
func (m *monitor) fingerprint(h *deep.Hasher) {
	h.Word(uint64(m.faults))
	for _, ds := range m.delivered {
		h.Word(uint64(len(ds)))
		for _, d := range ds {
			h.Word(uint64(d.From)<<32 | uint64(uint32(d.ID)))
			h.Word(d.Stamp)
		}
	}
}

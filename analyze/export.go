package analyze

import (
	"fmt"
	"slices"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/foreign"
)

// ExportRuns reads the runs of st named by ids (all of them if ids is
// empty) for an exporter (trace/format): events in a causal order, with
// the vector and Lamport clocks that happens-before gives them, whatever
// the trace recorded, and their messages.
func ExportRuns(st *trace.Store, ids []int64) ([]foreign.Exported, error) {
	runs, err := st.Runs()
	if err != nil {
		return nil, err
	}
	var out []foreign.Exported
	for _, r := range runs {
		if len(ids) > 0 && !slices.Contains(ids, r.ID) {
			continue
		}
		// The events stream from the store into the export: not read
		// whole first, which held a second copy of the run (a 960,010-event
		// run took 1.5 GB to export to ShiViz).
		n, err := st.CountEvents(r.ID)
		if err != nil {
			return nil, err
		}
		rd, err := st.Events(r.ID)
		if err != nil {
			return nil, err
		}
		x, err := exportRun(r, rd, int(n))
		rd.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: run %d: %w", st.Path(), r.ID, err)
		}
		out = append(out, x)
	}
	for _, id := range ids {
		found := false
		for _, x := range out {
			found = found || x.Run.ID == id
		}
		if !found {
			return nil, fmt.Errorf("%s: no run %d", st.Path(), id)
		}
	}
	return out, nil
}

// ExportRun makes the exported form of one run from its events: Walk
// rebuilds happens-before and gives each event its vector clock, in the
// causal order foreign.BuildExport derives the rest from.
func ExportRun(r trace.Run, evs []trace.Event) (foreign.Exported, error) {
	return exportRun(r, &trace.SliceReader{Events: evs}, len(evs))
}

// exportRun is ExportRun over a reader of the run's n events (n sizes the
// export at once; a reader that gives more is still read whole).
func exportRun(r trace.Run, rd trace.Reader, n int) (foreign.Exported, error) {
	out := make([]foreign.ExportedEvent, 0, n)
	_, err := Walk(r, rd, func(ev *trace.Event, hb *HB) {
		e := foreign.ExportedEvent{Event: *ev}
		// The clock's non-zero entries, not a dense clock per event: 16,384
		// processes with a message each made dmx export perfetto take 4.4
		// GB (and write its 544 MB), shiviz 2.2 GB.
		e.VC = nil
		hb.Known(func(p int, n uint64) { e.Clock = append(e.Clock, foreign.Count{Proc: p, N: n}) })
		if ev.Detail != nil {
			e.Detail = append([]byte(nil), ev.Detail...)
		}
		if o, _ := ev.Origin(); o.Src != "" || o.Text != "" || len(o.Fields) > 0 {
			e.Origin = &o
		}
		out = append(out, e)
	})
	if err != nil {
		return foreign.Exported{Run: r}, err
	}
	return foreign.BuildExport(r, out), nil
}

package viewer

import (
	"testing"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/trace"
)

type recorderFunc func(*trace.Event) error

func (r recorderFunc) Record(ev *trace.Event) error { return r(ev) }

// recordPlan records the simulated run of p into a new trace at path.
func recordPlan(t testing.TB, path string, p runner.Plan) {
	t.Helper()
	st, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	row := p.RunRow()
	row.Started = 1
	id, err := st.BeginRun(row)
	if err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter(id)
	res, err := runner.Simulate(p, recorderFunc(w.Add), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.EndRun(id, 2, res.Complete, res.Status); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

package foreign

import (
	"errors"
	"fmt"

	"github.com/dmxlab/dmx/trace"
)

// Write appends runs to the trace at path, creating it if needed, and
// returns their ids.
func Write(path string, runs []Run) (ids []int64, err error) {
	st, err := trace.Create(path)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	for _, r := range runs {
		id, err := st.BeginRun(r.Run)
		if err != nil {
			return ids, err
		}
		w := st.NewWriter(id)
		for i := range r.Events {
			if err := w.Add(&r.Events[i]); err != nil {
				w.Close()
				return ids, err
			}
		}
		if err := w.Close(); err != nil {
			return ids, err
		}
		if err := st.EndRun(id, r.Run.Ended, r.Run.Complete, r.Run.Status); err != nil {
			return ids, err
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s: nothing to import", path)
	}
	return ids, nil
}

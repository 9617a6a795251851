package foreign

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/dmxlab/dmx/trace"
)

// Write appends runs to the trace at path, creating it if needed, and
// returns their ids.
func Write(path string, runs []Run) (ids []int64, err error) {
	// A trace this import makes is removed if the import fails: nothing
	// was imported. In a trace that held runs before, the run that could
	// not be written whole is ended as failed: it read "imported" with
	// part of its events, or none, when the disk filled (found by the
	// adversarial pass of issue 22).
	_, lerr := os.Lstat(path)
	made := errors.Is(lerr, fs.ErrNotExist)
	st, err := trace.Create(path)
	if err != nil {
		return nil, err
	}
	var failed, ended int64 // the run begun and not written whole, its end
	defer func() {
		if err != nil && failed != 0 && !made {
			if eerr := st.EndRun(failed, ended, false, "failed: "+err.Error()); eerr == nil {
				err = fmt.Errorf("%w (run %d of %s is marked failed)", err, failed, path)
			}
		}
		err = errors.Join(err, st.Close())
		if err != nil && made {
			for _, f := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
				os.Remove(f)
			}
			ids = nil
			err = fmt.Errorf("%w (nothing imported: %s removed)", err, path)
		}
	}()
	for _, r := range runs {
		id, err := st.BeginRun(r.Run)
		if err != nil {
			return ids, err
		}
		failed, ended = id, r.Run.Ended
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
		failed = 0
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s: nothing to import", path)
	}
	return ids, nil
}

package trace

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// RunWriter records whole runs whose events are all at hand (a sweep's
// runs, simulated and checked in memory), one after the other, each in
// one transaction with its runs row already ended, on one connection kept
// for them all. A Writer per run opens a connection, prepares its
// statements and warms its cache for each run, and commits the row, the
// events and the end apart: for runs of a thousand events that is most of
// the work (28ms a run, where this takes about 3).
//
// It is not safe for concurrent use; several RunWriters (and Writers) may
// write to one file at once, each in its own transactions.
type RunWriter struct {
	s  *Store
	db *writerDB
	b  *batch
}

// NewRunWriter returns a RunWriter into s. Close it before closing s.
func (s *Store) NewRunWriter() (*RunWriter, error) {
	if err := s.checkWritable(); err != nil {
		return nil, err
	}
	db, err := openWriterDB(s, 0)
	if err != nil {
		return nil, s.wrap(err)
	}
	return &RunWriter{s: s, db: db, b: newBatch()}, nil
}

// Write records the run r (its row as given: ended, complete and status
// included; r.ID is ignored) with events, and returns its id. The
// messages table is kept as a Writer keeps it, and the fates of the
// messages a crash lost are settled as EndRun settles them. Nothing of
// the run is in the file if it fails.
func (w *RunWriter) Write(r Run, events []Event) (int64, error) {
	params, err := jsonOr(r.Params, "{}")
	if err != nil {
		return 0, fmt.Errorf("%s: run params: %w", w.s.path, err)
	}
	faults, err := jsonOr(r.Faults, "[]")
	if err != nil {
		return 0, fmt.Errorf("%s: run faults: %w", w.s.path, err)
	}
	seed := strconv.FormatUint(r.Seed, 10)
	if r.NoSeed {
		seed = ""
	}
	if r.Status == "" || r.Status == StatusRunning {
		return 0, fmt.Errorf("%s: a run written whole has ended: give its status", w.s.path)
	}
	w.b.reset()
	crashed := false
	for i := range events {
		ev := &events[i]
		detail := ev.Detail
		if len(detail) > 0 && !json.Valid(detail) {
			detail, _ = json.Marshal(string(detail))
		}
		w.b.add(ev, detail)
		crashed = crashed || ev.Kind == KindCrash
	}
	ctx := context.Background()
	d := w.db
	var id int64
	err = d.tx(ctx, w.b, func() (int, error) {
		v := d.args(11)
		for i, x := range []any{r.Algorithm, int64(r.Nodes), seed, r.Mode, params, faults, r.ToolVersion, r.Started, r.Ended, r.Complete, r.Status} {
			v[i].Value = x
		}
		if err := d.exec(ctx, insertRunSQL, 11, nil); err != nil {
			return 0, err
		}
		var err error
		if id, err = d.queryInt(ctx, `SELECT last_insert_rowid()`); err != nil {
			return 0, err
		}
		d.run = id
		return len(w.b.rows), d.insertAll(ctx, w.b)
	})
	if err != nil {
		return 0, w.s.wrap(err)
	}
	if err := insertNamesRun(w.s, id, r.Names); err != nil {
		return id, err
	}
	if crashed {
		// The fates of messages a crash lost, as EndRun settles them.
		if err := w.s.EndRun(id, r.Ended, r.Complete, r.Status); err != nil {
			return id, err
		}
	}
	return id, nil
}

const insertRunSQL = `INSERT INTO runs
	(algorithm, nodes, seed, mode, params, faults, tool_version, started_ns, ended_ns, complete, status)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func insertNamesRun(s *Store, id int64, names []string) error {
	if len(names) == 0 {
		return nil
	}
	return s.SetProcNames(id, names)
}

// Close ends the RunWriter's connection.
func (w *RunWriter) Close() error {
	if w.db != nil {
		w.db.close()
		w.db = nil
	}
	return nil
}

package trace

import "fmt"

// The time indexes of the events table (see Schema). A trace made before
// they were added lacks them: HasIndex says whether this one has them, and
// a query that names them with INDEXED BY fails on a trace without them.
const (
	LamportIndex = "events_lamport" // events(lamport, run, proc)
	WallIndex    = "events_wall"    // events(wall_ns, run, proc)
)

// HasIndex reports whether the trace has the index of that name.
func (s *Store) HasIndex(name string) (bool, error) {
	var n int
	err := s.db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = ?`, name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("%s: look for index %s: %w", s.path, name, err)
	}
	return n > 0, nil
}

// timeIndexes are the statements that make the time indexes, as Schema
// makes them.
var timeIndexes = []string{
	`CREATE INDEX IF NOT EXISTS ` + LamportIndex + ` ON events(lamport, run, proc)`,
	`CREATE INDEX IF NOT EXISTS ` + WallIndex + ` ON events(wall_ns, run, proc)`,
}

// DeferTimeIndexes drops the time indexes of a trace that holds no runs
// yet, for a writer of many runs (dmx sweep), and returns what makes them
// again, to be called when the runs are written; on a trace with runs it
// does nothing (its readers may be using them). The time indexes lead
// with time, and every simulated run's clocks start at 0: each run's
// events land all over them, and a commit writes a page of each index
// for most of its events (3x the CPU and 10x the pages of a sweep's
// writes); made at the end they are one sort. A trace left without them
// (dmx killed meanwhile) is read all the same, by scanning.
func (s *Store) DeferTimeIndexes() (restore func() error, err error) {
	none := func() error { return nil }
	var runs int
	if err := s.db.QueryRow(`SELECT count(*) FROM runs`).Scan(&runs); err != nil {
		return none, s.wrap(err)
	}
	if runs > 0 {
		return none, nil
	}
	if _, err := s.db.Exec(`DROP INDEX IF EXISTS ` + LamportIndex + `; DROP INDEX IF EXISTS ` + WallIndex); err != nil {
		return none, s.wrap(err)
	}
	return func() error {
		for _, q := range timeIndexes {
			if _, err := s.db.Exec(q); err != nil {
				return s.wrap(err)
			}
		}
		return nil
	}, nil
}

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

package trace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
)

// MergeCounts are what a merge copied, or what a trace holds.
type MergeCounts struct {
	Runs, Procs, Events, Messages int64
}

// Add adds o to c.
func (c *MergeCounts) Add(o MergeCounts) {
	c.Runs += o.Runs
	c.Procs += o.Procs
	c.Events += o.Events
	c.Messages += o.Messages
}

// mergedTables are the tables a merge copies, each with the columns it
// must have alike in every input (the schema of this version).
var mergedTables = []string{"runs", "procs", "events", "messages"}

// Merge copies every run of the traces at inputs, in order, into the
// trace s (a new one: dmx merge), renumbering them after the runs s
// holds: the runs of the first input first, each input's in the order of
// their ids, so that the shards of a sweep merged in order number their
// runs as the whole sweep did. Rows are copied as they are (events,
// messages and their fates, process names, every column of the runs
// row); event ids are shifted past those of s, and the messages' events
// with them. It refuses, before copying anything, an input whose schema
// differs from this version's (another user_version, a table or column
// missing or added) and one with a run still being recorded. Each input
// is copied in a transaction of its own, checked to arrive whole (its
// rows counted in s after the copy). The counts returned are per input.
func (s *Store) Merge(inputs []string) ([]MergeCounts, error) {
	if err := s.checkWritable(); err != nil {
		return nil, err
	}
	ctx := context.Background()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer conn.Close()
	want, err := tableColumns(ctx, conn, "main")
	if err != nil {
		return nil, s.wrap(err)
	}
	// Check every input before copying any.
	for _, in := range inputs {
		if err := attach(ctx, conn, in); err != nil {
			return nil, err
		}
		err := compatible(ctx, conn, in, want)
		if err == nil {
			err = stillRecording(in)
		}
		detach(ctx, conn)
		if err != nil {
			return nil, err
		}
	}
	out := make([]MergeCounts, len(inputs))
	for i, in := range inputs {
		if err := attach(ctx, conn, in); err != nil {
			return out, err
		}
		out[i], err = s.mergeOne(ctx, conn, in)
		detach(ctx, conn)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// attach attaches the trace at path read-only as src.
func attach(ctx context.Context, conn *sql.Conn, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro"}
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS src`, u.String()); err != nil {
		return fmt.Errorf("%s: open to merge: %w", path, err)
	}
	return nil
}

func detach(ctx context.Context, conn *sql.Conn) {
	conn.ExecContext(ctx, `DETACH DATABASE src`)
}

// tableColumns returns the columns (name and declared type) of the
// merged tables of schema db.
func tableColumns(ctx context.Context, conn *sql.Conn, db string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, t := range mergedTables {
		rows, err := conn.QueryContext(ctx, `SELECT name, type FROM pragma_table_info(?, ?)`, t, db)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var name, typ string
			if err := rows.Scan(&name, &typ); err != nil {
				rows.Close()
				return nil, err
			}
			out[t] = append(out[t], name+" "+strings.ToUpper(typ))
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// compatible says how the schema of the attached trace in differs from
// want, if it does.
func compatible(ctx context.Context, conn *sql.Conn, in string, want map[string][]string) error {
	var version int
	if err := conn.QueryRowContext(ctx, `PRAGMA src.user_version`).Scan(&version); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if version != SchemaVersion {
		return fmt.Errorf("%s: trace schema version %d, not %d: dmx merges traces of one schema (this dmx writes %d)", in, version, SchemaVersion, SchemaVersion)
	}
	got, err := tableColumns(ctx, conn, "src")
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	for _, t := range mergedTables {
		if len(got[t]) == 0 {
			return fmt.Errorf("%s: not a dmx trace of schema %d: no %s table", in, SchemaVersion, t)
		}
		for _, c := range want[t] {
			if !slices.Contains(got[t], c) {
				return fmt.Errorf("%s: incompatible schema: table %s has no column %s", in, t, c)
			}
		}
		for _, c := range got[t] {
			if !slices.Contains(want[t], c) {
				return fmt.Errorf("%s: incompatible schema: table %s has a column this dmx does not know: %s", in, t, c)
			}
		}
	}
	return nil
}

// stillRecording refuses a trace with a run whose recorder is alive: its
// events are still coming.
func stillRecording(path string) error {
	st, err := OpenWith(path, OpenOptions{NoIntegrityCheck: true})
	if err != nil {
		return err
	}
	defer st.Close()
	runs, err := st.Runs()
	if err != nil {
		return err
	}
	for _, r := range runs {
		if r.Status == StatusRunning || r.Status == StatusUnwatched {
			return fmt.Errorf("%s: run %d is still being recorded: merge the trace when it has ended", path, r.ID)
		}
	}
	return nil
}

// mergeOne copies the attached trace in into main in one transaction.
func (s *Store) mergeOne(ctx context.Context, conn *sql.Conn, in string) (MergeCounts, error) {
	var c MergeCounts
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return c, s.wrap(err)
	}
	ok := false
	defer func() {
		if !ok {
			conn.ExecContext(ctx, `ROLLBACK`)
		}
	}()
	var runBase, eventBase int64
	if err := conn.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM main.runs`).Scan(&runBase); err != nil {
		return c, s.wrap(err)
	}
	if err := conn.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM main.events`).Scan(&eventBase); err != nil {
		return c, s.wrap(err)
	}
	before, err := counts(ctx, conn, "main")
	if err != nil {
		return c, s.wrap(err)
	}
	if c, err = counts(ctx, conn, "src"); err != nil {
		return c, fmt.Errorf("%s: %w", in, err)
	}
	steps := []string{
		`DROP TABLE IF EXISTS temp.runmap`,
		`CREATE TEMP TABLE runmap (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)`,
		`INSERT INTO temp.runmap SELECT id, ?1 + row_number() OVER (ORDER BY id) FROM src.runs`,
		`INSERT INTO main.runs (id, algorithm, nodes, seed, mode, params, faults, tool_version, started_ns, ended_ns, complete, status)
		 SELECT m.new, algorithm, nodes, seed, mode, params, faults, tool_version, started_ns, ended_ns, complete, status
		 FROM src.runs JOIN temp.runmap AS m ON m.old = src.runs.id ORDER BY m.new`,
		`INSERT INTO main.procs (run, proc, name)
		 SELECT m.new, proc, name FROM src.procs JOIN temp.runmap AS m ON m.old = src.procs.run`,
		`INSERT INTO main.events (id, run, proc, seq, kind, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail)
		 SELECT e.id + ?2, m.new, proc, seq, kind, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail
		 FROM src.events AS e JOIN temp.runmap AS m ON m.old = e.run ORDER BY e.id`,
		`INSERT INTO main.messages (run, id, type, sender, receiver, send_event, recv_event, fate)
		 SELECT m.new, g.id, type, sender, receiver, send_event + ?2, recv_event + ?2, fate
		 FROM src.messages AS g JOIN temp.runmap AS m ON m.old = g.run`,
		`DROP TABLE temp.runmap`,
	}
	for _, q := range steps {
		var args []any
		switch {
		case strings.Contains(q, "?2"):
			args = []any{runBase, eventBase}
		case strings.Contains(q, "?1"):
			args = []any{runBase}
		}
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			return c, fmt.Errorf("merge %s: %w", in, s.wrap(err))
		}
	}
	after, err := counts(ctx, conn, "main")
	if err != nil {
		return c, s.wrap(err)
	}
	// Rows of a run the input does not have (events of run 7 and no run
	// 7) have nowhere to go: say so rather than lose them quietly.
	if d := (MergeCounts{after.Runs - before.Runs, after.Procs - before.Procs, after.Events - before.Events, after.Messages - before.Messages}); d != c {
		return c, fmt.Errorf("%s: copied %d runs, %d events, %d messages, %d process names of %d, %d, %d, %d: rows that belong to no run of it (a damaged trace?); nothing of it merged",
			in, d.Runs, d.Events, d.Messages, d.Procs, c.Runs, c.Events, c.Messages, c.Procs)
	}
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		return c, s.wrap(err)
	}
	ok = true
	return c, nil
}

// counts counts the rows of the merged tables of schema db.
func counts(ctx context.Context, conn *sql.Conn, db string) (MergeCounts, error) {
	var c MergeCounts
	err := conn.QueryRowContext(ctx, fmt.Sprintf(`SELECT (SELECT count(*) FROM %[1]s.runs), (SELECT count(*) FROM %[1]s.procs),
		(SELECT count(*) FROM %[1]s.events), (SELECT count(*) FROM %[1]s.messages)`, db)).Scan(&c.Runs, &c.Procs, &c.Events, &c.Messages)
	return c, err
}

package trace

import (
	"context"
	"database/sql"
	"fmt"
	"io"
)

// EventReader streams the events of one run in insertion order (events.id),
// which keeps each process's events in program order. It reuses one Event,
// with its vector clock and detail buffers, from call to call.
type EventReader struct {
	s    *Store
	run  int64
	rows *sql.Rows
	ev   Event
	err  error

	vc, detail sql.RawBytes
	vcBuf      VC
	kind       string
	msg, peer  sql.NullInt64
	msgType    sql.NullString
	resource   sql.NullString
	lamport    int64
	dest       []any
}

const eventsQuery = `SELECT id, proc, seq, kind, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail
FROM events WHERE run = ? ORDER BY id`

// Events returns a reader of the events of a run.
func (s *Store) Events(run int64) (*EventReader, error) {
	if _, err := s.Run(run); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(context.Background(), eventsQuery, run)
	if err != nil {
		return nil, s.wrap(err)
	}
	r := &EventReader{s: s, run: run, rows: rows}
	r.ev.Run = run
	e := &r.ev
	r.dest = []any{&e.ID, &e.Proc, &e.Seq, &r.kind, &r.lamport, &r.vc, &e.Wall,
		&r.msg, &r.msgType, &r.peer, &r.resource, &r.detail}
	return r, nil
}

// Next returns the next event, or io.EOF after the last one. The event is
// valid until the next call.
func (r *EventReader) Next() (*Event, error) {
	if r.err != nil {
		return nil, r.err
	}
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			r.err = r.s.wrap(err)
		} else {
			r.err = io.EOF
		}
		return nil, r.err
	}
	if err := r.rows.Scan(r.dest...); err != nil {
		r.err = r.s.wrap(err)
		return nil, r.err
	}
	e := &r.ev
	e.Kind = Kind(r.kind)
	e.Lamport = uint64(r.lamport)
	e.Msg = r.msg.Int64
	e.MsgType = r.msgType.String
	e.Peer = NoPeer
	if r.peer.Valid {
		e.Peer = int(r.peer.Int64)
	}
	e.Resource = r.resource.String
	e.Detail = nil
	if r.detail != nil {
		e.Detail = []byte(r.detail)
	}
	if r.vc == nil {
		e.VC = nil
	} else {
		vc, err := ParseVC(r.vcBuf, r.vc)
		if err != nil {
			r.err = fmt.Errorf("%s: event %d (%s): %w", r.s.path, e.ID, e.Ref(), err)
			return nil, r.err
		}
		r.vcBuf, e.VC = vc, vc
	}
	return e, nil
}

// Close releases the reader's database resources.
func (r *EventReader) Close() error {
	if r.err == nil {
		r.err = fmt.Errorf("%s: event reader of run %d is closed", r.s.path, r.run)
	}
	return r.rows.Close()
}

// AllEvents returns all events of a run in insertion order, each with its
// own vector clock and detail. It is meant for tests and small traces; use
// Events to stream big ones.
func (s *Store) AllEvents(run int64) ([]Event, error) {
	r, err := s.Events(run)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var evs []Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return nil, err
		}
		c := *e
		c.VC = e.VC.Clone()
		if e.Detail != nil {
			c.Detail = append([]byte(nil), e.Detail...)
		}
		evs = append(evs, c)
	}
}

package trace

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unsafe"
)

// EventReader streams the events of one run in insertion order (events.id),
// which keeps each process's events in program order in the traces dmx
// writes; in a file written by another program it need not (the schema
// promises program order in seq only, and analyze.Walk orders by it). It
// reuses one Event, with its vector clock and detail buffers, from call to
// call.
//
// It reads through its own connection and the driver's own interface, not
// database/sql: reading is the first step of every analysis, and at a
// million events database/sql's per-column conversions would cost more than
// SQLite's work.
type EventReader struct {
	s    *Store
	run  int64
	conn driver.Conn
	stmt driver.Stmt
	rows driver.Rows
	dest []driver.Value
	ev   Event
	vc   VC     // buffer of ev.VC
	det  []byte // buffer of ev.Detail
	err  error
}

// knownKinds are the kinds the query returns as small integers (their index
// plus one), so that the common kinds cost no string per row.
var knownKinds = []Kind{KindStart, KindSend, KindReceive, KindDrop, KindInternal, KindCSRequest,
	KindCSEnter, KindCSExit, KindElectionStart, KindLeader, KindCrash, KindRecover, KindTimeout,
	KindDeliver, KindWait, KindStop, KindFault}

// eventsQuery reads the events of run ?1 with ids in [?2, ?3] in id order.
// "+run" keeps SQLite from reading through the (run, proc, seq) index and
// then sorting by id: the rowid range is read in order instead.
var eventsQuery = func() string {
	var sb strings.Builder
	sb.WriteString(`SELECT id, proc, seq, CASE kind`)
	for i, k := range knownKinds {
		fmt.Fprintf(&sb, ` WHEN '%s' THEN %d`, k, i+1)
	}
	sb.WriteString(` ELSE CAST(kind AS TEXT) END, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail
FROM events WHERE id BETWEEN ?2 AND ?3 AND +run = ?1 ORDER BY id`)
	return sb.String()
}()

// Events returns a reader of the events of a run. Close it when done.
func (s *Store) Events(run int64) (*EventReader, error) {
	if _, err := s.Run(run); err != nil {
		return nil, err
	}
	// The run's id range: where the file holds one run, all of it;
	// otherwise from the (run, proc, seq) index (which holds the ids).
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	var runs int
	if err := s.db.QueryRow(`SELECT count(*) FROM runs`).Scan(&runs); err != nil {
		return nil, s.wrap(err)
	}
	if runs > 1 {
		var l, h *int64
		if err := s.db.QueryRow(`SELECT min(id), max(id) FROM events WHERE run = ?`, run).Scan(&l, &h); err != nil {
			return nil, s.wrap(err)
		}
		if l == nil {
			lo, hi = 1, 0 // no events
		} else {
			lo, hi = *l, *h
		}
	}
	ctx := context.Background()
	conn, err := s.db.Driver().Open(s.dsn)
	if err != nil {
		return nil, s.wrap(err)
	}
	r := &EventReader{s: s, run: run, conn: conn}
	if err := r.start(ctx, lo, hi); err != nil {
		r.Close()
		return nil, s.wrap(err)
	}
	r.ev.Run = run
	return r, nil
}

func (r *EventReader) start(ctx context.Context, lo, hi int64) error {
	pc, ok := r.conn.(driver.ConnPrepareContext)
	if !ok {
		return fmt.Errorf("sql driver %T cannot prepare with a context", r.conn)
	}
	st, err := pc.PrepareContext(ctx, eventsQuery)
	if err != nil {
		return err
	}
	r.stmt = st
	q, ok := st.(driver.StmtQueryContext)
	if !ok {
		return fmt.Errorf("sql driver %T cannot query with a context", st)
	}
	r.rows, err = q.QueryContext(ctx, []driver.NamedValue{
		{Ordinal: 1, Value: r.run}, {Ordinal: 2, Value: lo}, {Ordinal: 3, Value: hi}})
	if err != nil {
		return err
	}
	r.dest = make([]driver.Value, len(r.rows.Columns()))
	if len(r.dest) != 12 {
		return fmt.Errorf("events query returns %d columns", len(r.dest))
	}
	return nil
}

// Next returns the next event, or io.EOF after the last one. The event and
// its slices are valid until the next call.
func (r *EventReader) Next() (*Event, error) {
	if r.err != nil {
		return nil, r.err
	}
	if err := r.rows.Next(r.dest); err != nil {
		if err == io.EOF {
			r.err = io.EOF
		} else {
			r.err = r.s.wrap(err)
		}
		return nil, r.err
	}
	if err := r.decode(); err != nil {
		r.err = fmt.Errorf("%s: event %d (%s): %w", r.s.path, r.ev.ID, r.ev.Ref(), err)
		return nil, r.err
	}
	return &r.ev, nil
}

// decode fills r.ev from the row in r.dest.
func (r *EventReader) decode() error {
	d, e := r.dest, &r.ev
	var ok bool
	if e.ID, ok = d[0].(int64); !ok {
		return fmt.Errorf("id: want an integer, got %T", d[0])
	}
	// Name the event early, so that errors below can say which it is.
	proc, ok1 := d[1].(int64)
	seq, ok2 := d[2].(int64)
	e.Proc, e.Seq = int(proc), seq
	if !ok1 || !ok2 {
		return fmt.Errorf("proc and seq: want integers, got %T and %T", d[1], d[2])
	}
	switch k := d[3].(type) {
	case int64:
		if k < 1 || k > int64(len(knownKinds)) {
			return fmt.Errorf("kind: bad code %d", k)
		}
		e.Kind = knownKinds[k-1]
	case string:
		e.Kind = Kind(k)
	default:
		return fmt.Errorf("kind: want text, got %T", d[3])
	}
	lamport, ok := d[4].(int64)
	if !ok {
		return fmt.Errorf("lamport: want an integer, got %T", d[4])
	}
	e.Lamport = uint64(lamport)
	if e.Wall, ok = d[6].(int64); !ok {
		return fmt.Errorf("wall_ns: want an integer, got %T", d[6])
	}
	var err error
	if e.Msg, err = optInt(d[7], 0, "msg"); err != nil {
		return err
	}
	peer, err := optInt(d[9], NoPeer, "peer")
	if err != nil {
		return err
	}
	e.Peer = int(peer)
	if e.MsgType, err = optText(d[8], "msg_type"); err != nil {
		return err
	}
	if e.Resource, err = optText(d[10], "resource"); err != nil {
		return err
	}
	switch v := d[11].(type) {
	case nil:
		e.Detail = nil
	case string:
		r.det = append(r.det[:0], v...)
		e.Detail = r.det
	case []byte:
		r.det = append(r.det[:0], v...)
		e.Detail = r.det
	default:
		return fmt.Errorf("detail: want JSON text, got %T", d[11])
	}
	switch v := d[5].(type) {
	case nil:
		e.VC = nil
	case string:
		// ParseVC only reads its input: look at the string's bytes
		// rather than copy them.
		vc, err := ParseVC(r.vc, unsafe.Slice(unsafe.StringData(v), len(v)))
		if err != nil {
			return err
		}
		r.vc, e.VC = vc, vc
	case []byte:
		vc, err := ParseVC(r.vc, v)
		if err != nil {
			return err
		}
		r.vc, e.VC = vc, vc
	default:
		return fmt.Errorf("vc: want JSON text, got %T", d[5])
	}
	return nil
}

func optInt(v driver.Value, none int64, col string) (int64, error) {
	switch v := v.(type) {
	case nil:
		return none, nil
	case int64:
		return v, nil
	}
	return 0, fmt.Errorf("%s: want an integer, got %T", col, v)
}

func optText(v driver.Value, col string) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	return "", fmt.Errorf("%s: want text, got %T", col, v)
}

// Close releases the reader's connection. Next returns an error after it.
func (r *EventReader) Close() error {
	if r.conn == nil {
		return nil
	}
	if r.err == nil || r.err == io.EOF {
		r.err = fmt.Errorf("%s: event reader of run %d is closed", r.s.path, r.run)
	}
	var errs []error
	if r.rows != nil {
		errs = append(errs, r.rows.Close())
	}
	if r.stmt != nil {
		errs = append(errs, r.stmt.Close())
	}
	errs = append(errs, r.conn.Close())
	r.conn = nil
	return errors.Join(errs...)
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

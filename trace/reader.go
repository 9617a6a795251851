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
	read int64 // rows returned
}

// Read returns how many events Next has returned.
func (r *EventReader) Read() int64 { return r.read }

// CountEvents returns how many events of run the trace's unique (run,
// proc, seq) index holds: counted through the index, without reading the
// rows (a few hundredths of a second for a million events). A reader that
// reads every row of the run through the table (Events) and finds another
// number has found the table and the index disagreeing: a damaged file.
func (s *Store) CountEvents(run int64) (int64, error) {
	var n int64
	if err := s.db.QueryRow(`SELECT count(*) FROM events WHERE run = ?`, run).Scan(&n); err != nil {
		return 0, s.wrap(err)
	}
	return n, nil
}

// knownKinds are the kinds the query returns as small integers (their index
// plus one), so that the common kinds cost no string per row. The most
// frequent come first: SQLite tries the WHENs of the CASE in order.
var knownKinds = []Kind{KindSend, KindReceive, KindWait, KindCSRequest, KindCSEnter, KindCSExit,
	KindInternal, KindTimeout, KindDrop, KindDeliver, KindLeader, KindElectionStart, KindCrash,
	KindRecover, KindStart, KindStop, KindFault}

// eventColumns are the columns every query of an EventReader selects, in
// the order decode reads them.
var eventColumns = selectColumns(false)

// selectColumns returns the columns of an EventReader's query; lean ones
// (ReadOptions.Lean) leave out the row id and the resource and detail of
// sends and receives.
func selectColumns(lean bool) string {
	var sb strings.Builder
	if lean {
		sb.WriteString(`SELECT 0, proc, seq, CASE kind`)
	} else {
		sb.WriteString(`SELECT id, proc, seq, CASE kind`)
	}
	for i, k := range knownKinds {
		fmt.Fprintf(&sb, ` WHEN '%s' THEN %d`, k, i+1)
	}
	if lean {
		sb.WriteString(` ELSE CAST(kind AS TEXT) END, lamport, vc, wall_ns, msg, CASE WHEN kind = 'receive' THEN NULL ELSE msg_type END, peer, `)
	} else {
		sb.WriteString(` ELSE CAST(kind AS TEXT) END, lamport, vc, wall_ns, msg, msg_type, peer, `)
	}
	if lean {
		sb.WriteString(`CASE WHEN kind = 'send' OR kind = 'receive' THEN NULL ELSE resource END, ` +
			`CASE WHEN kind = 'send' OR kind = 'receive' THEN NULL ELSE detail END`)
	} else {
		sb.WriteString(`resource, detail`)
	}
	return sb.String()
}

// eventsWhere reads the events of run ?1 with ids in [?2, ?3] in id order.
// "+run" keeps SQLite from reading through the (run, proc, seq) index and
// then sorting by id: the rowid range is read in order instead.
const eventsWhere = `
FROM events WHERE id BETWEEN ?2 AND ?3 AND +run = ?1 ORDER BY id`

// eventsQuery reads the events of a run, every column.
var eventsQuery = eventColumns + eventsWhere

// leanQuery reads them without what ReadOptions.Lean leaves out.
var leanQuery = selectColumns(true) + eventsWhere

// ReadOptions say what a reader of a run's events may leave out, to read
// it faster.
type ReadOptions struct {
	// Lean leaves out each event's row id (Event.ID is 0), the resource
	// and detail of sends and receives, which the checks of dmx's own
	// runs do not read (analyze.ReadsMessages says when they do), and the
	// message type of receives, which is their send's (analyze.Walk fills
	// it in): fewer values for the driver to convert, a third fewer
	// allocations.
	Lean bool
}

// procEventsQuery reads the events of process ?2 of run ?1 from sequence
// number ?3 on, in seq order, through the (run, proc, seq) index.
var procEventsQuery = eventColumns + `
FROM events WHERE run = ?1 AND proc = ?2 AND seq >= ?3 ORDER BY seq`

// procKindQuery reads the events of process ?2 of run ?1 whose kind is ?3,
// in seq order.
var procKindQuery = eventColumns + `
FROM events WHERE run = ?1 AND proc = ?2 AND kind = ?3 ORDER BY seq`

// sendQuery reads the send event of message ?2 of run ?1 (the messages
// table names it).
var sendQuery = eventColumns + `
FROM events WHERE id = (SELECT send_event FROM messages WHERE run = ?1 AND id = ?2)`

// Events returns a reader of the events of a run. Close it when done.
func (s *Store) Events(run int64) (*EventReader, error) { return s.EventsWith(run, ReadOptions{}) }

// EventsWith is Events, leaving out what o says.
func (s *Store) EventsWith(run int64, o ReadOptions) (*EventReader, error) {
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
	q := eventsQuery
	if o.Lean {
		q = leanQuery
	}
	return s.reader(run, q, true, lo, hi)
}

// reader opens an EventReader of run on its own connection with query
// prepared, and if run is set, runs it with a and b (int64 or string) as
// ?2 and ?3.
func (s *Store) reader(run int64, query string, start bool, a, b any) (*EventReader, error) {
	conn, err := s.db.Driver().Open(s.dsn)
	if err != nil {
		return nil, s.wrap(err)
	}
	r := &EventReader{s: s, run: run, conn: conn}
	ctx := context.Background()
	err = r.prepare(ctx, query)
	if err == nil && start {
		err = r.query(ctx, a, b)
	}
	if err != nil {
		r.Close()
		return nil, s.wrap(err)
	}
	r.ev.Run = run
	return r, nil
}

// ProcEvents returns a reader of the events of process proc of a run whose
// sequence number is from or more, in seq order (program order in any
// trace): the events of one process, read through the (run, proc, seq)
// index without the rest of the run. Close it when done.
func (s *Store) ProcEvents(run int64, proc int, from int64) (*EventReader, error) {
	return s.reader(run, procEventsQuery, true, int64(proc), from)
}

// ProcEventsOfKind returns a reader of the events of one kind of process
// proc of a run, in seq order. Close it when done.
func (s *Store) ProcEventsOfKind(run int64, proc int, kind Kind) (*EventReader, error) {
	return s.reader(run, procKindQuery, true, int64(proc), string(kind))
}

// SendLookup finds the send events of a run's messages by message id, one
// prepared statement on one connection for all of them.
type SendLookup struct{ r *EventReader }

// Sends returns a lookup of the send events of run's messages. Close it
// when done.
func (s *Store) Sends(run int64) (*SendLookup, error) {
	r, err := s.reader(run, sendQuery, false, nil, nil)
	if err != nil {
		return nil, err
	}
	return &SendLookup{r}, nil
}

// Send returns the send event of message msg, valid until the next call,
// or nil if the trace has none (the message is unknown, or its sender's
// recorder died before writing its send).
func (l *SendLookup) Send(msg int64) (*Event, error) {
	r := l.r
	if r.conn == nil {
		return nil, fmt.Errorf("%s: send lookup of run %d is closed", r.s.path, r.run)
	}
	if r.rows != nil {
		r.rows.Close()
		r.rows = nil
	}
	r.err = nil
	if err := r.query(context.Background(), msg, 0); err != nil {
		return nil, r.s.wrap(err)
	}
	ev, err := r.Next()
	if err == io.EOF {
		return nil, nil
	}
	return ev, err
}

// Close releases the lookup's connection.
func (l *SendLookup) Close() error { return l.r.Close() }

// prepare prepares query, a query of eventColumns, on r's connection.
func (r *EventReader) prepare(ctx context.Context, query string) error {
	pc, ok := r.conn.(driver.ConnPrepareContext)
	if !ok {
		return fmt.Errorf("sql driver %T cannot prepare with a context", r.conn)
	}
	st, err := pc.PrepareContext(ctx, query)
	if err != nil {
		return err
	}
	r.stmt = st
	return nil
}

// query runs r's statement with the run as ?1 and a, b as ?2, ?3 (a
// statement without ?3 leaves b out).
func (r *EventReader) query(ctx context.Context, a, b any) error {
	q, ok := r.stmt.(driver.StmtQueryContext)
	if !ok {
		return fmt.Errorf("sql driver %T cannot query with a context", r.stmt)
	}
	args := []driver.NamedValue{{Ordinal: 1, Value: r.run}, {Ordinal: 2, Value: a}, {Ordinal: 3, Value: b}}
	if n := r.stmt.NumInput(); n >= 0 && n < len(args) {
		args = args[:n]
	}
	var err error
	r.rows, err = q.QueryContext(ctx, args)
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
	r.read++
	if err := r.decode(); err != nil {
		if r.ev.ID == 0 { // a lean reader does not read the row id
			r.err = fmt.Errorf("%s: event %s of run %d: %w", r.s.path, r.ev.Ref(), r.run, err)
		} else {
			r.err = fmt.Errorf("%s: event %d (%s): %w", r.s.path, r.ev.ID, r.ev.Ref(), err)
		}
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
		e.Kind = Kind(ShortName(k)) // a kind of another tool's, or a hostile one
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
	e.MsgType, e.Resource = ShortName(e.MsgType), ShortName(e.Resource)
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

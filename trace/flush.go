package trace

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mattn/go-sqlite3"

	"github.com/dmxlab/dmx/trace/plural"
)

// writerDB is a Writer's own connection to the trace file. It talks to the
// driver directly rather than through database/sql: at a few hundred
// thousand events a second, database/sql's per-call argument conversion
// and go-sqlite3's per-argument calls into C (Exec binds one argument per
// call; Query binds them all and takes the first step in one call) cost
// more than SQLite's own work. So rows are inserted by multi-row INSERTs
// run through QueryContext, with reused argument slices.
type writerDB struct {
	s     *Store
	run   any // the run id, boxed once
	conn  driver.Conn
	stmts map[string]driver.Stmt
	nv    []driver.NamedValue
	texts []string // the vc and detail of the rows being bound, which nv points at
	dest  []driver.Value
	aggs  []msgAgg
	index map[int64]int
	boxes map[string]any // kinds, message types, resources: few, boxed once
}

// chunks are the row counts of the multi-row statements: a batch is
// inserted 256 rows at a time, and its rest with the smaller ones.
var chunks = []int{256, 64, 16, 4, 1}

func openWriterDB(s *Store, run int64) (*writerDB, error) {
	c, err := s.db.Driver().Open(s.dsn)
	if err != nil {
		return nil, err
	}
	d := &writerDB{s: s, run: run, conn: c, stmts: map[string]driver.Stmt{}, index: map[int64]int{},
		boxes: map[string]any{}}
	// The messages table's CHECK on fate is an IN list, which SQLite
	// evaluates by filling a temporary table with the five fates for
	// every row inserted or updated: about 6% of the Writer's CPU. The
	// Writer's fates are always among the five (msgAgg.fate, and the CASE
	// of messagesFromEventsSQL), so its own connection skips CHECKs; the
	// schema keeps the constraint, which every other connection enforces.
	// The events table, the only other one written here, has none.
	if err := d.exec(context.Background(), `PRAGMA ignore_check_constraints = ON`, 0, nil); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

func (d *writerDB) close() {
	for _, st := range d.stmts {
		st.Close()
	}
	d.conn.Close()
}

func (d *writerDB) stmt(ctx context.Context, query string) (driver.Stmt, error) {
	if st, ok := d.stmts[query]; ok {
		return st, nil
	}
	var st driver.Stmt
	var err error
	if pc, ok := d.conn.(driver.ConnPrepareContext); ok {
		st, err = pc.PrepareContext(ctx, query)
	} else {
		st, err = d.conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	d.stmts[query] = st
	return st, nil
}

// exec runs query with the arguments in d.nv[:n] and, if dest is not nil,
// scans its single result row into dest.
func (d *writerDB) exec(ctx context.Context, query string, n int, dest []driver.Value) error {
	st, err := d.stmt(ctx, query)
	if err != nil {
		return err
	}
	q, ok := st.(driver.StmtQueryContext)
	if !ok {
		return fmt.Errorf("sql driver %T cannot run queries with a context", st)
	}
	rows, err := q.QueryContext(ctx, d.nv[:n])
	if err != nil {
		return err
	}
	for {
		err = rows.Next(dest)
		if err != nil {
			break
		}
		dest = nil // only the first row is wanted; drain the rest
	}
	if err == io.EOF {
		err = nil
	}
	return errors.Join(err, rows.Close())
}

func (d *writerDB) queryInt(ctx context.Context, query string) (int64, error) {
	if len(d.dest) < 1 {
		d.dest = make([]driver.Value, 1)
	}
	d.dest[0] = nil
	if err := d.exec(ctx, query, 0, d.dest[:1]); err != nil {
		return 0, err
	}
	v, ok := d.dest[0].(int64)
	if !ok {
		return 0, fmt.Errorf("%s: got %T", query, d.dest[0])
	}
	return v, nil
}

// args makes d.nv at least n long, ordinals set, and returns it.
func (d *writerDB) args(n int) []driver.NamedValue {
	for len(d.nv) < n {
		d.nv = append(d.nv, driver.NamedValue{Ordinal: len(d.nv) + 1})
	}
	return d.nv
}

const insertColumns = `run, proc, seq, kind, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail`

// insertParams is the number of columns in insertColumns.
const insertParams = 12

func insertSQL(rows int) string {
	return `INSERT INTO events (` + insertColumns + `) VALUES ` + placeholders(rows, insertParams)
}

// The statements for each chunk size, made once.
var insertSQLs, messagesSQLs = func() (ins, msgs map[int]string) {
	ins, msgs = map[int]string{}, map[int]string{}
	for _, k := range chunks {
		ins[k], msgs[k] = insertSQL(k), messagesSQL(k)
	}
	return
}()

func placeholders(rows, cols int) string {
	one := "(" + strings.Repeat("?,", cols-1) + "?)"
	return strings.Repeat(one+",", rows-1) + one
}

// messagesUpsert merges a row for a message into the messages table. The
// new row (excluded) describes what one transaction saw of the message: its
// send, its receive(s), a drop, in any combination. It is an upsert because
// a receive may be recorded before its send (events reach the writer in no
// causal order): every order of the same events must give the same row.
const messagesUpsert = `
ON CONFLICT (run, id) DO UPDATE SET
  type       = CASE WHEN excluded.send_event IS NOT NULL THEN excluded.type ELSE coalesce(type, excluded.type) END,
  sender     = CASE WHEN excluded.send_event IS NOT NULL THEN excluded.sender ELSE coalesce(sender, excluded.sender) END,
  receiver   = CASE WHEN excluded.send_event IS NOT NULL THEN excluded.receiver ELSE coalesce(receiver, excluded.receiver) END,
  send_event = coalesce(send_event, excluded.send_event),
  recv_event = coalesce(recv_event, excluded.recv_event),
  fate = CASE
    WHEN excluded.recv_event IS NOT NULL THEN (CASE WHEN recv_event IS NULL THEN excluded.fate ELSE 'duplicated' END)
    WHEN excluded.fate = 'dropped' AND recv_event IS NULL THEN 'dropped'
    ELSE fate
  END`

const messageColumns = `run, id, type, sender, receiver, send_event, recv_event, fate`

// messageParams is the number of columns in messageColumns.
const messageParams = 8

func messagesSQL(rows int) string {
	return `INSERT INTO messages (` + messageColumns + `) VALUES ` + placeholders(rows, messageParams) + messagesUpsert
}

// messagesFromEventsSQL brings the messages table up to date with the
// events of one transaction, those with an id above ?1 (the transaction
// holds the write lock), one event at a time. It is the general way; the
// Writer normally merges a batch's events per message first (aggregate),
// which halves the work when a send and its receive are in the same batch.
const messagesFromEventsSQL = `
INSERT INTO messages (` + messageColumns + `)
SELECT run, msg, type, sender, receiver, send_event, recv_event, fate FROM (
  SELECT id AS ord, -1 AS sub, run, msg, msg_type AS type,
         CASE kind WHEN 'send' THEN proc WHEN 'receive' THEN peer END AS sender,
         CASE kind WHEN 'send' THEN peer WHEN 'receive' THEN proc END AS receiver,
         CASE kind WHEN 'send' THEN id END AS send_event,
         CASE kind WHEN 'receive' THEN id END AS recv_event,
         CASE kind WHEN 'send' THEN 'in_flight' WHEN 'receive' THEN 'delivered' ELSE 'dropped' END AS fate
  FROM events
  WHERE id > ?1 AND msg IS NOT NULL AND kind IN ('send', 'receive', 'drop')
  UNION ALL
  SELECT e.id, l.key, e.run, json_extract(l.value, '$[0]'), e.msg_type,
         json_extract(l.value, '$[1]'), e.proc, NULL, e.id, 'delivered'
  FROM events AS e,
       json_each(CASE WHEN json_valid(e.detail) THEN e.detail ELSE '{}' END, '$.` + keyRecv + `') AS l
  WHERE e.id > ?1 AND e.detail LIKE '%_msgs"%' AND json_type(l.value, '$[0]') = 'integer'
  UNION ALL
  SELECT e.id, 1000000 + l.key, e.run, json_extract(l.value, '$[0]'), e.msg_type,
         e.proc, json_extract(l.value, '$[1]'), e.id, NULL, 'in_flight'
  FROM events AS e,
       json_each(CASE WHEN json_valid(e.detail) THEN e.detail ELSE '{}' END, '$.` + keySent + `') AS l
  WHERE e.id > ?1 AND e.detail LIKE '%_msgs"%' AND json_type(l.value, '$[0]') = 'integer'
) WHERE true
ORDER BY ord, sub` + messagesUpsert

// upkeepFromEvents makes every transaction take the general way of keeping
// the messages table (tests check that both ways agree).
var upkeepFromEvents = false

const maxIDSQL = `SELECT coalesce(max(id), 0) FROM events`

// write stores a batch in one transaction. If SQLite refuses some rows for
// themselves (a constraint), it stores the others row by row and returns the
// refused ones as bad; err means nothing was stored.
func (d *writerDB) write(b *batch) (stored int64, bad, err error) {
	ctx := context.Background()
	err = d.tx(ctx, b, func() (int, error) { return len(b.rows), d.insertAll(ctx, b) })
	if err == nil {
		return int64(len(b.rows)), nil, nil
	}
	var se sqlite3.Error
	if !errors.As(err, &se) || se.Code != sqlite3.ErrConstraint {
		return 0, nil, d.s.wrap(err)
	}
	var refused []error
	err = d.tx(ctx, b, func() (int, error) {
		refused = refused[:0]
		for i := range b.rows {
			d.rowArgs(b, i, d.args(insertParams), 0)
			if err := d.exec(ctx, insertSQLs[1], insertParams, nil); err != nil {
				if !errors.As(err, &se) || se.Code != sqlite3.ErrConstraint {
					return 0, err
				}
				r := &b.rows[i]
				refused = append(refused, fmt.Errorf("event P%d#%d %s: %w", r.proc, r.seq, r.kind, err))
			}
		}
		return -1, nil
	})
	if err != nil {
		return 0, nil, d.s.wrap(err)
	}
	bad = fmt.Errorf("%s: run %v: %s not stored: %w", d.s.path, d.run, plural.Count(len(refused), "event"), errors.Join(refused...))
	return int64(len(b.rows) - len(refused)), bad, nil
}

// tx runs insert in an IMMEDIATE transaction that also brings the messages
// table up to date with the rows it inserted. insert returns how many rows
// it inserted, in the order of b.rows, or -1 if it skipped some.
func (d *writerDB) tx(ctx context.Context, b *batch, insert func() (int, error)) (err error) {
	if err := d.exec(ctx, `BEGIN IMMEDIATE`, 0, nil); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			d.exec(ctx, `ROLLBACK`, 0, nil)
		}
	}()
	lo, err := d.queryInt(ctx, maxIDSQL)
	if err != nil {
		return err
	}
	n, err := insert()
	if err != nil {
		return err
	}
	hi, err := d.queryInt(ctx, maxIDSQL)
	if err != nil {
		return err
	}
	// SQLite gives a new row the rowid after the largest one, and the
	// transaction holds the write lock, so the batch's rows got the ids
	// lo+1.. in order. Should that ever not hold (the largest rowid was
	// 2^63-1, or rows were skipped), read the events back instead.
	if n >= 0 && hi == lo+int64(n) && !upkeepFromEvents {
		err = d.upsertMessages(ctx, d.aggregate(b, lo+1))
	} else {
		d.args(1)[0].Value = lo
		err = d.exec(ctx, messagesFromEventsSQL, 1, nil)
	}
	if err != nil {
		return err
	}
	return d.exec(ctx, `COMMIT`, 0, nil)
}

func (d *writerDB) insertAll(ctx context.Context, b *batch) error {
	for i := 0; i < len(b.rows); {
		k := chunkFor(len(b.rows) - i)
		nv := d.args(k * insertParams)
		for j := 0; j < k; j++ {
			d.rowArgs(b, i+j, nv[j*insertParams:], j)
		}
		if err := d.exec(ctx, insertSQLs[k], k*insertParams, nil); err != nil {
			return err
		}
		i += k
	}
	return nil
}

func chunkFor(n int) int {
	for _, k := range chunks {
		if k <= n {
			return k
		}
	}
	return 1
}

// rowArgs sets the INSERT arguments of row i, in insertColumns order, with
// the NULLs the schema promises. The values point into the row and into
// d.texts (slots 2*slot and 2*slot+1), without copies (see box.go): the
// row and those slots must stay as they are until the statement has run.
func (d *writerDB) rowArgs(b *batch, i int, nv []driver.NamedValue, slot int) {
	r := &b.rows[i]
	nv[0].Value = d.run
	nv[1].Value = int64At(&r.proc)
	nv[2].Value = int64At(&r.seq)
	nv[3].Value = d.box(r.kind)
	nv[4].Value = int64At(&r.lamport)
	nv[5].Value = d.text(b, r.vc, 2*slot)
	nv[6].Value = int64At(&r.wall)
	nv[7].Value = nullInt64At(&r.msg, 0)
	nv[8].Value = d.box(r.msgType)
	nv[9].Value = nullInt64At(&r.peer, NoPeer)
	nv[10].Value = d.box(r.resource)
	nv[11].Value = d.text(b, r.detail, 2*slot+1)
}

// text returns the text of sp as a driver value held in d.texts[k].
func (d *writerDB) text(b *batch, sp span, k int) any {
	if sp.n < 0 {
		return nil
	}
	for len(d.texts) <= k {
		d.texts = append(d.texts, "")
	}
	d.texts[k] = b.text(sp)
	return stringAt(&d.texts[k])
}

// box returns s as a driver value, NULL if empty, from a cache: the few
// kinds, message types and resource names of a run are boxed once rather
// than once per row.
func (d *writerDB) box(s string) any {
	if s == "" {
		return nil
	}
	if v, ok := d.boxes[s]; ok {
		return v
	}
	v := any(s)
	if len(d.boxes) < 1024 {
		d.boxes[s] = v
	}
	return v
}

// msgAgg is what one batch says about one message.
type msgAgg struct {
	id                   int64
	typ                  string
	sender, receiver     int64 // NoPeer: unknown
	sendEvent, recvEvent int64 // 0: none
	recvs                int
	dropped              bool
}

// fate returns the message's fate as a driver value (constants: boxing
// them allocates nothing).
func (a *msgAgg) fate() any {
	switch {
	case a.recvs > 1:
		return "duplicated"
	case a.recvs == 1:
		return "delivered"
	case a.dropped:
		return "dropped"
	}
	return "in_flight"
}

// aggregate merges the message events of b per message, given that row i
// got the event id first+i. The merge follows messagesUpsert. A row's
// Links count as sends and receives of that row, after its msg column.
func (d *writerDB) aggregate(b *batch, first int64) []msgAgg {
	clear(d.index)
	aggs := d.aggs[:0]
	get := func(msg int64) *msgAgg {
		k, ok := d.index[msg]
		if !ok {
			k = len(aggs)
			d.index[msg] = k
			aggs = append(aggs, msgAgg{id: msg, sender: NoPeer, receiver: NoPeer})
		}
		return &aggs[k]
	}
	send := func(a *msgAgg, id int64, typ string, sender, receiver int64) {
		if a.sendEvent == 0 {
			a.sendEvent, a.typ, a.sender, a.receiver = id, typ, sender, receiver
		}
	}
	receive := func(a *msgAgg, id int64, typ string, sender, receiver int64) {
		a.recvs++
		if a.recvEvent == 0 {
			a.recvEvent = id
		}
		if a.sendEvent == 0 {
			if a.typ == "" {
				a.typ = typ
			}
			if a.sender == NoPeer {
				a.sender = sender
			}
			if a.receiver == NoPeer {
				a.receiver = receiver
			}
		}
	}
	links := b.links
	for i := range b.rows {
		r := &b.rows[i]
		id := first + int64(i)
		if r.msg != 0 {
			switch r.kind {
			case string(KindSend):
				send(get(r.msg), id, r.msgType, r.proc, r.peer)
			case string(KindReceive):
				receive(get(r.msg), id, r.msgType, r.peer, r.proc)
			case string(KindDrop):
				a := get(r.msg)
				a.dropped = true
				if a.typ == "" {
					a.typ = r.msgType
				}
			}
		}
		for len(links) > 0 && links[0].row == i {
			k := links[0]
			links = links[1:]
			if k.recv {
				receive(get(k.msg), id, r.msgType, k.peer, r.proc)
			} else {
				send(get(k.msg), id, r.msgType, r.proc, k.peer)
			}
		}
	}
	d.aggs = aggs
	return aggs
}

// upsertMessages writes the merged messages of a batch.
func (d *writerDB) upsertMessages(ctx context.Context, aggs []msgAgg) error {
	for i := 0; i < len(aggs); {
		k := chunkFor(len(aggs) - i)
		nv := d.args(k * messageParams)
		for j := 0; j < k; j++ {
			a := &aggs[i+j]
			v := nv[j*messageParams:]
			// Pointing into aggs, which stays as it is until the
			// statement has run (see box.go).
			v[0].Value = d.run
			v[1].Value = int64At(&a.id)
			v[2].Value = d.box(a.typ)
			v[3].Value = nullInt64At(&a.sender, NoPeer)
			v[4].Value = nullInt64At(&a.receiver, NoPeer)
			v[5].Value = nullInt64At(&a.sendEvent, 0)
			v[6].Value = nullInt64At(&a.recvEvent, 0)
			v[7].Value = a.fate()
		}
		if err := d.exec(ctx, messagesSQLs[k], k*messageParams, nil); err != nil {
			return err
		}
		i += k
	}
	return nil
}

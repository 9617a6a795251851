package trace

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mattn/go-sqlite3"
)

// Batching of the Writer: a transaction is committed when this many events
// are buffered, or flushInterval after the last one, whichever comes first.
const (
	batchSize     = 4096
	flushInterval = 100 * time.Millisecond
	// maxPending bounds the events buffered while the file is slow (another
	// process holds the write lock, or the disk stalls): Add waits for the
	// flusher beyond it instead of growing without bound.
	maxPending = 64 * batchSize
	// insertChunk is the number of rows of one multi-row INSERT: SQLite
	// statements are cheap, calls into them from Go are not.
	insertChunk = 64
)

// Writer records the events of one run. Add copies the event into a buffer
// and returns at once; a goroutine commits the buffer in transactions of up
// to batchSize events, at least every flushInterval. Add, Flush, Count and
// Close are safe for concurrent use.
//
// Events get their id from SQLite (the rowid) when they are inserted, never
// from a counter in memory, so that several processes may append runs to
// one file at once. The messages table is kept up to date in the same
// transactions.
//
// An event given to Add is never dropped silently: when a transaction fails,
// its events stay buffered and are tried again, and the error is returned by
// the next Add, Flush or Close. (Events that SQLite refuses for themselves,
// e.g. a second event with the same run, proc and seq, are reported by
// their reference and left out, so that they do not hold up the others.)
type Writer struct {
	s   *Store
	run int64

	mu       sync.Mutex
	cond     sync.Cond // signalled when the flusher took or returned a batch
	cur      *batch    // events added since the last flush began
	spare    *batch    // an empty batch to swap in
	err      error     // a flush error not reported yet
	closed   bool
	flushing bool // a flush is writing a batch taken from cur

	flushMu sync.Mutex // one flush at a time; held across the database work
	conn    *sql.Conn
	stmts   *writerStmts
	args    []any

	count atomic.Int64
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}
}

// batch is a run of buffered events. Their variable-length text (vector
// clock, detail) lives in one arena so that Add allocates nothing per
// event in the steady state.
type batch struct {
	rows  []row
	arena []byte
}

type row struct {
	proc, seq, lamport, wall, msg, peer int64
	kind, msgType, resource             string
	vc, detail                          span
}

// span is a piece of a batch's arena; n < 0 stands for SQL NULL.
type span struct{ off, n int }

func (b *batch) text(sp span) any {
	if sp.n < 0 {
		return nil
	}
	if sp.n == 0 {
		return ""
	}
	// The arena is not written to while the batch is being inserted, and
	// go-sqlite3 copies bound text, so no string outlives the batch.
	return unsafe.String(&b.arena[sp.off], sp.n)
}

func (b *batch) reset() {
	b.rows = b.rows[:0]
	b.arena = b.arena[:0]
}

// NewWriter returns a Writer that records events of run. Close it before
// EndRun, and before closing the Store (Store.Close closes the Writers left
// open).
func (s *Store) NewWriter(run int64) *Writer {
	w := &Writer{
		s:     s,
		run:   run,
		cur:   &batch{},
		spare: &batch{},
		kick:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	w.cond.L = &w.mu
	if err := s.checkWritable(); err != nil {
		w.err = err
		w.closed = true
		close(w.done)
		return w
	}
	s.mu.Lock()
	s.writers[w] = struct{}{}
	s.mu.Unlock()
	go w.loop()
	return w
}

func (w *Writer) loop() {
	defer close(w.done)
	t := time.NewTicker(flushInterval)
	defer t.Stop()
	for {
		select {
		case <-w.kick:
		case <-t.C:
		case <-w.stop:
			return
		}
		w.flushMu.Lock()
		w.flushLocked()
		w.flushMu.Unlock()
	}
}

// Add buffers a copy of ev for the Writer's run (ev.Run and ev.ID are
// ignored); the caller may reuse ev and its slices at once. It returns an
// error of an earlier failed flush, but still keeps ev. A Detail that is not
// valid JSON is stored as a JSON string holding its text.
func (w *Writer) Add(ev *Event) error {
	detail := ev.Detail
	if len(detail) > 0 && !json.Valid(detail) {
		detail, _ = json.Marshal(string(detail))
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return fmt.Errorf("%s: run %d: add %s: writer is closed", w.s.path, w.run, ev)
	}
	for len(w.cur.rows) >= maxPending && w.flushing {
		w.cond.Wait()
	}
	b := w.cur
	r := row{
		proc: int64(ev.Proc), seq: ev.Seq, lamport: int64(ev.Lamport), wall: ev.Wall,
		msg: ev.Msg, peer: int64(ev.Peer),
		kind: string(ev.Kind), msgType: ev.MsgType, resource: ev.Resource,
		vc: span{n: -1}, detail: span{n: -1},
	}
	if len(ev.VC) > 0 {
		off := len(b.arena)
		b.arena = ev.VC.AppendText(b.arena)
		r.vc = span{off, len(b.arena) - off}
	}
	if len(detail) > 0 {
		off := len(b.arena)
		b.arena = append(b.arena, detail...)
		r.detail = span{off, len(detail)}
	}
	b.rows = append(b.rows, r)
	full := len(b.rows) >= batchSize
	err := w.err
	w.err = nil
	w.mu.Unlock()
	if full {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
	return err
}

// Flush commits the events buffered now and returns the first error since
// the last report.
func (w *Writer) Flush() error {
	w.flushMu.Lock()
	w.flushLocked()
	w.flushMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.err
	w.err = nil
	return err
}

// Count returns the number of events stored so far (committed).
func (w *Writer) Count() int64 { return w.count.Load() }

// Close flushes the buffered events and stops the Writer. If some events
// could not be stored, it says how many and why.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done

	w.flushMu.Lock()
	w.flushLocked()
	// A failure may be passing (the file locked past busy_timeout by
	// another process): try a few more times before giving up.
	for i := 0; i < 3 && w.pending() > 0; i++ {
		time.Sleep(100 * time.Millisecond)
		w.flushLocked()
	}
	if w.stmts != nil {
		w.stmts.close()
		w.stmts = nil
	}
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
	w.flushMu.Unlock()

	w.s.mu.Lock()
	delete(w.s.writers, w)
	w.s.mu.Unlock()

	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.err
	w.err = nil
	if n := len(w.cur.rows); n > 0 {
		return fmt.Errorf("%s: run %d: %d events could not be stored: %w", w.s.path, w.run, n, err)
	}
	return err
}

func (w *Writer) pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.cur.rows)
}

// flushLocked writes the current batch; w.flushMu must be held. On failure
// the batch goes back in front of the events added meanwhile, and the error
// is kept for the next Add, Flush or Close.
func (w *Writer) flushLocked() {
	w.mu.Lock()
	b := w.cur
	if len(b.rows) == 0 {
		w.mu.Unlock()
		return
	}
	w.cur, w.spare = w.spare, nil
	w.flushing = true
	w.cond.Broadcast()
	w.mu.Unlock()

	stored, bad, err := w.write(b)

	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushing = false
	w.cond.Broadcast()
	if err != nil {
		// Put the batch back in front of what was added meanwhile.
		later := w.cur
		for _, r := range later.rows {
			r.vc = b.copySpan(later, r.vc)
			r.detail = b.copySpan(later, r.detail)
			b.rows = append(b.rows, r)
		}
		later.reset()
		w.cur, w.spare = b, later
		w.err = errors.Join(w.err, err)
		return
	}
	w.count.Add(stored)
	if bad != nil {
		w.err = errors.Join(w.err, bad)
	}
	b.reset()
	w.spare = b
}

func (b *batch) copySpan(from *batch, sp span) span {
	if sp.n < 0 {
		return sp
	}
	off := len(b.arena)
	b.arena = append(b.arena, from.arena[sp.off:sp.off+sp.n]...)
	return span{off, sp.n}
}

// writerStmts are the prepared statements of a Writer's connection.
type writerStmts struct {
	begin, commit, rollback, maxID *sql.Stmt
	insertN, insert1, messages     *sql.Stmt
}

func (ws *writerStmts) close() {
	for _, st := range []*sql.Stmt{ws.begin, ws.commit, ws.rollback, ws.maxID, ws.insertN, ws.insert1, ws.messages} {
		if st != nil {
			st.Close()
		}
	}
}

const insertColumns = `run, proc, seq, kind, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail`
const insertParams = 12

func insertSQL(rows int) string {
	var sb strings.Builder
	sb.WriteString(`INSERT INTO events (` + insertColumns + `) VALUES `)
	for i := 0; i < rows; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`(?,?,?,?,?,?,?,?,?,?,?,?)`)
	}
	return sb.String()
}

// messagesSQL keeps the messages table up to date with the events of one
// transaction: those with an id above ?1, as the transaction holds the write
// lock. It is an upsert because a receive may be recorded before its send
// (events reach the writer in no causal order), so every combination of
// send, receive(s) and drop must give the same row in any order.
const messagesSQL = `
INSERT INTO messages (run, id, type, sender, receiver, send_event, recv_event, fate)
SELECT run, msg, msg_type,
       CASE kind WHEN 'send' THEN proc WHEN 'receive' THEN peer END,
       CASE kind WHEN 'send' THEN peer WHEN 'receive' THEN proc END,
       CASE kind WHEN 'send' THEN id END,
       CASE kind WHEN 'receive' THEN id END,
       CASE kind WHEN 'send' THEN 'in_flight' WHEN 'receive' THEN 'delivered' ELSE 'dropped' END
FROM events
WHERE id > ?1 AND msg IS NOT NULL AND kind IN ('send', 'receive', 'drop')
ORDER BY id
ON CONFLICT (run, id) DO UPDATE SET
  type       = coalesce(CASE WHEN excluded.send_event IS NOT NULL THEN excluded.type END, type, excluded.type),
  sender     = CASE WHEN excluded.send_event IS NOT NULL THEN excluded.sender ELSE coalesce(sender, excluded.sender) END,
  receiver   = CASE WHEN excluded.send_event IS NOT NULL THEN excluded.receiver ELSE coalesce(receiver, excluded.receiver) END,
  send_event = coalesce(send_event, excluded.send_event),
  recv_event = coalesce(recv_event, excluded.recv_event),
  fate = CASE
    WHEN excluded.recv_event IS NOT NULL THEN (CASE WHEN recv_event IS NULL THEN 'delivered' ELSE 'duplicated' END)
    WHEN excluded.fate = 'dropped' AND recv_event IS NULL THEN 'dropped'
    ELSE fate
  END`

func (w *Writer) prepare(ctx context.Context) error {
	if w.stmts != nil {
		return nil
	}
	if w.conn == nil {
		c, err := w.s.db.Conn(ctx)
		if err != nil {
			return err
		}
		w.conn = c
	}
	ws := &writerStmts{}
	for _, p := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&ws.begin, `BEGIN IMMEDIATE`},
		{&ws.commit, `COMMIT`},
		{&ws.rollback, `ROLLBACK`},
		{&ws.maxID, `SELECT coalesce(max(id), 0) FROM events`},
		{&ws.insertN, insertSQL(insertChunk)},
		{&ws.insert1, insertSQL(1)},
		{&ws.messages, messagesSQL},
	} {
		st, err := w.conn.PrepareContext(ctx, p.sql)
		if err != nil {
			ws.close()
			return err
		}
		*p.st = st
	}
	w.stmts = ws
	return nil
}

// write stores a batch in one transaction. If SQLite refuses some rows for
// themselves (a constraint), it stores the others row by row and returns the
// refused ones as bad; err means nothing was stored.
func (w *Writer) write(b *batch) (stored int64, bad, err error) {
	ctx := context.Background()
	if err := w.prepare(ctx); err != nil {
		return 0, nil, w.s.wrap(err)
	}
	err = w.tx(ctx, func() error { return w.insertAll(ctx, b) })
	if err == nil {
		return int64(len(b.rows)), nil, nil
	}
	var se sqlite3.Error
	if !errors.As(err, &se) || se.Code != sqlite3.ErrConstraint {
		return 0, nil, w.s.wrap(err)
	}
	var refused []error
	err = w.tx(ctx, func() error {
		refused = refused[:0]
		for i := range b.rows {
			if _, err := w.stmts.insert1.ExecContext(ctx, w.rowArgs(b, i, w.args[:0])...); err != nil {
				if !errors.As(err, &se) || se.Code != sqlite3.ErrConstraint {
					return err
				}
				r := &b.rows[i]
				refused = append(refused, fmt.Errorf("event P%d#%d %s: %w", r.proc, r.seq, r.kind, err))
			}
		}
		return nil
	})
	if err != nil {
		return 0, nil, w.s.wrap(err)
	}
	bad = fmt.Errorf("%s: run %d: %d events not stored: %w", w.s.path, w.run, len(refused), errors.Join(refused...))
	return int64(len(b.rows) - len(refused)), bad, nil
}

// tx runs f in an IMMEDIATE transaction that also brings the messages table
// up to date with the rows f inserted.
func (w *Writer) tx(ctx context.Context, f func() error) (err error) {
	st := w.stmts
	if _, err := st.begin.ExecContext(ctx); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			st.rollback.ExecContext(ctx)
		}
	}()
	var lo int64
	if err := st.maxID.QueryRowContext(ctx).Scan(&lo); err != nil {
		return err
	}
	if err := f(); err != nil {
		return err
	}
	if _, err := st.messages.ExecContext(ctx, lo); err != nil {
		return err
	}
	_, err = st.commit.ExecContext(ctx)
	return err
}

func (w *Writer) insertAll(ctx context.Context, b *batch) error {
	i := 0
	for ; i+insertChunk <= len(b.rows); i += insertChunk {
		args := w.args[:0]
		for j := i; j < i+insertChunk; j++ {
			args = w.rowArgs(b, j, args)
		}
		w.args = args
		if _, err := w.stmts.insertN.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	for ; i < len(b.rows); i++ {
		w.args = w.rowArgs(b, i, w.args[:0])
		if _, err := w.stmts.insert1.ExecContext(ctx, w.args...); err != nil {
			return err
		}
	}
	return nil
}

// rowArgs appends the INSERT arguments of row i to args, in insertColumns
// order, with the NULLs the schema promises.
func (w *Writer) rowArgs(b *batch, i int, args []any) []any {
	r := &b.rows[i]
	args = append(args, w.run, r.proc, r.seq, r.kind, r.lamport, b.text(r.vc), r.wall,
		nullInt(r.msg, 0), nullStr(r.msgType), nullInt(r.peer, NoPeer), nullStr(r.resource), b.text(r.detail))
	return args
}

func nullInt(v, none int64) any {
	if v == none {
		return nil
	}
	return v
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

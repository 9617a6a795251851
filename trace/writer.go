package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dmxlab/dmx/trace/plural"
)

// Batching of the Writer: a transaction is committed when this many events
// are buffered, or flushInterval after the last one, whichever comes first.
const (
	batchSize     = 4096
	flushInterval = 100 * time.Millisecond
	// maxPending bounds the events buffered while the file is slow (another
	// process holds the write lock, or the disk stalls): Add waits for the
	// flusher beyond it instead of growing without bound.
	maxPending = 4 * batchSize
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

	mu        sync.Mutex
	cond      sync.Cond // signalled when the flusher took or returned a batch
	cur       *batch    // events added since the last flush began
	spare     *batch    // an empty batch to swap in
	err       error     // a flush error not reported yet
	closed    bool
	closedErr error // why the Writer never opened, if it did not
	flushing  bool  // a flush is writing a batch taken from cur

	flushMu sync.Mutex // one flush at a time; held across the database work
	db      *writerDB  // opened at the first flush

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
	links []rowLink // the Links of rows that have some, in row order
}

// rowLink is a message a row sends or receives besides its msg column.
type rowLink struct {
	row       int // index in rows
	msg, peer int64
	recv      bool
}

type row struct {
	proc, seq, lamport, wall, msg, peer int64
	kind, msgType, resource             string
	vc, detail                          span
}

// span is a piece of a batch's arena; n < 0 stands for SQL NULL.
type span struct{ off, n int }

// text returns the text of sp, which must not be NULL.
func (b *batch) text(sp span) string {
	if sp.n == 0 {
		return ""
	}
	// The arena is not written to while the batch is being inserted, and
	// go-sqlite3 copies bound text, so no string outlives the batch.
	return unsafe.String(&b.arena[sp.off], sp.n)
}

func newBatch() *batch {
	return &batch{rows: make([]row, 0, batchSize), arena: make([]byte, 0, 64*batchSize)}
}

func (b *batch) reset() {
	b.rows = b.rows[:0]
	b.arena = b.arena[:0]
	b.links = b.links[:0]
}

// NewWriter returns a Writer that records events of run. Close it before
// EndRun, and before closing the Store (Store.Close closes the Writers left
// open).
func (s *Store) NewWriter(run int64) *Writer { return s.newWriter(run, true) }

// newWriter is NewWriter; without loop no goroutine of the Writer's own
// commits: its owner calls Flush (a Spool, on a thread of its choosing).
func (s *Store) newWriter(run int64, loop bool) *Writer {
	w := &Writer{
		s:     s,
		run:   run,
		cur:   newBatch(),
		spare: newBatch(),
		kick:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	w.cond.L = &w.mu
	if err := s.checkWritable(); err != nil {
		w.closedErr = err
		w.closed = true
		close(w.done)
		return w
	}
	s.mu.Lock()
	s.writers[w] = struct{}{}
	s.mu.Unlock()
	if !loop {
		close(w.done)
		return w
	}
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
	for !w.closed && len(w.cur.rows) >= maxPending && w.flushing {
		w.cond.Wait()
	}
	if w.closed {
		err := w.closedErr
		w.mu.Unlock()
		if err == nil {
			err = errors.New("writer is closed")
		}
		return fmt.Errorf("%s: run %d: add %s: %w", w.s.path, w.run, ev.String(), err)
	}
	b := w.cur
	b.add(ev, detail)
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

// add appends ev to b, its detail being detail (valid JSON or empty).
func (b *batch) add(ev *Event, detail json.RawMessage) {
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
	if ev.HasLinks() {
		// Only imported events have links; a detail that does not read
		// is left to the analyses to report.
		// On a copy: Links keeps the event in its error, which would
		// make every caller's ev escape to the heap.
		c := *ev
		if l, err := c.Links(); err == nil {
			for _, k := range l.Recv {
				b.links = append(b.links, rowLink{len(b.rows), k.Msg, int64(k.Peer), true})
			}
			for _, k := range l.Sent {
				b.links = append(b.links, rowLink{len(b.rows), k.Msg, int64(k.Peer), false})
			}
		}
	}
	if len(b.rows) == cap(b.rows) {
		// Past batchSize while a flush is running: double at once
		// (append grows a large slice by a quarter, a copy each time).
		b.rows = slices.Grow(b.rows, len(b.rows))
	}
	b.rows = append(b.rows, r)
}

// Flush commits the events buffered now. It returns the errors of failed
// flushes since the last report, this one's included.
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
	if w.db != nil {
		w.db.close()
		w.db = nil
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
		return fmt.Errorf("%s: run %d: %s could not be stored: %w", w.s.path, w.run, plural.Count(n, "event"), err)
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
		for _, k := range later.links {
			k.row += len(b.rows)
			b.links = append(b.links, k)
		}
		for _, r := range later.rows {
			r.vc = b.copySpan(later, r.vc)
			r.detail = b.copySpan(later, r.detail)
			if len(b.rows) == cap(b.rows) {
				// Past batchSize while a flush is running: double at once
				// (append grows a large slice by a quarter, a copy each time).
				b.rows = slices.Grow(b.rows, len(b.rows))
			}
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

func (w *Writer) write(b *batch) (int64, error, error) {
	if w.db == nil {
		db, err := openWriterDB(w.s, w.run)
		if err != nil {
			return 0, nil, w.s.wrap(err)
		}
		w.db = db
	}
	return w.db.write(b)
}

package trace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dmxlab/dmx/trace/plural"
)

// A Spool records the events of one run as a Writer does, for a recorder
// whose work competes for the machine's cores with what it records: dmx
// run, whose five node processes and runner share two cores. A Writer's
// SQLite work (about two thirds of the runner's CPU) runs beside the
// nodes and delays them; a Spool's Add only appends the event, in the
// wire encoding, to a buffer written to an append-only spool file beside
// the trace. A converter reads the file behind it and feeds the rows to a
// Writer on a thread of the lowest priority (nice 19), which gets a core
// when the nodes leave one idle; once the recorder closes the Spool (the
// nodes have stopped), whatever the converter has not done yet is done at
// normal priority and the file removed.
//
// So an event is in the file (the page cache: a dead recorder leaves it)
// within flushInterval of Add, and in the trace when the converter got to
// it: at once on an idle machine, in a busy run after the run. Readers of
// the trace see the run's events with that delay. Nothing is lost or
// reordered: the file keeps every event in the order added until the
// trace holds them all; if they cannot all be stored, Close keeps the
// file and says where it is and how much of it reached the trace.
type Spool struct {
	w    *Writer
	path string
	f    *os.File

	mu     sync.Mutex // guards buf, the file's writes, err, broken and closed
	buf    []byte     // frames not yet written to the file
	err    error      // the converter's errors, not yet returned
	werr   error      // the flusher's failed writes, not yet returned
	broken error      // the file cannot be appended to any more
	closed bool

	written atomic.Int64 // bytes in the file: whole frames
	tidMu   sync.Mutex   // held while the converter's thread is named
	tid     int          // the converter's thread while it runs; else 0
	kick    chan struct{}
	stop    chan struct{} // closed by Close: the converter and the flusher stop
	done    sync.WaitGroup

	// Owned by the converter, then by Close.
	read   int64 // bytes of the file converted
	fatal  error // the file could not be read back: conversion stopped
	rbuf   []byte
	parser WireParser
}

// Spooling tunes a Spool.
const (
	// spoolBuffer is how much the recorder gathers before it writes to
	// the file (besides every flushInterval).
	spoolBuffer = 256 << 10
	// spoolChunk is how much the converter reads at a time.
	spoolChunk = 1 << 20
	// lowChunk and lowBatch are the chunk and the transaction of the
	// converter's thread of low priority. Close waits for the one it is
	// in the middle of, which on a machine kept busy by other programs can
	// take that thread a hundred times its CPU time (nice 19 against two
	// busy loops gets about 1 % of a core): small ones (about 3 ms of CPU
	// each) bound that wait; the rest is done at normal priority in
	// full-size batches.
	lowChunk = 64 << 10
	lowBatch = 1024
	// maxSpoolFrame bounds a frame, so that a damaged length cannot make
	// the reader allocate gigabytes.
	maxSpoolFrame = 64 << 20
)

// NewSpool returns a Spool that records events of run through a spool
// file made beside the trace, .NAME.dmx-spool-RUN-RANDOM (the same file
// system, and found where the trace is). Close it before EndRun and before
// closing the Store.
func (s *Store) NewSpool(run int64) (*Spool, error) {
	if err := s.checkWritable(); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(s.path), fmt.Sprintf(".%s.dmx-spool-%d-*", filepath.Base(s.path), run))
	if err != nil {
		return nil, fmt.Errorf("%s: spool of run %d: %w", s.path, run, err)
	}
	path := f.Name()
	sp := &Spool{
		w: s.newWriter(run, false), path: path, f: f,
		buf:  make([]byte, 0, spoolBuffer+4096),
		kick: make(chan struct{}, 1), stop: make(chan struct{}),
	}
	sp.done.Add(2)
	go sp.convert()
	go sp.flusher()
	return sp, nil
}

// Add appends ev to the spool (ev.Run and ev.ID are ignored); the caller
// may reuse ev at once. It returns the errors the converter met since the
// last report, but keeps ev all the same.
func (sp *Spool) Add(ev *Event) error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.closed {
		return fmt.Errorf("%s: add %s: spool is closed", sp.path, ev.String())
	}
	at := len(sp.buf)
	sp.buf = append(sp.buf, 0, 0, 0, 0)
	sp.buf = AppendWire(sp.buf, ev)
	binary.LittleEndian.PutUint32(sp.buf[at:], uint32(len(sp.buf)-at-4))
	var err error
	if len(sp.buf) >= spoolBuffer {
		err = sp.writeLocked()
	}
	err = errors.Join(err, sp.werr, sp.err)
	sp.err, sp.werr = nil, nil
	return err
}

// writeLocked writes the buffer to the file and tells the converter; mu
// must be held. A failed write keeps the buffer, to be written again.
func (sp *Spool) writeLocked() error {
	if len(sp.buf) == 0 {
		return nil
	}
	if sp.broken != nil {
		return sp.broken
	}
	n, err := sp.f.Write(sp.buf)
	if err != nil {
		if n > 0 {
			// Take back the part written, so that the file ends with a
			// whole frame and what comes next can be read back.
			at := sp.written.Load()
			_, serr := sp.f.Seek(at, io.SeekStart)
			if terr := errors.Join(sp.f.Truncate(at), serr); terr != nil {
				// The file is whole up to written, which is all the
				// converter reads: later events stay in memory.
				sp.broken = fmt.Errorf("write spool %s: a write failed after %d bytes that could not be taken back: %w", sp.path, n, terr)
			}
		}
		return fmt.Errorf("write spool %s: %w (the events are kept in memory)", sp.path, err)
	}
	sp.written.Add(int64(n))
	sp.buf = sp.buf[:0]
	select {
	case sp.kick <- struct{}{}:
	default:
	}
	return nil
}

// flusher writes what was added to the file every flushInterval, so that
// the trace's readers and a recorder's death do not wait for the buffer
// to fill. It runs at normal priority: it holds the lock Add takes.
func (sp *Spool) flusher() {
	defer sp.done.Done()
	t := time.NewTicker(flushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			sp.mu.Lock()
			if err := sp.writeLocked(); err != nil {
				sp.werr = err // the last one says it
			}
			sp.mu.Unlock()
		case <-sp.stop:
			return
		}
	}
}

// convert feeds the file's events to the Writer as they are written, on a
// thread of the lowest priority, until Close.
func (sp *Spool) convert() {
	defer sp.done.Done()
	// Never unlocked: when the goroutine returns, its thread ends with it,
	// so that no other goroutine inherits the lowered priority.
	runtime.LockOSThread()
	sp.tidMu.Lock()
	sp.tid = lowerThreadPriority()
	sp.tidMu.Unlock()
	defer func() {
		// Before the thread ends: its id may be another's afterwards.
		sp.tidMu.Lock()
		sp.tid = 0
		sp.tidMu.Unlock()
	}()
	for {
		select {
		case <-sp.kick:
		case <-sp.stop:
			return
		}
		err := sp.catchUp(sp.stop)
		if err != nil {
			sp.mu.Lock()
			sp.err = errors.Join(sp.err, err)
			sp.mu.Unlock()
		}
		if sp.fatal != nil {
			return
		}
	}
}

// catchUp converts the file's events up to what is written now and commits
// them, unless stop is closed first: the converter's thread of low
// priority gives stop, and works in small pieces; Close, at normal priority,
// gives none. It returns the Writer's errors.
func (sp *Spool) catchUp(stop <-chan struct{}) error {
	chunk, batch := int64(spoolChunk), batchSize
	if stop != nil {
		chunk, batch = lowChunk, lowBatch
	}
	var errs error
	end := sp.written.Load()
	for sp.read < end && sp.fatal == nil {
		select {
		case <-stop:
			return errs
		default:
		}
		n, err := sp.convertChunk(end, chunk)
		if err != nil {
			sp.fatal = err
			errs = errors.Join(errs, err)
			break
		}
		if n == 0 {
			break
		}
		if sp.w.pending() >= batch {
			errs = errors.Join(errs, sp.w.Flush())
		}
	}
	return errors.Join(errs, sp.w.Flush())
}

// convertChunk reads the frames from sp.read on, up to chunk bytes (more
// for a frame larger than that), not past end, and adds their events
// to the Writer. It returns the bytes converted; an error means the file
// cannot be read back.
func (sp *Spool) convertChunk(end, chunk int64) (int64, error) {
	want := min(end-sp.read, chunk)
	for {
		if int64(cap(sp.rbuf)) < want {
			sp.rbuf = make([]byte, want)
		}
		b := sp.rbuf[:want]
		if _, err := sp.f.ReadAt(b, sp.read); err != nil {
			return 0, fmt.Errorf("read spool %s at byte %d: %w", sp.path, sp.read, err)
		}
		used, larger, err := sp.addFrames(b, end-sp.read)
		if used == 0 && larger > 0 && err == nil {
			// A frame larger than the chunk: read it whole.
			want = int64(larger)
			continue
		}
		if err != nil {
			err = fmt.Errorf("spool %s at byte %d: %w", sp.path, sp.read+int64(used), err)
		}
		sp.read += int64(used)
		return int64(used), err
	}
}

// addFrames adds to the Writer the events of the whole frames at the
// start of b, which is followed by rest-len(b) more bytes of frames (a
// frame may go past b, not past rest). It returns the bytes of the frames
// added, and the size of the next frame if it goes past b.
func (sp *Spool) addFrames(b []byte, rest int64) (used, larger int, err error) {
	for used < len(b) {
		if used+4 > len(b) {
			if int64(used+4) > rest {
				return used, 0, errors.New("a frame cut short")
			}
			return used, 4, nil
		}
		n, err := frameSize(b[used:])
		if err == nil && int64(used+4+n) > rest {
			err = fmt.Errorf("a frame of %d bytes, which is not one", n)
		}
		if err != nil {
			return used, 0, err
		}
		if used+4+n > len(b) {
			return used, 4 + n, nil
		}
		var ev Event
		if err := sp.parser.Parse(b[used+4:used+4+n], &ev); err != nil {
			return used, 0, err
		}
		// The Writer's errors are a failed flush, which Flush reports
		// too; it keeps the event all the same.
		sp.w.Add(&ev)
		used += 4 + n
	}
	return used, 0, nil
}

// Count returns the number of events stored in the trace so far.
func (sp *Spool) Count() int64 { return sp.w.Count() }

// Close writes what is buffered, converts what the converter has not yet
// (at normal priority: the run is over), closes the Writer and removes the
// spool file. If some events could not be stored, the file is kept and
// the error says where it is.
func (sp *Spool) Close() error {
	sp.mu.Lock()
	if sp.closed {
		sp.mu.Unlock()
		return nil
	}
	sp.closed = true
	werr := sp.writeLocked()
	if werr == nil {
		werr = sp.werr
	}
	errs := sp.err
	sp.err, sp.werr = nil, nil
	sp.mu.Unlock()
	close(sp.stop)
	// The converter stops after the piece it is converting, which a busy
	// machine gives little CPU: at normal priority again if allowed.
	sp.tidMu.Lock()
	restoreThreadPriority(sp.tid)
	sp.tidMu.Unlock()
	sp.done.Wait()
	// What the converter met after the snapshot above, in the piece it
	// was converting when stop came (a refused event, say): lost, the
	// spool would be removed though the trace lacks events.
	sp.mu.Lock()
	errs = errors.Join(errs, sp.err)
	sp.err = nil
	sp.mu.Unlock()

	// What the file holds is converted, then what could not be written
	// to it (the disk full, say) goes from memory straight to the Writer.
	if sp.fatal == nil {
		errs = errors.Join(errs, sp.catchUp(nil))
	}
	if sp.fatal == nil && sp.read == sp.written.Load() && len(sp.buf) > 0 {
		used, _, err := sp.addFrames(sp.buf, int64(len(sp.buf)))
		if err == nil && used == len(sp.buf) {
			sp.buf, werr = sp.buf[:0], nil
		}
	}
	errs = errors.Join(errs, sp.w.Close())
	whole := sp.fatal == nil && len(sp.buf) == 0 && sp.read == sp.written.Load() && errs == nil
	cerr := sp.f.Close()
	if !whole {
		if len(sp.buf) > 0 {
			return fmt.Errorf("%s: run %d: %s of events could not be written to the spool %s, %s of the run stored in the trace: %w",
				sp.w.s.path, sp.w.run, plural.Count(len(sp.buf), "byte"), sp.path, plural.Count(sp.w.Count(), "event"), errors.Join(werr, errs))
		}
		return fmt.Errorf("%s: run %d: the spool %s is kept: it holds every event of the run (in dmx's wire encoding, %d bytes), %s of them stored in the trace: %w",
			sp.w.s.path, sp.w.run, sp.path, sp.written.Load(), plural.Count(sp.w.Count(), "event"), errs)
	}
	if err := os.Remove(sp.path); err != nil {
		return fmt.Errorf("remove spool: %w", errors.Join(err, cerr))
	}
	return nil
}

// frameSize returns the size of the frame whose 4-byte length starts
// head, or an error if no frame has that size.
func frameSize(head []byte) (int, error) {
	n := int(binary.LittleEndian.Uint32(head))
	if n == 0 || n > maxSpoolFrame {
		return 0, fmt.Errorf("a frame of %d bytes, which is not one", n)
	}
	return n, nil
}

// ReadSpool calls fn with each event of the spool file at path, in the
// order they were added: what a recorder that died (SIGKILL) left beside
// the trace of its run, every event it had taken, of which the trace holds
// those its converter had committed, the first ones. A frame cut short at
// the end (the recorder killed in the middle of a write) ends it with an
// error that says so, after fn had every whole one.
func ReadSpool(path string, fn func(*Event) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read spool: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var p WireParser
	var frame []byte
	for at := int64(0); ; {
		var head [4]byte
		if _, err := io.ReadFull(br, head[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("spool %s at byte %d: a frame cut short: %w", path, at, err)
		}
		n, err := frameSize(head[:])
		if err != nil {
			return fmt.Errorf("spool %s at byte %d: %w", path, at, err)
		}
		if cap(frame) < n {
			frame = make([]byte, n)
		}
		frame = frame[:n]
		if _, err := io.ReadFull(br, frame); err != nil {
			return fmt.Errorf("spool %s at byte %d: a frame cut short: %w", path, at, err)
		}
		var ev Event
		if err := p.Parse(frame, &ev); err != nil {
			return fmt.Errorf("spool %s at byte %d: %w", path, at, err)
		}
		if err := fn(&ev); err != nil {
			return err
		}
		at += 4 + int64(n)
	}
}

package trace

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
)

// Store is a trace file opened for recording (Create) or for analysis (Open).
// Its methods are safe for concurrent use.
type Store struct {
	db       *sql.DB
	dsn      string // data source name of the store's connections
	path     string
	writable bool

	mu      sync.Mutex
	writers map[*Writer]struct{}
	closed  bool
}

// busyTimeout is how long a writing connection waits for another one (of
// this process or another dmx appending to the same file) to commit. A
// variable for tests.
var busyTimeout = 10 * time.Second

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// Create opens the trace at path for recording, creating the file and its
// schema if they are missing. Appending runs to an existing trace is allowed,
// also from several processes at once. Create refuses a file that is not a
// dmx trace rather than write to it. The file is in WAL mode until Close.
func Create(path string) (*Store, error) {
	truncated, err := inspect(path, true)
	if err != nil {
		return nil, err
	}
	// Options of every writing connection: wait for other writers,
	// synchronous=NORMAL (in WAL mode a commit survives the process being
	// killed; only a power cut may lose the last ones), IMMEDIATE
	// transactions (take the write lock at BEGIN, so that busy_timeout
	// applies), a 32 MiB page cache.
	wdsn := dsn(path, fmt.Sprintf("_busy_timeout=%d&_synchronous=NORMAL&_txlock=immediate&_cache_size=-32768&_mutex=no",
		busyTimeout.Milliseconds()))
	db, err := sql.Open("sqlite3", wdsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &Store{db: db, dsn: wdsn, path: path, writable: true, writers: map[*Writer]struct{}{}}
	if truncated != "" {
		err := s.damaged(truncated)
		db.Close()
		return nil, fmt.Errorf("%w; refusing to write to it", err)
	}
	if err := s.initSchema(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.setJournalMode("wal"); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Open opens the trace at path read-only, for analysis. It checks that the
// file is a dmx trace this version can read, and fails with an error naming
// the file otherwise.
func Open(path string) (*Store, error) {
	truncated, err := inspect(path, false)
	if err != nil {
		return nil, err
	}
	rdsn := dsn(path, "mode=ro&_mutex=no")
	db, err := sql.Open("sqlite3", rdsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &Store{db: db, dsn: rdsn, path: path, writers: map[*Writer]struct{}{}}
	if truncated != "" {
		err := s.damaged(truncated)
		db.Close()
		return nil, err
	}
	if err := s.validate(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// dsn makes a go-sqlite3 data source name for path: a file: URI, so that any
// file name works (the path is escaped) and SQLite options can follow.
func dsn(path, opts string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	// Clean: a path starting with "//" would make a URI with a host.
	return "file:" + r.Replace(filepath.Clean(path)) + "?" + opts
}

// inspect checks the file at path before SQLite sees it: that it exists (for
// Open) and starts with SQLite's header. Create may find no file or an empty
// one. If the file is shorter than its header says (a truncated copy), it
// returns how much is missing, for an error that SQLite's own report
// completes.
func inspect(path string, create bool) (truncated string, err error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if create {
				return "", nil
			}
			return "", fmt.Errorf("%s: no such trace file", path)
		}
		return "", fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a dmx trace (not a regular file)", path)
	}
	if fi.Size() == 0 {
		if create {
			return "", nil
		}
		return "", fmt.Errorf("%s: not a dmx trace (empty file)", path)
	}
	var h [100]byte
	n, err := io.ReadFull(f, h[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	if n < len(sqliteMagic) || string(h[:len(sqliteMagic)]) != sqliteMagic {
		return "", fmt.Errorf("%s: not a dmx trace (not an SQLite file)", path)
	}
	if n < len(h) {
		return "", &damagedError{path: path, what: fmt.Sprintf("truncated to %d bytes", n)}
	}
	// The header's page count (offset 28) is valid when the file change
	// counter (24) equals the version-valid-for number (92). A WAL may hold pages the main file
	// does not have yet, so only a file without one is measured.
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	if bytes.Equal(h[24:28], h[92:96]) && pages > 0 && fi.Size() < pages*pageSize && !hasWAL(path) {
		return fmt.Sprintf("truncated: %d of %d bytes", fi.Size(), pages*pageSize), nil
	}
	return "", nil
}

func hasWAL(path string) bool {
	fi, err := os.Stat(path + "-wal")
	return err == nil && fi.Size() > 0
}

// unwrapPathError drops the *fs.PathError layer, whose text repeats the path
// that our messages already start with.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// damagedError says the file is a damaged trace. It wraps SQLite's own
// message when there is one.
type damagedError struct {
	path string
	what string // "truncated: 100 of 200 bytes", or ""
	err  error  // SQLite's error, or nil
}

func (e *damagedError) Error() string {
	s := e.path + ": trace is damaged (truncated or corrupt)"
	if e.what != "" {
		s = e.path + ": trace is damaged (" + e.what + ")"
	}
	if e.err != nil {
		s += ": " + e.err.Error()
	}
	return s
}

func (e *damagedError) Unwrap() error { return e.err }

// wrap puts the file name in front of an SQLite error, and turns the
// errors that mean a damaged file into a damagedError.
func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	var de *damagedError
	if errors.As(err, &de) {
		return err
	}
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB) {
		return &damagedError{path: s.path, err: err}
	}
	return fmt.Errorf("%s: %w", s.path, err)
}

// quickCheckLimit is the largest file Open checks with PRAGMA quick_check.
// quick_check reads every page: measured here, 1.06 s for a 246 MB trace of
// 2M events, about what reading all the events costs, and 0.13 s at this
// limit (some 250k events). Bigger files are only checked for truncation
// and at the ends of their tables; damage found later while reading them is
// reported as such (Store.wrap).
var quickCheckLimit int64 = 32 << 20 // a variable for tests

// validate checks that an opened file is a trace this package can read.
func (s *Store) validate() error {
	tables, version, err := s.schemaInfo(context.Background(), s.db)
	if err != nil {
		return s.withQuickCheck(err)
	}
	if !tables["runs"] {
		return fmt.Errorf("%s: not a dmx trace (no runs table)", s.path)
	}
	if version > SchemaVersion {
		return fmt.Errorf("%s: trace schema version %d is newer than this dmx supports (%d); upgrade dmx", s.path, version, SchemaVersion)
	}
	if version < 1 {
		return fmt.Errorf("%s: not a dmx trace (schema version %d)", s.path, version)
	}
	for _, t := range requiredTables {
		if !tables[t] {
			return fmt.Errorf("%s: not a dmx trace (no %s table)", s.path, t)
		}
	}
	// Touch the last pages of the big tables: truncation and most damage
	// show up here for the price of a few page reads.
	var x sql.NullInt64
	if err := s.db.QueryRow(`SELECT max(id) FROM events`).Scan(&x); err != nil {
		return s.withQuickCheck(err)
	}
	if err := s.db.QueryRow(`SELECT count(*) FROM runs`).Scan(&x); err != nil {
		return s.withQuickCheck(err)
	}
	if fi, err := os.Stat(s.path); err == nil && fi.Size() <= quickCheckLimit {
		if err := s.quickCheck(); err != nil {
			return err
		}
	}
	return nil
}

// withQuickCheck turns err into a damagedError if the file fails
// quick_check; other errors are returned with the file name.
func (s *Store) withQuickCheck(err error) error {
	err = s.wrap(err)
	var de *damagedError
	if errors.As(err, &de) {
		return err
	}
	if qerr := s.quickCheck(); qerr != nil {
		return qerr
	}
	return err
}

// damaged returns the error for a file known to be damaged (what says how),
// with SQLite's report of the damage when it has one.
func (s *Store) damaged(what string) error {
	err := s.quickCheck()
	var de *damagedError
	if errors.As(err, &de) {
		return &damagedError{path: s.path, what: what, err: de.err}
	}
	return &damagedError{path: s.path, what: what, err: err}
}

// quickCheck runs PRAGMA quick_check and reports its first complaints.
func (s *Store) quickCheck() error {
	rows, err := s.db.Query(`PRAGMA quick_check(3)`)
	if err != nil {
		return s.wrap(err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return s.wrap(err)
		}
		if m != "ok" {
			msgs = append(msgs, m)
		}
	}
	if err := rows.Err(); err != nil {
		return &damagedError{path: s.path, err: err}
	}
	if len(msgs) > 0 {
		return &damagedError{path: s.path, err: errors.New(strings.Join(msgs, "; "))}
	}
	return nil
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// schemaInfo returns the names of the tables in the file and its
// user_version.
func (s *Store) schemaInfo(ctx context.Context, q queryer) (map[string]bool, int, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table'`)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	tables := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, 0, err
		}
		tables[name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	var version int
	if err := q.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return nil, 0, err
	}
	return tables, version, nil
}

// initSchema creates the schema in an empty file, or checks that an existing
// file is a trace. It runs in an IMMEDIATE transaction, so two processes
// creating the same new file do not both create the schema.
func (s *Store) initSchema() error {
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.withQuickCheck(err)
	}
	defer tx.Rollback()
	tables, version, err := s.schemaInfo(ctx, tx)
	if err != nil {
		return s.withQuickCheck(err)
	}
	switch {
	case len(tables) == 0 && version == 0:
		if _, err := tx.ExecContext(ctx, Schema); err != nil {
			return fmt.Errorf("%s: create trace schema: %w", s.path, err)
		}
	case !tables["runs"]:
		return fmt.Errorf("%s: not a dmx trace (no runs table); refusing to write to it", s.path)
	case version > SchemaVersion:
		return fmt.Errorf("%s: trace schema version %d is newer than this dmx supports (%d); upgrade dmx", s.path, version, SchemaVersion)
	case version < 1:
		return fmt.Errorf("%s: not a dmx trace (schema version %d); refusing to write to it", s.path, version)
	default:
		for _, t := range requiredTables {
			if !tables[t] {
				return fmt.Errorf("%s: not a dmx trace (no %s table); refusing to write to it", s.path, t)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return s.wrap(err)
	}
	return nil
}

// setJournalMode sets the journal mode (persistent in the file). Switching
// modes needs a moment without other writers, and SQLite does not always
// wait for it through busy_timeout, so this retries for a while.
func (s *Store) setJournalMode(mode string) error {
	deadline := time.Now().Add(busyTimeout)
	for {
		var got string
		err := s.db.QueryRow(`PRAGMA journal_mode = ` + mode).Scan(&got)
		if err == nil && strings.EqualFold(got, mode) {
			return nil
		}
		if err != nil && !isBusy(err) {
			return s.wrap(err)
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("journal mode is still %s", got)
			}
			return fmt.Errorf("%s: set journal mode %s: %w", s.path, mode, err)
		}
		time.Sleep(time.Duration(5+rand.IntN(20)) * time.Millisecond)
	}
}

func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

// DB returns the store's database handle, for user queries (dmx sql).
func (s *Store) DB() *sql.DB { return s.db }

// Path returns the file name the store was opened with.
func (s *Store) Path() string { return s.path }

// Close closes the store. For a store opened with Create it first closes the
// Writers still open, then checkpoints the WAL and switches the file back to
// rollback-journal mode, so that no -wal or -shm file remains and the trace
// opens read-only anywhere. If another process still has the file open for
// writing, the switch is left to whichever closes last. Close the store's
// EventReaders first: an open reader keeps the WAL too.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	ws := make([]*Writer, 0, len(s.writers))
	for w := range s.writers {
		ws = append(ws, w)
	}
	s.mu.Unlock()
	var errs []error
	for _, w := range ws {
		errs = append(errs, w.Close())
	}
	errs = append(errs, s.db.Close())
	if s.writable {
		errs = append(errs, s.settle())
	}
	return errors.Join(errs...)
}

// settle checkpoints the WAL into the file and switches the file to
// rollback-journal mode. SQLite can only do that when no other connection
// has the file open; when two appenders close at the same moment each sees
// the other, so a failed attempt closes its connection and tries again a
// few times after a random pause.
func (s *Store) settle() error {
	for attempt := 0; attempt < 8; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(10+rand.IntN(40)) * time.Millisecond)
		}
		done, err := s.settleOnce()
		if done {
			return nil
		}
		if err != nil && !isBusy(err) {
			return s.wrap(err)
		}
	}
	// Another process keeps the file open (an appender, or a reader): the
	// last appender to close settles the file. Nothing is lost meanwhile:
	// the WAL is part of the database.
	return nil
}

func (s *Store) settleOnce() (bool, error) {
	db, err := sql.Open("sqlite3", dsn(s.path, "_busy_timeout=200"))
	if err != nil {
		return false, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		return false, err
	}
	if !strings.EqualFold(mode, "wal") {
		return true, nil
	}
	var busy, logFrames, done int
	if err := db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
		return false, err
	}
	if err := db.QueryRow(`PRAGMA journal_mode = DELETE`).Scan(&mode); err != nil {
		return false, err
	}
	return strings.EqualFold(mode, "delete"), nil
}

func (s *Store) checkWritable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("%s: trace store is closed", s.path)
	}
	if !s.writable {
		return fmt.Errorf("%s: trace is open read-only", s.path)
	}
	return nil
}

// BeginRun records the start of a run (complete = 0) and returns its id.
// r.ID, r.Ended and r.Complete are ignored; r.Names, if set, is recorded as
// with SetProcNames. An empty r.Status is stored as "running".
func (s *Store) BeginRun(r Run) (int64, error) {
	if err := s.checkWritable(); err != nil {
		return 0, err
	}
	params, err := jsonOr(r.Params, "{}")
	if err != nil {
		return 0, fmt.Errorf("%s: run params: %w", s.path, err)
	}
	faults, err := jsonOr(r.Faults, "[]")
	if err != nil {
		return 0, fmt.Errorf("%s: run faults: %w", s.path, err)
	}
	status := r.Status
	if status == "" {
		status = "running"
	}
	seed := strconv.FormatUint(r.Seed, 10)
	if r.NoSeed {
		seed = ""
	}
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.wrap(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO runs
		(algorithm, nodes, seed, mode, params, faults, tool_version, started_ns, complete, status)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
		r.Algorithm, r.Nodes, seed, r.Mode, params, faults,
		r.ToolVersion, r.Started, status)
	if err != nil {
		return 0, s.wrap(err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, s.wrap(err)
	}
	if err := insertNames(ctx, tx, id, r.Names); err != nil {
		return 0, s.wrap(err)
	}
	if err := tx.Commit(); err != nil {
		return 0, s.wrap(err)
	}
	return id, nil
}

func jsonOr(raw json.RawMessage, empty string) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return empty, nil
	}
	if !json.Valid(raw) {
		return "", fmt.Errorf("not valid JSON: %s", truncate(raw))
	}
	return string(raw), nil
}

func insertNames(ctx context.Context, tx *sql.Tx, run int64, names []string) error {
	for p, name := range names {
		if _, err := tx.ExecContext(ctx, `INSERT INTO procs (run, proc, name) VALUES (?, ?, ?)
			ON CONFLICT (run, proc) DO UPDATE SET name = excluded.name`, run, p, name); err != nil {
			return err
		}
	}
	return nil
}

// SetProcNames records names for the processes of a run (names[p] names
// process p), replacing earlier names.
func (s *Store) SetProcNames(run int64, names []string) error {
	if err := s.checkWritable(); err != nil {
		return err
	}
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err)
	}
	defer tx.Rollback()
	if err := insertNames(ctx, tx, run, names); err != nil {
		return s.wrap(err)
	}
	return s.wrap(tx.Commit())
}

// EndRun records the end of a run: its end time, whether it is complete, and
// a status in words. It also settles the fate of the run's messages that
// were never delivered: those whose receiver or sender crashed after they
// were sent, or whose receiver was down when they were sent, become
// lost_to_crash (a sender killed right after recording a
// send may never have transmitted it; a restarted process's channels start
// afresh); the others stay in_flight. Close the run's Writers
// first, so that EndRun sees all the events.
func (s *Store) EndRun(id int64, ended int64, complete bool, status string) error {
	if err := s.checkWritable(); err != nil {
		return err
	}
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE runs SET ended_ns = ?, complete = ?, status = ? WHERE id = ?`,
		ended, complete, status, id)
	if err != nil {
		return s.wrap(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.wrap(err)
	} else if n == 0 {
		return fmt.Errorf("%s: no run %d", s.path, id)
	}
	// Lost to a crash: its receiver or its sender crashed after the send, or
	// its receiver was down when it was sent (the last crash or recover of
	// the receiver before the send is a crash).
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET fate = 'lost_to_crash'
		WHERE run = ?1 AND fate = 'in_flight' AND receiver IS NOT NULL AND (EXISTS (
		  SELECT 1 FROM events AS c
		  WHERE c.run = ?1 AND c.kind = 'crash' AND (c.proc = messages.receiver OR c.proc = messages.sender)
		    AND c.wall_ns >= coalesce((SELECT s.wall_ns FROM events AS s WHERE s.id = messages.send_event), 0))
		OR (SELECT c.kind FROM events AS c
		  WHERE c.run = ?1 AND c.proc = messages.receiver AND (c.kind = 'crash' OR c.kind = 'recover')
		    AND c.wall_ns <= coalesce((SELECT s.wall_ns FROM events AS s WHERE s.id = messages.send_event), 0)
		  ORDER BY c.wall_ns DESC, c.seq DESC LIMIT 1) = 'crash')`,
		id); err != nil {
		return s.wrap(err)
	}
	return s.wrap(tx.Commit())
}

const runColumns = `id, algorithm, nodes, seed, mode, params, faults, tool_version,
	started_ns, coalesce(ended_ns, 0), complete, status`

func scanRun(sc interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var seed, params, faults string
	if err := sc.Scan(&r.ID, &r.Algorithm, &r.Nodes, &seed, &r.Mode, &params, &faults,
		&r.ToolVersion, &r.Started, &r.Ended, &r.Complete, &r.Status); err != nil {
		return r, err
	}
	r.Params = json.RawMessage(params)
	r.Faults = json.RawMessage(faults)
	if seed == "" {
		r.NoSeed = true // an imported log
		return r, nil
	}
	var err error
	if r.Seed, err = strconv.ParseUint(seed, 10, 64); err != nil {
		return r, fmt.Errorf("run %d: seed %q: %w", r.ID, seed, err)
	}
	return r, nil
}

// Runs returns the runs of the trace in the order they were begun, with
// their process names.
func (s *Store) Runs() ([]Run, error) {
	rows, err := s.db.Query(`SELECT ` + runColumns + ` FROM runs ORDER BY id`)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, s.wrap(err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(err)
	}
	for i := range runs {
		if runs[i].Names, err = s.names(runs[i].ID); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// Run returns one run by id.
func (s *Store) Run(id int64) (Run, error) {
	r, err := scanRun(s.db.QueryRow(`SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("%s: no run %d", s.path, id)
	}
	if err != nil {
		return r, s.wrap(err)
	}
	r.Names, err = s.names(id)
	return r, err
}

func (s *Store) names(run int64) ([]string, error) {
	rows, err := s.db.Query(`SELECT proc, name FROM procs WHERE run = ? ORDER BY proc`, run)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var p int
		var name string
		if err := rows.Scan(&p, &name); err != nil {
			return nil, s.wrap(err)
		}
		if p < 0 || p > 1<<20 {
			return nil, fmt.Errorf("%s: run %d: process number %d out of range in procs", s.path, run, p)
		}
		for len(names) < p {
			names = append(names, "")
		}
		names = append(names, name)
	}
	return names, s.wrap(rows.Err())
}

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
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
	locks   map[int64]*os.File // the runs this store records: their locks (lock_linux.go)
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
//
// A new trace is made whole under another name in the same directory and
// then linked into place, so that path never names a half-made file: a
// reader, or a process killed at any moment, sees no file or a trace with
// its schema.
//
// A new trace adopts no file it did not make: a -wal or hot -journal left
// beside a missing trace (its recorder killed, the trace deleted) is
// refused with a *StaleError rather than read into the new file.
func Create(path string) (*Store, error) {
	if err := staleSideFiles(path); err != nil {
		return nil, err
	}
	// A trace named like the -wal (or -shm, -journal) of another would be
	// read by SQLite as that one's, and reset by it.
	if err := Overwrites(path); err != nil {
		var ce *ClobberError
		if errors.As(err, &ce) && ce.Side {
			return nil, fmt.Errorf("%s: the name of the %s file of the trace %s: a trace there would be read as part of that one, and reset by SQLite; choose another name", path, strings.TrimPrefix(path, ce.Trace), ce.Trace)
		}
	}
	truncated, err := inspect(path, true)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if err := createWhole(path); err != nil {
			return nil, err
		}
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

// createWhole makes an empty trace at path, which does not exist yet: the
// schema is written into a new file beside it, which is then hard-linked
// to path (link, unlike rename, fails rather than replace a trace that
// another process made meanwhile: then that one is used). Where links are
// not supported, the schema is made in place, as Create does with an
// existing empty file.
func createWhole(path string) error {
	dir, base := filepath.Split(path)
	// SQLite makes the file, with the permissions it gives any trace.
	name := filepath.Join(dir, fmt.Sprintf(".%s.dmx-new-%016x", base, rand.Uint64()))
	defer os.Remove(name)
	db, err := sql.Open("sqlite3", dsn(name, "_journal_mode=DELETE&_mutex=no"))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	_, err = db.Exec(Schema)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// SQLite says "unable to open database file" and an errno of its
		// own choosing (ENOENT for a read-only directory): the system's
		// own word on making a file there says why.
		var se sqlite3.Error
		if errors.As(err, &se) && se.Code == sqlite3.ErrCantOpen {
			f, oerr := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
			if oerr != nil {
				var pe *fs.PathError
				if errors.As(oerr, &pe) {
					oerr = pe.Err
				}
				return fmt.Errorf("%s: cannot make the trace in directory %s: %w", path, dirName(dir), oerr)
			}
			f.Close()
		}
		return fmt.Errorf("%s: create trace schema: %w", path, err)
	}
	// An error is no failure: the file exists (another process made the
	// trace meanwhile: it is used), or the file system has no hard links
	// (Create makes the schema in place).
	os.Link(name, path)
	return nil
}

// Open opens the trace at path read-only, for analysis. It checks that the
// file is a dmx trace this version can read, and fails with an error naming
// the file otherwise.
func Open(path string) (*Store, error) { return OpenWith(path, OpenOptions{}) }

// OpenOptions adjust how OpenWith opens a trace.
type OpenOptions struct {
	// NoIntegrityCheck skips PRAGMA integrity_check, which reads the whole
	// file (about 1.3s for a trace of 1M events, 180 MB) to find damage
	// anywhere in it, an index included. Without it, only truncation and
	// damage at the ends of the tables are found when opening; damage found
	// later while reading is still reported as such. For a trace the
	// caller has just recorded itself, or one too big to check each time.
	NoIntegrityCheck bool
}

// OpenWith is Open with options.
func OpenWith(path string, o OpenOptions) (*Store, error) {
	truncated, err := inspect(path, false)
	if err != nil {
		return nil, err
	}
	opts := "mode=ro&_query_only=1&_mutex=no"
	if walAtRest(path) {
		// A file left in WAL mode with no WAL beside it (copied alone,
		// its recorder's -wal removed): SQLite would make a -wal and an
		// -shm beside it to read it, and leave them, or fail where it
		// cannot (read-only media: "unable to open database file").
		// Nothing is being written to it (a writer keeps a -wal), so it is
		// read as it is, without locks or side files.
		opts += "&immutable=1"
	}
	rdsn := dsn(path, opts)
	db, err := sql.Open(readDriverName, rdsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &Store{db: db, dsn: rdsn, path: path, writers: map[*Writer]struct{}{}}
	if truncated != "" {
		err := s.damaged(truncated)
		db.Close()
		return nil, err
	}
	if err := s.validate(!o.NoIntegrityCheck); err != nil {
		db.Close()
		var se sqlite3.Error
		if _, serr := os.Stat(path + "-shm"); errors.As(err, &se) && se.Code == sqlite3.ErrCantOpen && hasWAL(path) && serr != nil {
			// Reading a WAL takes an -shm beside it, which SQLite could
			// not make: read-only media, most likely. The WAL holds part
			// of the trace, which is not read without it.
			return nil, fmt.Errorf("%s: part of the trace is in %s-wal (its recorder did not close it), and reading that takes an %s-shm beside it, which cannot be made here (%v): copy both files to a directory that can be written, and read the copy",
				path, path, path, se)
		}
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
	// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	// writer, for ever. It changes nothing for a regular file, and the
	// descriptor's own Stat below refuses everything else.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
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

// walAtRest reports whether the file at path is an SQLite file in WAL mode
// (its header's read and write versions are 2) with no WAL beside it, or
// an empty one.
func walAtRest(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [20]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:len(sqliteMagic)]) != sqliteMagic {
		return false
	}
	return h[18] == 2 && h[19] == 2 && !hasWAL(path)
}

// dirName names the directory filepath.Split returned, for a message.
func dirName(dir string) string {
	if dir == "" {
		return "."
	}
	return filepath.Clean(dir)
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
	if !s.writable && refused(err) {
		return s.readOnlyError(err)
	}
	return fmt.Errorf("%s: %w", s.path, err)
}

// validate checks that an opened file is a trace this package can read,
// and with integrity that it is not damaged anywhere.
func (s *Store) validate(integrity bool) error {
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
	if err := s.checkEventKeys(); err != nil {
		return err
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
	if integrity {
		return s.check("integrity_check")
	}
	return nil
}

// eventKeys are the columns of the events table that name an event and say
// what it is: the schema declares them NOT NULL (id is the rowid).
var eventKeys = []string{"id", "run", "proc", "seq", "kind", "lamport", "wall_ns"}

// checkEventKeys refuses a file whose events table lets a key column be
// NULL and has a row where one is: such a row belongs to no run, or to no
// process, and readers would pass over it without a word (a crafted file
// whose 1,210 events had NULL ids read as a run of 0 events, all ok). A
// file made with the schema cannot hold one (SQLite enforces NOT NULL,
// and id is the rowid), so that only the columns' declarations are read;
// the rows are looked at only in a file whose schema lacks a constraint.
func (s *Store) checkEventKeys() error {
	rows, err := s.db.Query(`SELECT name, type, "notnull", pk FROM pragma_table_info('events')`)
	if err != nil {
		return s.withQuickCheck(err)
	}
	declared := map[string]bool{}
	for rows.Next() {
		var name, typ string
		var notNull, pk int
		if err := rows.Scan(&name, &typ, &notNull, &pk); err != nil {
			rows.Close()
			return s.wrap(err)
		}
		declared[name] = notNull == 1 || (name == "id" && pk == 1 && strings.EqualFold(typ, "INTEGER"))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.wrap(err)
	}
	var loose []string
	for _, c := range eventKeys {
		if _, ok := declared[c]; !ok {
			return fmt.Errorf("%s: not a dmx trace (the events table has no %s column)", s.path, c)
		}
		if !declared[c] {
			loose = append(loose, c)
		}
	}
	if len(loose) == 0 {
		return nil
	}
	var cond []string
	for _, c := range loose {
		cond = append(cond, c+" IS NULL")
	}
	var rowid int64
	vals := make([]any, len(loose))
	for i := range vals {
		vals[i] = new(any)
	}
	err = s.db.QueryRow(`SELECT rowid, ` + strings.Join(loose, ", ") + ` FROM events WHERE ` + strings.Join(cond, " OR ") + ` LIMIT 1`).
		Scan(append([]any{&rowid}, vals...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return s.wrap(err)
	}
	var nulls []string
	for i, c := range loose {
		if *(vals[i].(*any)) == nil {
			nulls = append(nulls, c)
		}
	}
	return fmt.Errorf("%s: bad trace: the event in row %d of the events table has no %s (NULL): every event needs an id, a run, a process, a sequence number, a kind, a Lamport clock and a wall time (this file's schema lets them be NULL; dmx's does not)",
		s.path, rowid, strings.Join(nulls, " and no "))
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
func (s *Store) quickCheck() error { return s.check("quick_check") }

// check runs PRAGMA quick_check or integrity_check and reports its first
// complaints. quick_check finds damage in the structure of the file;
// integrity_check also compares each index with its table (damage confined
// to an index makes queries through it, like the views', miss rows).
func (s *Store) check(pragma string) error {
	rows, err := s.db.Query(`PRAGMA ` + pragma + `(3)`)
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
			if hasWAL(s.path) {
				// A full disk, say: the WAL could not be copied into the
				// file, which is not whole without it.
				return fmt.Errorf("%s: the trace is NOT complete without %s-wal (keep both files together; the next dmx that records into it completes it): %w", s.path, s.path, s.wrap(err))
			}
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
// Writers still open, then checkpoints the WAL into the file and switches
// the file back to rollback-journal mode, so that no -wal or -shm file
// remains and the trace opens read-only anywhere. Close the store's
// EventReaders first: an open reader keeps the WAL too.
//
// Another process that has the file open can prevent either step. When
// the file holds everything but the switch was not possible (another
// process has it open, a reader or an appender, which settles it when it
// closes last), Close returns a *SideFilesError: the trace is complete in
// its file, and -wal and -shm remain beside it for now. When even the
// checkpoint was not possible for settleTimeout (a reader kept a query
// open all that time), the file is not complete without its -wal, and
// Close says so in its error.
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
	s.unlockRuns()
	errs = append(errs, s.db.Close())
	if s.writable {
		errs = append(errs, s.settle())
	}
	return errors.Join(errs...)
}

// SideFilesError says that a trace's file holds all of it, but that its
// -wal and -shm files remain beside it: another process had it open when
// the recorder closed it. They go when the last writer closes the file;
// the file alone, copied anywhere, is the whole trace.
type SideFilesError struct{ Path string }

func (e *SideFilesError) Error() string {
	return fmt.Sprintf("%s: the trace is whole in this file; its -wal and -shm files remain beside it while another process has it open", e.Path)
}

// settleTimeout bounds how long Close waits for other processes to let it
// checkpoint the WAL: a reader in the middle of a query holds the WAL's
// frames that are newer than its snapshot.
var settleTimeout = 5 * time.Second

// settle checkpoints the WAL into the file and switches the file to
// rollback-journal mode. SQLite can only switch when no other connection
// has the file open; when two appenders close at the same moment each sees
// the other, so a failed attempt closes its connection and tries again
// after a random pause, for a second once the checkpoint is done (after
// that, whoever closes last settles the file), for settleTimeout until it
// is.
func (s *Store) settle() error {
	start := time.Now()
	checkpointed := time.Time{}
	var last error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(10+rand.IntN(40)) * time.Millisecond)
		}
		done, whole, err := s.settleOnce()
		if done {
			return nil
		}
		if err != nil && !isBusy(err) {
			if hasWAL(s.path) {
				// A full disk, say: the WAL could not be copied into the
				// file, which is not whole without it.
				return fmt.Errorf("%s: the trace is NOT complete without %s-wal (keep both files together; the next dmx that records into it completes it): %w", s.path, s.path, s.wrap(err))
			}
			return s.wrap(err)
		}
		if err != nil {
			last = err
		}
		if whole && checkpointed.IsZero() {
			checkpointed = time.Now()
		}
		switch {
		case !checkpointed.IsZero() && time.Since(checkpointed) >= time.Second:
			return &SideFilesError{Path: s.path}
		case checkpointed.IsZero() && time.Since(start) >= settleTimeout:
			if last == nil {
				last = errors.New("a reader holds an older snapshot")
			}
			return fmt.Errorf("%s: the trace is NOT complete without %s-wal: another process (a reader: dmx sql, sqlite3...) kept it busy for %v, so its last changes could not be copied into it (%v); keep both files together (the next dmx that records into it completes it)",
				s.path, s.path, settleTimeout, last)
		}
	}
}

// settleOnce tries to settle the file once. done: the file is in
// rollback-journal mode (nothing beside it); whole: the WAL's frames are
// all in the file.
func (s *Store) settleOnce() (done, whole bool, err error) {
	db, err := sql.Open("sqlite3", dsn(s.path, "_busy_timeout=200"))
	if err != nil {
		return false, false, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		return false, false, err
	}
	if !strings.EqualFold(mode, "wal") {
		return true, true, nil
	}
	// TRUNCATE waits (busy_timeout) for readers of older snapshots and for
	// a writer, copies every frame into the file and empties the WAL;
	// busy = 1 if it could not finish.
	var busy, logFrames, copied int
	if err := db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &copied); err != nil {
		return false, false, err
	}
	whole = busy == 0
	if err := db.QueryRow(`PRAGMA journal_mode = DELETE`).Scan(&mode); err != nil {
		return false, whole, err
	}
	return strings.EqualFold(mode, "delete"), whole, nil
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
		status = StatusRunning
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
	// The run's lock, taken before the row is visible: a reader never sees
	// the run running without it.
	var lock *os.File
	if status == StatusRunning {
		if lock, err = lockRun(s.path, id); err != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ? WHERE id = ?`, StatusUnwatched, id); err != nil {
				return 0, s.wrap(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		if lock != nil {
			lock.Close()
		}
		return 0, s.wrap(err)
	}
	if lock != nil {
		s.mu.Lock()
		if s.locks == nil {
			s.locks = map[int64]*os.File{}
		}
		s.locks[id] = lock
		s.mu.Unlock()
	}
	return id, nil
}

// Statuses of a run that has not ended, as Runs and Run report them.
const (
	// StatusRunning is the status of a run being recorded.
	StatusRunning = "running"
	// StatusAbandoned is what readers report of a run whose status is
	// still "running" but whose recorder is gone: it was killed, or
	// crashed, before it could end the run, which can then never end.
	StatusAbandoned = "abandoned: its recorder died before ending the run; the trace holds what it recorded until then"
	// StatusUnwatched is the stored status of a run being recorded where
	// the recorder cannot hold a lock on the file for readers to watch:
	// readers cannot tell whether its recorder is still alive.
	StatusUnwatched = "running (its recorder cannot be watched: no file locks)"
)

// unlockRun releases run's lock: it has ended.
func (s *Store) unlockRun(run int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.locks[run]; f != nil {
		f.Close()
		delete(s.locks, run)
	}
}

// unlockRuns releases the locks of the runs this store began and did not
// end: they stay "running" in the file, and readers see them abandoned.
func (s *Store) unlockRuns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for run, f := range s.locks {
		f.Close()
		delete(s.locks, run)
	}
}

// watch reports a run whose recorder is gone as abandoned.
func (s *Store) watch(r *Run) {
	if r.Complete || r.Ended != 0 || r.Status != StatusRunning {
		return
	}
	if held, err := runLocked(s.path, r.ID); err == nil && !held {
		r.Status = StatusAbandoned
	}
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

// WriteRun records one whole run into the trace at path, made if it is
// not there: the row r, then the events evs in order, then its end as
// r.Ended, r.Complete and r.Status say. It returns the run's id.
func WriteRun(path string, r Run, evs []Event) (int64, error) {
	st, err := Create(path)
	if err != nil {
		return 0, err
	}
	id, err := st.writeRun(r, evs)
	if err := errors.Join(err, st.Close()); err != nil {
		return 0, err
	}
	return id, nil
}

func (s *Store) writeRun(r Run, evs []Event) (int64, error) {
	end := r
	r.Status = "" // running until it ends, as a recorder's run is
	id, err := s.BeginRun(r)
	if err != nil {
		return 0, err
	}
	w := s.NewWriter(id)
	for i := range evs {
		if err := w.Add(&evs[i]); err != nil {
			w.Close()
			return 0, err
		}
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return id, s.EndRun(id, end.Ended, end.Complete, end.Status)
}

// ReadRuns opens the trace at path read-only and returns its runs.
func ReadRuns(path string) ([]Run, error) {
	st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.Runs()
}

// SetProcNames records names for the processes of a run (names[p] names
// process p), replacing earlier names.
func (s *Store) SetProcNames(run int64, names []string) error {
	return s.inTx(func(ctx context.Context, tx *sql.Tx) error {
		return s.wrap(insertNames(ctx, tx, run, names))
	})
}

// inTx runs fn in a transaction of the writable store and commits it when
// fn returns nil.
func (s *Store) inTx(fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := s.checkWritable(); err != nil {
		return err
	}
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err)
	}
	defer tx.Rollback()
	if err := fn(ctx, tx); err != nil {
		return err
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
	err := s.inTx(func(ctx context.Context, tx *sql.Tx) error {
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
		return s.wrap(settleFates(ctx, tx, id))
	})
	if err != nil {
		return err
	}
	s.unlockRun(id)
	return nil
}

// settleFates marks lost_to_crash the messages of run still in flight
// whose receiver or sender crashed after they were sent (at or after the
// send's wall time), or whose receiver was down when they were sent (its
// last crash or recover at or before the send, by wall time then seq, is a
// crash). Messages without a recorded send count as sent at time 0.
//
// It reads the run's crashes and recoveries once and decides each message
// in memory: done in SQL, the same rule read a process's events for each
// message in flight, which took 13s for a run of 300 processes cut short
// with 90k messages in flight.
func settleFates(ctx context.Context, tx *sql.Tx, run int64) error {
	var crashed bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE run = ? AND kind = 'crash')`, run).Scan(&crashed); err != nil {
		return err
	}
	if !crashed {
		return nil
	}
	// Each process's crashes and recoveries in (wall, seq) order, and its
	// latest crash.
	type life struct {
		walls     []int64
		crash     []bool
		lastCrash int64
	}
	lives := map[int64]*life{}
	rows, err := tx.QueryContext(ctx, `SELECT proc, kind = 'crash', wall_ns FROM events
		WHERE run = ? AND kind IN ('crash', 'recover') ORDER BY proc, wall_ns, seq`, run)
	if err != nil {
		return err
	}
	for rows.Next() {
		var proc, wall int64
		var crash bool
		if err := rows.Scan(&proc, &crash, &wall); err != nil {
			rows.Close()
			return err
		}
		l := lives[proc]
		if l == nil {
			l = &life{lastCrash: math.MinInt64}
			lives[proc] = l
		}
		l.walls = append(l.walls, wall)
		l.crash = append(l.crash, crash)
		if crash {
			l.lastCrash = max(l.lastCrash, wall)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	crashedSince := func(proc sql.NullInt64, t int64) bool {
		l := lives[proc.Int64]
		return proc.Valid && l != nil && l.lastCrash >= t
	}
	downAt := func(proc, t int64) bool {
		l := lives[proc]
		if l == nil {
			return false
		}
		// The last event at or before t: the one before the first after t.
		i, _ := slices.BinarySearch(l.walls, t+1)
		return i > 0 && l.crash[i-1]
	}
	var lost []int64
	rows, err = tx.QueryContext(ctx, `SELECT m.id, m.sender, m.receiver, coalesce(s.wall_ns, 0)
		FROM messages AS m LEFT JOIN events AS s ON s.id = m.send_event
		WHERE m.run = ? AND m.fate = 'in_flight' AND m.receiver IS NOT NULL`, run)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, receiver, sent int64
		var sender sql.NullInt64
		if err := rows.Scan(&id, &sender, &receiver, &sent); err != nil {
			rows.Close()
			return err
		}
		if crashedSince(sql.NullInt64{Int64: receiver, Valid: true}, sent) || crashedSince(sender, sent) || downAt(receiver, sent) {
			lost = append(lost, id)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	st, err := tx.PrepareContext(ctx, `UPDATE messages SET fate = 'lost_to_crash' WHERE run = ? AND id = ?`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, id := range lost {
		if _, err := st.ExecContext(ctx, run, id); err != nil {
			return err
		}
	}
	return nil
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
		if err := s.believable(runs[i]); err != nil {
			return nil, err
		}
		if runs[i].Names, err = s.names(runs[i].ID, runs[i].Nodes); err != nil {
			return nil, err
		}
		s.watch(&runs[i])
	}
	return runs, nil
}

// trustedNodes is how many processes a run may claim whatever its events:
// more than dmx runs (1,000), few enough that what a reader makes per
// process (a lane, a clock entry) costs little.
const trustedNodes = 1024

// believable checks a run's claimed number of processes against its
// events: readers make something per process (the replay a machine, a
// diagram a lane), so a claim is what they trust it to be, up to
// trustedNodes, and beyond only as far as the events go: as many processes
// as have events. A run claiming 2,000,000,000 processes made dmx replay
// take 14.8 GB in 100 s; one claiming 65,536 with 5 real ones made dmx
// render take 58 s.
func (s *Store) believable(r Run) error {
	if r.Nodes >= 0 && r.Nodes <= trustedNodes {
		return nil
	}
	if r.Nodes < 0 {
		return fmt.Errorf("broken trace: run %d claims %d processes", r.ID, r.Nodes)
	}
	// The processes with events, counted by seeking from one to the next
	// through the (run, proc, seq) index: as many steps as there are.
	var real int64
	err := s.db.QueryRow(`WITH RECURSIVE p(x) AS (
		  SELECT min(proc) FROM events WHERE run = ?1
		  UNION ALL
		  SELECT (SELECT min(proc) FROM events WHERE run = ?1 AND proc > x) FROM p WHERE x IS NOT NULL
		)
		SELECT count(x) FROM p`, r.ID).Scan(&real)
	if err != nil {
		return s.wrap(err)
	}
	if int64(r.Nodes) > real {
		return fmt.Errorf("broken trace: run %d claims %d processes, but %d have events (more than %d are believed only as far as the events go)",
			r.ID, r.Nodes, real, trustedNodes)
	}
	return nil
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
	if err := s.believable(r); err != nil {
		return r, err
	}
	r.Names, err = s.names(id, r.Nodes)
	s.watch(&r)
	return r, err
}

// names reads the names of the processes of run, which has nodes of them.
func (s *Store) names(run int64, nodes int) ([]string, error) {
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
		if p < 0 || p >= max(nodes, 1) {
			return nil, fmt.Errorf("%s: broken trace: run %d: process number %d in procs is out of range (the run has %d processes)", s.path, run, p, nodes)
		}
		for len(names) < p {
			names = append(names, "")
		}
		names = append(names, ShortName(name))
	}
	return names, s.wrap(rows.Err())
}

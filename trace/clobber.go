package trace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// A trace is evidence: nothing dmx writes may take its place. Two helpers
// keep that promise where files are made: Overwrites, which a command asks
// before it writes a file that is not a trace (a picture, an export, a
// scenario), and staleSideFiles, which Create asks before it makes a new
// trace.

// ClobberError says that writing a file would destroy a trace.
type ClobberError struct {
	Path  string // the file that would be written
	Trace string // the trace it would destroy: Path, or the trace whose side file Path is
	Side  bool   // Path is the -wal, -shm or -journal of Trace
}

func (e *ClobberError) Error() string {
	if e.Side {
		return fmt.Sprintf("%s is the %s file of the trace %s: writing it would damage the trace; choose another name",
			e.Path, strings.TrimPrefix(e.Path, e.Trace), e.Trace)
	}
	return fmt.Sprintf("%s is a trace (an SQLite file): dmx does not write over a trace; choose another name", e.Path)
}

// sideSuffixes name the files SQLite keeps beside a database: they hold
// committed data (a -wal, a hot -journal) that belongs to that file only.
var sideSuffixes = []string{"-wal", "-shm", "-journal"}

// Overwrites returns a *ClobberError if writing the file at path (making
// it, or replacing what it holds) would destroy a trace: path is an SQLite
// file, or a side file of one. Any SQLite file counts, a trace of this
// version or not: it is somebody's data, which a picture must not replace.
// A missing file, or one dmx cannot read, destroys nothing it can tell:
// the write itself will say why it fails.
func Overwrites(path string) error {
	if isSQLite(path) {
		return &ClobberError{Path: path, Trace: path}
	}
	for _, s := range sideSuffixes {
		if base, ok := strings.CutSuffix(path, s); ok && base != "" && isSQLite(base) {
			return &ClobberError{Path: path, Trace: base, Side: true}
		}
	}
	return nil
}

// isSQLite reports whether path is a regular file that starts with
// SQLite's header (O_NONBLOCK: a FIFO must not make it wait).
func isSQLite(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	var h [len(sqliteMagic)]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false
	}
	return string(h[:]) == sqliteMagic
}

// StaleError says that a new trace would adopt a side file it did not
// make: a -wal or hot -journal left by a recorder that was killed, whose
// trace was then deleted. SQLite would read it into the new file (the
// deleted run would come back as the new trace's, or the new trace would
// look damaged), so Create refuses instead; the file is left as it is,
// since it is what remains of that recording.
type StaleError struct {
	Path  string // the trace to make
	Stale string // the side file found beside it
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("%s: %s is left beside it by an earlier recording (killed before it closed its trace, which is gone); "+
		"dmx does not adopt it, which would bring that recording's data into the new trace: move it away or delete it, or record into another file",
		e.Path, e.Stale)
}

// staleSideFiles returns a *StaleError when a trace that does not exist
// yet at path (or is an empty file) has a side file with data beside it.
// An -shm alone holds no data (it is an index of the -wal, rebuilt from
// it): it is no reason to refuse.
func staleSideFiles(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err == nil && fi.Size() == 0:
	default:
		return nil
	}
	for _, s := range []string{"-wal", "-journal"} {
		if fi, err := os.Stat(path + s); err == nil && fi.Size() > 0 {
			return &StaleError{Path: path, Stale: path + s}
		}
	}
	return nil
}

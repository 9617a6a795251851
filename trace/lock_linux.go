package trace

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// A recorder holds an open-file-description lock (F_OFD_SETLK) on one byte
// of the trace file per run it records, from BeginRun to EndRun. The byte
// is far beyond any file's end and away from the bytes SQLite locks, so
// the lock stands beside SQLite's without touching them; being an OFD
// lock, closing another descriptor of the file (SQLite does) does not
// release it, and the kernel releases it when the recorder dies, however
// it dies. A reader that finds a run still "running" and nobody holding
// its byte knows that its recorder is gone.

// runLockBase is the offset of run 0's byte.
const runLockBase = 1 << 62

func runLock(run int64, typ int16) *unix.Flock_t {
	return &unix.Flock_t{Type: typ, Whence: 0, Start: runLockBase + run, Len: 1}
}

// lockRun takes run's lock on the trace at path for as long as the
// returned file is open.
func lockRun(path string, run int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, runLock(run, unix.F_WRLCK)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// errNoLocks: the file system cannot tell whether a run's lock is held.
var errNoLocks = errors.New("file locks not supported")

// runLocked reports whether some process holds run's lock on the trace at
// path.
func runLocked(path string, run int64) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	lk := runLock(run, unix.F_RDLCK)
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, lk); err != nil {
		return false, errNoLocks
	}
	return lk.Type != unix.F_UNLCK, nil
}

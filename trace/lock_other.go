//go:build !linux

package trace

import (
	"errors"
	"os"
)

// Elsewhere than Linux there is no open-file-description lock to watch a
// recorder with (see lock_linux.go): a run being recorded and a run whose
// recorder died both read "running".

var errNoLocks = errors.New("file locks not supported")

func lockRun(path string, run int64) (*os.File, error) { return nil, errNoLocks }

func runLocked(path string, run int64) (bool, error) { return false, errNoLocks }

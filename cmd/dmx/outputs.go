package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dmxlab/dmx/trace"
)

// A command never writes over what it reads, nor over a trace it did not
// make for this run: a picture named like the trace, an export named like
// its input, a scenario named like the trace beside it would each destroy
// evidence, exit 0. Every file a command writes that is not the trace it
// records into goes through checkOutput first.

// file is a file a command reads or writes, and what it is to the command,
// for the message: "the trace (-o)", "the input".
type file struct {
	what string
	path string
}

// checkOutput returns an error naming both files when writing out would
// destroy one of others (what the command reads, or its other outputs) or
// any trace. The caller exits 2 with it.
func checkOutput(out file, others ...file) error {
	for _, o := range others {
		if o.path != "" && sameFile(out.path, o.path) {
			if filepath.Clean(out.path) == filepath.Clean(o.path) {
				return fmt.Errorf("%s %s is also %s: dmx does not write over %s; choose another name", out.what, out.path, o.what, o.what)
			}
			return fmt.Errorf("%s %s is %s %s (the same file): dmx does not write over %s; choose another name", out.what, out.path, o.what, o.path, o.what)
		}
	}
	if err := trace.Overwrites(out.path); err != nil {
		var ce *trace.ClobberError
		if errors.As(err, &ce) && !ce.Side {
			return fmt.Errorf("%s %s is a trace (an SQLite file): dmx does not write over a trace; choose another name", out.what, out.path)
		}
		return fmt.Errorf("%s %w", out.what, err)
	}
	return nil
}

// sameFile reports whether a and b name one file: the same file when both
// exist (hard links, symbolic links and ./x included), the same absolute
// path with the links of its directory resolved when one does not.
func sameFile(a, b string) bool {
	ia, ea := os.Stat(a)
	ib, eb := os.Stat(b)
	if ea == nil && eb == nil {
		return os.SameFile(ia, ib)
	}
	return resolved(a) == resolved(b)
}

// resolved is path made absolute, with the symbolic links of its directory
// resolved where they can be.
func resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	dir, base := filepath.Split(abs)
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(d, base)
	}
	return abs
}

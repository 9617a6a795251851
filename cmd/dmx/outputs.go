package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"

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

// partFiles are the files writeWhole is writing: an interrupt that ends
// dmx removes them (exitGuard).
var partFiles sync.Map

// writeWhole writes data into the file path, replacing it only once the
// whole of data is written: into a new file beside it, renamed over it.
// A write that fails (a full disk, a file-size limit) leaves the file as
// it was, not truncated: a picture or report cut short was left under the
// name, and a good one it replaced was lost (found by the adversarial
// pass of issue 22).
func writeWhole(path string, data []byte) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return os.WriteFile(path, data, 0o644) // a link to a file to make
		}
		path = real // a link's target is written, as os.WriteFile does
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return os.WriteFile(path, data, 0o644) // /dev/stdout, a FIFO: in place
	}
	dir, base := filepath.Split(path)
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.dmx-part-%016x", base, rand.Uint64()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		// Where no file can be made beside it, write it in place.
		return os.WriteFile(path, data, 0o644)
	}
	partFiles.Store(tmp, true)
	defer partFiles.Delete(tmp)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

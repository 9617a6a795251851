package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// freeName returns base+ext, or base-K+ext for the smallest K >= 2 such
// that no file base-K+e exists for any e of exts (exts[0] is the one
// returned: a trace, with the diagram or scenario dmx writes beside it).
// A default output name never adds a run to an unrelated trace: a second
// `dmx sim --scenario a.json` with the seed of the first writes
// dmx-a-1-2.db beside dmx-a-1.db.
func freeName(base string, exts ...string) string {
	taken := func(b string) bool {
		for _, e := range exts {
			if _, err := os.Lstat(b + e); !errors.Is(err, fs.ErrNotExist) {
				return true
			}
		}
		return false
	}
	if !taken(base) {
		return base + exts[0]
	}
	for k := 2; ; k++ {
		if b := base + "-" + strconv.Itoa(k); !taken(b) {
			return b + exts[0]
		}
	}
}

// defaultTraceName is the trace a run, a simulation or a search writes
// when -o is not given: dmx-WHAT-SEED.db in the current directory, WHAT
// the scenario's file name when there is one (two scenarios of one
// algorithm and seed are two traces), else the algorithm's name; free
// (see freeName).
func defaultTraceName(what, scenario string, seed uint64, exts ...string) string {
	if scenario != "" {
		what = strings.TrimSuffix(filepath.Base(scenario), filepath.Ext(scenario))
	}
	return freeName(fmt.Sprintf("dmx-%s-%d", what, seed), append([]string{".db"}, exts...)...)
}

// checkAppend refuses to add a run to an existing trace that -o names
// unless --append says so: a trace holds the runs its user put together,
// never one more by accident (dmx merge joins traces on purpose).
func checkAppend(path string, appendRun bool) error {
	if appendRun {
		return nil
	}
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		return nil // none, or not a file: opening it says what is wrong
	}
	f, err := os.Open(path)
	if err != nil {
		return nil // opening it for writing will say why
	}
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	f.Close()
	if string(head[:n]) != "SQLite format 3\x00" {
		return nil // not a trace: opening it says so, which --append would not mend
	}
	return fmt.Errorf("the trace (-o) %s exists: --append adds this run to it, or -o names a new trace", path)
}

// Package gvcache keeps go-graphviz from crashing dmx at start when its
// compilation cache belongs to another user.
//
// go-graphviz compiles its WebAssembly module when its package is
// initialized, before main runs, into a cache under os.TempDir() named
// go-graphviz, which the first user to run it creates (mode 0755); every
// other user's dmx then panics in that initialization, writing there
// ("permission denied"), whatever the command. This package is
// initialized before go-graphviz's (Go initializes packages in the order
// of their import paths among those whose imports are ready, and this
// one's sorts first and imports only what go-graphviz imports too): if
// TMPDIR is not set and that cache exists but cannot be written, it
// points TMPDIR at a directory of this user's own, which the node
// processes dmx starts inherit. dmx imports it for that effect alone.
package gvcache

import (
	"os"
	"path/filepath"
	"strconv"
)

func init() {
	if os.Getenv("TMPDIR") != "" {
		return // the user chose: theirs to keep writable
	}
	if dir := redirect(os.TempDir(), os.Getuid()); dir != "" {
		os.Setenv("TMPDIR", dir)
	}
}

// redirect returns the temporary directory to use instead of tmp, made
// for user uid, when go-graphviz's cache in tmp exists and cannot be
// written; "" when tmp will do, or when no other can be made (go-graphviz
// then goes without a cache: its own fallback when it cannot make one).
func redirect(tmp string, uid int) string {
	if writable(filepath.Join(tmp, "go-graphviz")) {
		return ""
	}
	own := filepath.Join(tmp, "dmx-"+strconv.Itoa(uid))
	if err := os.MkdirAll(own, 0o700); err != nil {
		return ""
	}
	return own
}

// writable reports whether dir is missing (go-graphviz makes it) or a
// file can be made in it.
func writable(dir string) bool {
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return true
	}
	f, err := os.CreateTemp(dir, ".dmx-probe-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

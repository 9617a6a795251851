package gvcache

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRedirect: no cache yet, or one that can be written, keeps the
// temporary directory; one that cannot (here a file in its place, since
// permissions do not stop the root user tests may run as) gets the
// user's own directory, made.
func TestRedirect(t *testing.T) {
	tmp := t.TempDir()
	if d := redirect(tmp, 1000); d != "" {
		t.Fatalf("no cache yet: redirected to %s", d)
	}
	cache := filepath.Join(tmp, "go-graphviz")
	if err := os.Mkdir(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if d := redirect(tmp, 1000); d != "" {
		t.Fatalf("a cache that can be written: redirected to %s", d)
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Fatalf("the probe was left in the cache: %v", ents)
	}
	if err := os.Remove(cache); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cache, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(tmp, "dmx-1000")
	if d := redirect(tmp, 1000); d != want {
		t.Fatalf("a cache that cannot be written: redirected to %q, want %q", d, want)
	}
	if fi, err := os.Stat(want); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the user's directory: %v %v", fi, err)
	}
}

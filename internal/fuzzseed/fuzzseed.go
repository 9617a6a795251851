// Package fuzzseed writes the seed corpus of a fuzz test into the
// package's testdata/fuzz/NAME, in the form go test -fuzz reads. The
// corpus is committed: the test that writes it runs only when asked
// (DMX_FUZZ_SEEDS=1), and checks that itself.
package fuzzseed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Writer makes testdata/fuzz/name and returns a function that writes one
// seed file there: its file name, then the Go expression of each of the
// fuzz function's arguments, in order (`string("x")`, `bool(true)`).
func Writer(t *testing.T, name string) func(file string, args ...string) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return func(file string, args ...string) {
		t.Helper()
		body := "go test fuzz v1\n" + strings.Join(args, "\n") + "\n"
		if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

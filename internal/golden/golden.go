// Package golden compares what a test made with a golden file of its
// testdata, or rewrites the file when the test binary runs with -update,
// the one flag that refreshes dmx's golden files.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// update is the test binary's -update flag, defined here unless a package
// initialized before did (runner/algo/algotest defines it too).
var update = func() flag.Value {
	if f := flag.Lookup("update"); f != nil {
		return f.Value
	}
	flag.Bool("update", false, "rewrite the golden files with this build's output")
	return flag.Lookup("update").Value
}()

// Update says whether the test binary runs with -update.
func Update() bool { return update.String() == "true" }

// Check compares got with the file at path, or under -update writes got
// there (making its folder). A difference fails t, naming the file and its
// first differing line.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the test made (go test -update rewrites it): %s", path, firstDiff(got, want))
	}
}

// firstDiff names the first line where got and want differ, quoting both.
func firstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; ; i++ {
		switch {
		case i >= len(g):
			return fmt.Sprintf("line %d: the test made no more lines, the file has %q", i+1, w[i])
		case i >= len(w):
			return fmt.Sprintf("line %d: the test made %q, the file has no more lines", i+1, g[i])
		case !bytes.Equal(g[i], w[i]):
			return fmt.Sprintf("line %d: the test made %q, the file has %q", i+1, clip(g[i]), clip(w[i]))
		}
	}
}

// clip shortens a line past 200 bytes (an SVG's lines can be long).
func clip(b []byte) []byte {
	if len(b) > 200 {
		return append(b[:200:200], "..."...)
	}
	return b
}

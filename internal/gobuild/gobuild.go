// Package gobuild builds the Go programs of this module that tests run as
// processes of their own (the example programs dmx drives by --exec), each
// once per test binary.
package gobuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var built sync.Map // package path -> binary

// Program builds the Go program in pkg (a path from the module's root,
// "examples/programs/ricart"; root is that root from the test's
// directory) into out, and returns out. It builds a package once per test
// binary: later calls return the first binary.
func Program(t testing.TB, root, pkg, out string) string {
	t.Helper()
	if p, ok := built.Load(pkg); ok {
		return p.(string)
	}
	// The go command of the toolchain that builds the test, where it is:
	// a go on $PATH may be another version.
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	cmd := exec.Command(goBin, "build", "-o", out, "./"+pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	built.Store(pkg, out)
	return out
}

// Built lists the binaries Program made, for the test binary to remove
// at its end.
func Built() []string {
	var out []string
	built.Range(func(_, v any) bool {
		out = append(out, v.(string))
		return true
	})
	return out
}

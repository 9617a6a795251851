package udp

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestNodeCommandBeside: dmx starts dmx-node when it is beside it and can
// be run, and plays the node itself (dmx node) otherwise.
func TestNodeCommandBeside(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "dmx")
	node := filepath.Join(dir, NodeBinary)
	args := func() []string { c := nodeCommandBeside(exe)(); return append([]string{c.Path}, c.Args[1:]...) }
	if got, want := args(), []string{exe, "node"}; !slices.Equal(got, want) {
		t.Errorf("no dmx-node: starts %q, want %q", got, want)
	}
	if err := os.WriteFile(node, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := args(), []string{exe, "node"}; !slices.Equal(got, want) {
		t.Errorf("a dmx-node that cannot be run: starts %q, want %q", got, want)
	}
	if err := os.Chmod(node, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := args(), []string{node}; !slices.Equal(got, want) {
		t.Errorf("dmx-node beside dmx: starts %q, want %q", got, want)
	}
}

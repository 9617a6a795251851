package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeBadInput: dmx serve refuses what it cannot serve with exit 2
// and a message, before it listens.
func TestServeBadInput(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte("not a trace"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.db")
	if code, _, errs := dmx(t, "sim", "central", "-n", "2", "--entries", "1", "--no-diagram", "-o", empty); code != 0 {
		t.Fatalf("sim: %s", errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "serve: TRACE is missing: dmx serve TRACE..."},
		{[]string{"serve", filepath.Join(dir, "nope.db")}, "no such trace file"},
		{[]string{"serve", junk}, "not a dmx trace"},
		{[]string{"serve", empty, "--addr", "127.0.0.1:99999"}, "listen on 127.0.0.1:99999"},
	} {
		code, _, errs := dmx(t, c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("dmx %s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInputsBounded: a file a user names as input is read at most so far:
// a scenario or rules file 16 MiB, a pipe or a device 64 MiB (found by the
// adversarial pass of issue 22: dmx sim --scenario /dev/zero and dmx
// import shiviz /dev/zero read until the machine ran out of memory).
func TestInputsBounded(t *testing.T) {
	dir := t.TempDir()
	r := simTrace(t, dir, "r.db")
	_, _, base := bounded(t, time.Minute, "sql", r, "SELECT 1")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--scenario", "/dev/zero", "-o", filepath.Join(dir, "a.db")}, "/dev/zero: more than the 16 MiB this input may have"},
		{[]string{"import", "shiviz", "/dev/zero", "-o", filepath.Join(dir, "b.db")}, "/dev/zero: more than the 64 MiB this input may have"},
		{[]string{"import", "govector", "/dev/urandom", "-o", filepath.Join(dir, "c.db")}, "/dev/urandom: more than the 64 MiB"},
		{[]string{"import", "shiviz", "--rules", "/dev/zero", r, "-o", filepath.Join(dir, "d.db")}, "/dev/zero: more than the 16 MiB"},
		{[]string{"sim", "--scenario", dir, "-o", filepath.Join(dir, "e.db")}, "a directory, not a file"},
	} {
		code, out, mb := bounded(t, time.Minute, c.args...)
		if code != exitUsage || !strings.Contains(out, c.want) {
			t.Errorf("dmx %v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, out)
		}
		if mb > base+400 {
			t.Errorf("dmx %v: %d MB resident (dmx alone: %d)", c.args, mb, base)
		}
	}
}

// TestSignalWhileReadingInput: dmx blocked before its command took the
// signals over (opening a FIFO as a scenario, which waits for a writer)
// ends on SIGTERM with exit 3; the catch that package early began did not
// swallow it (found by the adversarial pass of issue 22: the first version
// of the catch ignored it until the command began handling interrupts).
func TestSignalWhileReadingInput(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "scenario.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	p := start(t, "sim", "--scenario", fifo, "-o", filepath.Join(filepath.Dir(fifo), "t.db"))
	// Blocked in open(2) of the FIFO once its file descriptors name it.
	waitFor(t, 30*time.Second, "dmx waiting on the FIFO", func() bool {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "syscall"))
		return len(b) > 0 && strings.HasPrefix(string(b), "257 ") // openat
	})
	p.cmd.Process.Signal(syscall.SIGTERM)
	code, sig := p.wait(t, 30*time.Second)
	if sig != 0 || code != exitInconclusive || !strings.Contains(p.stderr.String(), "interrupted") {
		t.Fatalf("exit %d, signal %v, want 3\n%s", code, sig, p.stderr.String())
	}
}

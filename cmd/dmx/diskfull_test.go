package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// inSmallDisk runs script with sh in a mount namespace of its own, where
// $DIR is a tmpfs of size bytes ("2m"), and returns its output. $DMX is
// dmx (this test binary). Without unshare or the right to mount (not
// root), the test is skipped.
func inSmallDisk(t *testing.T, size, script string) string {
	t.Helper()
	return inMountNS(t, `mount -t tmpfs -o size=`+size+` tmpfs "$DIR"`, script)
}

// inMountNS runs script with sh in a mount namespace of its own, once
// mount (a command) has mounted something on $DIR, an empty directory,
// and returns its output. $DMX is dmx (this test binary).
func inMountNS(t *testing.T, mount, script string, env ...string) string {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("a full disk needs a tmpfs mounted in a namespace of its own: unshare, as root")
	}
	if out, err := exec.Command(unshare, "--mount", "true").CombinedOutput(); err != nil {
		t.Skipf("no mount namespace here: %v %s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	full := `set -u; ` + mount + ` || exit 99; cd "$DIR"; ` + script
	cmd := exec.Command(unshare, "--mount", "sh", "-c", full)
	cmd.Env = append(append(os.Environ(), "DMX="+os.Args[0], "DIR="+dir), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 99 {
		t.Skipf("cannot mount: %s", out)
	}
	return string(out)
}

// TestDiskFull: a recording that fills the disk fails with exit 2 and
// says so once, on one line, with what it means for the evidence: the
// trace is not whole without its -wal, the spool (under run) is kept and
// named (issue 22: one error repeated three times, the -wal unmentioned).
func TestDiskFull(t *testing.T) {
	for _, c := range []struct{ args, spool string }{
		{"sim ricart-agrawala -n 5 --entries 500 --seed 1", ""},
		{"run ricart-agrawala -n 3 --entries 2000 --seed 1 --yes", "the spool "},
	} {
		t.Run(strings.Fields(c.args)[0], func(t *testing.T) {
			out := inSmallDisk(t, "2m", `"$DMX" `+c.args+` -o t.db --no-diagram; echo "exit=$?"; "$DMX" sql t.db "SELECT status FROM runs" --format csv`)
			if !strings.Contains(out, "exit=2") {
				t.Fatalf("want exit 2:\n%s", out)
			}
			if n := strings.Count(out, "database or disk is full"); n != 2 {
				// Once as dmx's last word, once in the run's status.
				t.Errorf("the disk is full said %d times, want once and once in the status:\n%s", n, out)
			}
			for _, want := range []string{"(failed)", "NOT complete without t.db-wal", "what was recorded is in t.db, run 1", c.spool} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			status := out[strings.Index(out, "status\n")+len("status\n"):]
			if !strings.HasPrefix(status, `"failed: `) && !strings.HasPrefix(status, "failed: ") || strings.Count(strings.TrimSpace(status), "\n") > 0 {
				t.Errorf("the run's status is not one line that says it failed:\n%s", status)
			}
		})
	}
}

// TestOneLine: each thing once, the shared cause last.
func TestOneLine(t *testing.T) {
	full := "t.db: database or disk is full"
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{full, full, full}, full},
		{[]string{"record P2#6 wait(cs)\n" + full, full}, "record P2#6 wait(cs); " + full},
		{[]string{"t.db: run 1: the spool x is kept: " + full, "t.db: run 1: 9 events could not be stored: " + full}, "t.db: run 1: the spool x is kept; t.db: run 1: 9 events could not be stored: " + full},
		{[]string{"a", "", "b"}, "a; b"},
	} {
		var errs []error
		for _, s := range c.in {
			if s != "" {
				errs = append(errs, errorString(s))
			} else {
				errs = append(errs, nil)
			}
		}
		if got := oneLine(errs...); got != c.want {
			t.Errorf("oneLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

package main

import (
	"bytes"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// simTrace records a small simulated run into dir/name and returns its path.
func simTrace(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	dmxOK(t, "sim", "central", "-n", "2", "--entries", "1", "--seed", "1", "-o", path, "--no-diagram")
	return path
}

// snapshot reads the files at paths, to compare them with what they hold
// after a command that must not change them.
func snapshot(t *testing.T, paths ...string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, p := range paths {
		b := readFile(t, p)
		m[p] = b
	}
	return m
}

// TestOutputsNeverOverwriteATrace: a file a command writes that names the
// trace it reads, the trace it records into, or any other trace is
// refused (exit 2, naming both) and the trace is left byte for byte; a
// default name never collides (issue 22).
func TestOutputsNeverOverwriteATrace(t *testing.T) {
	dir := t.TempDir()
	r := simTrace(t, dir, "r.db")
	other := simTrace(t, dir, "other.svg") // a trace with a picture's name
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(r, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.json")
	if err := os.Link(r, hard); err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join(dir, "s.json")
	if err := os.WriteFile(scen, []byte(`{"algorithm": "central", "nodes": 2, "entries": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	keep := snapshot(t, r, other, scen)
	for _, c := range []struct {
		args []string
		want []string // in the message: both files
	}{
		{[]string{"export", "shiviz", r, "-o", r}, []string{"the export (-o) " + r, "input trace"}},
		{[]string{"export", "perfetto", r, "-o", link}, []string{link, r, "the same file"}},
		{[]string{"export", "shiviz", r, "-o", hard}, []string{hard, r}},
		{[]string{"export", "mermaid", r, "-o", r}, []string{r, "input trace"}},
		{[]string{"export", "shiviz", r, "-o", other}, []string{other, "is a trace"}},
		{[]string{"export", "shiviz", r, "-o", r + "-wal"}, []string{r + "-wal", "-wal file of the trace " + r}},
		{[]string{"render", r, "-o", r, "--format", "svg"}, []string{"the picture (-o) " + r, "input trace"}},
		{[]string{"render", r, "-o", other}, []string{other, "is a trace"}},
		{[]string{"sim", "central", "-n", "2", "--entries", "1", "-o", r, "--diagram", r}, []string{"the diagram (--diagram) " + r, "the trace (-o)"}},
		{[]string{"sim", "central", "-n", "2", "--entries", "1", "-o", filepath.Join(dir, "n.db"), "--diagram", other}, []string{other, "is a trace"}},
		{[]string{"sim", "--scenario", scen, "-o", filepath.Join(dir, "n.db"), "--diagram", scen}, []string{scen, "scenario read"}},
		{[]string{"sim", "--scenario", scen, "-o", scen}, []string{scen, "scenario read"}},
		{[]string{"run", "central", "-n", "2", "--entries", "1", "-o", r, "--diagram", hard}, []string{hard, r}},
		{[]string{"explore", "central", "-n", "2", "--entries", "1", "--faults", "loss", "-o", r, "--scenario-out", r}, []string{"the scenario (--scenario-out) " + r, "the trace (-o)"}},
		{[]string{"explore", "central", "-n", "2", "--entries", "1", "--faults", "loss", "-o", filepath.Join(dir, "e.db"), "--scenario-out", other}, []string{other, "is a trace"}},
		{[]string{"import", "shiviz", r, "-o", hard}, []string{hard, r}},
		// A trace named like another's -wal (found by the adversarial
		// pass: explore -o t.db-wal made one, which SQLite would read as
		// t.db's WAL and reset).
		{[]string{"explore", "central", "-n", "2", "--entries", "1", "--faults", "loss", "-o", r + "-wal", "--scenario-out", filepath.Join(dir, "w.json")}, []string{r + "-wal", "the -wal file of the trace " + r}},
		{[]string{"sim", "central", "-n", "2", "--entries", "1", "-o", r + "-journal"}, []string{r + "-journal", "the -journal file of the trace " + r}},
	} {
		t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) {
			code, _, errs := dmx(t, c.args...)
			if code != exitUsage {
				t.Errorf("dmx %v: exit %d, want 2\n%s", c.args, code, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("dmx %v: message lacks %q:\n%s", c.args, w, errs)
				}
			}
			for p, b := range keep {
				if now, err := os.ReadFile(p); err != nil || !bytes.Equal(now, b) {
					t.Fatalf("dmx %v changed %s (%v)", c.args, p, err)
				}
			}
			if _, err := os.Stat(r + "-wal"); err == nil {
				t.Fatalf("dmx %v wrote %s-wal", c.args, r)
			}
		})
	}
	// The default diagram of a trace named t.svg is not the trace.
	tsvg := filepath.Join(dir, "t.svg")
	code, out, errs := dmx(t, "sim", "central", "-n", "2", "--entries", "1", "-o", tsvg)
	if code != 0 {
		t.Fatalf("sim -o t.svg: exit %d\n%s", code, errs)
	}
	if _, err := trace.Open(tsvg); err != nil {
		t.Fatalf("t.svg is no longer a trace: %v", err)
	}
	if want := "diagram: " + filepath.Join(dir, "t-diagram.svg"); !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	// A default diagram that names another trace is not drawn, and the run says so.
	sub := t.TempDir()
	simTrace(t, sub, "x.svg")
	code, out, errs = dmx(t, "sim", "central", "-n", "2", "--entries", "1", "-o", filepath.Join(sub, "x.db"))
	if code != 0 || !strings.Contains(out, "diagram: none: the diagram "+filepath.Join(sub, "x.svg")+" is a trace") {
		t.Errorf("sim beside a trace x.svg: exit %d\n%s%s", code, out, errs)
	}
	if _, err := trace.Open(filepath.Join(sub, "x.svg")); err != nil {
		t.Fatalf("x.svg is no longer a trace: %v", err)
	}
	// govector writes a file per process into a directory: not over a trace there.
	gdir := t.TempDir()
	simTrace(t, gdir, "P0-Log.txt")
	code, _, errs = dmx(t, "export", "govector", r, "-o", gdir)
	if code != exitUsage || !strings.Contains(errs, "P0-Log.txt is a trace") {
		t.Errorf("govector over a trace: exit %d\n%s", code, errs)
	}
}

// TestStaleSideFilesNotAdopted: a -wal (or hot -journal) left beside a
// trace that is gone, as a killed recorder leaves it once its trace is
// deleted, is not read into the next trace made there: the recording is
// refused, naming the file, which is left as it is (issue 22: the deleted
// run came back as run 1 of the new trace).
func TestStaleSideFilesNotAdopted(t *testing.T) {
	dir := t.TempDir()
	// A recorder that stops without closing its trace: its -wal holds the run.
	old := filepath.Join(dir, "old.db")
	st, err := trace.Create(old)
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.BeginRun(trace.Run{Algorithm: "central", Nodes: 2, Mode: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter(id)
	if err := w.Add(&trace.Event{Proc: 0, Seq: 1, Kind: trace.KindInternal, VC: trace.VC{1, 0}, Lamport: 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wal, err := os.ReadFile(old + "-wal")
	if err != nil || len(wal) == 0 {
		t.Fatalf("no -wal beside a trace being recorded (%v)", err)
	}
	defer st.Close()
	for _, side := range []string{"-wal", "-journal"} {
		t.Run(side, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			if err := os.WriteFile(path+side, wal, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"sim", "central", "-n", "2", "--entries", "1", "-o", path},
				{"run", "central", "-n", "2", "--entries", "1", "-o", path},
				{"explore", "central", "-n", "2", "--entries", "1", "--faults", "loss", "-o", path},
			} {
				code, _, errs := dmx(t, args...)
				if code != exitUsage || !strings.Contains(errs, path+side+" is left beside it") {
					t.Errorf("dmx %s: exit %d, want 2 naming %s%s:\n%s", args[0], code, path, side, errs)
				}
				if _, err := os.Stat(path); err == nil {
					t.Errorf("dmx %s made %s", args[0], path)
				}
				if b, err := os.ReadFile(path + side); err != nil || !bytes.Equal(b, wal) {
					t.Errorf("dmx %s changed %s%s (%v)", args[0], path, side, err)
				}
			}
		})
	}
	// An -shm alone holds nothing: it is no reason to refuse.
	path := filepath.Join(t.TempDir(), "t.db")
	if err := os.WriteFile(path+"-shm", make([]byte, 32768), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := dmx(t, "sim", "central", "-n", "2", "--entries", "1", "-o", path, "--no-diagram"); code != 0 {
		t.Fatalf("sim beside an -shm alone: exit %d\n%s", code, errs)
	}
}

// TestReadOnlyOutputDirectory: a trace asked for in a directory that
// cannot be written says so, not "no such file or directory". As root,
// which permissions do not stop, the directory is a read-only tmpfs in a
// mount namespace of the command's own.
func TestReadOnlyOutputDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"sim", "central", "-n", "2", "--entries", "1", "-o", filepath.Join(dir, "t.db")}
	var cmd *exec.Cmd
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o755)
		cmd = exec.Command(os.Args[0], args...)
	} else {
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			t.Skip("root without unshare: no read-only directory to make")
		}
		script := `mount -t tmpfs -o ro tmpfs "$1" && shift && exec "$@"`
		cmd = exec.Command(unshare, append([]string{"--mount", "sh", "-c", script, "sh", dir, os.Args[0]}, args...)...)
		if out, err := exec.Command(unshare, "--mount", "true").CombinedOutput(); err != nil {
			t.Skipf("no mount namespace here: %v %s", err, out)
		}
	}
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitUsage {
		t.Fatalf("exit %v, want 2:\n%s", err, out)
	}
	want := "cannot make the trace in directory " + dir + ": "
	if !strings.Contains(string(out), want) || strings.Contains(string(out), "no such file") {
		t.Errorf("message lacks %q (or says no such file):\n%s", want, out)
	}
	if !strings.Contains(string(out), "read-only file system") && !strings.Contains(string(out), "permission denied") {
		t.Errorf("message does not say why:\n%s", out)
	}
}

// walTrace records a small run into dir/name and leaves the file in WAL
// mode with nothing beside it, as a trace copied without its -wal is.
func walTrace(t *testing.T, dir, name string) string {
	t.Helper()
	path := simTrace(t, dir, name)
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode=wal").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode: %q %v", mode, err)
	}
	db.Close()
	if side := sideFiles(t, path); len(side) > 0 {
		t.Fatalf("files beside the WAL-mode trace: %v", side)
	}
	return path
}

// TestWALAtRest: a trace left in WAL mode is read without making -wal
// and -shm files beside it, and on read-only media too (issue 22: readers
// made them and left them; on read-only media "unable to open database
// file"). A trace whose -wal holds part of it cannot be read there, and
// the error says why and what to do.
func TestWALAtRest(t *testing.T) {
	dir := t.TempDir()
	path := walTrace(t, dir, "wal.db")
	for _, args := range [][]string{
		{"check", path}, {"stats", path}, {"sql", path, "SELECT count(*) FROM events"},
		{"render", path, "-o", filepath.Join(dir, "x.svg")}, {"export", "shiviz", path}, {"replay", path},
	} {
		if code, _, errs := dmx(t, args...); code != 0 {
			t.Errorf("dmx %v: exit %d\n%s", args, code, errs)
		}
		if side := sideFiles(t, path); len(side) > 0 {
			t.Fatalf("dmx %s left %v beside the trace", args[0], side)
		}
	}

	// Read-only media: a bind mount of the directory, read-only.
	src := t.TempDir()
	walTrace(t, src, "wal.db")
	// A trace whose recorder did not close it: its -wal holds a run.
	st, err := trace.Create(filepath.Join(src, "open.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.BeginRun(trace.Run{Algorithm: "central", Nodes: 2, Mode: "sim"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"", "-wal"} {
		b := readFile(t, filepath.Join(src, "open.db")+s)
		if err := os.WriteFile(filepath.Join(src, "copied.db")+s, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	out := inMountNS(t, `mount --bind -o ro "$SRC" "$DIR"`,
		`"$DMX" check wal.db >/dev/null; echo "wal=$?"; "$DMX" check copied.db; echo "copied=$?"; ls`, "SRC="+src)
	for _, want := range []string{"wal=0", "copied=2", "part of the trace is in copied.db-wal", "copy both files to a directory that can be written"} {
		if !strings.Contains(out, want) {
			t.Errorf("on read-only media: output lacks %q:\n%s", want, out)
		}
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmxlab/dmx/trace"
)

// These tests run dmx as a process of its own (the test binary, see
// TestMain) and signal it, as a terminal or a supervisor would.

// proc is a dmx process started by a test.
type proc struct {
	cmd    *exec.Cmd
	stdout syncBuffer // progress_test.go
	stderr syncBuffer
	done   chan struct{}
	err    error // Wait's, once done is closed
}

// start starts dmx with args; the process is killed when the test ends.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	return startEnv(t, nil, args...)
}

// startEnv is start with env added to the test's environment.
func startEnv(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(os.Args[0], args...), done: make(chan struct{})}
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits at most d for the process to end and returns its exit code,
// or -1 and the signal if a signal ended it.
func (p *proc) wait(t *testing.T, d time.Duration) (int, syscall.Signal) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("dmx still running after %v\nstderr:\n%s", d, p.stderr.String())
	}
	ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return -1, ws.Signal()
	}
	return ws.ExitStatus(), 0
}

// waitFor waits at most d for cond, polling.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recordingInto waits until p's run has recorded events into path.
func recordingInto(t *testing.T, p *proc, path string) {
	t.Helper()
	waitFor(t, 30*time.Second, "events recorded", func() bool {
		select {
		case <-p.done:
			t.Fatalf("dmx ended before the test signalled it\nstderr:\n%s", p.stderr.String())
		default:
		}
		st, err := trace.OpenWith(path, trace.OpenOptions{NoIntegrityCheck: true})
		if err != nil {
			return false
		}
		defer st.Close()
		rows, err := st.Query(context.Background(), "SELECT count(*) FROM events")
		if err != nil {
			return false
		}
		defer rows.Close()
		r, err := rows.Next()
		return err == nil && r[0].(int64) > 50
	})
}

// sideFiles lists the files beside the trace at path that are made of its
// name: what SQLite leaves of an unfinished transaction or WAL (-journal,
// -wal, -shm), and the trace being made (.NAME.dmx-new-*). (The run's
// diagram, NAME without .db plus .svg, is no part of the trace.)
func sideFiles(t *testing.T, path string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.Name() != filepath.Base(path) && strings.Contains(e.Name(), filepath.Base(path)) {
			out = append(out, e.Name())
		}
	}
	return out
}

// runRow reads the one run of the trace at path: its status and whether
// it is complete, as readers see it.
func runRow(t *testing.T, path string) trace.Run {
	t.Helper()
	st, run := openOneRun(t, path)
	st.Close()
	return run
}

// openOneRun opens the trace at path, which must hold one run, and returns
// it with that run. The caller closes the store.
func openOneRun(t *testing.T, path string) (*trace.Store, trace.Run) {
	t.Helper()
	st, err := trace.Open(path)
	if err != nil {
		t.Fatalf("open the trace: %v", err)
	}
	runs, err := st.Runs()
	if err != nil || len(runs) != 1 {
		st.Close()
		t.Fatalf("%s: runs %v, %v", path, runs, err)
	}
	return st, runs[0]
}

// interruptedTrace checks that the trace at path is whole, nothing left
// beside it, and holds one run marked interrupted.
func interruptedTrace(t *testing.T, path string) {
	t.Helper()
	if side := sideFiles(t, path); len(side) > 0 {
		t.Errorf("files left beside the trace: %v", side)
	}
	// The status may go on with what the transport did ("interrupted; 2
	// datagrams retransmitted" on a loaded machine).
	if r := runRow(t, path); r.Complete || !strings.HasPrefix(r.Status, "interrupted") {
		t.Errorf("run: complete %v, status %q; want an interrupted run", r.Complete, r.Status)
	}
}

// TestSignalFromTheFirstMoment: Ctrl-C, SIGTERM or SIGHUP at any moment of
// dmx run's start leaves either no trace at all or a whole one, never a
// file with a hot journal or a WAL beside it that readers cannot open,
// and dmx is never killed by the signal once it has made a file.
func TestSignalFromTheFirstMoment(t *testing.T) {
	for _, c := range []struct {
		sig   syscall.Signal
		after time.Duration
	}{
		{syscall.SIGINT, 2 * time.Millisecond}, {syscall.SIGINT, 10 * time.Millisecond},
		{syscall.SIGINT, 25 * time.Millisecond}, {syscall.SIGINT, 50 * time.Millisecond},
		{syscall.SIGINT, 80 * time.Millisecond}, {syscall.SIGINT, 150 * time.Millisecond},
		{syscall.SIGTERM, 20 * time.Millisecond}, {syscall.SIGTERM, 60 * time.Millisecond},
		{syscall.SIGHUP, 20 * time.Millisecond}, {syscall.SIGHUP, 60 * time.Millisecond},
	} {
		t.Run(fmt.Sprintf("%v@%v", c.sig, c.after), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			p := start(t, "run", "central", "-n", "3", "--entries", "50", "--seed", "1", "-o", path)
			time.Sleep(c.after)
			p.cmd.Process.Signal(c.sig)
			code, sig := p.wait(t, 30*time.Second)
			_, statErr := os.Stat(path)
			if sig != 0 {
				// Killed before Go's signal handling was set up: it must
				// have made no file yet.
				if statErr == nil || len(sideFiles(t, path)) > 0 {
					t.Fatalf("killed by %v, leaving %v beside a trace", sig, sideFiles(t, path))
				}
				return
			}
			if side := sideFiles(t, path); len(side) > 0 {
				t.Errorf("files left beside the trace: %v\nstderr:\n%s", side, p.stderr.String())
			}
			if statErr != nil {
				if code != exitInconclusive {
					t.Errorf("no trace, exit %d; want 3 (interrupted)\nstderr:\n%s", code, p.stderr.String())
				}
				return
			}
			if code != exitOK && code != exitInconclusive {
				t.Errorf("exit %d, want 0 or 3\nstderr:\n%s", code, p.stderr.String())
			}
			if code, out, errs := dmx(t, "check", path); code != exitOK && code != exitInconclusive {
				t.Errorf("check of what was left: exit %d\n%s%s", code, out, errs)
			}
		})
	}
}

// TestHangupIsInterrupt: closing the terminal (SIGHUP) ends a run as
// Ctrl-C does: a valid trace, marked interrupted, nothing beside it.
func TestHangupIsInterrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	p := start(t, "run", "central", "-n", "3", "--entries", "100000", "--duration", "2m", "--seed", "1", "--yes", "-o", path)
	recordingInto(t, p, path)
	p.cmd.Process.Signal(syscall.SIGHUP)
	// The trace is checked, as after Ctrl-C: the verdict is the exit code
	// (3 if a request was pending when the run stopped).
	if code, sig := p.wait(t, 30*time.Second); code != exitOK && code != exitInconclusive {
		t.Fatalf("exit %d (signal %v), want 0 or 3\nstderr:\n%s", code, sig, p.stderr.String())
	}
	interruptedTrace(t, path)
}

// TestSecondInterrupt: a second Ctrl-C stops at once, without checking
// the trace, and leaves it valid and marked interrupted.
func TestSecondInterrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	p := start(t, "sim", "ricart-agrawala", "-n", "150", "--entries", "100000", "--seed", "1", "--yes", "-o", path)
	recordingInto(t, p, path)
	time.Sleep(2 * time.Second)
	p.cmd.Process.Signal(syscall.SIGINT)
	// Two signals sent before the process takes the first are one signal:
	// the second goes when dmx says it got the first.
	waitFor(t, 30*time.Second, "word of the first interrupt", func() bool {
		return strings.Contains(p.stderr.String(), "interrupt again")
	})
	p.cmd.Process.Signal(syscall.SIGINT)
	second := time.Now()
	code, sig := p.wait(t, 60*time.Second)
	took := time.Since(second)
	t.Logf("stopped %v after the second Ctrl-C", took)
	if code != exitInconclusive {
		t.Fatalf("exit %d (signal %v), want 3\nstderr:\n%s", code, sig, p.stderr.String())
	}
	if strings.Contains(p.stdout.String(), "verdict") || !strings.Contains(p.stderr.String(), "not checked") {
		t.Errorf("the trace was checked after a second Ctrl-C, or dmx did not say it was not:\nstdout:\n%s\nstderr:\n%s", p.stdout.String(), p.stderr.String())
	}
	if took > 30*time.Second { // a hang, not a slow machine: it stops in well under a second
		t.Errorf("a second Ctrl-C took %v to stop dmx", took)
	}
	interruptedTrace(t, path)
}

// TestRecorderKilled: readers tell a run whose recorder was SIGKILLed
// (it can never end) from one still being recorded, and report it as
// incomplete: dmx check says why.
func TestRecorderKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	p := start(t, "run", "central", "-n", "3", "--entries", "100000", "--duration", "2m", "--seed", "1", "--yes", "-o", path)
	recordingInto(t, p, path)
	live := runRow(t, path)
	if live.Status != "running" {
		t.Errorf("a run being recorded: status %q, want running", live.Status)
	}
	p.cmd.Process.Kill()
	p.wait(t, 10*time.Second)
	dead := runRow(t, path)
	if dead.Complete || !strings.Contains(dead.Status, "recorder") || dead.Status == live.Status {
		t.Errorf("a run whose recorder was killed: complete %v, status %q; want it said incomplete, its recorder gone", dead.Complete, dead.Status)
	}
	// The events it had taken are in its spool beside the trace, those
	// in the trace and those its converter had not reached.
	spools, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".t.db.dmx-spool-1-*"))
	if len(spools) != 1 {
		t.Fatalf("spool files beside the trace: %v, want one", spools)
	}
	spooled := 0
	if err := trace.ReadSpool(spools[0], func(*trace.Event) error { spooled++; return nil }); err != nil && !strings.Contains(err.Error(), "cut short") {
		t.Error(err)
	}
	st, err := trace.OpenWith(path, trace.OpenOptions{NoIntegrityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Query(context.Background(), "SELECT count(*) FROM events")
	if err != nil {
		t.Fatal(err)
	}
	r, err := rows.Next()
	rows.Close()
	if err != nil {
		t.Fatal(err)
	}
	if stored := r[0].(int64); int64(spooled) < stored || spooled == 0 {
		t.Errorf("the spool holds %d events, the trace %d: want every stored event spooled", spooled, stored)
	}
	// The verdict is unknown (exit 3) if the run was cut in the middle of
	// something a check needs the rest of (a pending request), ok otherwise.
	code, out, errs := dmx(t, "check", path)
	if (code != exitOK && code != exitInconclusive) || !strings.Contains(out, "incomplete: abandoned") || !strings.Contains(out, "recorder") {
		t.Errorf("check: exit %d, want 0 or 3 and the run said incomplete, its recorder gone\n%s%s", code, out, errs)
	}
}

// TestReaderOpenAtEnd: a reader that has the trace open when dmx run ends
// does not leave a .db that is incomplete without its -wal: either the
// .db holds the whole run by itself, or dmx says loudly that it does not
// and exits non-zero.
func TestReaderOpenAtEnd(t *testing.T) {
	for _, busy := range []bool{false, true} {
		t.Run(fmt.Sprintf("reading=%v", busy), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			p := start(t, "run", "central", "-n", "3", "--entries", "40", "--seed", "1", "-o", path)
			recordingInto(t, p, path)
			st, err := trace.OpenWith(path, trace.OpenOptions{NoIntegrityCheck: true})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if busy {
				// A query in progress (dmx sql piped into a pager): its
				// snapshot keeps the WAL from being checkpointed.
				rows, err := st.Query(context.Background(), "SELECT * FROM events")
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				if _, err := rows.Next(); err != nil {
					t.Fatal(err)
				}
			}
			code, _ := p.wait(t, 60*time.Second)
			errs := p.stderr.String()
			copyDir := t.TempDir()
			copyFile(t, path, filepath.Join(copyDir, "t.db"))
			whole := false
			if c, err := trace.Open(filepath.Join(copyDir, "t.db")); err == nil {
				runs, err := c.Runs()
				whole = err == nil && len(runs) == 1 && runs[0].Complete
				c.Close()
			}
			switch {
			case whole && code == exitOK:
				t.Logf("dmx said: %s", errs)
			case !whole && code != exitOK && strings.Contains(errs, "-wal"):
				t.Logf("dmx said: %s", errs)
			default:
				t.Errorf("exit %d; the .db alone holds the run: %v\nstderr:\n%s", code, whole, errs)
			}
			if busy && whole {
				t.Logf("the .db was completed despite the reader")
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
}

// TestSignalDuringStart: a SIGTERM, SIGHUP or Ctrl-C that comes while
// dmx's packages are still being initialized (go-graphviz compiles its
// WebAssembly module then: 50 ms idle, 418 ms measured under load) is an
// interruption, exit 3, not death by the signal (issue 22: 143 and 129).
// The signal goes 20 ms after Go's runtime is up (a second thread, sysmon,
// exists), well inside that compilation.
func TestSignalDuringStart(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
		for _, what := range [][]string{
			{"sim", "central", "-n", "2", "--entries", "100000", "--yes", "--no-diagram"},
			{"check"},
		} {
			t.Run(fmt.Sprintf("%v/%s", sig, what[0]), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "t.db")
				args := what
				switch what[0] {
				case "check":
					// Big enough that the check is not over before the signal.
					dmxOK(t, "sim", "central", "-n", "3", "--entries", "300", "--seed", "1", "-o", path, "--no-diagram", "--no-check")
					args = append(what, path)
				case "sim":
					args = append(what, "-o", path)
				}
				// The promise holds from package early's initialization on
				// (before it, Go's runtime gives a signal its default
				// action): Go's init trace says when that is done, and
				// the signal then comes while the packages after it (go-
				// graphviz's compilation among them) initialize. A fixed
				// sleep instead lost the race on a loaded machine.
				p := startEnv(t, []string{"GODEBUG=inittrace=1"}, args...)
				waitFor(t, 30*time.Second, "init of package early in dmx's init trace", func() bool {
					return strings.Contains(p.stderr.String(), "init github.com/dmxlab/dmx/cmd/dmx/early ")
				})
				p.cmd.Process.Signal(sig)
				code, got := p.wait(t, 30*time.Second)
				if got != 0 {
					t.Fatalf("killed by %v", got)
				}
				if code != exitInconclusive && code != exitOK {
					t.Errorf("exit %d, want 3 (or 0 if it was done)\nstderr:\n%s", code, p.stderr.String())
				}
				if code == exitInconclusive && !strings.Contains(p.stderr.String(), "interrupted") {
					t.Errorf("exit 3 does not say interrupted:\n%s", p.stderr.String())
				}
				if what[0] == "sim" && len(sideFiles(t, path)) > 0 {
					t.Errorf("files left beside the trace: %v", sideFiles(t, path))
				}
			})
		}
	}
}

// TestEarlyBeforeGraphviz: package early starts catching the signals
// before go-graphviz's initialization, whatever else dmx comes to import
// (the order is Go's, by import path among the packages ready).
func TestEarlyBeforeGraphviz(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var order []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "init" {
			order = append(order, f[1])
		}
	}
	early, gv := slices.Index(order, "github.com/dmxlab/dmx/cmd/dmx/early"), -1
	for i, p := range order {
		if strings.HasPrefix(p, "github.com/goccy/go-graphviz") {
			gv = i
			break
		}
	}
	if early < 0 {
		t.Fatalf("package early not initialized:\n%s", out)
	}
	if gv >= 0 && gv < early {
		t.Errorf("go-graphviz (%s) initialized before package early", order[gv])
	}
	t.Logf("early is package %d of %d initialized; go-graphviz's first %d", early+1, len(order), gv+1)
}

// TestInterruptLeavesNothingHalfMade: an interrupt that comes while dmx
// merge, dmx import or dmx export writes leaves the output whole or
// absent, never a trace with its -wal and part of the runs, the file the
// schema is made in, or a truncated export (an interrupted merge left all
// three kinds of file: found by the adversarial pass of issue 22). The
// signal comes as soon as the output appears; if the command was quicker,
// the output must be whole all the same.
func TestInterruptLeavesNothingHalfMade(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.db")
	dmxOK(t, "sim", "ricart-agrawala", "-n", "5", "--entries", "300", "--seed", "3", "-o", a, "--no-diagram", "--no-check")
	b := filepath.Join(dir, "b.db")
	copyFile(t, a, b)
	log := filepath.Join(dir, "a.log")
	dmxOK(t, "export", "shiviz", a, "-o", log)
	// appears reports whether a file whose name starts with name is in dir
	// (the output, its -wal, or the file a trace is made in).
	appears := func(name string) func() bool {
		return func() bool {
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.Contains(e.Name(), name) {
					return true
				}
			}
			return false
		}
	}
	interrupt := func(t *testing.T, p *proc, when func() bool) (int, string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !when() && time.Now().Before(deadline) {
			select {
			case <-p.done:
				return p.cmd.ProcessState.ExitCode(), p.stderr.String()
			default:
			}
			time.Sleep(time.Millisecond)
		}
		p.cmd.Process.Signal(syscall.SIGINT)
		code, sig := p.wait(t, 60*time.Second)
		if sig != 0 {
			t.Fatalf("killed by %v\nstderr:\n%s", sig, p.stderr.String())
		}
		return code, p.stderr.String()
	}
	for _, when := range []string{"schema", "output"} {
		t.Run("merge/"+when, func(t *testing.T) {
			out := filepath.Join(dir, "m-"+when+".db")
			name := ".m-" + when + ".db.dmx-new"
			if when == "output" {
				name = "m-" + when + ".db"
			}
			code, errs := interrupt(t, start(t, "merge", a, b, "-o", out), appears(name))
			switch code {
			case exitInconclusive:
				if appears("m-" + when)() {
					t.Errorf("an interrupted merge left files: %v\n%s", sideFiles(t, out), errs)
				}
			case exitOK:
				if side := sideFiles(t, out); len(side) > 0 {
					t.Errorf("files left beside the merged trace: %v", side)
				}
				if c, _, errs := dmx(t, "check", out, "--integrity-check"); c != exitOK {
					t.Errorf("the merged trace: exit %d: %s", c, errs)
				}
			default:
				t.Fatalf("merge: exit %d:\n%s", code, errs)
			}
		})
	}
	t.Run("import", func(t *testing.T) {
		out := filepath.Join(dir, "i.db")
		copyFile(t, a, out) // an import adds runs to a trace that holds some
		code, errs := interrupt(t, start(t, "import", "shiviz", log, "-o", out), appears("i.db-wal"))
		if code != exitInconclusive && code != exitOK {
			t.Fatalf("import: exit %d:\n%s", code, errs)
		}
		if code == exitInconclusive && !strings.Contains(errs, "finished; stopped as interrupted") {
			t.Errorf("an interrupted import does not say it finished writing:\n%s", errs)
		}
		if side := sideFiles(t, out); len(side) > 0 {
			t.Errorf("files left beside the trace: %v\n%s", side, errs)
		}
		if c, stdout, errs := dmx(t, "sql", out, "SELECT count(*) AS n FROM runs WHERE complete = 1", "--format", "csv"); c != 0 || stdout != "n\n2\n" {
			t.Errorf("runs after the import: exit %d, %q %s", c, stdout, errs)
		}
	})
	t.Run("export", func(t *testing.T) {
		out := filepath.Join(dir, "e.json")
		code, errs := interrupt(t, start(t, "export", "perfetto", a, "-o", out), appears("e.json"))
		switch code {
		case exitInconclusive:
			if appears("e.json")() {
				t.Errorf("an interrupted export left its file\n%s", errs)
			}
		case exitOK:
			if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
				t.Errorf("export: %v", err)
			}
		default:
			t.Fatalf("export: exit %d:\n%s", code, errs)
		}
	})
}

// TestRemoveNewTrace: what an interrupted merge removes, a second
// interrupt included, which ends it while the schema is being made
// (found by the adversarial pass of issue 22: it left
// .NAME.dmx-new-*): the trace, its side files, the file its schema is
// made in and that file's journal; nothing else.
func TestRemoveNewTrace(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.db")
	made := []string{"m.db", "m.db-wal", "m.db-shm", "m.db-journal", ".m.db.dmx-new-0123456789abcdef", ".m.db.dmx-new-0123456789abcdef-journal"}
	kept := []string{"m.db.svg", ".n.db.dmx-new-0123456789abcdef", "other.db"}
	for _, f := range append(append([]string(nil), made...), kept...) {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removeNewTrace(out)
	ents, _ := os.ReadDir(dir)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if strings.Join(left, " ") != ".n.db.dmx-new-0123456789abcdef m.db.svg other.db" {
		t.Errorf("left: %v, want only %v", left, kept)
	}
}

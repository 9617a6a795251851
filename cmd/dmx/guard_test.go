package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
	if code, _, errs := dmx(t, "sim", "ricart-agrawala", "-n", "5", "--entries", "300", "--seed", "3", "-o", a, "--no-diagram", "--no-check"); code != 0 {
		t.Fatalf("sim: exit %d: %s", code, errs)
	}
	b := filepath.Join(dir, "b.db")
	copyFile(t, a, b)
	log := filepath.Join(dir, "a.log")
	if code, _, errs := dmx(t, "export", "shiviz", a, "-o", log); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
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

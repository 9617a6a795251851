package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// limited runs dmx with args under a file-size limit of kb KiB (writes
// past it fail with EFBIG, "file too large", as on a full disk), in dir,
// and returns its exit code and stderr.
func limited(t *testing.T, dir string, kb int, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "DMX_TEST_FSIZE_KB="+strconv.Itoa(kb)) // see TestMain
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return cmd.ProcessState.ExitCode(), errb.String()
}

// TestWriteFailureLeavesNoHalfFile: a write that fails (a full disk, a
// file-size limit) leaves what the output was before, never a file cut
// short under its name: a picture or a report is written beside its name
// and renamed over it once whole, an export is removed (a Parquet one's
// files too), a trace an import
// made is removed, and a run an import could not write whole into a trace
// that held runs before is marked failed (it read "imported", with none
// of its events). Each was found by the adversarial pass of issue 22.
func TestWriteFailureLeavesNoHalfFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.db")
	dmxOK(t, "sim", "ricart-agrawala", "-n", "5", "--entries", "30", "--seed", "2", "-o", big, "--no-diagram", "--no-check")
	small := simTrace(t, dir, "small.db")
	log := filepath.Join(dir, "big.log")
	dmxOK(t, "export", "shiviz", big, "-o", log)
	// The outputs as they were: a good picture and report of the small run.
	pic, rep := filepath.Join(dir, "run.svg"), filepath.Join(dir, "rep")
	for _, args := range [][]string{{"render", small, "-o", pic}, {"report", small, "-o", rep}} {
		if code, _, errs := dmx(t, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", args[0], code, errs)
		}
	}
	before := snapshot(t, pic, filepath.Join(rep, "report.html"))
	for _, c := range []struct {
		args []string
		kb   int
	}{
		{[]string{"render", big, "-o", pic}, 16},
		{[]string{"report", big, "-o", rep}, 16},
		{[]string{"export", "perfetto", big, "-o", filepath.Join(dir, "big.json")}, 16},
		{[]string{"export", "parquet", big, "-o", filepath.Join(dir, "pq")}, 16},
		{[]string{"import", "shiviz", log, "-o", filepath.Join(dir, "new.db")}, 64},
	} {
		code, errs := limited(t, dir, c.kb, c.args...)
		if code != exitUsage || !strings.Contains(errs, "file too large") {
			t.Errorf("dmx %s under %d KiB: exit %d, want 2 and the reason:\n%s", strings.Join(c.args[:2], " "), c.kb, code, errs)
		}
	}
	for f, b := range before {
		if now, err := os.ReadFile(f); err != nil || !bytes.Equal(now, b) {
			t.Errorf("%s changed by a write that failed (%v)", filepath.Base(f), err)
		}
	}
	for _, gone := range []string{"big.json", "new.db", "new.db-wal", "new.db-journal"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); err == nil {
			t.Errorf("%s left by a write that failed", gone)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "pq")); len(ents) > 0 {
		t.Errorf("a Parquet export that failed left %d entries in its directory", len(ents))
	}
	for _, d := range []string{dir, rep} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if strings.Contains(e.Name(), ".dmx-") {
				t.Errorf("%s left in %s", e.Name(), d)
			}
		}
	}

	// Into a trace that holds a run: that run stays, the one that could
	// not be written is marked failed.
	into := filepath.Join(dir, "into.db")
	copyFile(t, small, into)
	fi, err := os.Stat(into)
	if err != nil {
		t.Fatal(err)
	}
	code, errs := limited(t, dir, int(fi.Size()/1024)+24, "import", "shiviz", log, "-o", into)
	if code != exitUsage || !strings.Contains(errs, "run 2 of "+into+" is marked failed") {
		t.Fatalf("import into a trace: exit %d:\n%s", code, errs)
	}
	c, out, errs := dmx(t, "sql", into, "SELECT id, complete, substr(status, 1, 7) AS s FROM runs", "--format", "csv")
	if c != 0 || out != "id,complete,s\n1,1,every w\n2,0,failed:\n" {
		t.Errorf("runs after a failed import: exit %d\n%s%s", c, out, errs)
	}
}

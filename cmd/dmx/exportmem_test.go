package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dmxlab/dmx/trace"
)

// manyProcsTrace writes a run of n processes, each with one send that is
// never received and no recorded clocks, into dir/name.
func manyProcsTrace(t *testing.T, dir, name string, n int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	evs := make([]trace.Event, n)
	for p := range evs {
		evs[p] = trace.Event{Proc: p, Seq: 1, Kind: trace.KindSend, Msg: trace.MsgID(p, 1), MsgType: "m", Peer: (p + 1) % n, Lamport: 1, Wall: int64(p)}
	}
	if _, err := trace.WriteRun(path, trace.Run{Algorithm: "many", Nodes: n, Mode: "import", NoSeed: true, Ended: int64(n), Complete: true, Status: "done"}, evs); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExportManyProcesses: exports keep each event's clock as its non-zero
// entries, so that memory and files grow with the events, not with the
// processes squared (issue 22: 16,384 processes with a message each made
// dmx export perfetto take 4.4 GB and write 544 MB, shiviz 2.2 GB; 32,768,
// 8.5 GB). Each export is a process of its own whose peak memory is
// measured above what dmx takes to start.
func TestExportManyProcesses(t *testing.T) {
	dir := t.TempDir()
	path := manyProcsTrace(t, dir, "many.db", 16384)
	_, _, base := bounded(t, time.Minute, "sql", path, "SELECT 1")
	for _, f := range []string{"perfetto", "shiviz", "govector"} {
		out := filepath.Join(dir, "out."+f)
		code, msg, mb := bounded(t, 2*time.Minute, "export", f, path, "-o", out)
		if code != 0 {
			t.Fatalf("export %s: exit %d\n%s", f, code, msg)
		}
		if mb > base+200 {
			t.Errorf("export %s of 16,384 processes: %d MB resident (dmx alone: %d MB)", f, mb, base)
		}
		if fi, err := os.Stat(out); err != nil || !fi.IsDir() && fi.Size() > 32<<20 {
			t.Errorf("export %s: a file of %d MB (%v)", f, fi.Size()>>20, err)
		}
		t.Logf("export %s: %d MB resident (dmx alone: %d MB)", f, mb, base)
	}
}

package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// spoolEvents is a run of n processes, k rounds each, with clocks, a detail
// that is JSON and one that is not, enough events for several spool buffers
// and several of the Writer's batches.
func spoolEvents(n, k int) []Event {
	var evs []Event
	for p := range n {
		for i, e := range chatter(p, n, k) {
			switch i % 7 {
			case 1:
				e = withDetail(e, `{"why":"a detail","n":[1,2,3]}`)
			case 4:
				e = withDetail(e, "not json\nat all")
			}
			evs = append(evs, e)
		}
	}
	return evs
}

// spoolFiles lists the spool files in dir.
func spoolFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".dmx-spool-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// spooling makes the trace path and begins a run of n processes in it,
// recorded through a Spool; the Store closes with the test.
func spooling(t *testing.T, path string, n int) (*Store, int64, *Spool) {
	t.Helper()
	s, id := begin(t, path, Run{Algorithm: "central", Nodes: n, Mode: "udp"})
	t.Cleanup(func() { s.Close() })
	sp, err := s.NewSpool(id)
	if err != nil {
		t.Fatal(err)
	}
	return s, id, sp
}

// TestSpoolSameAsWriter: a run recorded through a Spool has the rows, in
// the same order, that the Writer makes of it, and its spool file is gone.
func TestSpoolSameAsWriter(t *testing.T) {
	evs := spoolEvents(4, 2500)
	dir := t.TempDir()
	direct := filepath.Join(dir, "direct.db")
	record(t, direct, Run{Algorithm: "central", Nodes: 4, Mode: "udp"}, evs)

	spooled := filepath.Join(dir, "spooled.db")
	s, id, sp := spooling(t, spooled, 4)
	for i := range evs {
		if err := sp.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if sp.Count() != int64(len(evs)) {
		t.Errorf("Count = %d, want %d", sp.Count(), len(evs))
	}
	if err := s.EndRun(id, 1000, true, "ok"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left := spoolFiles(t, dir); len(left) > 0 {
		t.Errorf("spool files left: %v", left)
	}
	for _, q := range []string{
		`SELECT id, proc, seq, kind, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail FROM events ORDER BY id`,
		`SELECT * FROM messages ORDER BY run, id`,
	} {
		want := query(t, open(t, direct), q)
		got := query(t, open(t, spooled), q)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the spooled trace differs from the direct one (%d rows against %d)", q, len(got), len(want))
		}
	}
}

// TestSpoolLive: the events reach the trace while the Spool is open, for
// its readers, not only when it closes.
func TestSpoolLive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	_, _, sp := spooling(t, path, 2)
	defer sp.Close()
	evs := spoolEvents(2, 50)
	for i := range evs {
		if err := sp.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	// A loaded machine can keep the converter's thread waiting a while.
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := OpenWith(path, OpenOptions{NoIntegrityCheck: true})
		if err != nil {
			t.Fatal(err)
		}
		got := query(t, r, `SELECT count(*) FROM events`)
		r.Close()
		if got[0] == "300" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the trace holds %s events of 300 after 30s, before the spool closed", got[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sp.Add(&evs[0]); err == nil || !strings.Contains(err.Error(), "spool is closed") {
		t.Errorf("Add after Close = %v, want an error", err)
	}
}

// TestSpoolKeptOnFailure: when some events cannot be stored, Close keeps
// the spool, which holds them all, and says where it is.
func TestSpoolKeptOnFailure(t *testing.T) {
	dir := t.TempDir()
	_, _, sp := spooling(t, filepath.Join(dir, "t.db"), 1)
	for _, e := range []Event{ev(0, 1, KindStart, 1), ev(0, 2, KindInternal, 2), ev(0, 2, KindInternal, 3), ev(0, 3, KindStop, 4)} {
		sp.Add(&e)
	}
	err := sp.Close()
	left := spoolFiles(t, dir)
	if len(left) != 1 {
		t.Fatalf("spool files %v, want the one kept", left)
	}
	if err == nil || !strings.Contains(err.Error(), left[0]) || !strings.Contains(err.Error(), "P0#2") || !strings.Contains(err.Error(), "3 events") {
		t.Errorf("Close = %v, want the spool %s named, 3 events stored and P0#2 refused", err, left[0])
	}
	// The spool reads back, every event in the order added.
	var got []string
	if err := ReadSpool(filepath.Join(dir, left[0]), func(e *Event) error {
		got = append(got, fmt.Sprintf("%s@%d", e.Ref(), e.Wall))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"P0#1@1", "P0#2@2", "P0#2@3", "P0#3@4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ReadSpool: %v, want %v", got, want)
	}
	// A spool whose recorder died in the middle of a write: the whole
	// frames, then an error naming where it is cut.
	b, err := os.ReadFile(filepath.Join(dir, left[0]))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut")
	if err := os.WriteFile(cut, b[:len(b)-3], 0o600); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = ReadSpool(cut, func(*Event) error { n++; return nil })
	if n != 3 || err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("ReadSpool of a cut spool: %d events, %v; want 3 and the cut said", n, err)
	}
}

// TestSpoolWriteFails: events the spool file cannot take (here its
// descriptor is closed under it, as a full disk would refuse them) stay in
// memory and reach the trace when the Spool closes; the failure is
// reported by Add.
func TestSpoolWriteFails(t *testing.T) {
	dir := t.TempDir()
	_, _, sp := spooling(t, filepath.Join(dir, "t.db"), 3)
	sp.mu.Lock()
	sp.f.Close()
	sp.mu.Unlock()
	evs := spoolEvents(3, 3000) // more than one buffer
	var addErr error
	for i := range evs {
		if err := sp.Add(&evs[i]); err != nil && addErr == nil {
			addErr = err
		}
	}
	if addErr == nil || !strings.Contains(addErr.Error(), "write spool") {
		t.Errorf("Add: first error %v, want the failed write", addErr)
	}
	if err := sp.Close(); err != nil {
		t.Fatalf("Close = %v, want the events stored from memory", err)
	}
	if sp.Count() != int64(len(evs)) {
		t.Errorf("Count = %d, want %d", sp.Count(), len(evs))
	}
	if left := spoolFiles(t, dir); len(left) > 0 {
		t.Errorf("spool files left: %v", left)
	}
}

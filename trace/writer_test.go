package trace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// interleavings returns every merge of the per-process sequences of evs
// that keeps each process's events in their order: the orders in which a
// writer may receive them.
func interleavings(evs []Event) [][]Event {
	var byProc [][]Event
	idx := map[int]int{}
	for _, e := range evs {
		i, ok := idx[e.Proc]
		if !ok {
			i = len(byProc)
			idx[e.Proc] = i
			byProc = append(byProc, nil)
		}
		byProc[i] = append(byProc[i], e)
	}
	var out [][]Event
	pos := make([]int, len(byProc))
	var cur []Event
	var rec func()
	rec = func() {
		if len(cur) == len(evs) {
			out = append(out, append([]Event(nil), cur...))
			return
		}
		for p := range byProc {
			if pos[p] < len(byProc[p]) {
				cur = append(cur, byProc[p][pos[p]])
				pos[p]++
				rec()
				pos[p]--
				cur = cur[:len(cur)-1]
			}
		}
	}
	rec()
	return out
}

// TestMessageFates records each scenario in every arrival order the writer
// may see (per process in program order, otherwise any), in one batch and
// one event per batch, and checks that the messages row is always the same.
func TestMessageFates(t *testing.T) {
	const m = 1 << 32 // MsgID(1, 0): any id works
	crash := ev(1, 1, KindCrash, 500)
	early := ev(1, 1, KindCrash, 5)
	for _, tc := range []struct {
		name string
		evs  []Event
		want string // type|sender|receiver|send event|receive event|fate
	}{
		{"delivered", []Event{send(0, 1, 1, m, "req", 10), recv(1, 1, 0, m, "req", 20)},
			"req|0|1|P0#1|P1#1|delivered"},
		{"duplicated", []Event{send(0, 1, 1, m, "req", 10), recv(1, 1, 0, m, "req", 20), recv(1, 2, 0, m, "req", 30)},
			"req|0|1|P0#1|P1#1|duplicated"},
		{"dropped", []Event{send(0, 1, 1, m, "req", 10), drop(0, 2, 1, m, "req", 11)},
			"req|0|1|P0#1|NULL|dropped"},
		{"dropped at receiver", []Event{send(0, 1, 1, m, "req", 10), drop(1, 1, 0, m, "req", 11)},
			"req|0|1|P0#1|NULL|dropped"},
		{"drop then a delivered copy", []Event{send(0, 1, 1, m, "req", 10), drop(2, 1, 1, m, "req", 11), recv(1, 1, 0, m, "req", 20)},
			"req|0|1|P0#1|P1#1|delivered"},
		{"in flight", []Event{send(0, 1, 1, m, "req", 10)},
			"req|0|1|P0#1|NULL|in_flight"},
		{"lost to crash", []Event{send(0, 1, 1, m, "req", 10), crash},
			"req|0|1|P0#1|NULL|lost_to_crash"},
		// Its receiver was down when it was sent: lost to that crash.
		{"receiver down at the send", []Event{send(0, 1, 1, m, "req", 10), early},
			"req|0|1|P0#1|NULL|lost_to_crash"},
		// Its receiver had crashed and recovered before the send: it was up.
		{"receiver back up at the send", []Event{send(0, 1, 1, m, "req", 10), early, ev(1, 2, KindRecover, 7)},
			"req|0|1|P0#1|NULL|in_flight"},
		{"sender crashed after the send", []Event{send(0, 1, 1, m, "req", 10), ev(0, 2, KindCrash, 500)},
			"req|0|1|P0#1|NULL|lost_to_crash"},
		{"receive without send", []Event{recv(1, 1, 0, m, "req", 20)},
			"req|0|1|NULL|P1#1|delivered"},
		// Imported events: a message sent and received as a Link of an
		// event of another kind, or beside the event's own message.
		{"link delivered", []Event{linked(ev(0, 1, KindCSExit, 10), Links{Sent: []Link{{m, 1}}}),
			linked(ev(1, 1, KindCSEnter, 20), Links{Recv: []Link{{m, 0}}})},
			"NULL|0|1|P0#1|P1#1|delivered"},
		{"link beside a message", []Event{send(0, 1, 1, m+1, "msg", 10),
			linked(recv(2, 1, 0, m+1, "msg", 20), Links{Recv: []Link{{m, 0}}}),
			linked(send(0, 2, 2, m, "msg", 15), Links{Sent: []Link{{m + 2, 1}}})},
			"msg|0|2|P0#2|P2#1|delivered"},
		{"link in flight", []Event{linked(ev(0, 1, KindInternal, 10), Links{Sent: []Link{{m, 2}}})},
			"NULL|0|2|P0#1|NULL|in_flight"},
	} {
		for _, general := range []bool{false, true} {
			name := tc.name
			if general {
				name += " (from events)"
			}
			t.Run(name, func(t *testing.T) {
				defer func() { upkeepFromEvents = false }()
				upkeepFromEvents = general
				testFate(t, tc.evs, tc.want)
			})
		}
	}
}

// linked returns e with links in its detail, as an importer records them.
func linked(e Event, l Links) Event {
	e.Detail = EncodeImported(nil, Origin{Src: "x.log:1"}, l)
	return e
}

// testFate records evs in every order and batching and checks the one
// messages row against want.
func testFate(t *testing.T, evs []Event, want string) {
	const want1 = 1 << 32 // the message whose row is compared
	path := filepath.Join(t.TempDir(), "t.db")
	s, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, order := range interleavings(evs) {
		for _, flushEach := range []bool{false, true} {
			id, err := s.BeginRun(Run{Algorithm: "central", Nodes: 3, Mode: "sim"})
			if err != nil {
				t.Fatal(err)
			}
			w := s.NewWriter(id)
			var names []string
			for i := range order {
				names = append(names, order[i].String())
				if err := w.Add(&order[i]); err != nil {
					t.Fatal(err)
				}
				if flushEach {
					if err := w.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.EndRun(id, 1000, true, "ok"); err != nil {
				t.Fatal(err)
			}
			got := query(t, s, `SELECT m.type, m.sender, m.receiver,
				'P' || se.proc || '#' || se.seq, 'P' || re.proc || '#' || re.seq, m.fate
				FROM messages m LEFT JOIN events se ON se.id = m.send_event
				LEFT JOIN events re ON re.id = m.recv_event WHERE m.run = ? AND m.id = ?`, id, want1)
			if len(got) != 1 || got[0] != want {
				t.Errorf("order %q, flush each %v: messages %q, want %q", names, flushEach, got, want)
			}
		}
	}
}

// TestReceiveBeforeSend: a receive committed before its send is recorded.
func TestReceiveBeforeSend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	s, id := begin(t, path, Run{Algorithm: "central", Nodes: 2, Mode: "udp"})
	defer s.Close()
	w := s.NewWriter(id)
	r := recv(1, 1, 0, 7, "grant", 20)
	w.Add(&r)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, `SELECT sender, receiver, send_event IS NULL, fate FROM messages`); !reflect.DeepEqual(got, []string{"0|1|1|delivered"}) {
		t.Errorf("after the receive: %q", got)
	}
	sd := send(0, 1, 1, 7, "grant", 10)
	w.Add(&sd)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := query(t, s, `SELECT m.sender, m.receiver, se.kind, re.kind, m.fate FROM messages m
		JOIN events se ON se.id = m.send_event JOIN events re ON re.id = m.recv_event`)
	if !reflect.DeepEqual(got, []string{"0|1|send|receive|delivered"}) {
		t.Errorf("after the send: %q", got)
	}
}

// chatter is the events of process p of n in a test run: k rounds of an
// internal event, a send to the next process and the receipt of the
// message from the previous one.
func chatter(p, n, k int) []Event {
	var evs []Event
	seq := int64(0)
	next := func() int64 { seq++; return seq }
	prev := (p + n - 1) % n
	for i := 1; i <= k; i++ {
		e := ev(p, next(), KindInternal, int64(i))
		e.VC = VC{uint64(i), uint64(p)}
		evs = append(evs, e,
			send(p, next(), (p+1)%n, MsgID(p, int64(i)), "hello", int64(i)),
			recv(p, next(), prev, MsgID(prev, int64(i)), "hello", int64(i)))
	}
	return evs
}

func checkChatter(t *testing.T, s *Store, run int64, n, k int) {
	t.Helper()
	evs, err := s.AllEvents(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != n*k*3 {
		t.Fatalf("run %d: %d events, want %d", run, len(evs), n*k*3)
	}
	last := map[int]int64{}
	for _, e := range evs {
		if e.Run != run || e.Seq != last[e.Proc]+1 {
			t.Fatalf("run %d: %s (run %d) after P%d#%d", run, e.String(), e.Run, e.Proc, last[e.Proc])
		}
		last[e.Proc] = e.Seq
	}
	got := query(t, s, `SELECT fate, count(*), count(send_event), count(recv_event) FROM messages WHERE run = ? GROUP BY fate`, run)
	want := fmt.Sprintf("delivered|%d|%d|%d", n*k, n*k, n*k)
	if !reflect.DeepEqual(got, []string{want}) {
		t.Errorf("run %d: messages %q, want %q", run, got, want)
	}
}

// TestConcurrentAdd: several goroutines add to one Writer at once.
func TestConcurrentAdd(t *testing.T) {
	const n, k = 8, 2000
	path := filepath.Join(t.TempDir(), "t.db")
	s, id := begin(t, path, Run{Algorithm: "token-ring", Nodes: n, Mode: "udp"})
	w := s.NewWriter(id)
	var wg sync.WaitGroup
	for p := 0; p < n; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, e := range chatter(p, n, k) {
				if err := w.Add(&e); err != nil {
					t.Error(err)
					return
				}
				if i%1000 == 999 {
					w.Flush()
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Count() != n*k*3 {
		t.Errorf("Count = %d, want %d", w.Count(), n*k*3)
	}
	if err := s.EndRun(id, 1, true, "ok"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkChatter(t, open(t, path), id, n, k)
}

// TestTwoStoresAppend: two Stores (as two dmx processes would) create the
// same new file and append a run each, at the same time.
func TestTwoStoresAppend(t *testing.T) {
	const n, k = 4, 3000
	path := filepath.Join(t.TempDir(), "t.db")
	runs := make([]int64, 2)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Create(path)
			if err != nil {
				t.Error(err)
				return
			}
			defer func() {
				// The first to close may find the other still writing:
				// its file is whole, the last one settles it.
				var side *SideFilesError
				if err := s.Close(); err != nil && !errors.As(err, &side) {
					t.Error(err)
				}
			}()
			id, err := s.BeginRun(Run{Algorithm: "ring", Nodes: n, Mode: "udp"})
			if err != nil {
				t.Error(err)
				return
			}
			runs[i] = id
			w := s.NewWriter(id)
			for p := 0; p < n; p++ {
				for _, e := range chatter(p, n, k) {
					w.Add(&e)
				}
			}
			if err := w.Close(); err != nil {
				t.Error(err)
			}
			if err := s.EndRun(id, 1, true, "ok"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Errorf("%s remains after both closed", path+suffix)
		}
	}
	s := open(t, path)
	all, err := s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Fatalf("%d runs, want 2", len(all))
	}
	for _, id := range runs {
		checkChatter(t, s, id, n, k)
	}
}

// TestFlushErrorKeepsEvents: while another connection holds the write
// lock, flushes fail and say so, and the events are stored once it is
// released.
func TestFlushErrorKeepsEvents(t *testing.T) {
	defer func(d time.Duration) { busyTimeout = d }(busyTimeout)
	busyTimeout = 50 * time.Millisecond
	path := filepath.Join(t.TempDir(), "t.db")
	s, id := begin(t, path, Run{Algorithm: "central", Nodes: 2, Mode: "sim"})
	defer s.Close()
	other, err := sql.Open("sqlite3", dsn(path, "_busy_timeout=50"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	w := s.NewWriter(id)
	evs := chatter(0, 2, 10)
	for i := range evs[:15] {
		w.Add(&evs[i])
	}
	if err := w.Flush(); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Errorf("Flush while locked = %v, want database is locked", err)
	}
	for i := range evs[15:] {
		if err := w.Add(&evs[15+i]); err != nil {
			t.Logf("Add reports: %v", err) // a background flush may also have failed
		}
	}
	if w.Count() != 0 {
		t.Errorf("Count = %d while locked", w.Count())
	}
	if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close after unlocking: %v", err)
	}
	if w.Count() != int64(len(evs)) {
		t.Errorf("Count = %d, want %d", w.Count(), len(evs))
	}
	got, err := s.AllEvents(id)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i].Ref() != evs[i].Ref() {
			t.Fatalf("event %d is %s, want %s", i, got[i].Ref(), evs[i].Ref())
		}
	}
}

// TestDuplicateEventReported: an event SQLite refuses (same run, proc and
// seq as another) is reported by name and does not hold up the others.
func TestDuplicateEventReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	s, id := begin(t, path, Run{Algorithm: "central", Nodes: 1, Mode: "sim"})
	defer s.Close()
	w := s.NewWriter(id)
	for _, e := range []Event{ev(0, 1, KindStart, 1), ev(0, 2, KindInternal, 2), ev(0, 2, KindInternal, 3), ev(0, 3, KindStop, 4)} {
		w.Add(&e)
	}
	err := w.Flush()
	if err == nil || !strings.Contains(err.Error(), "P0#2") || !strings.Contains(err.Error(), "1 event not stored") {
		t.Errorf("Flush = %v, want a report of P0#2", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if w.Count() != 3 {
		t.Errorf("Count = %d, want 3", w.Count())
	}
}

// TestBoxAt: the driver values the Writer makes without copies read as
// ordinary ones (the layout of an interface that box.go relies on), and
// read the variable they point at.
func TestBoxAt(t *testing.T) {
	for _, v := range []int64{0, 7, 255, 256, -1, 1 << 40, NoPeer} {
		x := v
		got := int64At(&x)
		if got != any(v) {
			t.Errorf("int64At(%d) = %#v", v, got)
		}
		x++
		if got != any(v+1) {
			t.Errorf("int64At(%d) after the variable changed = %#v", v, got)
		}
		x--
		if want := any(v); v == NoPeer {
			want = nil
			if got := nullInt64At(&x, NoPeer); got != want {
				t.Errorf("nullInt64At(%d, NoPeer) = %#v, want nil", v, got)
			}
		} else if got := nullInt64At(&x, NoPeer); got != want {
			t.Errorf("nullInt64At(%d, NoPeer) = %#v, want %#v", v, got, want)
		}
	}
	for _, v := range []string{"", "x", `{"ts":12}`} {
		x := v
		if got := stringAt(&x); got != any(v) {
			t.Errorf("stringAt(%q) = %#v", v, got)
		}
		if s, ok := stringAt(&x).(string); !ok || s != v {
			t.Errorf("stringAt(%q).(string) = %q, %v", v, s, ok)
		}
	}
}

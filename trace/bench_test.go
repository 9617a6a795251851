package trace

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/dmxlab/dmx/internal/cputime"
)

// report reports events/s and CPU ns/event of n events since start and cpu0.
func report(b *testing.B, n int, start time.Time, cpu0 time.Duration) {
	el := time.Since(start)
	cpu := cputime.Self() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(n)/el.Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/event")
}

// benchEvents makes a realistic pool of events: rounds of a Ricart-Agrawala
// critical section among 5 processes (a request to the 4 others, their
// receipts, 4 OKs back and their receipts, enter, exit): 19 events per
// round, 8 sends, 8 receives and 3 cs events, each with a 5-entry vector
// clock and a small JSON detail on the messages.
func benchEvents(n int) []Event {
	const N = 5
	var (
		evs  []Event
		seq  [N]int64
		lam  [N]uint64
		vc   [N]VC
		sent [N]int64
		wall = int64(1_700_000_000_000_000_000)
	)
	for p := range vc {
		vc[p] = make(VC, N)
	}
	emit := func(p int, k Kind, f func(*Event)) *Event {
		seq[p]++
		lam[p]++
		vc[p][p]++
		wall += 1500
		e := Event{Proc: p, Seq: seq[p], Kind: k, Lamport: lam[p], VC: vc[p].Clone(), Wall: wall, Peer: NoPeer, Resource: "cs"}
		if f != nil {
			f(&e)
		}
		evs = append(evs, e)
		return &evs[len(evs)-1]
	}
	type msg struct {
		id      int64
		from    int
		typ     string
		lamport uint64
		vc      VC
	}
	send := func(p, to int, typ string) msg {
		sent[p]++
		id := MsgID(p, sent[p])
		e := emit(p, KindSend, func(e *Event) {
			e.Msg, e.MsgType, e.Peer = id, typ, to
			e.Detail = []byte(fmt.Sprintf(`{"ts":%d}`, lam[p]))
		})
		return msg{id, p, typ, e.Lamport, e.VC}
	}
	recv := func(p int, m msg) {
		if m.lamport > lam[p] {
			lam[p] = m.lamport
		}
		vc[p].Merge(m.vc)
		emit(p, KindReceive, func(e *Event) {
			e.Msg, e.MsgType, e.Peer = m.id, m.typ, m.from
			e.Detail = []byte(fmt.Sprintf(`{"ts":%d}`, m.lamport))
		})
	}
	for round := 0; len(evs) < n; round++ {
		p := round % N
		emit(p, KindCSRequest, nil)
		var reqs, oks []msg
		for q := 0; q < N; q++ {
			if q != p {
				reqs = append(reqs, send(p, q, "request"))
			}
		}
		for i, q := 0, 0; q < N; q++ {
			if q == p {
				continue
			}
			recv(q, reqs[i])
			oks = append(oks, send(q, p, "ok"))
			i++
		}
		for _, m := range oks {
			recv(p, m)
		}
		emit(p, KindCSEnter, nil)
		emit(p, KindCSExit, nil)
	}
	return evs[:n]
}

// benchPool is shared by the benchmarks; benchAt shifts the pool's seq and
// msg ids so that any number of events can be drawn from it without
// repeating a (proc, seq) or a message id.
var benchPool = benchEvents(1 << 16)

func benchAt(i int) Event {
	e := benchPool[i%len(benchPool)]
	round := int64(i / len(benchPool))
	e.Seq += round * int64(len(benchPool))
	// Time goes on from round to round, as in a run: Lamport clocks and
	// wall times grow (the time indexes are appended to, not shuffled).
	e.Lamport += uint64(round) * (benchPool[len(benchPool)-1].Lamport + 1)
	e.Wall += round * (benchPool[len(benchPool)-1].Wall - benchPool[0].Wall + 1)
	if e.Msg != 0 {
		e.Msg += round << 20
	}
	return e
}

// BenchmarkRecord compares the Writer with two floors: plain bulk inserts
// of the same rows into the same tables (same schema, indexes and
// connection options), prepared 256-row INSERTs straight through the
// driver in one transaction. "floor" inserts the events only; "floor+msgs"
// also inserts the messages rows the Writer ends with, made beforehand
// (no upkeep: only what inserting them costs). Each is measured until its
// rows are in the database file (the WAL checkpointed), as the floor's
// commit does by itself.
func BenchmarkRecord(b *testing.B) {
	b.Run("writer", func(b *testing.B) {
		s, run := begin(b, filepath.Join(b.TempDir(), "w.db"), Run{Algorithm: "ricart-agrawala", Nodes: 5, Mode: "sim"})
		defer s.Close()
		b.ResetTimer()
		start, cpu0 := time.Now(), cputime.Self()
		w := s.NewWriter(run)
		for i := 0; i < b.N; i++ {
			e := benchAt(i)
			if err := w.Add(&e); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		// What the Writer's commits left in the WAL.
		if _, err := s.db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
			b.Fatal(err)
		}
		report(b, b.N, start, cpu0)
		if w.Count() != int64(b.N) {
			b.Fatalf("stored %d of %d", w.Count(), b.N)
		}
	})
	b.Run("floor", func(b *testing.B) { benchFloor(b, false) })
	b.Run("floor+msgs", func(b *testing.B) { benchFloor(b, true) })
}

// TestFloorSameRows: the floor with messages inserts exactly the rows the
// Writer stores for the same events (ids, values and their SQL types), so
// that BenchmarkRecord compares like with like. 1000 and 5000 events: a
// multiple of the floor's 256-row statements and not.
func TestFloorSameRows(t *testing.T) {
	for _, n := range []int{1000, 5000} {
		dir := t.TempDir()
		wpath, fpath := filepath.Join(dir, "w.db"), filepath.Join(dir, "f.db")
		recordBench(t, wpath, n)
		insertFloor(t, fpath, n, true, func() {})
		for _, q := range []string{
			`SELECT quote(id), quote(run), quote(proc), quote(seq), quote(kind), quote(lamport), quote(vc), quote(wall_ns),
				quote(msg), quote(msg_type), quote(peer), quote(resource), quote(detail) FROM events ORDER BY id`,
			`SELECT quote(run), quote(id), quote(type), quote(sender), quote(receiver), quote(send_event),
				quote(recv_event), quote(fate) FROM messages ORDER BY run, id`,
		} {
			got, want := query(t, open(t, fpath), q), query(t, open(t, wpath), q)
			if len(want) < n/3 || !reflect.DeepEqual(got, want) {
				t.Errorf("%d events: the floor's rows differ from the writer's (%d rows, the writer %d)\n%s", n, len(got), len(want), q)
			}
		}
	}
}

// recordBench records the first n bench events with a Writer into a new
// trace at path, closed, and returns the run.
func recordBench(tb testing.TB, path string, n int) int64 {
	s, run := begin(tb, path, Run{Algorithm: "ricart-agrawala", Nodes: 5, Mode: "sim"})
	w := s.NewWriter(run)
	for i := 0; i < n; i++ {
		e := benchAt(i)
		if err := w.Add(&e); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	return run
}

// floorMsg is a messages row as the floor inserts it.
type floorMsg struct {
	id, sender, receiver, send, recv int64
	typ, fate                        any
	done                             int // the event after which the row is inserted
}

// floorMessages returns the messages rows of the first n bench events (the
// i-th event gets id i+1), in the order in which they are complete: at
// their receive, and those still in flight at the end.
func floorMessages(n int) []floorMsg {
	var ms []floorMsg
	at := map[int64]int{}
	for i := 0; i < n; i++ {
		e := benchAt(i)
		switch e.Kind {
		case KindSend:
			at[e.Msg] = len(ms)
			ms = append(ms, floorMsg{id: e.Msg, sender: int64(e.Proc), receiver: int64(e.Peer), send: int64(i + 1),
				typ: e.MsgType, fate: "in_flight", done: n})
		case KindReceive:
			m := &ms[at[e.Msg]]
			m.recv, m.fate, m.done = int64(i+1), "delivered", i
		}
	}
	slices.SortStableFunc(ms, func(a, b floorMsg) int { return cmp.Compare(a.done, b.done) })
	return ms
}

// floorRow is an event as the floor binds it: the driver values point
// into it (see box.go), as the Writer's point into its batch, so that
// neither pays for allocations the other does not.
type floorRow struct {
	e           Event
	proc, lam   int64
	peer        int64
	vc          []byte
	vcs, detail string
}

// benchFloor measures insertFloor.
func benchFloor(b *testing.B, msgs bool) {
	var start time.Time
	var cpu0 time.Duration
	insertFloor(b, filepath.Join(b.TempDir(), "f.db"), b.N, msgs, func() {
		b.ResetTimer()
		start, cpu0 = time.Now(), cputime.Self()
	})
	report(b, b.N, start, cpu0)
}

// insertFloor inserts the first n bench events (and, with msgs, their
// messages rows) into a new trace at path straight through the driver,
// 256 rows a statement (the rest one by one), all in one transaction: what
// inserting the rows costs, with nothing else. It calls begin when the
// work to measure begins.
func insertFloor(b testing.TB, path string, n int, msgs bool, begin func()) {
	// The options of the Writer's connection that bear on what inserting
	// costs: WAL, synchronous=NORMAL, the cache, no mutex, CHECKs skipped
	// (below).
	opts := "_journal_mode=WAL&_synchronous=NORMAL&_cache_size=-32768&_mutex=no"
	db, err := sql.Open("sqlite3", dsn(path, opts))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(Schema); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO runs (id, algorithm, nodes, seed, mode, started_ns) VALUES (1, 'x', 5, '0', 'sim', 0)`); err != nil {
		b.Fatal(err)
	}
	c, err := db.Driver().Open(dsn(path, opts))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	execSQL := func(q string) {
		if _, err := c.(driver.ExecerContext).ExecContext(ctx, q, nil); err != nil {
			b.Fatal(err)
		}
	}
	execSQL(`PRAGMA ignore_check_constraints = ON`)
	const rows = 256
	prepare := func(cols string, params, k int) driver.StmtQueryContext {
		st, err := c.Prepare(`INSERT INTO ` + cols + ` VALUES ` + placeholders(k, params))
		if err != nil {
			b.Fatal(err)
		}
		return st.(driver.StmtQueryContext)
	}
	events := `events (` + insertColumns + `)`
	messages := `messages (` + messageColumns + `)`
	many, one := prepare(events, insertParams, rows), prepare(events, insertParams, 1)
	manyMsgs, oneMsg := prepare(messages, messageParams, rows), prepare(messages, messageParams, 1)
	args := func(n int) []driver.NamedValue {
		nv := make([]driver.NamedValue, n)
		for i := range nv {
			nv[i].Ordinal = i + 1
		}
		return nv
	}
	nv, mv := args(rows*insertParams), args(rows*messageParams)
	exec := func(st driver.StmtQueryContext, args []driver.NamedValue) {
		r, err := st.QueryContext(ctx, args)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Next(nil); err != io.EOF {
			b.Fatal(err)
		}
		r.Close()
	}
	var ms []floorMsg
	if msgs {
		ms = floorMessages(n)
	}
	// The few kinds, message types and resources, boxed once.
	boxes := map[string]any{"": nil}
	for _, e := range benchPool {
		boxes[string(e.Kind)], boxes[e.MsgType], boxes[e.Resource] = string(e.Kind), e.MsgType, e.Resource
	}
	boxes[""] = nil
	run := any(int64(1))
	setMsg := func(v []driver.NamedValue, m *floorMsg) {
		v[0].Value, v[1].Value, v[2].Value, v[3].Value = run, int64At(&m.id), m.typ, int64At(&m.sender)
		v[4].Value, v[5].Value, v[6].Value, v[7].Value = int64At(&m.receiver), int64At(&m.send), nullInt64At(&m.recv, 0), m.fate
	}
	slots := make([]floorRow, rows)
	begin()
	if _, err := c.(driver.ConnBeginTx).BeginTx(ctx, driver.TxOptions{}); err != nil {
		b.Fatal(err)
	}
	k, km, next := 0, 0, 0
	for i := 0; i < n; i++ {
		r := &slots[k]
		r.e = benchAt(i)
		e := &r.e
		r.proc, r.lam, r.peer = int64(e.Proc), int64(e.Lamport), int64(e.Peer)
		r.vc = e.VC.AppendText(r.vc[:0])
		r.vcs, r.detail = unsafe.String(unsafe.SliceData(r.vc), len(r.vc)), unsafe.String(unsafe.SliceData(e.Detail), len(e.Detail))
		v := nv[k*insertParams:]
		v[0].Value, v[1].Value, v[2].Value, v[3].Value = run, int64At(&r.proc), int64At(&e.Seq), boxes[string(e.Kind)]
		v[4].Value, v[5].Value, v[6].Value = int64At(&r.lam), stringAt(&r.vcs), int64At(&e.Wall)
		v[7].Value, v[8].Value, v[9].Value = nullInt64At(&e.Msg, 0), boxes[e.MsgType], nullInt64At(&r.peer, NoPeer)
		v[10].Value, v[11].Value = boxes[e.Resource], nil
		if len(e.Detail) > 0 {
			v[11].Value = stringAt(&r.detail)
		}
		if k++; k < rows {
			continue
		}
		exec(many, nv)
		k = 0
		// The messages rows complete with the events inserted so far.
		for ; next < len(ms) && ms[next].done <= i; next++ {
			setMsg(mv[km*messageParams:], &ms[next])
			if km++; km == rows {
				exec(manyMsgs, mv)
				km = 0
			}
		}
	}
	single := make([]driver.NamedValue, insertParams)
	for j := 0; j < k; j++ {
		for c := range single {
			single[c] = driver.NamedValue{Ordinal: c + 1, Value: nv[j*insertParams+c].Value}
		}
		exec(one, single)
	}
	for ; next < len(ms); next++ {
		setMsg(mv[km*messageParams:], &ms[next])
		if km++; km == rows {
			exec(manyMsgs, mv)
			km = 0
		}
	}
	single = single[:messageParams]
	for j := 0; j < km; j++ {
		for c := range single {
			single[c] = driver.NamedValue{Ordinal: c + 1, Value: mv[j*messageParams+c].Value}
		}
		exec(oneMsg, single)
	}
	execSQL("COMMIT")
	execSQL(`PRAGMA wal_checkpoint(PASSIVE)`)
}

// BenchmarkRead measures EventReader over a run of 100k events; an op is
// one event (the reader starts over at the end of the run).
func BenchmarkRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "r.db")
	run := recordBench(b, path, 100_000)
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	start, cpu0 := time.Now(), cputime.Self()
	var r *EventReader
	for i := 0; i < b.N; i++ {
		if r == nil {
			if r, err = s.Events(run); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := r.Next(); err == io.EOF {
			r.Close()
			r = nil
			i--
		} else if err != nil {
			b.Fatal(err)
		}
	}
	if r != nil {
		r.Close()
	}
	report(b, b.N, start, cpu0)
}

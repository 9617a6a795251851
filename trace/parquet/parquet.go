// Package parquet exports traces as Apache Parquet files, for the tools
// that read thousands of runs at once (DuckDB, Spark, a warehouse): the
// runs, their verdicts, and each run's events and messages, partitioned
// by run in the Hive layout (events/run=7/events.parquet), compressed
// with zstd. It writes Parquet itself (write.go): the subset of the
// format these files need.
//
// The runs of several traces are numbered 1, 2, ... in the order of the
// traces and of their runs, as dmx merge numbers them; runs.parquet keeps
// where each came from (trace, trace_run). Every column of the trace's
// tables is there with its SQLite name and its NULLs (optional columns);
// runs.parquet adds fault_kinds (the kinds of runs.faults, a list),
// events (their count) and verdict (the run's, over its checks).
package parquet

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"

	"github.com/dmxlab/dmx/trace"
)

// Run is a row of runs.parquet.
type Run struct {
	Run         int64    `parquet:"run"`
	Trace       string   `parquet:"trace"`
	TraceRun    int64    `parquet:"trace_run"`
	Algorithm   string   `parquet:"algorithm"`
	Nodes       int64    `parquet:"nodes"`
	Seed        string   `parquet:"seed"`
	Mode        string   `parquet:"mode"`
	Params      string   `parquet:"params"`
	Faults      string   `parquet:"faults"`
	FaultKinds  []string `parquet:"fault_kinds,list"`
	ToolVersion string   `parquet:"tool_version"`
	StartedNs   int64    `parquet:"started_ns"`
	EndedNs     *int64   `parquet:"ended_ns,optional"`
	Complete    bool     `parquet:"complete"`
	Status      string   `parquet:"status"`
	Events      int64    `parquet:"events"`
	Verdict     string   `parquet:"verdict"` // "" when the run was not checked
}

// Verdict is a row of verdicts.parquet: one check of one run.
type Verdict struct {
	Run      int64  `parquet:"run"`
	Check    string `parquet:"check"`
	Verdict  string `parquet:"verdict"`
	Findings int64  `parquet:"findings"`
	Note     string `parquet:"note"`
	Finding  string `parquet:"finding"` // the first finding's text, "" if none
}

// Event is a row of events/run=K/events.parquet (run is the partition).
type Event struct {
	ID       int64   `parquet:"id"`
	Proc     int64   `parquet:"proc"`
	Seq      int64   `parquet:"seq"`
	Kind     string  `parquet:"kind"`
	Lamport  int64   `parquet:"lamport"`
	VC       *string `parquet:"vc,optional"`
	WallNs   int64   `parquet:"wall_ns"`
	Msg      *int64  `parquet:"msg,optional"`
	MsgType  *string `parquet:"msg_type,optional"`
	Peer     *int64  `parquet:"peer,optional"`
	Resource *string `parquet:"resource,optional"`
	Detail   *string `parquet:"detail,optional"`
}

// Message is a row of messages/run=K/messages.parquet.
type Message struct {
	ID        int64   `parquet:"id"`
	Type      *string `parquet:"type,optional"`
	Sender    *int64  `parquet:"sender,optional"`
	Receiver  *int64  `parquet:"receiver,optional"`
	SendEvent *int64  `parquet:"send_event,optional"`
	RecvEvent *int64  `parquet:"recv_event,optional"`
	Fate      string  `parquet:"fate"`
}

// Source is one trace to export: its runs, and the verdicts of their
// checks by run id (none for a run not checked).
type Source struct {
	Path     string
	Store    *trace.Store
	Runs     []trace.Run
	Verdicts map[int64][]Verdict // Run fields are ignored: set by Export
}

// Unmake removes what an export wrote into dir, which was empty or did
// not exist before it: the directory's entries; dir itself stays.
func Unmake(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// Counts say what an export wrote.
type Counts struct {
	Runs, Events, Messages, Verdicts, Files int64
	Bytes                                   int64
}

// Export writes sources into dir, which must not exist or be empty. An
// export that fails leaves dir as it was (it left the files it had
// written, one cut short, for DuckDB to read as the export: found by the
// adversarial pass of issue 22).
func Export(dir string, sources []Source) (c Counts, err error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return c, fmt.Errorf("%s is not empty: export into a new directory (the files of two exports would mix)", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return c, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return c, err
	}
	defer func() {
		if err != nil {
			Unmake(dir)
			err = fmt.Errorf("%w (the files written into %s are removed)", err, dir)
		}
	}()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return c, err
	}
	defer enc.Close()
	var runs []Run
	var verdicts []Verdict
	next := int64(1)
	for _, src := range sources {
		counts, err := eventCounts(src.Store.DB())
		if err != nil {
			return c, fmt.Errorf("%s: %w", src.Path, err)
		}
		for _, r := range src.Runs {
			id := next
			next++
			row := Run{Run: id, Trace: src.Path, TraceRun: r.ID, Algorithm: r.Algorithm, Nodes: int64(r.Nodes),
				Seed: fmt.Sprint(r.Seed), Mode: r.Mode, Params: string(r.Params), Faults: string(r.Faults),
				FaultKinds: kinds(r), ToolVersion: r.ToolVersion, StartedNs: r.Started, Complete: r.Complete,
				Status: r.Status, Events: counts[r.ID]}
			if r.NoSeed {
				row.Seed = ""
			}
			if r.Ended != 0 {
				e := r.Ended
				row.EndedNs = &e
			}
			vs := src.Verdicts[r.ID]
			row.Verdict = summary(vs)
			for _, v := range vs {
				v.Run = id
				verdicts = append(verdicts, v)
			}
			runs = append(runs, row)
			ne, err := writeEvents(filepath.Join(dir, "events", fmt.Sprintf("run=%d", id), "events.parquet"), src.Store.DB(), r.ID, enc)
			if err != nil {
				return c, fmt.Errorf("%s: run %d: events: %w", src.Path, r.ID, err)
			}
			nm, err := writeMessages(filepath.Join(dir, "messages", fmt.Sprintf("run=%d", id), "messages.parquet"), src.Store.DB(), r.ID, enc)
			if err != nil {
				return c, fmt.Errorf("%s: run %d: messages: %w", src.Path, r.ID, err)
			}
			c.Events += ne
			c.Messages += nm
			c.Files += 2
		}
	}
	if err := writeFile(filepath.Join(dir, "runs.parquet"), runs, enc); err != nil {
		return c, err
	}
	if err := writeFile(filepath.Join(dir, "verdicts.parquet"), verdicts, enc); err != nil {
		return c, err
	}
	c.Runs, c.Verdicts, c.Files = int64(len(runs)), int64(len(verdicts)), c.Files+2
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				c.Bytes += fi.Size()
			}
		}
		return err
	})
	return c, err
}

// summary is the verdict of a run's checks, as dmx check says it:
// violated, else unknown, else ok, else not applicable; "" if unchecked.
func summary(vs []Verdict) string {
	if len(vs) == 0 {
		return ""
	}
	rank := map[string]int{"violated": 4, "unknown": 3, "ok": 2}
	best := "not applicable"
	for _, v := range vs {
		if rank[v.Verdict] > rank[best] {
			best = v.Verdict
		}
	}
	return best
}

// kinds returns the run's fault kinds, each once: an empty list, not a
// null one, for a run without faults.
func kinds(r trace.Run) []string {
	if ks := r.FaultKinds(); ks != nil {
		return ks
	}
	return []string{}
}

func eventCounts(db *sql.DB) (map[int64]int64, error) {
	rows, err := db.Query(`SELECT run, count(*) FROM events GROUP BY run`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var run, n int64
		if err := rows.Scan(&run, &n); err != nil {
			return nil, err
		}
		out[run] = n
	}
	return out, rows.Err()
}

func str(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

func num(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// batch is how many rows are written at a time.
const batch = 4096

// create makes path's directory and a writer of T into path.
func create[T any](path string, enc *zstd.Encoder) (*writer[T], error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return newWriter[T](path, enc)
}

// writeRows writes the rows query selects of run into a Parquet file of
// T at path, batch rows at a time, each read by scan; it returns how many
// it wrote.
func writeRows[T any](path string, db *sql.DB, run int64, enc *zstd.Encoder, query string, scan func(*sql.Rows) (T, error)) (int64, error) {
	rows, err := db.Query(query, run)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	w, err := create[T](path, enc)
	if err != nil {
		return 0, err
	}
	buf := make([]T, 0, batch)
	var n int64
	flush := func() error {
		err := w.Write(buf)
		n += int64(len(buf))
		buf = buf[:0]
		return err
	}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			w.f.Close()
			return n, err
		}
		buf = append(buf, v)
		if len(buf) == batch {
			if err := flush(); err != nil {
				w.f.Close()
				return n, err
			}
		}
	}
	if err := errors.Join(rows.Err(), flush()); err != nil {
		w.f.Close()
		return n, err
	}
	return n, w.Close()
}

func writeEvents(path string, db *sql.DB, run int64, enc *zstd.Encoder) (int64, error) {
	return writeRows(path, db, run, enc, `SELECT id, proc, seq, kind, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail
		FROM events WHERE run = ? ORDER BY id`, func(rows *sql.Rows) (Event, error) {
		var e Event
		var vc, msgType, resource, detail sql.NullString
		var msg, peer sql.NullInt64
		err := rows.Scan(&e.ID, &e.Proc, &e.Seq, &e.Kind, &e.Lamport, &vc, &e.WallNs, &msg, &msgType, &peer, &resource, &detail)
		e.VC, e.MsgType, e.Resource, e.Detail, e.Msg, e.Peer = str(vc), str(msgType), str(resource), str(detail), num(msg), num(peer)
		return e, err
	})
}

func writeMessages(path string, db *sql.DB, run int64, enc *zstd.Encoder) (int64, error) {
	return writeRows(path, db, run, enc, `SELECT id, type, sender, receiver, send_event, recv_event, fate
		FROM messages WHERE run = ? ORDER BY id`, func(rows *sql.Rows) (Message, error) {
		var m Message
		var typ sql.NullString
		var sender, receiver, send, recv sql.NullInt64
		err := rows.Scan(&m.ID, &typ, &sender, &receiver, &send, &recv, &m.Fate)
		m.Type, m.Sender, m.Receiver, m.SendEvent, m.RecvEvent = str(typ), num(sender), num(receiver), num(send), num(recv)
		return m, err
	})
}

package parquet

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/klauspost/compress/zstd"
	pq "github.com/parquet-go/parquet-go"

	"github.com/dmxlab/dmx/internal/sqltest"
	"github.com/dmxlab/dmx/trace"
)

// makeTrace records two runs at path: one with messages, a crash, NULLs
// in every optional column and a detail; one with no messages.
func makeTrace(t *testing.T, path string) *trace.Store {
	t.Helper()
	st, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.NewRunWriter()
	if err != nil {
		t.Fatal(err)
	}
	send := trace.Event{Proc: 0, Seq: 2, Kind: trace.KindSend, Lamport: 2, VC: trace.VC{2, 0}, Wall: 20, Msg: trace.MsgID(0, 1), MsgType: "request", Peer: 1, Resource: "cs"}
	recv := trace.Event{Proc: 1, Seq: 1, Kind: trace.KindReceive, Lamport: 3, VC: trace.VC{2, 1}, Wall: 30, Msg: trace.MsgID(0, 1), MsgType: "request", Peer: 0, Resource: "cs"}
	evs := []trace.Event{
		{Proc: 0, Seq: 1, Kind: trace.KindCSRequest, Lamport: 1, VC: trace.VC{1, 0}, Wall: 10, Peer: trace.NoPeer, Resource: "cs", Detail: json.RawMessage(`{"entry":1}`)},
		send, recv,
		{Proc: 1, Seq: 2, Kind: trace.KindCrash, Lamport: 4, VC: trace.VC{2, 2}, Wall: 40, Peer: trace.NoPeer},
	}
	if _, err := w.Write(trace.Run{Algorithm: "central", Nodes: 2, Seed: 3, Mode: "sim", Started: 5, Ended: 50, Complete: true, Status: "ok",
		Faults: json.RawMessage(`["crash:1@40ns","pause:0@1ms-2ms","crash:0@3ms"]`), Params: json.RawMessage(`{"entries":1}`)}, evs); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(trace.Run{Algorithm: "bully", Nodes: 1, Seed: 4, Mode: "sim", Started: 6, Ended: 60, Complete: false, Status: "interrupted"},
		[]trace.Event{{Proc: 0, Seq: 1, Kind: trace.KindStart, Lamport: 1, Wall: 1, Peer: trace.NoPeer}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return st
}

func or[T any](p *T) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

// TestExportReadsBack: what Export writes reads back (with parquet-go's
// reader) as the trace's rows, run for run; runs.parquet says where each
// run came from, its fault kinds and its verdict.
func TestExportReadsBack(t *testing.T) {
	dir := t.TempDir()
	a := makeTrace(t, filepath.Join(dir, "a.db"))
	defer a.Close()
	b := makeTrace(t, filepath.Join(dir, "b.db"))
	defer b.Close()
	var sources []Source
	for _, st := range []*trace.Store{a, b} {
		runs, err := st.Runs()
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, Source{Path: st.Path(), Store: st, Runs: runs, Verdicts: map[int64][]Verdict{
			1: {{Check: "liveness", Verdict: "violated", Findings: 1, Finding: "P0#1 never granted"}, {Check: "clocks", Verdict: "ok"}},
		}})
	}
	out := filepath.Join(dir, "pq")
	c, err := Export(out, sources)
	if err != nil {
		t.Fatal(err)
	}
	if c.Runs != 4 || c.Events != 10 || c.Messages != 2 || c.Verdicts != 4 || c.Files != 10 || c.Bytes == 0 {
		t.Errorf("counts %+v", c)
	}
	runs, err := pq.ReadFile[Run](filepath.Join(out, "runs.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 {
		t.Fatalf("%d runs read back", len(runs))
	}
	first := runs[0]
	ended := int64(50)
	want := Run{Run: 1, Trace: a.Path(), TraceRun: 1, Algorithm: "central", Nodes: 2, Seed: "3", Mode: "sim", Params: `{"entries":1}`,
		Faults: `["crash:1@40ns","pause:0@1ms-2ms","crash:0@3ms"]`, FaultKinds: []string{"crash", "pause"}, StartedNs: 5, EndedNs: &ended,
		Complete: true, Status: "ok", Events: 4, Verdict: "violated"}
	if !reflect.DeepEqual(first, want) {
		t.Errorf("run 1:\n%+v\nwant\n%+v", first, want)
	}
	if runs[3].Run != 4 || runs[3].Trace != b.Path() || runs[3].TraceRun != 2 || runs[3].Verdict != "" || runs[3].Complete || len(runs[3].FaultKinds) != 0 {
		t.Errorf("run 4: %+v", runs[3])
	}
	vs, err := pq.ReadFile[Verdict](filepath.Join(out, "verdicts.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 4 || vs[0] != (Verdict{Run: 1, Check: "liveness", Verdict: "violated", Findings: 1, Finding: "P0#1 never granted"}) || vs[2].Run != 3 {
		t.Errorf("verdicts %+v", vs)
	}
	for _, r := range runs {
		st := map[string]*trace.Store{a.Path(): a, b.Path(): b}[r.Trace]
		evs, err := pq.ReadFile[Event](filepath.Join(out, "events", fmt.Sprintf("run=%d", r.Run), "events.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			got = append(got, fmt.Sprintf("%d|%d|%d|%s|%d|%s|%d|%s|%s|%s|%s|%s", e.ID, e.Proc, e.Seq, e.Kind, e.Lamport, or(e.VC), e.WallNs, or(e.Msg), or(e.MsgType), or(e.Peer), or(e.Resource), or(e.Detail)))
		}
		if want := sqltest.Rows(t, st.DB(), `SELECT id, proc, seq, kind, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail FROM events WHERE run = ? ORDER BY id`, r.TraceRun); !reflect.DeepEqual(got, want) {
			t.Errorf("run %d: events read back:\n%v\nwant\n%v", r.Run, got, want)
		}
		ms, err := pq.ReadFile[Message](filepath.Join(out, "messages", fmt.Sprintf("run=%d", r.Run), "messages.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		got = nil
		for _, m := range ms {
			got = append(got, fmt.Sprintf("%d|%s|%s|%s|%s|%s|%s", m.ID, or(m.Type), or(m.Sender), or(m.Receiver), or(m.SendEvent), or(m.RecvEvent), m.Fate))
		}
		if want := sqltest.Rows(t, st.DB(), `SELECT id, type, sender, receiver, send_event, recv_event, fate FROM messages WHERE run = ? ORDER BY id`, r.TraceRun); !reflect.DeepEqual(got, want) {
			t.Errorf("run %d: messages read back:\n%v\nwant\n%v", r.Run, got, want)
		}
	}
	if _, err := Export(out, sources); err == nil {
		t.Errorf("an export into a directory that is not empty was not refused")
	}
	os.RemoveAll(out)
}

// TestWriterRowGroups: a file of more rows than a row group holds reads
// back whole, row for row, NULLs and lists included (parquet-go's reader).
func TestWriterRowGroups(t *testing.T) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	type row struct {
		N    int64    `parquet:"n"`
		S    *string  `parquet:"s,optional"`
		I    *int64   `parquet:"i,optional"`
		B    bool     `parquet:"b"`
		L    []string `parquet:"l,list"`
		Text string   `parquet:"text"`
	}
	var rows []row
	for n := range int64(2*rowGroupRows + 123) {
		r := row{N: n, B: n%3 == 0, Text: fmt.Sprint("row ", n)}
		if n%5 != 0 {
			s := fmt.Sprint(n * 7)
			r.S = &s
		}
		if n%7 == 0 {
			i := -n
			r.I = &i
		}
		for k := range n % 4 {
			r.L = append(r.L, fmt.Sprint("k", k))
		}
		rows = append(rows, r)
	}
	path := filepath.Join(t.TempDir(), "rows.parquet")
	if err := writeFile(path, rows, enc); err != nil {
		t.Fatal(err)
	}
	got, err := pq.ReadFile[row](path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows read back, want %d", len(got), len(rows))
	}
	for i := range rows {
		if len(rows[i].L) == 0 {
			rows[i].L = got[i].L // nil and empty read back alike
		}
		if !reflect.DeepEqual(got[i], rows[i]) {
			t.Fatalf("row %d reads back as %+v, want %+v", i, got[i], rows[i])
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := pq.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pf.RowGroups()); n != 3 {
		t.Errorf("%d row groups, want 3", n)
	}
}

package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/analyze/stats"
	"github.com/dmxlab/dmx/internal/golden"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// goldenFile compares got with testdata/NAME.golden, or rewrites the file
// under -update.
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), got)
}

// render runs f into a buffer and fails the test on an error.
func render(t *testing.T, f func(*bytes.Buffer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func refs(proc int, seqs ...int64) []trace.Ref {
	out := make([]trace.Ref, len(seqs))
	for i, s := range seqs {
		out[i] = trace.Ref{Proc: proc, Seq: s}
	}
	return out
}

// Reports of three runs: one violated (more findings than the table
// shows), one whose check could not run, one cut short.
var (
	violated = Report{File: "dead.db", Run: 1, Algo: "central", Mode: "sim", Status: "nothing more can happen", Verdict: analyze.Violated,
		Results: []analyze.Result{
			{Check: "clocks", Verdict: analyze.OK, Note: "40 vector and 40 Lamport clocks verified"},
			{Check: "deadlock", Verdict: analyze.Violated, Note: "3 processes blocked at the end", Findings: []analyze.Finding{
				{Check: "deadlock", Message: "P1 waits for P2 (printer) waits for P1 (scanner)", Events: append(refs(1, 7), refs(2, 9)...)},
				{Check: "deadlock", Message: "P3 waits for P1 (scanner)", Events: refs(3, 4)},
				{Check: "deadlock", Message: "P0 waits for P3 (printer)", Events: refs(0, 12)},
			}},
		}}
	broken = Report{File: "odd.db", Run: 2, Algo: "foreign", Mode: "import", Status: "complete", Verdict: analyze.Unknown,
		Results: []analyze.Result{
			{Check: "mutex-causal", Verdict: analyze.OK, Note: "4 critical sections on 1 resource"},
			{Check: "mutex-realtime", Verdict: analyze.Unknown, Err: errors.New("check mutex-realtime requires \"wall\", which dmx does not know")},
		}}
	// A lock log imported from ShiViz: its findings name the log's lines.
	imported = Report{File: "lock.db", Run: 1, Algo: "shiviz", Mode: "import", Status: "imported", Verdict: analyze.Violated,
		Results: []analyze.Result{
			{Check: "mutex-causal", Verdict: analyze.Violated, Note: "2 critical sections on 1 resource", Findings: []analyze.Finding{
				{Check: "mutex-causal", Message: "concurrent critical sections on cs: P0 [P0#2..P0#3] and P1 [P1#2..P1#3]: neither entry happened before the other",
					Events: append(refs(0, 2, 3), refs(1, 2, 3)...), Sources: []string{"lock.log:4", "lock.log:8", "lock.log:6", ""}},
			}},
		}}
	// A foreign lock log without wall times: mutex-realtime is skipped,
	// which leaves the verdict ok.
	quiet = Report{File: "log.db", Run: 1, Algo: "foreign", Mode: "import", Status: "complete", Verdict: analyze.OK,
		Results: []analyze.Result{
			{Check: "mutex-causal", Verdict: analyze.OK, Note: "6 critical sections on 1 resource"},
			{Check: "mutex-realtime", Verdict: analyze.Skipped, Note: "no wall times: 6 critical sections on 1 resource not checked"},
		}}
	short = Report{File: "short.db", Run: 1, Algo: "central", Mode: "sim", Status: "cut short at 5ms", Incomplete: true, Verdict: analyze.Unknown,
		Results: []analyze.Result{
			{Check: "mutex-causal", Verdict: analyze.OK, Note: "2 critical sections on 1 resource"},
			{Check: "liveness", Verdict: analyze.Unknown, Note: "the run was cut short with 2 requests pending"},
		}}
)

// TestReports: the check report in every format, for a violation, an
// error, an unknown verdict and a skipped check, alone and together.
func TestReports(t *testing.T) {
	for name, reps := range map[string][]Report{
		"findings": {violated},
		"errors":   {broken},
		"unknown":  {short},
		"skipped":  {quiet},
		"several":  {violated, broken, short, quiet},
		"imported": {imported},
	} {
		for _, format := range ReportFormats {
			got := render(t, func(b *bytes.Buffer) error { return Reports(b, format, reps, 2) })
			goldenFile(t, fmt.Sprintf("report-%s.%s", name, format), got)
		}
	}
	if err := Reports(new(bytes.Buffer), "yaml", nil, 1); err == nil {
		t.Error("format yaml: no error")
	}
}

func TestVerdict(t *testing.T) {
	ok := Report{Verdict: analyze.OK}
	for _, tt := range []struct {
		reps []Report
		want analyze.Verdict
	}{
		{nil, analyze.NotApplicable},
		{[]Report{ok, ok}, analyze.OK},
		{[]Report{ok, {Verdict: analyze.NotApplicable}}, analyze.NotApplicable},
		{[]Report{{Verdict: analyze.NotApplicable}, short}, analyze.Unknown},
		{[]Report{ok, short}, analyze.Unknown},
		{[]Report{violated, short}, analyze.Violated},
		{[]Report{short, violated, ok}, analyze.Violated},
		{[]Report{quiet, ok}, analyze.OK},
	} {
		if got := Verdict(tt.reps); got != tt.want {
			t.Errorf("verdict of %d reports: %s, want %s", len(tt.reps), got, tt.want)
		}
	}
}

func f64(v float64) *float64 { return &v }

// runs are three measured runs: mutual exclusion with every kind of
// seeds' figure, an election left unfinished, a multicast with heartbeats
// and lost messages.
var runs = []*stats.Stats{
	{Run: 1, Algorithm: "ricart-agrawala", Mode: "udp", Nodes: 5, Complete: true, Events: 412, DurationNS: 60_000_000,
		Messages: stats.Messages{Total: 80, ByType: map[string]int64{"request": 40, "reply": 40}},
		Mutex: &stats.Mutex{Resources: 1, Requests: 10, CriticalSections: 10, Throughput: 166.66666,
			MessagesPerCS: stats.PerCS{Measured: 8, ByType: map[string]float64{"request": 4, "reply": 4}, Each: map[int64]int64{8: 10},
				Seeds: &stats.Figure{Formula: "2(N-1)", Value: f64(8)}},
			ClientDelay: stats.Delay{Hops: stats.Dist{Count: 10, Mean: 2, P50: 2, P99: 2, Max: 2},
				WallNS: stats.Dist{Count: 10, Mean: 2_345_678, P50: 2_000_000, P99: 4_100_000, Max: 4_123_456},
				Seeds:  &stats.Figure{Formula: "2 (multicast + replies)", Value: f64(2)}},
			SyncDelay: stats.Delay{Seeds: &stats.Figure{Formula: "1", Value: f64(1)}},
		}},
	{Run: 2, Algorithm: "token-ring", Mode: "sim", Nodes: 4, Complete: false, Events: 300, DurationNS: 1_500_000_000,
		Messages: stats.Messages{Total: 90, ByType: map[string]int64{"token": 90}},
		Mutex: &stats.Mutex{Resources: 1, Requests: 12, Contended: 7, CriticalSections: 11, Throughput: 7.333,
			MessagesPerCS: stats.PerCS{Measured: 8.1818, ByType: map[string]float64{"token": 8.1818},
				Seeds: &stats.Figure{Formula: "1..inf", Min: f64(1)}},
			ClientDelay: stats.Delay{Hops: stats.Dist{Count: 11, Mean: 1.5, P50: 1, P99: 3, Max: 3},
				Seeds: &stats.Figure{Formula: "avg N/2 token hops, worst N-1", Value: f64(2), Min: f64(0), Max: f64(3)}},
			SyncDelay: stats.Delay{Hops: stats.Dist{Count: 7, Mean: 1, P50: 1, P99: 1, Max: 1},
				Seeds: &stats.Figure{Formula: "avg N/2, worst N-1", Value: f64(2), Min: f64(1), Max: f64(3)}},
		}},
	{Run: 3, Algorithm: "bully", Mode: "sim", Nodes: 5, Complete: true, Events: 800, DurationNS: 2_000_000_000,
		Messages: stats.Messages{Total: 24, ByType: map[string]int64{"election": 10, "answer": 8, "coordinator": 6}, Heartbeat: 300, Lost: 3},
		Election: &stats.Election{Starts: 4, Decisions: 9, Elections: 1, Unfinished: 1, MessagesOutside: 2,
			MessagesPerElection: stats.Measured{Measured: 14, Seeds: &stats.Figure{Formula: "best N-2, worst O(N^2) (N^2-1 when the lowest id starts)", Min: f64(3), Max: f64(24)}},
			Completion: stats.Delay{Hops: stats.Dist{Count: 1, Mean: 3, P50: 3, P99: 3, Max: 3}, WallNS: stats.Dist{Count: 1, Mean: 12e6, P50: 12e6, P99: 12e6, Max: 12e6},
				Seeds: &stats.Figure{Formula: "best 2N, avg 2.5N, worst 3N-1 message transmission times", Value: f64(12.5), Min: f64(10), Max: f64(14)}}}},
	{Run: 4, Algorithm: "tomcast", Mode: "import", Nodes: 3, Complete: true, Events: 150, DurationNS: 20_000_000,
		Messages:  stats.Messages{Total: 24, ByType: map[string]int64{"msg": 6, "ack": 18}},
		Multicast: &stats.Multicast{Multicasts: 2, Deliveries: 6, MessagesPerMulticast: 12}},
}

// TestStats: the measures in every format, of one trace and of several.
func TestStats(t *testing.T) {
	for _, format := range StatsFormats {
		goldenFile(t, "stats."+format, render(t, func(b *bytes.Buffer) error { return Stats(b, format, "run.db", runs) }))
		files := []StatsFile{{"a.db", runs[:2]}, {"b.db", runs[2:]}}
		goldenFile(t, "stats-several."+format, render(t, func(b *bytes.Buffer) error { return StatsFiles(b, format, files) }))
	}
}

// TestList: the algorithms of the registry in every format.
func TestList(t *testing.T) {
	for _, format := range ListFormats {
		goldenFile(t, "list."+format, render(t, func(b *bytes.Buffer) error { return List(b, format, registry.All()) }))
	}
}

// TestRows: query results in every format: NULL, text, a blob, numbers,
// and repeated column names.
func TestRows(t *testing.T) {
	header := []string{"x", "x", "x_2", "n", "f", "b"}
	rows := [][]any{
		{int64(1), int64(2), int64(3), nil, 1.5, []byte("hi")},
		{int64(-4), "text", "", nil, 1e21, []byte{}},
	}
	for _, format := range RowsFormats {
		goldenFile(t, "rows."+format, render(t, func(b *bytes.Buffer) error {
			i := 0
			_, err := Rows(b, format, header, func() ([]any, error) {
				if i == len(rows) {
					return nil, io.EOF
				}
				i++
				return rows[i-1], nil
			})
			return err
		}))
	}
}

// TestJSONKeys: a column whose name an earlier column has gets the first
// suffix no column has, so that every value keeps a key.
func TestJSONKeys(t *testing.T) {
	for _, tt := range []struct{ header, want []string }{
		{[]string{"a", "b"}, []string{"a", "b"}},
		{[]string{"x", "x", "x_2"}, []string{"x", "x_3", "x_2"}},
		{[]string{"x", "x", "x"}, []string{"x", "x_2", "x_3"}},
		{[]string{"proc", "proc_2", "proc", "proc"}, []string{"proc", "proc_2", "proc_3", "proc_4"}},
	} {
		if got := jsonKeys(tt.header); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("keys of %v: %v, want %v", tt.header, got, tt.want)
		}
	}
}

// rowsOf yields k rows of one column, i = 1..k, then err (io.EOF for a
// whole result).
func rowsOf(k int, err error) func() ([]any, error) {
	i := 0
	return func() ([]any, error) {
		if i == k {
			return nil, err
		}
		i++
		return []any{int64(i)}, nil
	}
}

// TestRowsStream: a table longer than a page is printed as pages, each
// under the header; an empty result is a header alone (table, csv) or an
// empty list (json); an error of the query ends the output after the rows
// read before it, and is returned.
func TestRowsStream(t *testing.T) {
	var b bytes.Buffer
	n, err := Rows(&b, "table", []string{"i"}, rowsOf(2*TablePage+1, io.EOF))
	if err != nil || n != 2*TablePage+1 {
		t.Fatalf("table: %d rows, %v", n, err)
	}
	if got := strings.Count(b.String(), "│ i "); got != 3 {
		t.Errorf("table of %d rows: %d headers, want 3 pages", n, got)
	}
	if !strings.Contains(b.String(), fmt.Sprintf("│ %d ", 2*TablePage+1)) {
		t.Errorf("the last row is missing")
	}
	for format, want := range map[string]string{"csv": "i\n", "json": "[]\n"} {
		b.Reset()
		if n, err := Rows(&b, format, []string{"i"}, rowsOf(0, io.EOF)); n != 0 || err != nil || b.String() != want {
			t.Errorf("%s, no rows: %q (%d, %v), want %q", format, b.String(), n, err, want)
		}
	}
	boom := errors.New("boom")
	for _, format := range RowsFormats {
		b.Reset()
		n, err := Rows(&b, format, []string{"i"}, rowsOf(2, boom))
		if err != boom || n != 2 || !strings.Contains(b.String(), "2") {
			t.Errorf("%s: error after 2 rows: %d rows, %v, output %q", format, n, err, b.String())
		}
	}
}

package viewer

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/internal/simtest"
	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/trace"
)

// lamportReorder is Lamport's algorithm without FIFO channels: two
// processes in the critical section at once, findings with structure.
func lamportReorder(p *runner.Plan) {
	p.Sim.Reorder = true
	p.Workload.Contention = runner.ContentionHigh
}

// openTrace opens the trace at path for the test.
func openTrace(t testing.TB, path string) *trace.Store {
	t.Helper()
	st, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// open records plans into one trace (a run each) and opens it.
func open(t testing.TB, plans ...runner.Plan) (*trace.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.db")
	for _, p := range plans {
		simtest.Record(t, path, p)
	}
	st := openTrace(t, path)
	return st, path
}

func check(st *trace.Store, run trace.Run) ([]analyze.Result, error) {
	r, err := st.Events(run.ID)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return analyze.Evaluate(run, r, analyze.All)
}

func newServer(t testing.TB, opts Options, stores ...*trace.Store) *Server {
	t.Helper()
	s, err := New(stores, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWindowMatchesBuild compares windows with what dmx render's Build
// finds in the same window by reading the whole run: the same events, the
// same messages between them, as many sections and down times.
func TestWindowMatchesBuild(t *testing.T) {
	runs := map[string]runner.Plan{
		"lamport-reorder": simtest.Plan(t, "lamport", 1, lamportReorder),
		"crash-recover":   simtest.Plan(t, "token-regeneration.json", 1, nil),
		"central-crash":   simtest.Plan(t, "crash-holder.json", 1, nil),
	}
	for name, p := range runs {
		t.Run(name, func(t *testing.T) {
			st, _ := open(t, p)
			s := newServer(t, Options{}, st)
			v := s.runs[0]
			o, err := v.outline()
			if err != nil {
				t.Fatal(err)
			}
			src := func() (trace.Reader, error) { return st.Events(v.run.ID) }
			fates, err := st.Undelivered(v.run.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range []axis{lamportAxis, wallAxis} {
				ext := o.Lamport
				if a == wallAxis {
					ext = o.Wall
				}
				span := ext[1] - ext[0]
				for _, f := range [][2]float64{{0, 1}, {0.1, 0.3}, {0.45, 0.55}, {0.9, 1}} {
					lo, hi := ext[0]+int64(f[0]*float64(span)), ext[0]+int64(f[1]*float64(span))
					w, err := v.window(a, o, lo, hi, DefaultMaxEvents, nil)
					if err != nil {
						t.Fatal(err)
					}
					opts := spacetime.Options{Axis: spacetime.Axis(a.String()), From: lo, To: hi, HasFrom: true, HasTo: true, MaxEvents: 1 << 30, Fates: fates, Heartbeats: true}
					d, err := spacetime.Build(v.run, src, opts)
					if err != nil {
						t.Fatal(err)
					}
					compareWindow(t, fmt.Sprintf("%s %d..%d", a, lo, hi), a, w, d)
				}
			}
		})
	}
}

func compareWindow(t *testing.T, what string, a axis, w *window, d *spacetime.Diagram) {
	t.Helper()
	var got, want []trace.Ref
	byRef := map[trace.Ref]wEvent{}
	for _, e := range w.Events {
		r := trace.Ref{Proc: e.Proc, Seq: e.Seq}
		got = append(got, r)
		byRef[r] = e
	}
	for _, e := range d.Events {
		want = append(want, e.Ref)
	}
	order := func(a, b trace.Ref) int { return cmp.Or(cmp.Compare(a.Proc, b.Proc), cmp.Compare(a.Seq, b.Seq)) }
	slices.SortFunc(got, order)
	slices.SortFunc(want, order)
	if !slices.Equal(got, want) {
		t.Errorf("%s: %d events, Build has %d", what, len(got), len(want))
		return
	}
	// Every message Build draws between two events of the window is the
	// receive's Other in the window.
	for _, m := range d.Msgs {
		if m.Send < 0 || m.Recv < 0 {
			continue
		}
		s, r := d.Events[m.Send].Ref, d.Events[m.Recv].Ref
		o := byRef[r].Other
		if o == nil || o.Proc != s.Proc || o.Seq != s.Seq {
			t.Errorf("%s: the receive %v does not point at its send %v (got %+v)", what, r, s, o)
		}
	}
	// Fates of messages sent in the window and never received.
	for _, m := range d.Msgs {
		if m.Send >= 0 && m.Recv < 0 && m.Fate != "delivered" {
			e := byRef[d.Events[m.Send].Ref]
			if e.Fate != m.Fate || e.Other != nil {
				t.Errorf("%s: %v's message: fate %q other %+v, Build says %q", what, d.Events[m.Send].Ref, e.Fate, e.Other, m.Fate)
			}
		}
	}
	// Build draws the sections entered by the window's end, and the
	// requests made in it that the run never granted.
	n := 0
	for _, s := range w.Sections {
		switch {
		case s.Enter != nil && s.Enter.key(a) <= w.Hi:
			n++
		case s.Enter == nil && s.Exit == nil && s.stop == nil && s.Request.key(a) >= w.Lo && s.Request.key(a) <= w.Hi:
			n++
		}
	}
	if n != len(d.Sections) {
		t.Errorf("%s: %d sections entered, Build has %d", what, n, len(d.Sections))
	}
	if len(w.Downs) != len(d.Downs) {
		t.Errorf("%s: %d down times, Build has %d", what, len(w.Downs), len(d.Downs))
	}
}

// TestFutureMatchesClocks checks the causal future of events against a
// scan of every vector clock of the run.
func TestFutureMatchesClocks(t *testing.T) {
	st, _ := open(t, simtest.Plan(t, "lamport", 1, lamportReorder))
	s := newServer(t, Options{}, st)
	v := s.runs[0]
	o, _ := v.outline()
	evs, err := st.AllEvents(v.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(evs); i += len(evs)/17 + 1 {
		e := evs[i]
		info, err := v.event(o, e.Ref())
		if err != nil {
			t.Fatal(err)
		}
		want := make([]int64, len(o.Lanes))
		for _, f := range evs {
			if int64(f.VC[e.Proc]) >= e.Seq && (want[f.Proc] == 0 || f.Seq < want[f.Proc]) {
				want[f.Proc] = f.Seq
			}
		}
		if !slices.Equal(info.Future, want) {
			t.Errorf("%v: future %v, the clocks say %v", e.Ref(), info.Future, want)
		}
		for q := range info.Past {
			if q != e.Proc && info.Past[q] != int64(e.VC[q]) {
				t.Errorf("%v: past %v, its clock %v", e.Ref(), info.Past, e.VC)
			}
		}
	}
}

// TestCounts: the overview counts every event once, and an exact density
// counts the window's events.
func TestCounts(t *testing.T) {
	st, _ := open(t, simtest.Plan(t, "lamport", 1, lamportReorder))
	s := newServer(t, Options{}, st)
	v := s.runs[0]
	o, _ := v.outline()
	for _, a := range []axis{lamportAxis, wallAxis} {
		ov, err := v.overview(a)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, c := range ov.Counts {
			sum += c
		}
		if sum != o.Events {
			t.Errorf("%s overview counts %d events of %d", a, sum, o.Events)
		}
		lo, hi := ov.Lo+(ov.Hi-ov.Lo)/3, ov.Lo+(ov.Hi-ov.Lo)/2
		d, err := v.density(a, o, lo, hi, 2000, nil)
		if err != nil {
			t.Fatal(err)
		}
		w, err := v.window(a, o, lo, hi, DefaultMaxEvents, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, c := range d.Counts {
			for _, x := range c {
				n += x
			}
		}
		if !d.Exact || n != int64(len(w.Events)) {
			t.Errorf("%s density of %d..%d counts %d events (exact %v), the window holds %d", a, lo, hi, n, d.Exact, len(w.Events))
		}
		// Coarser, from the run's slices: about as many.
		d, err = v.density(a, o, lo, hi, 50, nil)
		if err != nil {
			t.Fatal(err)
		}
		n = 0
		for _, c := range d.Counts {
			for _, x := range c {
				n += x
			}
		}
		if d.Exact || n < int64(len(w.Events))*9/10 || n > int64(len(w.Events))*11/10 {
			t.Errorf("%s density of %d..%d in 50 slices counts %d events (exact %v), the window holds %d", a, lo, hi, n, d.Exact, len(w.Events))
		}
	}
}

// TestOldTrace: a trace without the time indexes (made before them) is
// read by scanning, with the same windows, and the page is told.
func TestOldTrace(t *testing.T) {
	p := simtest.Plan(t, "lamport", 1, lamportReorder)
	st, path := open(t, p)
	newer := newServer(t, Options{}, st)
	// A path the note's command must quote for the shell.
	old := filepath.Join(t.TempDir(), "it's an old $trace.db")
	simtest.Record(t, old, p)
	db, err := sql.Open("sqlite3", old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP INDEX events_lamport; DROP INDEX events_wall`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ost := openTrace(t, old)
	s := newServer(t, Options{}, ost)
	v, nv := s.runs[0], newer.runs[0]
	o, err := v.outline()
	if err != nil {
		t.Fatal(err)
	}
	no, _ := nv.outline()
	if o.Indexed || !strings.Contains(o.Note, "without time indexes") || !no.Indexed || no.Note != "" {
		t.Errorf("old trace: indexed %v note %q; new trace (%s): indexed %v note %q", o.Indexed, o.Note, path, no.Indexed, no.Note)
	}
	if o.Lamport != no.Lamport || o.Wall != no.Wall || o.Events != no.Events {
		t.Errorf("old trace's extent %v %v %d, new one's %v %v %d", o.Lamport, o.Wall, o.Events, no.Lamport, no.Wall, no.Events)
	}
	w, err := v.window(lamportAxis, o, 100, 300, DefaultMaxEvents, nil)
	if err != nil {
		t.Fatal(err)
	}
	nw, _ := nv.window(lamportAxis, no, 100, 300, DefaultMaxEvents, nil)
	if len(w.Events) != len(nw.Events) || w.Indexed {
		t.Errorf("old trace's window: %d events (indexed %v), new trace's %d", len(w.Events), w.Indexed, len(nw.Events))
	}

	// The note's command, run by the shell as a user pasting it would,
	// adds the indexes.
	_, command, ok := strings.Cut(o.Note, "(the file is then written): ")
	if !ok || !strings.HasPrefix(command, "sqlite3 ") {
		t.Fatalf("the note gives no sqlite3 command: %q", o.Note)
	}
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Logf("no sqlite3 shell to run the note's command: %v", err)
		return
	}
	ost.Close()
	if out, err := exec.Command("sh", "-c", command).CombinedOutput(); err != nil {
		t.Fatalf("the note's command %s: %v\n%s", command, err, out)
	}
	again := openTrace(t, old)
	for _, name := range []string{"events_lamport", "events_wall"} {
		if has, err := again.HasIndex(name); err != nil || !has {
			t.Errorf("after the note's command, index %s: %v %v", name, has, err)
		}
	}
}

// serve starts the server's handler on a loopback listener.
func serve(t testing.TB, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { ln.Close() })
	return "http://" + ln.Addr().String()
}

type call struct {
	name     string
	method   string
	path     string
	host     string // Host header, if not the server's
	origin   string
	ctype    string
	body     string
	code     int
	contains string
}

func (c call) do(t *testing.T, base string) (int, string) {
	t.Helper()
	method := cmp.Or(c.method, "GET")
	req, err := http.NewRequest(method, base+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if c.host != "" {
		req.Host = c.host
	}
	if c.origin != "" {
		req.Header.Set("Origin", c.origin)
	}
	if method == "POST" {
		req.Header.Set("Content-Type", cmp.Or(c.ctype, "application/json"))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHTTP: the API's answers, its refusals and its errors (a 4xx with a
// message, never a crash).
func TestHTTP(t *testing.T) {
	st, _ := open(t, simtest.Plan(t, "lamport", 1, lamportReorder), simtest.Plan(t, "lamport", 1, func(p *runner.Plan) { p.Workload.Contention = runner.ContentionHigh }))
	s := newServer(t, Options{Check: check, QueryTimeout: 300 * time.Millisecond}, st)
	base := serve(t, s)
	port := base[strings.LastIndex(base, ":")+1:]
	calls := []call{
		{name: "page", path: "/", code: 200, contains: "<canvas"},
		{name: "script", path: "/app.js", code: 200, contains: "dmxView"},
		{name: "runs", path: "/api/runs", code: 200, contains: `"key":"0:2"`},
		{name: "localhost", path: "/api/runs", host: "localhost:" + port, code: 200},
		{name: "rebinding", path: "/api/runs", host: "evil.example:" + port, code: 403, contains: "refused"},
		{name: "rebinding page", path: "/", host: "evil.example:" + port, code: 403},
		{name: "other port", path: "/api/runs", host: "127.0.0.1:1", code: 403},
		{name: "no port", path: "/api/runs", host: "127.0.0.1", code: 403},
		// Issue 22: any IP literal got 200, the server listening on loopback only.
		{name: "other address", path: "/api/runs", host: "10.0.0.1:" + port, code: 403, contains: "loopback"},
		{name: "unspecified", path: "/api/runs", host: "0.0.0.0:" + port, code: 403},
		{name: "ipv6 other", path: "/api/runs", host: "[2001:db8::1]:" + port, code: 403},
		{name: "loopback", path: "/api/runs", host: "127.0.0.2:" + port, code: 200},
		{name: "ipv6 loopback", path: "/api/runs", host: "[::1]:" + port, code: 200},
		{name: "other origin", path: "/api/runs", origin: "http://evil.example", code: 403, contains: "another origin"},
		{name: "same origin", path: "/api/runs", origin: base, code: 200},
		{name: "form post", method: "POST", path: "/api/sql", ctype: "text/plain", body: `{"query":"SELECT 1"}`, code: 415},
		{name: "post page", method: "POST", path: "/", code: 405},
		{name: "unknown", path: "/api/nope", code: 404, contains: "no such API endpoint"},
		{name: "missing file", path: "/nope.js", code: 404},
		{name: "outline", path: "/api/outline?run=0:1", code: 200, contains: `"lanes"`},
		{name: "no run", path: "/api/outline?run=7:7", code: 404, contains: "no run"},
		{name: "window", path: "/api/window?run=0:1&lo=10&hi=40", code: 200, contains: `"events":[{`},
		{name: "window wall", path: "/api/window?run=0:1&axis=wall&lo=0&hi=5000000&procs=0,2", code: 200, contains: `"axis":"wall"`},
		{name: "bad axis", path: "/api/window?axis=space", code: 400, contains: "want lamport or wall"},
		{name: "bad lo", path: "/api/window?lo=abc&hi=4", code: 400, contains: "whole number"},
		{name: "backwards", path: "/api/window?lo=50&hi=4", code: 400, contains: "after"},
		{name: "bad procs", path: "/api/window?lo=0&hi=4&procs=0,99", code: 400, contains: "process numbers"},
		{name: "bad max", path: "/api/window?lo=0&hi=4&max=0", code: 400},
		{name: "huge", path: "/api/density?lo=-9223372036854775808&hi=9223372036854775807&n=10", code: 400, contains: "2^53"},
		{name: "not a number", path: "/api/window?lo=1e99&hi=2", code: 400},
		{name: "density", path: "/api/density?lo=0&hi=400&n=20", code: 200, contains: `"counts"`},
		{name: "bad density", path: "/api/density?lo=0&hi=400&n=0", code: 400},
		{name: "overview", path: "/api/overview?axis=wall", code: 200, contains: `"cs"`},
		{name: "event", path: "/api/event?ref=P1%2310", code: 200, contains: `"future"`},
		{name: "bad ref", path: "/api/event?ref=P1-10", code: 400, contains: "P3#120"},
		{name: "no event", path: "/api/event?ref=P1%23999999", code: 404},
		{name: "no replay", path: "/api/state?ref=P1%2310", code: 501, contains: "cannot replay"},
		{name: "findings", path: "/api/findings?run=0:1&wait=10000", code: 200, contains: `"mutex-causal"`},
		{name: "sql", method: "POST", path: "/api/sql", body: `{"run":"0:1","query":"SELECT id, kind FROM events WHERE run = 1 AND kind = 'cs_enter'"}`, code: 200, contains: `"how":"id"`},
		{name: "sql refs", method: "POST", path: "/api/sql", body: `{"query":"SELECT proc, seq FROM events WHERE run = 1 AND seq = 3"}`, code: 200, contains: `"how":"proc, seq"`},
		{name: "sql write", method: "POST", path: "/api/sql", body: `{"query":"DELETE FROM events"}`, code: 400},
		{name: "sql attach", method: "POST", path: "/api/sql", body: `{"query":"ATTACH 'x.db' AS x"}`, code: 400, contains: "read-only"},
		{name: "sql vacuum into", method: "POST", path: "/api/sql", body: `{"query":"VACUUM INTO 'copy.db'"}`, code: 400, contains: "read-only"},
		{name: "sql error", method: "POST", path: "/api/sql", body: `{"query":"SELECT nope FROM events"}`, code: 400, contains: "no such column"},
		{name: "sql empty", method: "POST", path: "/api/sql", body: `{"query":"  "}`, code: 400},
		{name: "sql not json", method: "POST", path: "/api/sql", body: `SELECT 1`, code: 400, contains: "JSON body"},
		{name: "sql forever", method: "POST", path: "/api/sql", body: `{"query":"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"}`, code: 408, contains: "stopped"},
		{name: "diff", path: "/api/diff?a=0:1&b=0:2&wait=10000", code: 200, contains: `"state":"done"`},
		{name: "diff one", path: "/api/diff?a=0:1", code: 400},
		{name: "diff same", path: "/api/diff?a=0:1&b=0:1", code: 400},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			code, body := c.do(t, base)
			if code != c.code || !strings.Contains(body, c.contains) {
				t.Errorf("%s %s: %d %.300s; want %d with %q", cmp.Or(c.method, "GET"), c.path, code, body, c.code, c.contains)
			}
			if code >= 400 && !strings.HasPrefix(c.path, "/nope") && c.name != "post page" && !strings.Contains(body, `"error"`) {
				t.Errorf("%s: error without a message: %s", c.path, body)
			}
		})
	}
}

// TestFindingsAndSQL: the findings list places each finding's events, and
// a query's highlights are the events its rows name.
func TestFindingsAndSQL(t *testing.T) {
	st, _ := open(t, simtest.Plan(t, "lamport", 1, lamportReorder))
	s := newServer(t, Options{Check: check}, st)
	v := s.runs[0]
	j := v.startCheck()
	<-j.done
	if j.res.State != "done" || j.res.Verdict != "violated" || len(j.res.Findings) == 0 {
		t.Fatalf("checks: %+v", j.res)
	}
	for _, f := range j.res.Findings {
		for _, e := range f.Events {
			if e.Seq == 0 || e.ID == 0 {
				t.Errorf("finding %d: event of P%d not placed: %+v", f.N, e.Proc, e)
			}
		}
		if len(f.Parts) == 0 {
			t.Errorf("finding %d (%s) has no structure", f.N, f.Check)
		}
	}
	res, err := v.query(t.Context(), `SELECT enter_event FROM cs_intervals WHERE run = 1 AND proc = 2`)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Highlight) != len(res.Rows) || len(res.Rows) == 0 || res.How != "enter_event" {
		t.Errorf("%d rows, %d highlighted by %q", len(res.Rows), len(res.Highlight), res.How)
	}
	for _, h := range res.Highlight {
		if h.Proc != 2 {
			t.Errorf("highlighted %+v, not an entry of P2", h)
		}
	}
	// The state endpoint answers what Options.State gives.
	s = newServer(t, Options{State: func(st *trace.Store, run trace.Run, at trace.Ref) (json.RawMessage, error) {
		return json.RawMessage(fmt.Sprintf(`{"at":%q}`, at)), nil
	}}, st)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/api/state?ref=P2%235", nil)
	req.Host = "127.0.0.1:80"
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"at":"P2#5"`) {
		t.Errorf("state: %d %s", rec.Code, rec.Body)
	}
}

// TestWindowJSON: the window's hand-written JSON says what encoding/json
// would.
func TestWindowJSON(t *testing.T) {
	st, _ := open(t, simtest.Plan(t, "bully", 1, func(p *runner.Plan) {
		f, err := runner.ParseFaults("crash:leader@500ms")
		if err != nil {
			t.Fatal(err)
		}
		p.Faults = append(p.Faults, f...)
	}))
	s := newServer(t, Options{}, st)
	v := s.runs[0]
	o, _ := v.outline()
	w, err := v.window(lamportAxis, o, o.Lamport[0], o.Lamport[1], DefaultMaxEvents, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Events = append(w.Events, wEvent{Kind: "odd \"kind\"\n", What: "é\\", Other: &wOther{Proc: 1}})
	type plain window
	mine, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	std, err := json.Marshal((*plain)(w))
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(mine, &a); err != nil {
		t.Fatalf("%v: %.200s", err, mine)
	}
	json.Unmarshal(std, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the window's JSON differs from encoding/json's:\n%.600s\n%.600s", mine, std)
	}
	marks := 0
	for _, e := range w.Events {
		if e.Mark != "" {
			marks++
		}
	}
	if marks == 0 {
		t.Errorf("a bully run with a crash has no marked event")
	}
}

// TestEmptyRun: a run without events is served, empty.
func TestEmptyRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	if _, err := trace.WriteRun(path, trace.Run{Algorithm: "central", Nodes: 3, Mode: "sim", Ended: 1, Status: "interrupted"}, nil); err != nil {
		t.Fatal(err)
	}
	st := openTrace(t, path)
	s := newServer(t, Options{Check: check}, st)
	base := serve(t, s)
	for _, c := range []call{
		{path: "/api/outline", code: 200, contains: `"events":0`},
		{path: "/api/overview?axis=wall", code: 200, contains: `"counts":[0`},
		{path: "/api/window?lo=0&hi=10", code: 200, contains: `"events":[]`},
		{path: "/api/density?lo=0&hi=10&n=5", code: 200},
		{path: "/api/findings?wait=10000", code: 200, contains: `"state":"done"`},
		{path: "/api/event?ref=P0%231", code: 404},
	} {
		if code, body := c.do(t, base); code != c.code || !strings.Contains(body, c.contains) {
			t.Errorf("%s: %d %.300s; want %d with %q", c.path, code, body, c.code, c.contains)
		}
	}
}

// TestCompare: two traces of the same seed have the same histories; with
// and without --reorder they part, and where is the first event that
// differs, with the same history before it.
func TestCompare(t *testing.T) {
	fifo := simtest.Plan(t, "lamport", 1, func(p *runner.Plan) { p.Workload.Contention = runner.ContentionHigh })
	a, _ := open(t, fifo)
	b, _ := open(t, fifo, simtest.Plan(t, "lamport", 1, lamportReorder))
	s := newServer(t, Options{}, a, b)
	same, err := compare(s.byKey["0:1"], s.byKey["1:1"])
	if err != nil {
		t.Fatal(err)
	}
	if len(same.Procs) != 0 || same.Same != 5 {
		t.Errorf("the same run twice: %d processes differ, %d the same", len(same.Procs), same.Same)
	}
	d, err := compare(s.byKey["0:1"], s.byKey["1:2"])
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Procs) == 0 {
		t.Fatal("with and without --reorder: no process differs")
	}
	ea, _ := a.AllEvents(1)
	eb, _ := b.AllEvents(2)
	hist := func(evs []trace.Event, p int) []trace.Event {
		var out []trace.Event
		for _, e := range evs {
			if e.Proc == p {
				out = append(out, e)
			}
		}
		return out
	}
	for _, pd := range d.Procs {
		ha, hb := hist(ea, pd.Proc), hist(eb, pd.Proc)
		for i := int64(0); i < pd.Seq-1; i++ {
			x, y := ha[i], hb[i]
			if x.Kind != y.Kind || x.MsgType != y.MsgType || x.Peer != y.Peer || x.Resource != y.Resource {
				t.Errorf("P%d differs first at #%d, but already at #%d: %v / %v", pd.Proc, pd.Seq, i+1, &x, &y)
			}
		}
		if pd.A == nil || pd.B == nil || pd.WhatA == pd.WhatB {
			t.Errorf("P%d at #%d: %+v", pd.Proc, pd.Seq, pd)
		}
	}
}

// TestEventMessageName: the event panel names a message as a reader says
// it, "P1's message 3", not by its id, 4294967299 (issue 28); the id stays
// in the JSON, for the SQL box.
func TestEventMessageName(t *testing.T) {
	st, _ := open(t, simtest.Plan(t, "ricart-agrawala", 1, nil))
	var proc, seq, msg int64
	if err := st.DB().QueryRow(`SELECT proc, seq, msg FROM events WHERE run = 1 AND kind = 'receive' AND peer = 1 ORDER BY id LIMIT 1`).Scan(&proc, &seq, &msg); err != nil {
		t.Fatal(err)
	}
	base := serve(t, newServer(t, Options{Check: check}, st))
	code, body := call{path: fmt.Sprintf("/api/event?ref=P%d%%23%d", proc, seq)}.do(t, base)
	var e struct {
		Msg *msgInfo `json:"msg"`
	}
	if err := json.Unmarshal([]byte(body), &e); code != 200 || err != nil || e.Msg == nil {
		t.Fatalf("event P%d#%d: %d %v %.300s", proc, seq, code, err, body)
	}
	if want := fmt.Sprintf("P1's message %d", msg&(1<<32-1)); e.Msg.Name != want || e.Msg.ID != msg {
		t.Errorf("message of P%d#%d: name %q, id %d; want %q, %d", proc, seq, e.Msg.Name, e.Msg.ID, want, msg)
	}
	if _, js := (call{path: "/app.js"}).do(t, base); !strings.Contains(js, "esc(e.msg.name)") || strings.Contains(js, "#${e.msg.id}") {
		t.Errorf("the page does not show the message's name in place of its id")
	}
}

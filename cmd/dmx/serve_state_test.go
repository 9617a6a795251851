package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/render/viewer"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/replay"
	"github.com/dmxlab/dmx/trace"
)

// stepOf is what a step of dmx replay --step --format json says of the
// process, and what /api/state says of it.
type stepOf struct {
	Event struct {
		Ref string `json:"ref"`
	} `json:"event"`
	Input   bool            `json:"input"`
	Cause   string          `json:"cause"`
	State   json.RawMessage `json:"state"`
	Changed json.RawMessage `json:"changed"`
}

// stateServer serves the traces with dmx serve's state hook and returns a
// function that GETs an API path from it.
func stateServer(t *testing.T, paths ...string) func(path string) (int, []byte) {
	t.Helper()
	var stores []*trace.Store
	for _, p := range paths {
		st, err := trace.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, st)
	}
	states := newServeStates()
	t.Cleanup(func() {
		states.Close()
		for _, st := range stores {
			st.Close()
		}
	})
	srv, err := viewer.New(stores, viewer.Options{State: states.after})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	return func(path string) (int, []byte) {
		rec := viewerGet(h, path)
		return rec.Code, rec.Body.Bytes()
	}
}

// viewerGet asks h, dmx serve's handler, for path as a browser on the
// machine does (the viewer answers only requests to a loopback host).
func viewerGet(h http.Handler, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", path, nil)
	req.Host = "127.0.0.1:80"
	h.ServeHTTP(rec, req)
	return rec
}

// TestServeState: the state /api/state gives after an event of a
// simulated run (with a crash and a recovery, and with losses) is what dmx
// replay --step reports for that event, whatever order the events are
// asked in: forward (the process's replay goes on where it was), backward
// (replayed again from the start) and again (answered from before).
func TestServeState(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ algo, faults string }{
		{"lamport", "crash:1@20ms,recover:1@40ms"},
		{"ricart-agrawala", "loss:10%,duplicate:10%"},
		{"bully", "crash:3@30ms"},
	} {
		t.Run(c.algo, func(t *testing.T) {
			path := filepath.Join(dir, c.algo+".db")
			if code, out, errs := dmx(t, "sim", c.algo, "-n", "4", "--seed", "5", "--entries", "3", "--faults", c.faults, "--no-check", "--no-diagram", "-o", path); code != 0 {
				t.Fatalf("sim: exit %d\n%s%s", code, out, errs)
			}
			code, out, errs := dmx(t, "replay", path, "--step", "--format", "json")
			if code != 0 {
				t.Fatalf("replay --step: exit %d\n%s", code, errs)
			}
			want := map[string]stepOf{}
			var refs []string
			sc := bufio.NewScanner(strings.NewReader(out))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var line struct{ Step *stepOf }
				if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
					t.Fatal(err)
				}
				if line.Step != nil {
					want[line.Step.Event.Ref] = *line.Step
					refs = append(refs, line.Step.Event.Ref)
				}
			}
			get := stateServer(t, path)
			// Every third event in the replay's order, then some again
			// backwards, then one twice.
			var ask []string
			for i := 0; i < len(refs); i += 3 {
				ask = append(ask, refs[i])
			}
			for i := len(refs) - 1; i >= 0; i -= 17 {
				ask = append(ask, refs[i])
			}
			ask = append(ask, refs[len(refs)/2], refs[len(refs)/2])
			resumed, cached := 0, 0
			for _, ref := range ask {
				code, body := get("/api/state?run=0:1&ref=" + strings.ReplaceAll(ref, "#", "%23"))
				if code != http.StatusOK {
					t.Fatalf("%s: %d %s", ref, code, body)
				}
				var got struct {
					Step     stepOf
					From     int64
					Replayed int64
					Cached   bool
				}
				if err := json.Unmarshal(body, &got); err != nil {
					t.Fatal(err)
				}
				w := want[ref]
				if got.Step.Event.Ref != ref || got.Step.Input != w.Input || got.Step.Cause != w.Cause ||
					!jsonEqual(got.Step.State, w.State) || !jsonEqual(got.Step.Changed, w.Changed) {
					t.Fatalf("state after %s:\n%s\ndmx replay --step says:\nstate %s changed %s input %v cause %s", ref, body, w.State, w.Changed, w.Input, w.Cause)
				}
				if got.From > 0 {
					resumed++
				}
				if got.Cached {
					cached++
				}
			}
			if resumed == 0 || cached == 0 {
				t.Errorf("%d answers went on from a process's earlier replay, %d were kept: want some of each", resumed, cached)
			}
		})
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	norm := func(m json.RawMessage) string {
		if len(m) == 0 || string(m) == "null" {
			return "null"
		}
		var v any
		if json.Unmarshal(m, &v) != nil {
			return string(m)
		}
		if s, ok := v.([]any); ok && len(s) == 0 {
			return "null"
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	return norm(a) == norm(b)
}

// TestServeStateRefused: a run that cannot be replayed gets a 422 saying
// why in words: an imported one; an event the run has not is a 404.
func TestServeStateRefused(t *testing.T) {
	dir := t.TempDir()
	orig, imported := importedRun(t, dir)
	get := stateServer(t, orig, imported)
	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{"/api/state?run=1:1&ref=P1%233", 422, "imported from another tool's log, and dmx can only replay runs it recorded"},
		{"/api/state?run=0:1&ref=P1%23999", 404, "no event P1#999"},
		{"/api/state?run=0:1&ref=P1%233", 200, `"step"`},
	} {
		code, body := get(c.path)
		if code != c.code || !bytes.Contains(body, []byte(c.want)) {
			t.Errorf("%s: %d %s; want %d saying %q", c.path, code, body, c.code, c.want)
		}
	}
}

// TestStateError: why a state cannot be shown, in words, for each reason
// replay gives.
func TestStateError(t *testing.T) {
	at := trace.Ref{Proc: 2, Seq: 40}
	div := &replay.Divergence{Proc: 2, Reason: "P2#31: Lamport clock 12, replayed 11"}
	for _, c := range []struct {
		name string
		run  trace.Run
		err  error
		want string
	}{
		{"imported", trace.Run{ID: 1, Mode: "import"}, &replay.BadTraceError{Err: errors.New("run 1 was imported")}, "imported from another tool's log"},
		{"cut", trace.Run{ID: 1, Mode: "udp", Status: trace.StatusAbandoned},
			&replay.CutError{At: trace.Ref{Proc: 2, Seq: 31}, Reason: "P2#31 receives message 9, whose send the trace does not hold (the run was cut short: abandoned)"},
			"no algorithm state after P2#40: P2#31 receives message 9, whose send the trace does not hold (the run was cut short: abandoned); P2's replay cannot go past it, its state is known up to P2#30"},
		{"other version", trace.Run{ID: 1, Mode: "sim", ToolVersion: "v0.0.1-old"}, div, "recorded by dmx v0.0.1-old, and this dmx (" + toolVersion() + ") does not replay it the same way"},
		{"same version", trace.Run{ID: 1, Mode: "sim", ToolVersion: toolVersion()}, div, "this dmx does not reproduce the recorded run (P2 diverges: P2#31: Lamport clock 12, replayed 11)"},
		{"unknown algorithm", trace.Run{ID: 1, Mode: "sim"}, &replay.BadTraceError{Err: errors.New(`no algorithm "paxos"`)}, `it cannot be replayed: no algorithm "paxos"`},
	} {
		if got := stateError(c.run, at, c.err).Error(); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q in it", c.name, got, c.want)
		}
	}
}

// TestServeStateMillion measures /api/state on the million-event run of
// BenchmarkServeMillion (DMX_SERVE_MILLION, as there), as docs/performance.md reports:
// an event late in a process asked about first (its process replayed from
// the start), then a few events on (the replay goes on), thousands on, an
// earlier event (another replay from the start, the first one kept), the
// first again (kept replay), and one asked twice (kept answer).
func TestServeStateMillion(t *testing.T) {
	path := millionTrace(t)
	get := stateServer(t, path)
	for _, c := range []struct{ what, ref string }{
		{"late in P3, first asked (replayed from P3's start)", "P3#120000"},
		{"100 events on (the replay goes on)", "P3#120100"},
		{"5,000 events on", "P3#125100"},
		{"half-way back (replayed from the start again)", "P3#60000"},
		{"between the two kept replays (the one at #60000 goes on)", "P3#120200"},
		{"the same again (kept answer)", "P3#120200"},
		{"another process, early (its drops read first)", "P5#500"},
	} {
		t0 := time.Now()
		code, body := get("/api/state?run=0:1&ref=" + strings.ReplaceAll(c.ref, "#", "%23"))
		took := time.Since(t0)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", c.ref, code, body)
		}
		var a struct {
			From, Replayed int64
			Cached         bool
		}
		json.Unmarshal(body, &a)
		t.Logf("%-10s %-55s %8.1f ms (%d events replayed from #%d, kept %v)", c.ref, c.what, float64(took.Microseconds())/1000, a.Replayed, a.From, a.Cached)
	}
}

// importedRun records a small central run in dir and imports it back
// from its ShiViz log: a run dmx has (orig) and one it cannot replay.
func importedRun(t *testing.T, dir string) (orig, imported string) {
	t.Helper()
	orig = filepath.Join(dir, "orig.db")
	dmxOK(t, "sim", "central", "-n", "3", "--entries", "2", "--seed", "2", "--no-check", "--no-diagram", "-o", orig)
	log := filepath.Join(dir, "run.log")
	dmxOK(t, "export", "shiviz", orig, "-o", log)
	imported = filepath.Join(dir, "imported.db")
	dmxOK(t, "import", "shiviz", log, "-o", imported)
	return orig, imported
}

// TestServeBadInput: dmx serve refuses what it cannot serve with exit 2
// and a message, before it listens.
func TestServeBadInput(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte("not a trace"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.db")
	dmxOK(t, "sim", "central", "-n", "2", "--entries", "1", "--no-diagram", "-o", empty)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "serve: TRACE is missing: dmx serve TRACE..."},
		{[]string{"serve", filepath.Join(dir, "nope.db")}, "no such trace file"},
		{[]string{"serve", junk}, "not a dmx trace"},
		{[]string{"serve", empty, "--addr", "127.0.0.1:99999"}, "listen on 127.0.0.1:99999"},
	} {
		code, _, errs := dmx(t, c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("dmx %s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
}

// TestOnePalette: dmx render and dmx serve give every message type and
// resource of a run the same colour (issue 23: they differed).
func TestOnePalette(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "failover.db")
	dmxOK(t, "sim", "--scenario", filepath.Join("..", "..", "examples", "central-failover.json"), "--no-diagram", "-o", db)
	dot := filepath.Join(dir, "d.dot")
	dmxOK(t, "render", db, "-o", dot, "--from", "1", "--to", "400")
	st, err := trace.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := viewer.New([]*trace.Store{st}, viewer.Options{Roles: registry.Roles, MsgTypes: msgTypes})
	if err != nil {
		t.Fatal(err)
	}
	rec := viewerGet(srv.Handler(), "/api/outline?run=0:1")
	if rec.Code != 200 {
		t.Fatalf("outline: %d %s", rec.Code, rec.Body)
	}
	var out struct {
		Colors struct{ Types, Resources map[string]string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	b := readFile(t, dot)
	// Every labelled message arrow of the picture: its colour is the
	// viewer's for its type.
	seen := 0
	for _, m := range regexp.MustCompile(`color="(#[0-9a-f]{6})" penwidth=1 (?:style=dashed )?label="([a-z_]+)" lp=`).FindAllSubmatch(b, -1) {
		col, typ := string(m[1]), string(m[2])
		if want := out.Colors.Types[typ]; want == "" || want != col {
			t.Errorf("message %s: %s in the picture, %q in the viewer", typ, col, want)
		}
		seen++
	}
	if seen < 5 || len(out.Colors.Types) < 5 || len(out.Colors.Resources) == 0 {
		t.Fatalf("%d message labels compared; the viewer's colours: %v", seen, out.Colors)
	}
}

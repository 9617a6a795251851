package viewer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/internal/simtest"
	"github.com/dmxlab/dmx/trace"
)

// TestLoopback: the server is offered to loopback addresses only (issue
// 22: --addr 0.0.0.0 was taken silently).
func TestLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:0": true, "localhost:8080": true, "[::1]:0": true, "127.1.2.3:0": true,
		"0.0.0.0:0": false, ":8080": false, "[::]:0": false, "10.0.0.1:80": false, "example.com:80": false, "nonsense": false,
	} {
		if err := Loopback(addr); (err == nil) != ok {
			t.Errorf("Loopback(%q) = %v, want ok %v", addr, err, ok)
		}
	}
}

// TestSQLBoxBytes: a reply of the SQL box is bounded in bytes as in rows
// (issue 22: one 50 MB value made a 300 MB reply; six at once 7.7 GB).
func TestSQLBoxBytes(t *testing.T) {
	st, _ := open(t, simtest.Plan(t, "lamport", 1, lamportReorder))
	s := newServer(t, Options{Check: check}, st)
	base := serve(t, s)
	for _, c := range []struct{ q, want string }{
		// A value past the store's cap on a query's values.
		{`SELECT zeroblob(50000000)`, "query stopped: a value of more than"},
		// Many long values: the reply stops before it is big.
		{`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500) SELECT printf('%.*c', 1000000, 'x') AS a FROM n`, `"more":true`},
	} {
		body := fmt.Sprintf(`{"run":"0:1","query":%q}`, c.q)
		code, reply := call{method: "POST", path: "/api/sql", body: body}.do(t, base)
		if !strings.Contains(reply, c.want) {
			t.Errorf("%.60s: %d %.300s; want %q", c.q, code, reply, c.want)
		}
		if len(reply) > maxReplyBytes+64<<10 {
			t.Errorf("%.60s: a reply of %d bytes", c.q, len(reply))
		}
		if code == 200 {
			var r sqlReply
			if err := json.Unmarshal([]byte(reply), &r); err != nil {
				t.Fatal(err)
			}
			if len(r.Rows) == 0 || !strings.HasSuffix(r.Rows[0][0].(string), "(1000000 bytes: dmx sql prints it whole)") {
				t.Errorf("a long value is not shown cut: %d rows, %.100q", len(r.Rows), reply)
			}
		}
	}
}

// TestSlowRequests: a request whose body drips in, or a connection that
// stays idle, is closed after the server's time-outs (issue 22: 3,000
// dripping POSTs stayed open for ever).
func TestSlowRequests(t *testing.T) {
	st, _ := open(t, simtest.Plan(t, "lamport", 1, lamportReorder))
	s := newServer(t, Options{Check: check, ReadTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond}, st)
	base := serve(t, s)
	addr := strings.TrimPrefix(base, "http://")
	for _, what := range []string{"drip", "idle", "headers"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		switch what {
		case "drip":
			fmt.Fprintf(conn, "POST /api/sql HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", addr)
		case "idle":
			fmt.Fprintf(conn, "GET /api/runs HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("idle: %v %v", resp, err)
			}
		case "headers":
			fmt.Fprintf(conn, "GET /api/runs HTTP/1.1\r\nHost: %s\r\n", addr)
		}
		start := time.Now()
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			buf := make([]byte, 1<<16)
			for {
				// A byte a while, as a slow client; the server ends it.
				if what == "drip" {
					conn.Write([]byte(" "))
				}
				conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				_, err := conn.Read(buf)
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					continue
				}
				if err != nil {
					return
				}
			}
		}()
		select {
		case <-closed:
			t.Logf("%s: closed after %v", what, time.Since(start).Round(time.Millisecond))
		case <-time.After(20 * time.Second):
			t.Errorf("%s: the connection is still open after 20s", what)
		}
	}
}

// TestTooManyLanes: a run of more processes than the page draws is a 4xx
// that says so (issue 22: 500).
func TestTooManyLanes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wide.db")
	const n = maxLanes + 1
	evs := make([]trace.Event, n)
	for p := range evs {
		evs[p] = trace.Event{Proc: p, Seq: 1, Kind: trace.KindInternal, Lamport: 1, Peer: trace.NoPeer}
	}
	if _, err := trace.WriteRun(path, trace.Run{Algorithm: "wide", Nodes: n, Mode: "import", NoSeed: true, Ended: 1, Complete: true, Status: "done"}, evs); err != nil {
		t.Fatal(err)
	}
	st := openTrace(t, path)
	base := serve(t, newServer(t, Options{}, st))
	code, body := call{path: "/api/outline?run=0:1"}.do(t, base)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "the viewer draws at most 4096") {
		t.Errorf("outline of %d processes: %d %.300s", n, code, body)
	}
}

// TestNonsenseWallTimes: a run whose wall times are too far apart for an
// axis (MinInt64 beside real times, as a crafted trace holds) is a 422 on
// its wall axis and drawn on its Lamport axis; it was a 500 that read
// "Scan error on column b" (found by the adversarial pass of issue 22).
func TestNonsenseWallTimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wall.db")
	w, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := w.BeginRun(trace.Run{Algorithm: "wall", Nodes: 2, Mode: "import", NoSeed: true, Complete: true})
	if err != nil {
		t.Fatal(err)
	}
	wr := w.NewWriter(id)
	for i, wall := range []int64{math.MinInt64, 5, 1 << 40} {
		if err := wr.Add(&trace.Event{Proc: i % 2, Seq: int64(i/2 + 1), Kind: trace.KindInternal, Lamport: uint64(i + 1), Wall: wall, Peer: trace.NoPeer}); err != nil {
			t.Fatal(err)
		}
	}
	if err := wr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.EndRun(id, 1, true, "done"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	st := openTrace(t, path)
	base := serve(t, newServer(t, Options{}, st))
	for _, p := range []string{"/api/overview?axis=wall", "/api/density?axis=wall", "/api/window?axis=wall&lo=0&hi=10"} {
		if code, body := (call{path: p}).do(t, base); code != http.StatusUnprocessableEntity || !strings.Contains(body, "too far apart for a wall axis") {
			t.Errorf("%s: %d %.300s", p, code, body)
		}
	}
	for _, p := range []string{"/api/outline", "/api/overview", "/api/window?lo=0&hi=10"} {
		if code, body := (call{path: p}).do(t, base); code != http.StatusOK {
			t.Errorf("%s: %d %.300s", p, code, body)
		}
	}
}

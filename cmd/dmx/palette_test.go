package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/dmxlab/dmx/render/viewer"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// TestOnePalette: dmx render and dmx serve give every message type and
// resource of a run the same colour (issue 23: they differed).
func TestOnePalette(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "failover.db")
	if code, _, errs := dmx(t, "sim", "--scenario", filepath.Join("..", "..", "examples", "central-failover.json"), "--no-diagram", "-o", db); code != 0 {
		t.Fatalf("sim: %s", errs)
	}
	dot := filepath.Join(dir, "d.dot")
	if code, _, errs := dmx(t, "render", db, "-o", dot, "--from", "1", "--to", "400"); code != 0 {
		t.Fatalf("render: %s", errs)
	}
	st, err := trace.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := viewer.New([]*trace.Store{st}, viewer.Options{Roles: registry.Roles, MsgTypes: msgTypes})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/api/outline?run=0:1", nil)
	req.Host = "127.0.0.1:80"
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("outline: %d %s", rec.Code, rec.Body)
	}
	var out struct {
		Colors struct{ Types, Resources map[string]string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dot)
	if err != nil {
		t.Fatal(err)
	}
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

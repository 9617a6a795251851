package nodekit_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner/nodekit"
)

// TestOutputs: each output method writes the line the protocol defines,
// and every input is answered by done, flushed.
func TestOutputs(t *testing.T) {
	n := nodekit.New()
	var seed uint64
	var draw int
	n.OnInit = func() {
		seed, draw = n.Seed, n.Rand.IntN(1000)
		n.Broadcast(map[string]any{"type": "hello", "from": n.ID})
		n.Leader(2, 3)
		n.Leader(1, 0)
		n.Timer("beat", 1500*time.Microsecond)
		n.Cancel("beat")
		n.Note("%d nodes", n.N)
		n.Waiting(2, 0)
	}
	n.OnTimer = func(name string) { n.Note("timer %s at clock %d", name, n.Clock) }
	var out bytes.Buffer
	in := `{"type":"init","node":1,"nodes":3,"seed":42,"params":{"k":"v"},"restart":true,"resource":"cs","clock":1}
{"type":"timer","name":"beat","clock":7}
{"type":"release","resource":"cs","clock":8}
`
	if err := n.Serve(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"send","to":0,"body":{"from":1,"type":"hello"}}
{"type":"send","to":2,"body":{"from":1,"type":"hello"}}
{"type":"leader","leader":2,"term":3}
{"type":"leader","leader":1}
{"type":"timer","name":"beat","after_ms":1.5}
{"type":"cancel","name":"beat"}
{"type":"note","text":"3 nodes"}
{"type":"waiting","for":[0,2]}
{"type":"done"}
{"type":"note","text":"timer beat at clock 7"}
{"type":"done"}
{"type":"done"}
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if seed != 42 || !n.Restart || n.Params["k"] != "v" || n.Resource != "cs" {
		t.Errorf("init not taken in: seed %d restart %v params %v resource %q", seed, n.Restart, n.Params, n.Resource)
	}
	// The same seed, the same draws.
	m := nodekit.New()
	var again int
	m.OnInit = func() { again = m.Rand.IntN(1000) }
	m.Serve(strings.NewReader(in[:strings.IndexByte(in, '\n')+1]), &bytes.Buffer{})
	if again != draw {
		t.Errorf("seed 42 drew %d, then %d", draw, again)
	}
}

// TestBadInput: a line that is not JSON ends Serve with an error that
// shows it.
func TestBadInput(t *testing.T) {
	err := nodekit.New().Serve(strings.NewReader("{oops\n"), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "{oops") {
		t.Errorf("Serve = %v, want an error naming the line", err)
	}
	err = nodekit.New().Serve(strings.NewReader(`{"type":"init"}`+"\n"), errWriter{})
	if err == nil {
		t.Error("Serve wrote to a broken stdout without an error")
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, bytes.ErrTooLarge }

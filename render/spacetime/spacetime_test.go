package spacetime_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/internal/golden"
	"github.com/dmxlab/dmx/internal/simtest"
	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// recorded is a run recorded into a trace file, ready to draw.
type recorded struct {
	st  *trace.Store
	run trace.Run
}

// record records the run of p (a simulated run) into a fresh trace file.
func record(t testing.TB, p runner.Plan) recorded {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.db")
	return openRun(t, path, simtest.Record(t, path, p))
}

func reopen(t testing.TB, st *trace.Store, path string, id int64) recorded {
	t.Helper()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return openRun(t, path, id)
}

// openRun opens the trace at path read-only, at its run id.
func openRun(t testing.TB, path string, id int64) recorded {
	t.Helper()
	ro, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	run, err := ro.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	return recorded{ro, run}
}

// dropsRun writes a run by hand with every fate of a message that is not
// delivered (dmx has no loss fault yet): P0's first message to P1 is
// dropped, its second delivered; P1 crashes and a message sent to it while
// it is down is lost to the crash; a message to P2 is still in flight when
// the run ends.
func dropsRun(t testing.TB) recorded {
	t.Helper()
	path := filepath.Join(t.TempDir(), "drops.db")
	st, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.BeginRun(trace.Run{Algorithm: "handmade", Nodes: 3, Mode: "import", Started: 1})
	if err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter(id)
	var lam [3]uint64
	var seq [3]int64
	var sent [3]int64
	wall := int64(0)
	emit := func(p int, kind trace.Kind, set func(*trace.Event)) *trace.Event {
		lam[p]++
		seq[p]++
		wall += 1000
		ev := &trace.Event{Proc: p, Seq: seq[p], Kind: kind, Lamport: lam[p], Wall: wall, Peer: trace.NoPeer}
		if set != nil {
			set(ev)
		}
		if err := w.Add(ev); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	send := func(from, to int, typ string) (int64, uint64) {
		sent[from]++
		m := trace.MsgID(from, sent[from])
		ev := emit(from, trace.KindSend, func(ev *trace.Event) { ev.Msg, ev.Peer, ev.MsgType = m, to, typ })
		return m, ev.Lamport
	}
	recv := func(to, from int, m int64, at uint64, typ string) {
		lam[to] = max(lam[to], at)
		emit(to, trace.KindReceive, func(ev *trace.Event) { ev.Msg, ev.Peer, ev.MsgType = m, from, typ })
	}
	for p := range 3 {
		emit(p, trace.KindStart, nil)
	}
	m1, _ := send(0, 1, "ping")
	emit(0, trace.KindDrop, func(ev *trace.Event) { ev.Msg, ev.Peer, ev.MsgType = m1, 1, "ping" })
	m2, l2 := send(0, 1, "ping")
	recv(1, 0, m2, l2, "ping")
	m3, l3 := send(1, 0, "pong")
	recv(0, 1, m3, l3, "pong")
	emit(1, trace.KindCrash, func(ev *trace.Event) {
		ev.Detail = trace.EncodeDetail(trace.Crash{Reason: "killed by SIGKILL", Fault: "crash:1@5us"})
	})
	send(0, 1, "ping") // lost: P1 is down
	send(0, 2, "ping") // in flight at the end
	emit(1, trace.KindRecover, nil)
	for range 4 {
		emit(2, trace.KindInternal, func(ev *trace.Event) { ev.Detail = trace.EncodeDetail(trace.Note{Text: "thinking"}) })
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.EndRun(id, wall, true, "ok"); err != nil {
		t.Fatal(err)
	}
	return reopen(t, st, path, id)
}

// draw builds the diagram of r with opts, the findings of its checks
// included.
func draw(t testing.TB, r recorded, opts spacetime.Options) *spacetime.Diagram {
	t.Helper()
	prepare(t, r, &opts)
	src := func() (trace.Reader, error) { return r.st.Events(r.run.ID) }
	d, err := spacetime.Build(r.run, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// prepare gives opts what dmx render gives them: the findings of the
// checks of r's algorithm, the fates of the messages, the processes'
// roles and the declared message types.
func prepare(t testing.TB, r recorded, opts *spacetime.Options) {
	t.Helper()
	opts.Findings = append(opts.Findings, findings(t, r)...)
	var err error
	if opts.Fates, err = r.st.Undelivered(r.run.ID); err != nil {
		t.Fatal(err)
	}
	if spec := registry.Lookup(r.run.Algorithm); spec != nil && spec.Roles != nil {
		p, err := runner.PlanFromRun(r.run, registry.Lookup)
		if err != nil {
			t.Fatal(err)
		}
		opts.Roles = spec.Roles(p.N, p.Params)
		opts.MsgTypes = spec.MsgTypes
	}
}

// findings are the findings of the checks of r's algorithm (all checks
// for a trace of another program), as dmx check lists them.
func findings(t testing.TB, r recorded) []analyze.Finding {
	t.Helper()
	checks := analyze.All
	var evalOpts []analyze.Option
	if spec := registry.Lookup(r.run.Algorithm); spec != nil {
		var err error
		if checks, err = analyze.For(spec.Properties); err != nil {
			t.Fatal(err)
		}
		evalOpts = append(evalOpts, analyze.WithValidity(spec.Validity)) // as dmx check does
	}
	rd, err := r.st.Events(r.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	results, err := analyze.Evaluate(r.run, rd, checks, evalOpts...)
	rd.Close()
	if err != nil {
		t.Fatal(err)
	}
	var out []analyze.Finding
	for _, res := range results {
		out = append(out, res.Findings...)
	}
	return out
}

type drawCase struct {
	name    string
	run     func(t testing.TB) recorded
	opts    spacetime.Options
	finding bool     // red must show
	dot     []string // substrings the DOT must have
}

func cases() []drawCase {
	sim := func(name string, seed uint64, edit func(*runner.Plan)) func(t testing.TB) recorded {
		return func(t testing.TB) recorded { return record(t, simtest.Plan(t, name, seed, edit)) }
	}
	small := func(n, entries int) func(*runner.Plan) {
		return func(p *runner.Plan) { p.N, p.Workload.Entries = n, entries }
	}
	return []drawCase{
		{name: "clean", run: sim("ricart-agrawala", 1, small(3, 2)),
			dot: []string{`label="request"`, `label="reply"`, `class="section"`, `label="P2\r"`}},
		{name: "roles", run: sim("central", 4, small(3, 1)),
			dot: []string{`label="coordinator\r"`, `label="grant"`}},
		{name: "crash-restart", run: sim("central", 3, func(p *runner.Plan) {
			small(3, 3)(p)
			f, err := runner.ParseFaults("crash:1@20ms,recover:1@60ms")
			if err != nil {
				panic(err)
			}
			p.Faults = f
		}), dot: []string{`label="crash"`, `label="recover"`, `class="down"`, `class="cross"`}},
		{name: "drops", run: dropsRun,
			dot: []string{`label="ping (dropped)"`, `label="ping (lost: crash)"`, `label="ping (in flight)"`, `label="×5"`}},
		{name: "mutex", run: sim("lamport-without-fifo.json", 0, nil), opts: spacetime.Options{Finding: 1, Radius: 8}, finding: true,
			dot: []string{`missing: `, `class="finding"`}},
		{name: "deadlock", run: sim("nested-deadlock.json", 0, nil), finding: true,
			dot: []string{`#5.1`, `class="wait"`}},
		{name: "split-brain", run: sim("bully-tight-timeout.json", 0, nil), opts: spacetime.Options{Finding: 1, Radius: 6}, finding: true,
			dot: []string{`leads`, `class="finding"`}},
		{name: "total-order", run: sim("tomcast-without-fifo.json", 0, nil), opts: spacetime.Options{Finding: 1, Radius: 6}, finding: true,
			dot: []string{`class="finding"`, `#1 P`}},
		{name: "faults", run: sim("bully", 3, func(p *runner.Plan) {
			p.N, p.Duration = 3, 250e6
			f, err := runner.ParseFaults("partition:0:1+2@60ms-120ms,pause:leader@150ms-200ms")
			if err != nil {
				panic(err)
			}
			p.Faults = f
		}), opts: spacetime.Options{Axis: spacetime.Wall, HasFrom: true, From: 50e6, HasTo: true, To: 210e6},
			dot: []string{`label="partition P0 | P1 P2"`, `label="paused 50ms"`, `class="fault partition"`, `class="fault pause"`}},
		{name: "wall", run: sim("bully", 2, func(p *runner.Plan) { p.N = 3; p.Duration = 300e6 }),
			opts: spacetime.Options{Axis: spacetime.Wall, HasTo: true, To: 150e6, Heartbeats: true},
			dot:  []string{`wall time since the run's first event`, `class="message background"`}},
	}
}

// TestGolden draws each kind of run as DOT and compares it with
// testdata/NAME.dot (go test -update rewrites them), then checks that its
// SVG is XML and its PNG decodes, has the size of the picture and is not
// blank (and shows red where a finding is drawn).
func TestGolden(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			r := c.run(t)
			d := draw(t, r, c.opts)
			p := spacetime.Layout(d, !c.opts.NoCollapse)
			var dot bytes.Buffer
			if err := spacetime.WriteDOT(&dot, p); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", c.name+".dot"), dot.Bytes())
			for _, s := range c.dot {
				if !bytes.Contains(dot.Bytes(), []byte(s)) {
					t.Errorf("the DOT has no %q", s)
				}
			}
			var again bytes.Buffer
			if err := spacetime.WriteDOT(&again, spacetime.Layout(draw(t, r, c.opts), !c.opts.NoCollapse)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(dot.Bytes(), again.Bytes()) {
				os.WriteFile(filepath.Join(os.TempDir(), c.name+"-a.dot"), dot.Bytes(), 0o644)
				os.WriteFile(filepath.Join(os.TempDir(), c.name+"-b.dot"), again.Bytes(), 0o644)
				t.Error("two drawings of one run differ")
			}

			var svg, gv bytes.Buffer
			if err := spacetime.WriteSVG(&svg, p); err != nil {
				t.Fatal(err)
			}
			checkSVG(t, svg.Bytes(), c.finding)
			// The DOT draws the same picture through Graphviz.
			if err := spacetime.DOTToSVG(&gv, dot.Bytes()); err != nil {
				t.Fatal(err)
			}
			checkSVG(t, gv.Bytes(), c.finding)
			var pngb bytes.Buffer
			if err := spacetime.WritePNG(&pngb, p); err != nil {
				t.Fatal(err)
			}
			checkPNG(t, pngb.Bytes(), p, c.finding)
			if os.Getenv("DMX_KEEP_PICTURES") != "" {
				dir := os.Getenv("DMX_KEEP_PICTURES")
				os.WriteFile(filepath.Join(dir, c.name+".svg"), svg.Bytes(), 0o644)
				os.WriteFile(filepath.Join(dir, c.name+".png"), pngb.Bytes(), 0o644)
			}
		})
	}
}

// checkSVG parses the SVG as XML and looks for what every diagram has.
func checkSVG(t *testing.T, svg []byte, finding bool) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	dec.Strict = true
	elems := map[string]int{}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			elems[se.Name.Local]++
		}
	}
	if elems["svg"] != 1 || elems["path"] == 0 || elems["text"] == 0 || elems["polygon"] == 0 {
		t.Errorf("the SVG lacks lines, text or arrowheads: %v", elems)
	}
	if finding && !bytes.Contains(svg, []byte(`stroke="#d7191c`)) {
		t.Error("the SVG draws no finding in red")
	}
}

// checkPNG decodes the PNG and checks its size and that it shows something
// (and red, for a finding).
func checkPNG(t *testing.T, b []byte, p *spacetime.Picture, finding bool) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the PNG does not decode: %v", err)
	}
	w, h, _, err := spacetime.PNGSize(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got.X != w || got.Y != h {
		t.Errorf("the PNG is %dx%d, want %dx%d", got.X, got.Y, w, h)
	}
	var inked, red int
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r < 0xe000 || g < 0xe000 || b < 0xe000 {
				inked++
			}
			if r > 0xc000 && g < 0x5000 && b < 0x7000 {
				red++
			}
		}
	}
	if total := (bounds.Dx() / 2) * (bounds.Dy() / 2); inked < total/200 {
		t.Errorf("the PNG is blank: %d of %d sampled pixels inked", inked, total)
	}
	if finding && red < 20 {
		t.Errorf("the PNG shows no finding in red (%d red pixels sampled)", red)
	}
}

package spacetime_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/internal/golden"
	"github.com/dmxlab/dmx/internal/simtest"
	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/trace"
)

// windowCase is a run whose default picture must show what matters in it.
type windowCase struct {
	name  string
	run   func(t testing.TB) recorded
	check func(t *testing.T, d *spacetime.Diagram)
}

func windowCases() []windowCase {
	sim := func(name string, seed uint64, edit func(*runner.Plan)) func(t testing.TB) recorded {
		return func(t testing.TB) recorded { return record(t, simtest.Plan(t, name, seed, edit)) }
	}
	return []windowCase{
		// Issue 23: "dmx run bully --seed 7 --faults
		// crash:leader@600ms,crash:leader@1300ms draws the first 400
		// events; the crashes are at Lamport 247 and 460."
		{name: "bully-crashes", run: sim("bully", 7, func(p *runner.Plan) {
			f, err := runner.ParseFaults("crash:leader@600ms,crash:leader@1300ms")
			if err != nil {
				panic(err)
			}
			p.Faults, p.Duration = f, 2e9
		}), check: func(t *testing.T, d *spacetime.Diagram) {
			wantKinds(t, d, trace.KindCrash, 2)
			wantReigns(t, d, 4, 3, 2) // the first leader, the one after each crash
		}},
		{name: "central-failover", run: sim("central-failover.json", 0, nil), check: func(t *testing.T, d *spacetime.Diagram) {
			wantKinds(t, d, trace.KindCrash, 1)
			wantReigns(t, d, 4, 3) // the coordinator killed, and the next
		}},
		{name: "paused-leader", run: sim("bully-paused-leader.json", 0, nil), check: func(t *testing.T, d *spacetime.Diagram) {
			wantFault(t, d, "pause", 4, true)
			wantReigns(t, d, 4, 3) // both leaders of the split brain
		}},
		{name: "partition", run: sim("bully-partition.json", 0, nil), check: func(t *testing.T, d *spacetime.Diagram) {
			for p := range 5 {
				wantFault(t, d, "partition", p, false)
			}
			wantReigns(t, d, 4, 1) // both leaders of the split brain
		}},
		{name: "maekawa-deadlock", run: sim("maekawa-deadlock.json", 0, nil), check: func(t *testing.T, d *spacetime.Diagram) {
			// The whole wait-for cycle: every event that made an edge.
			n := 0
			for _, o := range d.Findings {
				for _, p := range o.Parts {
					if p.Role != "waits-for" {
						continue
					}
					n++
					for i, at := range p.At {
						if at < 0 {
							t.Errorf("finding %d: the wait-for edge P%d→P%d has its event %v outside the window", o.N, p.From, p.To, p.Events[i])
						}
					}
				}
			}
			if n < 4 {
				t.Errorf("the window has %d wait-for edges of the cycle, want the 4 or more of the deadlock", n)
			}
		}},
	}
}

// wantKinds: at least n events of kind in the window.
func wantKinds(t *testing.T, d *spacetime.Diagram, kind trace.Kind, n int) {
	t.Helper()
	got := 0
	for _, e := range d.Events {
		if e.Kind == kind {
			got++
		}
	}
	if got < n {
		t.Errorf("the window has %d %s events, want %d or more", got, kind, n)
	}
}

// wantReigns: a reign of each of procs shows in the window (begun in it,
// or before it and drawn from its edge).
func wantReigns(t *testing.T, d *spacetime.Diagram, procs ...int) {
	t.Helper()
	var have []int
	for _, r := range d.Reigns {
		have = append(have, d.Lanes[r.Lane].Proc)
	}
	for _, p := range procs {
		if !slices.Contains(have, p) {
			t.Errorf("no reign of P%d in the window (reigns of %v)", p, have)
		}
	}
}

// wantFault: a fault of kind acting at proc shows; whole: with its start
// and its end in the window.
func wantFault(t *testing.T, d *spacetime.Diagram, kind string, proc int, whole bool) {
	t.Helper()
	for _, f := range d.Faults {
		if f.Kind == kind && d.Lanes[f.Lane].Proc == proc && (!whole || (f.Start >= 0 && f.End >= 0)) {
			return
		}
	}
	t.Errorf("no %s of P%d in the window (whole: %v); faults: %+v", kind, proc, whole, d.Faults)
}

// summary is what the golden file of a window says: which window and why,
// and what of the run's story it holds.
func summary(d *spacetime.Diagram, pages []*spacetime.Picture) string {
	var b strings.Builder
	fmt.Fprintf(&b, "window: %s\nwhy: %s\nevents: %d of %d (%d heartbeat events left out)\npages: %d\n", d.Window(), d.Why, len(d.Events), d.Total, d.Hidden, len(pages))
	kinds := map[trace.Kind]int{}
	for _, e := range d.Events {
		kinds[e.Kind]++
	}
	for _, k := range []trace.Kind{trace.KindCrash, trace.KindRecover, trace.KindLeader, trace.KindElectionStart, trace.KindFault, trace.KindCSEnter} {
		if kinds[k] > 0 {
			fmt.Fprintf(&b, "%s: %d\n", k, kinds[k])
		}
	}
	for _, r := range d.Reigns {
		fmt.Fprintf(&b, "reign of %s: %s .. %s\n", d.Lanes[r.Lane].Name, end(d, r.Start, "before the window"), end(d, r.End, "after it"))
	}
	for _, f := range d.Faults {
		fmt.Fprintf(&b, "%s at %s: %s .. %s\n", f.Kind, d.Lanes[f.Lane].Name, end(d, f.Start, "before the window"), end(d, f.End, "after it"))
	}
	for _, dn := range d.Downs {
		fmt.Fprintf(&b, "%s down: %s .. %s\n", d.Lanes[dn.Lane].Name, end(d, dn.Crash, "before the window"), end(d, dn.Recover, "after it"))
	}
	for _, o := range d.Findings {
		fmt.Fprintf(&b, "finding %d: %s\n", o.N, o.Check)
	}
	for _, r := range d.Rest {
		fmt.Fprintf(&b, "outside: %s\n", r)
	}
	return b.String()
}

func end(d *spacetime.Diagram, i int, none string) string {
	if i < 0 {
		return none
	}
	return d.Events[i].Ref.String()
}

// TestWindowChoice: the default picture of each run (Options.Auto, fitted
// to one page) shows what matters in it: the crashes and the reigns
// around them, the pause, the partition and both leaders of the split
// brain, the whole deadlock cycle. testdata/windows/NAME.txt records each
// window (go test -update rewrites them).
func TestWindowChoice(t *testing.T) {
	for _, c := range windowCases() {
		t.Run(c.name, func(t *testing.T) {
			r := c.run(t)
			d, pages := drawAuto(t, r, spacetime.Options{})
			c.check(t, d)
			checkWaitFor(t, d, pages[len(pages)-1])
			if len(pages) != 1 {
				t.Errorf("the default picture takes %d pages, want 1", len(pages))
			}
			golden.Check(t, filepath.Join("testdata", "windows", c.name+".txt"), []byte(summary(d, pages)))
			checkLabels(t, pages)
			var svg bytes.Buffer
			if err := spacetime.WriteSVG(&svg, pages[0]); err != nil {
				t.Fatal(err)
			}
			checkSVG(t, svg.Bytes(), len(d.Findings) > 0)
			if dir := os.Getenv("DMX_KEEP_PICTURES"); dir != "" {
				var png bytes.Buffer
				if err := spacetime.WritePNG(&png, pages[0]); err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(dir, "window-"+c.name+".png"), png.Bytes(), 0o644)
				os.WriteFile(filepath.Join(dir, "window-"+c.name+".svg"), svg.Bytes(), 0o644)
			}
		})
	}
}

// drawAuto draws r's default picture: the window chosen by what matters,
// the findings of its checks drawn in.
func drawAuto(t testing.TB, r recorded, opts spacetime.Options) (*spacetime.Diagram, []*spacetime.Picture) {
	t.Helper()
	opts.Auto = spacetime.DefaultAuto
	opts.Trace = "run.db"
	prepare(t, r, &opts)
	src := func() (trace.Reader, error) { return r.st.Events(r.run.ID) }
	d, pages, err := spacetime.Draw(r.run, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d, pages
}

// checkLabels: no two pieces of text of a page overlap.
func checkLabels(t *testing.T, pages []*spacetime.Picture) {
	t.Helper()
	for n, p := range pages {
		boxes := p.LabelBoxes()
		slices.SortFunc(boxes, func(a, b spacetime.Rect) int {
			switch {
			case a.X0 < b.X0:
				return -1
			case a.X0 > b.X0:
				return 1
			}
			return 0
		})
		bad := 0
		for i := range boxes {
			for j := i + 1; j < len(boxes) && boxes[j].X0 < boxes[i].X1; j++ {
				if boxes[i].Overlaps(boxes[j]) {
					if bad < 5 {
						t.Errorf("page %d: labels overlap: %+v and %+v", n+1, boxes[i], boxes[j])
					}
					bad++
				}
			}
		}
		if bad > 5 {
			t.Errorf("page %d: %d overlapping labels in all", n+1, bad)
		}
	}
}

// TestLabelsDoNotOverlap: in every picture of the golden cases (each
// page, default windows and chosen ones), no two labels' boxes overlap.
func TestLabelsDoNotOverlap(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			r := c.run(t)
			d := draw(t, r, c.opts)
			checkLabels(t, spacetime.Pages(d, !c.opts.NoCollapse))
		})
	}
}

// TestBoundsOnBigRun: a window of 100,000 events wraps into rows and
// pages, none wider than MaxWidth, none taller than MaxHeight, none more
// than MaxAspect times as wide as tall or as tall as wide; its labels do
// not overlap; and any page paints as PNG.
func TestBoundsOnBigRun(t *testing.T) {
	if testing.Short() {
		t.Skip("records a run of 100,000 events")
	}
	r := benchRun(t, 100000)
	src := func() (trace.Reader, error) { return r.st.Events(r.run.ID) }
	d, err := spacetime.Build(r.run, src, spacetime.Options{MaxEvents: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Events) < 90000 {
		t.Fatalf("the run has %d events, want about 100,000", len(d.Events))
	}
	pages := spacetime.Pages(d, true)
	if len(pages) < 10 {
		t.Errorf("100,000 events on %d pages", len(pages))
	}
	for i, p := range pages {
		if p.Width > spacetime.MaxWidth+0.5 || p.Height > spacetime.MaxHeight*1.1 {
			t.Errorf("page %d is %.0f x %.0f points, over %.0f x %.0f", i+1, p.Width, p.Height, spacetime.MaxWidth, spacetime.MaxHeight)
		}
		if a := p.Width / p.Height; a > spacetime.MaxAspect || a < 1/spacetime.MaxAspect {
			t.Errorf("page %d is %.0f x %.0f points: aspect %.2f", i+1, p.Width, p.Height, a)
		}
	}
	checkLabels(t, pages[:3])
	checkLabels(t, pages[len(pages)-1:])
	for _, p := range []*spacetime.Picture{pages[0], pages[len(pages)-1]} {
		if _, _, _, err := spacetime.PNGSize(p); err != nil {
			t.Errorf("a page does not paint: %v", err)
		}
	}
}

// checkWaitFor: a deadlock drawn in has its wait-for graph beside the
// picture: a box per process of the cycle and an arrow per edge, each
// labelled with its number.
func checkWaitFor(t *testing.T, d *spacetime.Diagram, p *spacetime.Picture) {
	t.Helper()
	for _, o := range d.Findings {
		procs := map[int]bool{}
		edges := 0
		for _, part := range o.Parts {
			if part.Role == "waits-for" {
				procs[part.From], procs[part.To] = true, true
				edges++
			}
		}
		if edges == 0 {
			continue
		}
		boxes, arrows := 0, 0
		labels := map[string]bool{}
		for _, n := range p.Nodes {
			if n.Class == "finding process" && n.Shape == spacetime.Box {
				boxes++
			}
			if n.Shape == spacetime.Text {
				labels[n.Label] = true
			}
		}
		for _, e := range p.Edges {
			if e.Class == "finding waits-for" && e.Arrow {
				arrows++
			}
		}
		if boxes != len(procs) || arrows != edges {
			t.Errorf("finding %d: the wait-for graph has %d boxes and %d arrows, want %d and %d", o.N, boxes, arrows, len(procs), edges)
		}
		found := 0
		for l := range labels {
			if strings.HasPrefix(l, fmt.Sprintf("#%d.", o.N)) {
				found++
			}
		}
		// Each edge's number: in the graph, and beside its event.
		if found < edges {
			t.Errorf("finding %d: %d edge labels of %d", o.N, found, edges)
		}
		return
	}
}

package plot_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/internal/simtest"
	"github.com/dmxlab/dmx/render/plot"
	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/trace"
)

// simulate runs a scenario of examples/ in the simulator and returns its
// run and events, with the findings of its algorithm's checks.
func simulate(t *testing.T, scenario string) (trace.Run, []trace.Event, []analyze.Finding) {
	t.Helper()
	p := simtest.Plan(t, scenario, 0, nil)
	var evs []trace.Event
	keep := func(ev *trace.Event) error {
		e := *ev // the simulator reuses its buffers
		e.Detail, e.VC = slices.Clone(ev.Detail), slices.Clone(ev.VC)
		evs = append(evs, e)
		return nil
	}
	if _, err := runner.Simulate(p, runner.RecorderFunc(keep), nil); err != nil {
		t.Fatal(err)
	}
	run := p.RunRow()
	run.ID = 1
	checks, err := analyze.For(p.Spec.Properties)
	if err != nil {
		t.Fatal(err)
	}
	results, err := analyze.Evaluate(run, &trace.SliceReader{Events: evs}, checks, analyze.WithValidity(p.Spec.Validity))
	if err != nil {
		t.Fatal(err)
	}
	var fs []analyze.Finding
	for _, r := range results {
		fs = append(fs, r.Findings...)
	}
	return run, evs, fs
}

// TestPlots reads and draws the runs the issue names: the failover's
// crashes shaded and its throughput, the partition's split brain as two
// reigns at once with the findings marked.
func TestPlots(t *testing.T) {
	for _, c := range []struct {
		scenario string
		check    func(t *testing.T, d *plot.Data)
	}{
		{"central-failover.json", func(t *testing.T, d *plot.Data) {
			if len(d.Entries) < 100 || len(d.Lat) < 500 {
				t.Errorf("%d entries, %d latencies", len(d.Entries), len(d.Lat))
			}
			labels := bands(d)
			if !slices.Contains(labels, "P4 down") || !slices.Contains(labels, "P3 down") {
				t.Errorf("bands %v: want both crashed coordinators", labels)
			}
			for _, e := range d.Entries {
				if e.Wait < 0 || e.At < 0 || e.At > d.Span {
					t.Fatalf("entry %+v outside the run (span %d) or without its wait", e, d.Span)
				}
			}
		}},
		{"bully-partition.json", func(t *testing.T, d *plot.Data) {
			if len(d.Entries) != 0 {
				t.Errorf("%d entries in an election run", len(d.Entries))
			}
			if !slices.Contains(bands(d), "partition P0 P1 | P2 P3 P4") {
				t.Errorf("bands %v: want the partition", bands(d))
			}
			// Split brain: two reigns at once.
			overlap := false
			for i, a := range d.Reigns {
				for _, b := range d.Reigns[i+1:] {
					if a.Proc != b.Proc && a.From < b.To && b.From < a.To {
						overlap = true
					}
				}
			}
			if !overlap || len(d.Marks) == 0 {
				t.Errorf("reigns %+v, marks %+v: want two at once, and the findings", d.Reigns, d.Marks)
			}
		}},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			run, evs, fs := simulate(t, c.scenario)
			d, err := plot.Read(run, &trace.SliceReader{Events: evs}, fs)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, d)
			pic := plot.Draw(d)
			checkPicture(t, pic, len(d.Marks) > 0)
			if dir := os.Getenv("DMX_KEEP_PICTURES"); dir != "" {
				var b bytes.Buffer
				spacetime.WritePNG(&b, pic)
				os.WriteFile(filepath.Join(dir, "plot-"+strings.TrimSuffix(c.scenario, ".json")+".png"), b.Bytes(), 0o644)
			}
		})
	}
}

func bands(d *plot.Data) []string {
	var out []string
	for _, b := range d.Bands {
		out = append(out, b.Label)
	}
	return out
}

// checkPicture: no two labels overlap, the SVG is XML with red where
// findings are marked, the PNG decodes at its size.
func checkPicture(t *testing.T, p *spacetime.Picture, red bool) {
	t.Helper()
	boxes := p.LabelBoxes()
	for i := range boxes {
		for j := i + 1; j < len(boxes); j++ {
			if boxes[i].Overlaps(boxes[j]) {
				t.Errorf("labels overlap: %+v and %+v", boxes[i], boxes[j])
			}
		}
	}
	var svg bytes.Buffer
	if err := spacetime.WriteSVG(&svg, p); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(svg.Bytes()))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not XML: %v", err)
		}
	}
	if red != bytes.Contains(svg.Bytes(), []byte(`stroke="#d7191c"`)) {
		t.Errorf("findings marked: %v, red in the SVG: %v", red, !red)
	}
	var b bytes.Buffer
	if err := spacetime.WritePNG(&b, p); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	w, h, _, err := spacetime.PNGSize(p)
	if err != nil || img.Bounds().Dx() != w || img.Bounds().Dy() != h {
		t.Errorf("the PNG is %v, want %dx%d (%v)", img.Bounds(), w, h, err)
	}
}

package spacetime

import (
	"fmt"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
	"io"
	"path/filepath"
	"strings"
)

// Formats are the formats Write writes, by the extension of their files.
var Formats = []string{"svg", "png", "dot", "md"}

// FormatOf returns the format of a file by its extension (.svg, .png,
// .dot or .gv, .md or .mmd for Mermaid), or an error naming the known ones.
func FormatOf(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	switch ext {
	case "svg", "png", "dot", "md":
		return ext, nil
	case "gv":
		return "dot", nil
	case "mmd", "mermaid":
		return "md", nil
	}
	return "", fmt.Errorf("%s: cannot tell the format from the extension %q; use .svg, .png, .dot or .md (or --format)", path, filepath.Ext(path))
}

// Write draws d in format, one of Formats. DOT, SVG and PNG are drawn from
// one layout: the page opts.Page of it (see Pages); Mermaid is a sequence
// diagram of d's events (see WriteMermaid).
func Write(w io.Writer, format string, d *Diagram, opts Options) error {
	if format == "md" {
		return WriteMermaid(w, d, true)
	}
	pages := Pages(d, !opts.NoCollapse)
	n := max(opts.Page, 1)
	if n > len(pages) {
		return fmt.Errorf("page %d: the window is drawn on %s", n, plural.Count(len(pages), "page"))
	}
	p := pages[n-1]
	switch format {
	case "svg":
		return WriteSVG(w, p)
	case "png":
		return WritePNG(w, p)
	case "dot":
		return WriteDOT(w, p)
	}
	return fmt.Errorf("format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// Draw builds the diagram opts describe and lays it out (see Build and
// Pages). A window chosen by what matters (Options.Auto) that would take
// more than one page is chosen again with a smaller budget, so that the
// default picture of a run is one page. A deadlock in the window has its
// wait-for graph (WaitFor) drawn beside the page where its cycle closed
// (the last).
func Draw(run trace.Run, src Source, opts Options) (*Diagram, []*Picture, error) {
	for try := 0; ; try++ {
		d, err := Build(run, src, opts)
		if err != nil {
			return nil, nil, err
		}
		width := MaxWidth
		var graph *Picture
		if o := d.deadlock(); o != nil {
			if graph, err = WaitFor(d, o); err != nil {
				return nil, nil, err
			}
			if graph != nil {
				width = max(MaxWidth-graph.Width-12, MaxWidth/2)
			}
		}
		pages := pagesWithin(d, !opts.NoCollapse, width)
		if len(pages) == 1 || !opts.auto() || try == 2 || opts.Auto <= 60 {
			if graph != nil {
				pages[len(pages)-1] = Beside(pages[len(pages)-1], graph)
			}
			return d, pages, nil
		}
		opts.Auto = max(60, opts.Auto*4/(5*len(pages)))
	}
}

// deadlock is the finding whose wait-for graph the picture draws: the one
// the window is of, or else the first drawn in with wait-for edges.
func (d *Diagram) deadlock() *Overlay {
	waits := func(o *Overlay) bool {
		for _, p := range o.Parts {
			if p.Role == "waits-for" {
				return true
			}
		}
		return false
	}
	for i := range d.Findings {
		if o := &d.Findings[i]; o.N == d.Focus && waits(o) {
			return o
		}
	}
	for i := range d.Findings {
		if o := &d.Findings[i]; waits(o) {
			return o
		}
	}
	return nil
}

package spacetime

import (
	"fmt"
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
// one Layout; Mermaid is a sequence diagram of d's events (see WriteMermaid).
func Write(w io.Writer, format string, d *Diagram, opts Options) error {
	if format == "md" {
		return WriteMermaid(w, d, true)
	}
	p := Layout(d, !opts.NoCollapse)
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

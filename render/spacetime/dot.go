package spacetime

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// WriteDOT writes the picture as a Graphviz graph whose every node and edge
// is pinned where the layout put it (pos, and lp for labels, in points), so
// that Graphviz only draws: `neato -n2 -Tsvg` (or any engine, through the
// graph's layout=nop2) renders it as dmx does, in time linear in its size.
// The output is deterministic: the same picture gives the same bytes.
func WriteDOT(w io.Writer, p *Picture) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	h := p.Height
	b := make([]byte, 0, 256)
	b = append(b, "// dmx space-time diagram; positions are fixed: render with neato -n2 -Tsvg\ndigraph spacetime {\n"...)
	b = append(b, "  graph [layout=nop2 outputorder=edgesfirst notranslate=true splines=true pad=0 bgcolor=\"#ffffff\" bb=\"0,0,"...)
	b = num(b, p.Width)
	b = append(b, ',')
	b = num(b, h)
	b = append(b, "\" tooltip="...)
	b = quote(b, p.Title)
	b = append(b, "];\n"...)
	b = append(b, "  node [shape=circle fixedsize=true label=\"\" style=filled penwidth=0 fontname=\"Helvetica\" margin=0];\n"...)
	b = append(b, "  edge [arrowsize=0.7 fontname=\"Helvetica\"];\n"...)
	bw.Write(b)
	for i := range p.Nodes {
		b = nodeDOT(b[:0], i, &p.Nodes[i], h)
		bw.Write(b)
	}
	for i := range p.Edges {
		b = edgeDOT(b[:0], &p.Edges[i], h)
		bw.Write(b)
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

func nodeID(b []byte, i int) []byte {
	b = append(b, 'n')
	return strconv.AppendInt(b, int64(i), 10)
}

func nodeDOT(b []byte, i int, n *Node, h float64) []byte {
	b = append(b, "  "...)
	b = nodeID(b, i)
	b = append(b, " [pos=\""...)
	b = pt(b, Pt{n.X, h - n.Y})
	b = append(b, '"')
	size := func(w, hh float64) {
		b = append(b, " width="...)
		b = num(b, w/72)
		b = append(b, " height="...)
		b = num(b, hh/72)
	}
	switch n.Shape {
	case Anchor:
		b = append(b, " shape=point width=0.01 style=invis"...)
	case Text:
		b = append(b, " shape=plaintext fixedsize=false style=\"\" label="...)
		b = quote(b, n.Label)
		if n.Align != 0 {
			// "\l" ("\r") ends a line justified left (right): Graphviz
			// then writes text-anchor="start" ("end") at the end we
			// measured, so the text keeps its place in any font the
			// viewer has.
			b = append(b[:len(b)-1], '\\', n.Align, '"')
		}
		b = dotFont(b, n.Size, n.Bold, n.Color)
		size(n.W, n.Size*1.2)
	default:
		// go-graphviz passes an empty label as none, which Graphviz
		// replaces by the node's name: a dot is a point (which has no
		// label), other shapes get a label of one space.
		if n.Shape == Dot && n.Stroke == "" {
			b = append(b, " shape=point"...)
			b = attr(b, "color", n.Fill)
		} else {
			b = append(b, " label=\"\\ \""...)
		}
		switch n.Shape {
		case Ring, Dot:
		case Square:
			b = append(b, " shape=square"...)
		case Diamond:
			b = append(b, " shape=diamond"...)
		case Star:
			b = append(b, " shape=star"...)
		case Triangle:
			b = append(b, " shape=triangle"...)
		case Box:
			b = append(b, " shape=box"...)
		}
		if n.Shape == Box {
			size(n.W, n.H)
		} else {
			size(2*n.R, 2*n.R)
		}
		if n.Fill == "" {
			b = append(b, " style=solid"...)
		} else {
			b = attr(b, "fillcolor", n.Fill)
		}
		if n.Stroke != "" {
			b = attr(b, "color", n.Stroke)
			b = append(b, " penwidth="...)
			b = num(b, n.Pen)
		}
	}
	return end(b, n.Tip, n.Class)
}

// end appends the tooltip and SVG class of a node or edge and closes its
// attribute list.
func end(b []byte, tip, class string) []byte {
	if tip != "" {
		b = append(b, " tooltip="...)
		b = quote(b, tip)
	}
	if class != "" {
		b = attr(b, "class", class)
	}
	return append(b, "];\n"...)
}

func edgeDOT(b []byte, e *Edge, h float64) []byte {
	flip := func(p Pt) Pt { return Pt{p.X, h - p.Y} }
	b = append(b, "  "...)
	b = nodeID(b, e.From)
	b = append(b, " -> "...)
	b = nodeID(b, e.To)
	b = append(b, " [pos=\""...)
	if e.Arrow {
		b = append(b, "e,"...)
		b = pt(b, flip(e.P3))
		b = append(b, ' ')
		base := arrowBase(e)
		// The curve ends at the arrowhead's base: move its end and its last
		// control point back by the head's length.
		shift := base.sub(e.P3)
		b = pt(b, flip(e.P0))
		b = append(b, ' ')
		b = pt(b, flip(e.C1))
		b = append(b, ' ')
		b = pt(b, flip(e.C2.add(shift)))
		b = append(b, ' ')
		b = pt(b, flip(base))
	} else {
		b = pt(b, flip(e.P0))
		b = append(b, ' ')
		b = pt(b, flip(e.C1))
		b = append(b, ' ')
		b = pt(b, flip(e.C2))
		b = append(b, ' ')
		b = pt(b, flip(e.P3))
	}
	b = append(b, '"')
	if !e.Arrow {
		b = append(b, " dir=none"...)
	}
	b = attr(b, "color", e.Color)
	b = append(b, " penwidth="...)
	b = num(b, e.Width)
	if e.Dash {
		b = append(b, " style=dashed"...)
	}
	if e.Label != "" {
		b = append(b, " label="...)
		b = quote(b, e.Label)
		b = append(b, " lp=\""...)
		b = pt(b, flip(e.LabelAt))
		b = append(b, '"')
		b = dotFont(b, e.LabelSize, false, e.LabelCol)
	}
	return end(b, e.Tip, e.Class)
}

// attr appends the attribute name="value", value as it is (a colour, an
// SVG class: nothing in it to escape).
func attr(b []byte, name, value string) []byte {
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, `="`...)
	b = append(b, value...)
	return append(b, '"')
}

// dotFont appends the font of a node's text or an edge's label: its size,
// bold or not, and its colour unless the default.
func dotFont(b []byte, size float64, bold bool, color string) []byte {
	b = append(b, " fontsize="...)
	b = num(b, size)
	if bold {
		b = append(b, " fontname=\"Helvetica-Bold\""...)
	}
	if color != "" {
		b = attr(b, "fontcolor", color)
	}
	return b
}

// num appends x with at most two decimals, without trailing zeros.
func num(b []byte, x float64) []byte {
	b = strconv.AppendFloat(b, x, 'f', 2, 64)
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	if b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	if len(b) >= 2 && string(b[len(b)-2:]) == "-0" && (len(b) == 2 || b[len(b)-3] < '0' || b[len(b)-3] > '9') {
		b = append(b[:len(b)-2], '0')
	}
	return b
}

func pt(b []byte, p Pt) []byte {
	b = num(b, p.X)
	b = append(b, ',')
	return num(b, p.Y)
}

// quote appends s as a DOT string.
var dotEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func quote(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, dotEscaper.Replace(s)...)
	return append(b, '"')
}

package spacetime

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-graphviz"
)

// WriteSVG writes the picture as SVG. Every position in a Picture is
// dmx's own, so the SVG is written directly (in time linear in the
// picture, some 20 MB/s), not through Graphviz, which lays out what dmx
// does not: the wait-for graph of a deadlock (see WaitFor). WriteDOT
// writes the same picture for Graphviz, and DOTToSVG draws that.
func WriteSVG(w io.Writer, p *Picture) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	b := make([]byte, 0, 512)
	b = append(b, `<svg xmlns="http://www.w3.org/2000/svg" width="`...)
	b = num(b, p.Width)
	b = append(b, `pt" height="`...)
	b = num(b, p.Height)
	b = append(b, `pt" viewBox="0 0 `...)
	b = num(b, p.Width)
	b = append(b, ' ')
	b = num(b, p.Height)
	b = append(b, `" font-family="Helvetica, Arial, sans-serif">`+"\n"...)
	b = append(b, `<style>.h{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}</style>`+"\n<title>"...)
	b = xmlText(b, p.Title)
	b = append(b, "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"...)
	bw.Write(b)
	for i := range p.Edges {
		b = edgeSVG(b[:0], &p.Edges[i])
		bw.Write(b)
	}
	for i := range p.Nodes {
		b = nodeSVG(b[:0], &p.Nodes[i])
		bw.Write(b)
	}
	// Edge labels above everything, as the PNG paints them.
	for i := range p.Edges {
		if e := &p.Edges[i]; e.Label != "" {
			b = textSVG(b[:0], e.LabelAt, e.Label, e.LabelSize, false, e.LabelCol, 0, true, "")
			bw.Write(b)
		}
	}
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// open starts an element with its class and tooltip: a <g> holding a
// <title> when there is a tooltip.
func open(b []byte, class, tip string) ([]byte, bool) {
	if tip == "" {
		return b, false
	}
	b = append(b, `<g`...)
	if class != "" {
		b = append(b, ` class="`...)
		b = xmlText(b, class)
		b = append(b, '"')
	}
	b = append(b, "><title>"...)
	b = xmlText(b, tip)
	b = append(b, "</title>"...)
	return b, true
}

func closeG(b []byte, grouped bool) []byte {
	if grouped {
		b = append(b, "</g>"...)
	}
	return append(b, '\n')
}

func classAttr(b []byte, class string, grouped bool) []byte {
	if class != "" && !grouped {
		b = append(b, ` class="`...)
		b = xmlText(b, class)
		b = append(b, '"')
	}
	return b
}

func edgeSVG(b []byte, e *Edge) []byte {
	b, g := open(b, e.Class, e.Tip)
	ps := e.P3
	c2 := e.C2
	var base Pt
	if e.Arrow {
		base = arrowBase(e)
		c2 = c2.add(base.sub(e.P3))
		ps = base
	}
	b = append(b, `<path d="M`...)
	b = pt(b, e.P0)
	if e.C1 == e.P0 && e.C2 == e.P3 {
		b = append(b, 'L')
	} else {
		b = append(b, 'C')
		b = pt(b, e.C1)
		b = append(b, ' ')
		b = pt(b, c2)
		b = append(b, ' ')
	}
	b = pt(b, ps)
	b = append(b, `" fill="none" stroke="`...)
	b = colour(b, e.Color)
	b = append(b, `" stroke-width="`...)
	b = num(b, max(e.Width, 0.5))
	b = append(b, '"')
	if e.Dash {
		on, off := max(4, 3*e.Width), max(3, 2*e.Width)
		b = append(b, ` stroke-dasharray="`...)
		b = num(b, on)
		b = append(b, ',')
		b = num(b, off)
		b = append(b, '"')
	}
	b = classAttr(b, e.Class, g)
	b = append(b, "/>"...)
	if e.Arrow {
		d := unit(e.P3.sub(base))
		n := Pt{-d.Y, d.X}.mul(arrowHalf)
		b = append(b, `<polygon points="`...)
		b = pt(b, base.add(n))
		b = append(b, ' ')
		b = pt(b, e.P3)
		b = append(b, ' ')
		b = pt(b, base.sub(n))
		b = append(b, `" fill="`...)
		b = colour(b, e.Color)
		b = append(b, '"')
		b = opacity(b, "fill", e.Color)
		b = append(b, "/>"...)
	}
	return closeG(b, g)
}

func nodeSVG(b []byte, n *Node) []byte {
	if n.Shape == Anchor {
		return b
	}
	if n.Shape == Text {
		return textSVG(b, Pt{n.X, n.Y}, n.Label, n.Size, n.Bold, n.Color, n.Align, n.Halo, n.Tip)
	}
	b, g := open(b, n.Class, n.Tip)
	paint := func(b []byte) []byte {
		b = append(b, ` fill="`...)
		if n.Fill == "" {
			b = append(b, "none"...)
		} else {
			b = colour(b, n.Fill)
		}
		b = append(b, '"')
		b = opacity(b, "fill", n.Fill)
		if n.Stroke != "" && n.Pen > 0 {
			b = append(b, ` stroke="`...)
			b = colour(b, n.Stroke)
			b = append(b, `" stroke-width="`...)
			b = num(b, n.Pen)
			b = append(b, '"')
		}
		return classAttr(b, n.Class, g)
	}
	switch n.Shape {
	case Dot, Ring:
		b = append(b, `<circle cx="`...)
		b = num(b, n.X)
		b = append(b, `" cy="`...)
		b = num(b, n.Y)
		b = append(b, `" r="`...)
		r := n.R
		if n.Stroke != "" && n.Pen > 0 {
			r -= n.Pen / 2 // the outline inside the radius, as the PNG paints it
		}
		b = num(b, r)
		b = append(b, '"')
		b = paint(b)
		b = append(b, "/>"...)
	default:
		b = append(b, `<polygon points="`...)
		for i, q := range polygon(n) {
			if i > 0 {
				b = append(b, ' ')
			}
			b = pt(b, q)
		}
		b = append(b, '"')
		b = paint(b)
		b = append(b, "/>"...)
	}
	return closeG(b, g)
}

// textSVG writes s centred on c (its line's middle), or with its left
// (align 'l') or right ('r') end at c.X ∓ half its measured width.
func textSVG(b []byte, c Pt, s string, size float64, bold bool, col string, align byte, halo bool, tip string) []byte {
	if s == "" {
		return b
	}
	w := textWidth(s, size, bold)
	x, anchor := c.X, "middle"
	switch align {
	case 'l':
		x, anchor = c.X-w/2, "start"
	case 'r':
		x, anchor = c.X+w/2, "end"
	}
	b = append(b, `<text x="`...)
	b = num(b, x)
	b = append(b, `" y="`...)
	b = num(b, c.Y+size*0.35) // the baseline: the line's middle plus about a third of the size
	b = append(b, `" font-size="`...)
	b = num(b, size)
	b = append(b, `" text-anchor="`...)
	b = append(b, anchor...)
	b = append(b, `" fill="`...)
	if col == "" {
		col = colText
	}
	b = colour(b, col)
	b = append(b, '"')
	if bold {
		b = append(b, ` font-weight="bold"`...)
	}
	if halo {
		b = append(b, ` class="h"`...)
	}
	b = append(b, '>')
	if tip != "" {
		b = append(b, "<title>"...)
		b = xmlText(b, tip)
		b = append(b, "</title>"...)
	}
	b = xmlText(b, s)
	return append(b, "</text>\n"...)
}

// polygon is the outline of a node of a polygonal shape, as the PNG
// painter fills it.
func polygon(n *Node) []Pt {
	c, r := Pt{n.X, n.Y}, n.R
	switch n.Shape {
	case Square:
		return []Pt{{c.X - r, c.Y - r}, {c.X + r, c.Y - r}, {c.X + r, c.Y + r}, {c.X - r, c.Y + r}}
	case Diamond:
		return []Pt{{c.X, c.Y - r}, {c.X + r, c.Y}, {c.X, c.Y + r}, {c.X - r, c.Y}}
	case Triangle:
		return []Pt{{c.X, c.Y - r}, {c.X + r, c.Y + r*0.75}, {c.X - r, c.Y + r*0.75}}
	case Star:
		var ps []Pt
		for i := range 10 {
			rr := r
			if i%2 == 1 {
				rr = r * 0.42
			}
			a := -math.Pi/2 + float64(i)*math.Pi/5
			ps = append(ps, Pt{c.X + rr*math.Cos(a), c.Y + rr*math.Sin(a)})
		}
		return ps
	case Box:
		return []Pt{{c.X - n.W/2, c.Y - n.H/2}, {c.X + n.W/2, c.Y - n.H/2}, {c.X + n.W/2, c.Y + n.H/2}, {c.X - n.W/2, c.Y + n.H/2}}
	}
	return nil
}

// colour writes the #rrggbb part of a colour (an alpha goes to opacity).
func colour(b []byte, c string) []byte {
	if len(c) == 9 {
		c = c[:7]
	}
	return append(b, c...)
}

// opacity writes the alpha of a #rrggbbaa colour as an attribute.
func opacity(b []byte, what, c string) []byte {
	if len(c) != 9 {
		return b
	}
	a, err := strconv.ParseUint(c[7:], 16, 8)
	if err != nil {
		return b
	}
	b = append(b, ' ')
	b = append(b, what...)
	b = append(b, `-opacity="`...)
	b = num(b, float64(a)/255)
	return append(b, '"')
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func xmlText(b []byte, s string) []byte { return append(b, xmlEscaper.Replace(s)...) }

// graphvizMu serializes renders: go-graphviz runs one WebAssembly instance
// of Graphviz per process, which is not safe for concurrent use.
var graphvizMu sync.Mutex

// DOTToSVG renders a DOT graph of pinned positions (as WriteDOT writes) to
// SVG with Graphviz.
func DOTToSVG(w io.Writer, dot []byte) error {
	return graphvizRender(w, dot, graphviz.NOP2, graphviz.SVG)
}

// graphvizRender lays dot out with engine and writes it in format.
func graphvizRender(w io.Writer, dot []byte, engine graphviz.Layout, format graphviz.Format) error {
	graphvizMu.Lock()
	defer graphvizMu.Unlock()
	ctx := context.Background()
	gv, err := graphviz.New(ctx)
	if err != nil {
		return fmt.Errorf("start graphviz: %w", err)
	}
	defer gv.Close()
	g, err := graphviz.ParseBytes(dot)
	if err != nil {
		return fmt.Errorf("graphviz: parse the graph: %w", err)
	}
	defer g.Close()
	gv.SetLayout(engine)
	var buf bytes.Buffer
	if err := gv.Render(ctx, g, format, &buf); err != nil {
		return fmt.Errorf("graphviz: render %s: %w", format, err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

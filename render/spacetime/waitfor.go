package spacetime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/goccy/go-graphviz"
)

// WaitFor draws the wait-for graph of a deadlock finding: the processes of
// its cycle as boxes, an arrow from each waiting process to the one it
// waits for, labelled with the edge's number (the tag beside the events
// that made it in the space-time excerpt, "#5.2"), why (a wait, a resource
// held) and those events. The graph is laid out by Graphviz's dot engine
// (go-graphviz), read back and drawn as a Picture, so that it is written
// as SVG and painted as PNG as the diagrams are. It returns nil if o has no
// wait-for edge.
func WaitFor(d *Diagram, o *Overlay) (*Picture, error) {
	type edge struct {
		from, to int
		lines    []string
	}
	var edges []edge
	var procs []int
	seen := map[int]bool{}
	k := 0
	for _, p := range o.Parts {
		if p.Role != "waits-for" {
			continue
		}
		k++
		for _, q := range []int{p.From, p.To} {
			if !seen[q] {
				seen[q] = true
				procs = append(procs, q)
			}
		}
		head := fmt.Sprintf("#%d.%d", o.N, k)
		if p.Label != "" {
			head += " " + p.Label
		}
		var evs []string
		for i, r := range p.Events {
			s := r.String()
			if i < len(p.At) && p.At[i] != outside {
				s += " " + string(d.Events[p.At[i]].Kind)
			}
			evs = append(evs, s)
		}
		edges = append(edges, edge{p.From, p.To, []string{head, strings.Join(evs, " → ")}})
	}
	if len(edges) == 0 {
		return nil, nil
	}
	name := func(p int) string {
		for _, ln := range d.Lanes {
			if ln.Proc == p {
				return ln.Name
			}
		}
		return fmt.Sprintf("P%d", p)
	}
	var src bytes.Buffer
	src.WriteString("digraph waitfor {\n  graph [nodesep=0.45 ranksep=0.55 pad=0];\n")
	fmt.Fprintf(&src, "  node [shape=box fontname=\"Helvetica-Bold\" fontsize=%s margin=\"0.12,0.05\"];\n", strconv.FormatFloat(fontLane, 'f', -1, 64))
	fmt.Fprintf(&src, "  edge [fontname=\"Helvetica\" fontsize=%s];\n", strconv.FormatFloat(fontMark, 'f', -1, 64))
	for _, p := range procs {
		fmt.Fprintf(&src, "  p%d [label=%s];\n", p, strconv.Quote(name(p)))
	}
	for i, e := range edges {
		fmt.Fprintf(&src, "  p%d -> p%d [id=\"e%d\" label=%s];\n", e.from, e.to, i, dotLabel(e.lines))
	}
	src.WriteString("}\n")
	g, err := graphvizLayout(src.Bytes())
	if err != nil {
		return nil, err
	}

	const pad, headH = 14.0, 40.0
	pic := &Picture{Width: g.w + 2*pad, Title: fmt.Sprintf("#%d %s: wait-for graph", o.N, o.Check)}
	pic.Height = g.h + 2*pad + headH
	flip := func(x, y float64) Pt { return Pt{x + pad, g.h - y + pad + headH} }
	node := func(n Node) int {
		pic.Nodes = append(pic.Nodes, n)
		return len(pic.Nodes) - 1
	}
	text := func(c Pt, s string, size float64, bold bool) {
		node(Node{X: c.X, Y: c.Y, Shape: Text, Label: s, Size: size, Bold: bold, Color: colFinding, W: textWidth(s, size, bold), Halo: true, Class: "text"})
	}
	for i, s := range wrap(fmt.Sprintf("#%d wait-for graph, where the cycle closed (laid out by Graphviz dot)", o.N), fontText, pic.Width-2*pad, 2, true) {
		node(Node{X: pad + textWidth(s, fontText, true)/2, Y: pad + fontText/2 + float64(i)*(fontText+4), Shape: Text, Label: s, Size: fontText, Bold: true,
			Color: colText, W: textWidth(s, fontText, true), Align: 'l', Class: "text"})
	}
	for _, e := range g.edges {
		i, err := strconv.Atoi(strings.TrimPrefix(e.id, "e"))
		if err != nil || i >= len(edges) || len(e.pts) < 4 {
			continue
		}
		tip := fmt.Sprintf("%s waits for %s: %s", name(edges[i].from), name(edges[i].to), strings.Join(edges[i].lines, "; "))
		ps := make([]Pt, len(e.pts))
		for j, q := range e.pts {
			ps[j] = flip(q.X, q.Y)
		}
		for j := 0; j+3 < len(ps); j += 3 {
			a := node(Node{X: ps[j].X, Y: ps[j].Y, Shape: Anchor})
			b := node(Node{X: ps[j+3].X, Y: ps[j+3].Y, Shape: Anchor})
			pic.Edges = append(pic.Edges, Edge{From: a, To: b, P0: ps[j], C1: ps[j+1], C2: ps[j+2], P3: ps[j+3], Color: colFinding, Width: 1.6, Tip: tip, Class: "finding waits-for"})
		}
		if e.hasEnd {
			end := flip(e.end.X, e.end.Y)
			last := ps[len(ps)-1]
			a := node(Node{X: last.X, Y: last.Y, Shape: Anchor})
			b := node(Node{X: end.X, Y: end.Y, Shape: Anchor})
			pic.Edges = append(pic.Edges, Edge{From: a, To: b, P0: last, C1: last, C2: end, P3: end, Arrow: true, Color: colFinding, Width: 1.6, Tip: tip, Class: "finding waits-for"})
		}
		if e.hasLabel {
			c := flip(e.lp.X, e.lp.Y)
			lines := edges[i].lines
			for j, s := range lines {
				text(Pt{c.X, c.Y + (float64(j)-float64(len(lines)-1)/2)*fontMark*1.25}, s, fontMark, j == 0)
			}
		}
	}
	for _, n := range g.nodes {
		c := flip(n.pos.X, n.pos.Y)
		p, err := strconv.Atoi(strings.TrimPrefix(n.name, "p"))
		if err != nil {
			continue
		}
		node(Node{X: c.X, Y: c.Y, Shape: Box, W: n.w, H: n.h, Fill: "#ffffff", Stroke: colFinding, Pen: 1.6, Class: "finding process",
			Tip: fmt.Sprintf("%s, in the cycle of finding %d", name(p), o.N)})
		s := name(p)
		node(Node{X: c.X, Y: c.Y, Shape: Text, Label: s, Size: fontLane, Bold: true, Color: colText, W: textWidth(s, fontLane, true), Class: "text"})
	}
	return pic, nil
}

// dotLabel is lines as a DOT label of centred lines.
func dotLabel(lines []string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, s := range lines {
		if i > 0 {
			b.WriteString(`\n`)
		}
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s))
	}
	b.WriteByte('"')
	return b.String()
}

// laidGraph is a graph as Graphviz laid it out, in its coordinates
// (points, y up).
type laidGraph struct {
	w, h  float64
	nodes []laidNode
	edges []laidEdge
}

type laidNode struct {
	name string
	pos  Pt
	w, h float64
}

type laidEdge struct {
	id               string
	pts              []Pt // the B-spline's points: 1 + 3k of them
	end, lp          Pt
	hasEnd, hasLabel bool
}

// graphvizLayout lays dot out with Graphviz's dot engine and reads the
// positions back.
func graphvizLayout(dot []byte) (*laidGraph, error) {
	graphvizMu.Lock()
	defer graphvizMu.Unlock()
	ctx := context.Background()
	gv, err := graphviz.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("start graphviz: %w", err)
	}
	defer gv.Close()
	g, err := graphviz.ParseBytes(dot)
	if err != nil {
		return nil, fmt.Errorf("graphviz: parse the graph: %w", err)
	}
	defer g.Close()
	gv.SetLayout(graphviz.DOT)
	// Rendering as DOT attaches the layout to the graph: pos, width,
	// height, lp, bb.
	if err := gv.Render(ctx, g, graphviz.XDOT, io.Discard); err != nil {
		return nil, fmt.Errorf("graphviz: lay out: %w", err)
	}
	out := &laidGraph{}
	bb := floats(g.GetStr("bb"))
	if len(bb) != 4 {
		return nil, fmt.Errorf("graphviz: no bounding box in %q", g.GetStr("bb"))
	}
	out.w, out.h = bb[2]-bb[0], bb[3]-bb[1]
	for n, _ := g.FirstNode(); n != nil; n, _ = g.NextNode(n) {
		name, err := n.Name()
		if err != nil {
			return nil, err
		}
		p := floats(n.GetStr("pos"))
		w, _ := strconv.ParseFloat(n.GetStr("width"), 64)
		h, _ := strconv.ParseFloat(n.GetStr("height"), 64)
		if len(p) != 2 {
			return nil, fmt.Errorf("graphviz: node %s has no position", name)
		}
		out.nodes = append(out.nodes, laidNode{name, Pt{p[0] - bb[0], p[1] - bb[1]}, w * 72, h * 72})
		for e, _ := g.FirstOut(n); e != nil; e, _ = g.NextOut(e) {
			le := laidEdge{id: e.GetStr("id")}
			for _, f := range strings.Fields(e.GetStr("pos")) {
				switch {
				case strings.HasPrefix(f, "e,"):
					if q := floats(f[2:]); len(q) == 2 {
						le.end, le.hasEnd = Pt{q[0] - bb[0], q[1] - bb[1]}, true
					}
				case strings.HasPrefix(f, "s,"):
				default:
					if q := floats(f); len(q) == 2 {
						le.pts = append(le.pts, Pt{q[0] - bb[0], q[1] - bb[1]})
					}
				}
			}
			if q := floats(e.GetStr("lp")); len(q) == 2 {
				le.lp, le.hasLabel = Pt{q[0] - bb[0], q[1] - bb[1]}, true
			}
			out.edges = append(out.edges, le)
		}
	}
	return out, nil
}

// floats reads "1.5,2,3" as numbers.
func floats(s string) []float64 {
	var out []float64
	for _, f := range strings.Split(strings.TrimSpace(s), ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// Beside returns a picture of a with b right of it: a space-time page and
// the wait-for graph of its deadlock, level with the page's last row
// (where the cycle closed).
func Beside(a, b *Picture) *Picture {
	const gap = 12.0
	off := Pt{a.Width + gap, margin}
	if n := len(a.rows); n > 0 {
		off.Y = a.rows[n-1]
	}
	out := &Picture{Title: a.Title, Width: a.Width + gap + b.Width, Height: max(a.Height, b.Height+off.Y), rows: a.rows}
	out.Nodes = append(out.Nodes, a.Nodes...)
	out.Edges = append(out.Edges, a.Edges...)
	base := len(out.Nodes)
	for _, n := range b.Nodes {
		n.X, n.Y = n.X+off.X, n.Y+off.Y
		out.Nodes = append(out.Nodes, n)
	}
	for _, e := range b.Edges {
		e.From, e.To = e.From+base, e.To+base
		e.P0, e.C1, e.C2, e.P3, e.LabelAt = e.P0.add(off), e.C1.add(off), e.C2.add(off), e.P3.add(off), e.LabelAt.add(off)
		out.Edges = append(out.Edges, e)
	}
	return out
}

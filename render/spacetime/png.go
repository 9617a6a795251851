package spacetime

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// MaxPNGPixels bounds the pixels of a PNG (4 bytes each in memory while it
// is painted). A wider window is refused with the advice to narrow it or to
// write SVG, which has no such bound.
const MaxPNGPixels = 32 << 20

// PNGScale is the pixels per point of a PNG that fits MaxPNGPixels at that
// scale; a bigger picture is painted at a smaller scale, down to 1.
const PNGScale = 2.0

// PNGSize returns the size in pixels WritePNG gives p, or an error saying
// that p is too big to paint.
func PNGSize(p *Picture) (w, h int, scale float64, err error) {
	scale = PNGScale
	area := p.Width * p.Height
	if area*scale*scale > MaxPNGPixels {
		scale = math.Sqrt(MaxPNGPixels / area)
	}
	if scale < 1 {
		return 0, 0, 0, fmt.Errorf("a PNG of this window would be %.0f x %.0f pixels, more than %d million; narrow the window (--from/--to, --procs, --around) or write SVG",
			p.Width, p.Height, MaxPNGPixels>>20)
	}
	return int(math.Ceil(p.Width * scale)), int(math.Ceil(p.Height * scale)), scale, nil
}

// WritePNG paints the picture itself, with the Go fonts embedded in dmx: no
// Graphviz, and no font on the machine, is needed. It draws what WriteDOT
// describes, at PNGSize.
func WritePNG(w io.Writer, p *Picture) error {
	img, err := Paint(p)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	return enc.Encode(w, img)
}

// Paint paints the picture into an image of PNGSize.
func Paint(p *Picture) (*image.RGBA, error) {
	w, h, scale, err := PNGSize(p)
	if err != nil {
		return nil, err
	}
	pt := &painter{img: image.NewRGBA(image.Rect(0, 0, w, h)), s: scale}
	draw.Draw(pt.img, pt.img.Bounds(), image.White, image.Point{}, draw.Src)
	for i := range p.Edges {
		pt.edge(&p.Edges[i])
	}
	for i := range p.Nodes {
		if err := pt.node(&p.Nodes[i]); err != nil {
			return nil, err
		}
	}
	for i := range p.Edges {
		if e := &p.Edges[i]; e.Label != "" {
			pt.halo(e.LabelAt, e.Label, e.LabelSize, false)
			if err := pt.text(e.LabelAt, e.Label, e.LabelSize, false, e.LabelCol); err != nil {
				return nil, err
			}
		}
	}
	return pt.img, nil
}

type painter struct {
	img *image.RGBA
	s   float64
	r   vector.Rasterizer
}

// path is a closed polygon in points; fill paints polygons together (their
// windings add up, so an inner polygon wound the other way is a hole).
func (pt *painter) fill(col string, polys ...[]Pt) {
	if col == "" || len(polys) == 0 {
		return
	}
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, poly := range polys {
		for _, q := range poly {
			minX, minY = min(minX, q.X*pt.s), min(minY, q.Y*pt.s)
			maxX, maxY = max(maxX, q.X*pt.s), max(maxY, q.Y*pt.s)
		}
	}
	box := image.Rect(int(math.Floor(minX))-1, int(math.Floor(minY))-1, int(math.Ceil(maxX))+1, int(math.Ceil(maxY))+1).
		Intersect(pt.img.Bounds())
	if box.Empty() {
		return
	}
	pt.r.Reset(box.Dx(), box.Dy())
	ox, oy := float64(box.Min.X), float64(box.Min.Y)
	for _, poly := range polys {
		if len(poly) < 3 {
			continue
		}
		pt.r.MoveTo(float32(poly[0].X*pt.s-ox), float32(poly[0].Y*pt.s-oy))
		for _, q := range poly[1:] {
			pt.r.LineTo(float32(q.X*pt.s-ox), float32(q.Y*pt.s-oy))
		}
		pt.r.ClosePath()
	}
	pt.r.Draw(pt.img, box, image.NewUniform(parseColour(col)), image.Point{})
}

// stroke paints the polyline ps, width wide, as quads (one per segment,
// with round-ish joins from a small disc at each inner point).
func (pt *painter) stroke(ps []Pt, width float64, col string, dash bool) {
	if dash {
		on, off := max(4, 3*width), max(3, 2*width)
		for _, seg := range dashes(ps, on, off) {
			pt.stroke(seg, width, col, false)
		}
		return
	}
	var polys [][]Pt
	hw := width / 2
	for i := 1; i < len(ps); i++ {
		a, b := ps[i-1], ps[i]
		d := b.sub(a)
		if d.len() < 1e-9 {
			continue
		}
		n := Pt{-d.Y, d.X}.mul(hw / d.len())
		polys = append(polys, []Pt{a.add(n), b.add(n), b.sub(n), a.sub(n)})
	}
	pt.fill(col, polys...)
}

// dashes cuts a polyline into dashes of length on with gaps off.
func dashes(ps []Pt, on, off float64) [][]Pt {
	var out [][]Pt
	var cur []Pt
	drawing, left := true, on
	for i := 1; i < len(ps); i++ {
		a, b := ps[i-1], ps[i]
		seg := b.sub(a).len()
		pos := 0.0
		for seg-pos > 1e-9 {
			step := min(left, seg-pos)
			p0 := lerp(a, b, pos/seg)
			p1 := lerp(a, b, (pos+step)/seg)
			if drawing {
				if len(cur) == 0 {
					cur = append(cur, p0)
				}
				cur = append(cur, p1)
			}
			pos += step
			left -= step
			if left <= 1e-9 {
				if drawing && len(cur) > 1 {
					out = append(out, cur)
				}
				cur = nil
				drawing = !drawing
				left = on
				if !drawing {
					left = off
				}
			}
		}
	}
	if drawing && len(cur) > 1 {
		out = append(out, cur)
	}
	return out
}

// flatten returns points along the edge's curve, to its arrowhead's base.
func flatten(e *Edge) []Pt {
	end := e.P3
	c2 := e.C2
	if e.Arrow {
		base := arrowBase(e)
		c2 = c2.add(base.sub(e.P3))
		end = base
	}
	if e.C1 == e.P0 && e.C2 == e.P3 {
		return []Pt{e.P0, end}
	}
	c := Edge{P0: e.P0, C1: e.C1, C2: c2, P3: end}
	n := 24
	ps := make([]Pt, 0, n+1)
	for i := 0; i <= n; i++ {
		ps = append(ps, bezier(&c, float64(i)/float64(n)))
	}
	return ps
}

func (pt *painter) edge(e *Edge) {
	ps := flatten(e)
	pt.stroke(ps, max(e.Width, 0.8), e.Color, e.Dash)
	if e.Arrow {
		base := ps[len(ps)-1]
		d := unit(e.P3.sub(base))
		n := Pt{-d.Y, d.X}.mul(arrowHalf)
		pt.fill(e.Color, []Pt{base.add(n), e.P3, base.sub(n)})
	}
}

func (pt *painter) node(n *Node) error {
	c := Pt{n.X, n.Y}
	switch n.Shape {
	case Anchor:
		return nil
	case Text:
		if n.Halo {
			pt.halo(c, n.Label, n.Size, n.Bold)
		}
		return pt.text(c, n.Label, n.Size, n.Bold, n.Color)
	case Dot, Ring:
		outer := circle(c, n.R)
		if n.Shape == Ring && n.Fill == "" {
			inner := circle(c, max(n.R-n.Pen, 0))
			reverse(inner)
			pt.fill(n.Stroke, outer, inner)
			return nil
		}
		pt.fill(n.Fill, outer)
		if n.Stroke != "" {
			inner := circle(c, max(n.R-n.Pen, 0))
			reverse(inner)
			pt.fill(n.Stroke, outer, inner)
		}
		return nil
	}
	poly := polygon(n)
	pt.fill(n.Fill, poly)
	if n.Stroke != "" && n.Pen > 0 {
		pt.stroke(append(poly, poly[0]), n.Pen, n.Stroke, false)
	}
	return nil
}

// halo paints a pale box under words drawn over lines (SVG draws a white
// rim around the letters instead).
func (pt *painter) halo(c Pt, s string, size float64, bold bool) {
	r := textBox(c, s, size, bold)
	pt.fill("#ffffffd0", []Pt{{r.X0 - 1, r.Y0}, {r.X1 + 1, r.Y0}, {r.X1 + 1, r.Y1}, {r.X0 - 1, r.Y1}})
}

// circle is a polygon close to a circle.
func circle(c Pt, r float64) []Pt {
	n := 24
	if r > 8 {
		n = 48
	}
	ps := make([]Pt, n)
	for i := range ps {
		a := 2 * math.Pi * float64(i) / float64(n)
		ps[i] = Pt{c.X + r*math.Cos(a), c.Y + r*math.Sin(a)}
	}
	return ps
}

func reverse(ps []Pt) {
	for i, j := 0, len(ps)-1; i < j; i, j = i+1, j-1 {
		ps[i], ps[j] = ps[j], ps[i]
	}
}

// text writes s centred at c (the centre of its line), as Graphviz centres
// node and edge labels.
func (pt *painter) text(c Pt, s string, size float64, bold bool, col string) error {
	if s == "" {
		return nil
	}
	f, err := face(size*pt.s, bold)
	if err != nil {
		return err
	}
	if col == "" {
		col = colText
	}
	fonts.mu.Lock()
	defer fonts.mu.Unlock()
	w := fix(font.MeasureString(f, s))
	m := f.Metrics()
	asc, desc := fix(m.Ascent), fix(m.Descent)
	x := c.X*pt.s - w/2
	y := c.Y*pt.s + (asc-desc)/2
	dr := font.Drawer{Dst: pt.img, Src: image.NewUniform(parseColour(col)), Face: f,
		Dot: fixed.Point26_6{X: fixed.Int26_6(x * 64), Y: fixed.Int26_6(y * 64)}}
	dr.DrawString(s)
	return nil
}

// parseColour reads "#rrggbb" or "#rrggbbaa"; anything else is black.
func parseColour(s string) color.NRGBA {
	if len(s) != 7 && len(s) != 9 || s[0] != '#' {
		return color.NRGBA{A: 255}
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return color.NRGBA{A: 255}
	}
	if len(s) == 7 {
		return color.NRGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}
	}
	return color.NRGBA{uint8(v >> 24), uint8(v >> 16), uint8(v >> 8), uint8(v)}
}

package spacetime

import (
	"fmt"
	"math"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// A Picture is a laid-out diagram: shapes and lines at computed positions,
// in points, with y growing downwards. DOT (and through it SVG) and PNG are
// both written from one Picture, so the three show the same thing at the
// same place.
type Picture struct {
	Width, Height float64
	Title         string
	Nodes         []Node // drawn after (above) the edges, in order
	Edges         []Edge // drawn in order

	rows []float64 // the top of each row of a space-time page
}

// Shape is how a Node is drawn.
type Shape uint8

// The shapes. Every one is drawn the same way by the DOT writer (through
// Graphviz's shapes) and by the PNG painter.
const (
	Anchor   Shape = iota // invisible: an end of an edge that is no event
	Dot                   // a filled circle
	Ring                  // a circle outline
	Square                // a filled square
	Diamond               // a filled diamond
	Star                  // a filled five-pointed star
	Triangle              // a filled triangle, point up
	Text                  // Label alone, no shape
	Box                   // a rectangle of W x H, outlined, filled with Fill
)

// Node is a shape at a position. X, Y is its centre (for Text, the centre
// of the text's line).
type Node struct {
	X, Y     float64
	Shape    Shape
	R        float64 // radius (half the side of a Square); Box: unused
	W, H     float64 // Box: size
	Fill     string  // "#rrggbb" or "#rrggbbaa"; "" none
	Stroke   string  // outline; "" none
	Pen      float64 // outline width
	Label    string  // Text: the text
	Size     float64 // Text: font size in points
	Bold     bool
	Color    string // Text: its colour
	Align    byte   // Text: 'l' its left end at X-W/2, 'r' its right end at X+W/2; 0 centred
	Halo     bool   // Text: a white rim around the letters, for words over lines
	Tip      string // tooltip (SVG), e.g. "P2#17 send request to P3, Lamport 45"
	Class    string // SVG class: what the node shows ("event", "crash", "finding"...)
	external bool   // id: "x" + index instead of an event's name
}

// Edge is a cubic Bézier from node From to node To (P0 at From, P3 at To)
// with an optional arrowhead ending at P3; a straight line has C1 = P0 and
// C2 = P3.
type Edge struct {
	From, To  int // indices into Picture.Nodes
	P0, C1    Pt
	C2, P3    Pt
	Arrow     bool
	Color     string
	Width     float64
	Dash      bool
	Label     string
	LabelAt   Pt
	LabelSize float64
	LabelCol  string
	Tip       string
	Class     string
}

// Rect is a box of a Picture: X0 < X1, Y0 < Y1.
type Rect struct{ X0, Y0, X1, Y1 float64 }

// Overlaps reports whether r and o share more than an edge.
func (r Rect) Overlaps(o Rect) bool { return r.X0 < o.X1 && o.X0 < r.X1 && r.Y0 < o.Y1 && o.Y0 < r.Y1 }

// textBox is the box the words s take, centred on c.
func textBox(c Pt, s string, size float64, bold bool) Rect {
	w := textWidth(s, size, bold)
	return Rect{c.X - w/2, c.Y - size*0.6, c.X + w/2, c.Y + size*0.6}
}

// LabelBoxes returns the box of every piece of text of the picture (text
// nodes and the labels of edges), in the order drawn. The layout places
// them so that no two overlap.
func (p *Picture) LabelBoxes() []Rect {
	var out []Rect
	for i := range p.Nodes {
		if n := &p.Nodes[i]; n.Shape == Text && n.Label != "" {
			out = append(out, textBox(Pt{n.X, n.Y}, n.Label, n.Size, n.Bold))
		}
	}
	for i := range p.Edges {
		if e := &p.Edges[i]; e.Label != "" {
			out = append(out, textBox(e.LabelAt, e.Label, e.LabelSize, false))
		}
	}
	return out
}

// Pt is a point of a Picture.
type Pt struct{ X, Y float64 }

func (p Pt) add(q Pt) Pt         { return Pt{p.X + q.X, p.Y + q.Y} }
func (p Pt) sub(q Pt) Pt         { return Pt{p.X - q.X, p.Y - q.Y} }
func (p Pt) mul(k float64) Pt    { return Pt{p.X * k, p.Y * k} }
func (p Pt) len() float64        { return math.Hypot(p.X, p.Y) }
func (p Pt) String() string      { return fmt.Sprintf("%.1f,%.1f", p.X, p.Y) }
func lerp(a, b Pt, t float64) Pt { return a.add(b.sub(a).mul(t)) }

// unit is p scaled to length 1 (a zero p points right).
func unit(p Pt) Pt {
	l := p.len()
	if l == 0 {
		return Pt{1, 0}
	}
	return p.mul(1 / l)
}

// bezier is the point of e's curve at t in [0, 1].
func bezier(e *Edge, t float64) Pt {
	u := 1 - t
	a := e.P0.mul(u * u * u)
	b := e.C1.mul(3 * u * u * t)
	c := e.C2.mul(3 * u * t * t)
	d := e.P3.mul(t * t * t)
	return a.add(b).add(c).add(d)
}

// arrowLen is the length of an arrowhead in points; its half-width is
// arrowHalf. Graphviz draws arrowsize 1 as 10 points long.
const (
	arrowSize = 0.7
	arrowLen  = 10 * arrowSize
	arrowHalf = arrowLen * 0.35
)

// arrowBase is where the line of an arrow ends and its head begins: the
// head covers the last arrowLen points before P3, along the curve's end
// direction.
func arrowBase(e *Edge) Pt {
	d := e.P3.sub(e.C2)
	if d.len() < 1e-6 {
		d = e.P3.sub(e.P0)
	}
	return e.P3.sub(unit(d).mul(arrowLen))
}

// fonts: the Go fonts, embedded in the binary, measure text for the layout
// and draw it in PNGs, so that neither needs a font on the machine.
var fonts struct {
	once          sync.Once
	regular, bold *opentype.Font
	err           error
	faces         map[faceKey]font.Face
	mu            sync.Mutex
}

type faceKey struct {
	size float64
	bold bool
}

func loadFonts() error {
	fonts.once.Do(func() {
		if fonts.regular, fonts.err = opentype.Parse(goregular.TTF); fonts.err != nil {
			return
		}
		fonts.bold, fonts.err = opentype.Parse(gobold.TTF)
		fonts.faces = make(map[faceKey]font.Face)
	})
	return fonts.err
}

// face returns the Go font at size points for dpi 72*scale.
func face(size float64, bold bool) (font.Face, error) {
	if err := loadFonts(); err != nil {
		return nil, fmt.Errorf("load the embedded fonts: %w", err)
	}
	fonts.mu.Lock()
	defer fonts.mu.Unlock()
	k := faceKey{size, bold}
	if f := fonts.faces[k]; f != nil {
		return f, nil
	}
	fnt := fonts.regular
	if bold {
		fnt = fonts.bold
	}
	f, err := opentype.NewFace(fnt, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil, fmt.Errorf("font face: %w", err)
	}
	fonts.faces[k] = f
	return f, nil
}

// textWidth is the width of s in points at size, in the Go font; the DOT
// writer names Helvetica, whose widths are close. Text that cannot be
// measured counts 0.55 em per rune.
func textWidth(s string, size float64, bold bool) float64 {
	f, err := face(size, bold)
	if err != nil {
		return float64(len([]rune(s))) * size * 0.55
	}
	fonts.mu.Lock()
	defer fonts.mu.Unlock()
	return fix(font.MeasureString(f, s))
}

func fix(x fixed.Int26_6) float64 { return float64(x) / 64 }

// TextWidth is the width in points of s at size in the font pictures are
// measured and painted in (the Go fonts), for other pictures drawn as a
// Picture (render/plot).
func TextWidth(s string, size float64, bold bool) float64 { return textWidth(s, size, bold) }

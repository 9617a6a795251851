package spacetime

import (
	"fmt"
	"math"
	"slices"
)

// label is a piece of text the layout wants written near something: a
// mark beside its event, a message's type along its arrow, a finding's
// number. Labels are placed after everything is drawn, most important
// first, each at the first of its candidate places where it covers no
// other text and no event; one that fits nowhere is left to a numbered
// note under the key (note names what it belongs to), or, for a
// message's type, which its colour and the key already say, left out.
type label struct {
	text  string
	size  float64
	bold  bool
	col   string
	prio  int // lower is placed first
	halo  bool
	tip   string
	cands []Pt // the text's centres (its left ends when left)
	left  bool
	edge  int    // > 0: the label of edge edge-1
	note  string // "" : left out when it fits nowhere
}

// placer keeps the boxes taken on a page, in a grid of cells, so that a
// test is a look at a few cells whatever the size of the page.
type placer struct {
	cells map[[2]int][]Rect
}

func newPlacer() placer { return placer{cells: make(map[[2]int][]Rect)} }

const cell = 64.0

func (pl *placer) each(r Rect, fn func(k [2]int) bool) bool {
	for cx := int(math.Floor(r.X0 / cell)); cx <= int(math.Floor(r.X1/cell)); cx++ {
		for cy := int(math.Floor(r.Y0 / cell)); cy <= int(math.Floor(r.Y1/cell)); cy++ {
			if !fn([2]int{cx, cy}) {
				return false
			}
		}
	}
	return true
}

// free reports whether r covers nothing taken.
func (pl *placer) free(r Rect) bool {
	return pl.each(r, func(k [2]int) bool {
		for _, o := range pl.cells[k] {
			if r.Overlaps(o) {
				return false
			}
		}
		return true
	})
}

func (pl *placer) take(r Rect) {
	pl.each(r, func(k [2]int) bool {
		pl.cells[k] = append(pl.cells[k], r)
		return true
	})
}

// obstacle keeps labels off an event's glyph of radius r at c.
func (pl *placer) obstacle(c Pt, r float64) {
	pl.take(Rect{c.X - r, c.Y - r, c.X + r, c.Y + r})
}

// place writes the labels the page asked for.
func (pg *pg) place() {
	slices.SortStableFunc(pg.want, func(a, b label) int { return a.prio - b.prio })
	lo, hi := pg.top[0]-rowAbove+4, pg.bottom
	inside := func(r Rect) bool {
		return r.X0 >= margin/2 && r.X1 <= pg.l.width-margin/2 && r.Y0 >= lo && r.Y1 <= hi
	}
	try := func(lb *label, text string, size float64) (Pt, bool) {
		w := textWidth(text, size, lb.bold)
		for _, c := range lb.cands {
			if lb.left {
				c.X += w / 2
			}
			r := textBox(c, text, size, lb.bold)
			r.X0, r.X1 = r.X0-1, r.X1+1
			if inside(r) && pg.pl.free(r) {
				pg.pl.take(r)
				return c, true
			}
		}
		return Pt{}, false
	}
	for i := range pg.want {
		lb := &pg.want[i]
		if c, ok := try(lb, lb.text, lb.size); ok {
			pg.write(lb, c, lb.text, lb.size)
			continue
		}
		if lb.note == "" {
			continue
		}
		n := len(pg.notes) + 1
		num := fmt.Sprintf("[%d]", n)
		if c, ok := try(lb, num, fontSmall); ok {
			pg.write(lb, c, num, fontSmall)
			pg.notes = append(pg.notes, fmt.Sprintf("[%d] %s: %s", n, lb.note, lb.text))
		} else {
			pg.notes = append(pg.notes, fmt.Sprintf("%s: %s (no room beside it)", lb.note, lb.text))
		}
	}
	pg.want = nil
}

// write puts a placed label on the page.
func (pg *pg) write(lb *label, c Pt, text string, size float64) {
	if lb.edge > 0 {
		e := &pg.p.Edges[lb.edge-1]
		e.Label, e.LabelAt, e.LabelSize = text, c, size
		return
	}
	pg.node(Node{X: c.X, Y: c.Y, Shape: Text, Label: text, Size: size, Bold: lb.bold, Color: lb.col, W: textWidth(text, size, lb.bold),
		Halo: lb.halo, Tip: lb.tip, Class: "text"})
}

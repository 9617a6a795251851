package spacetime

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dmxlab/dmx/render/palette"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// Layout sizes, in points.
const (
	laneGapMax = 64.0 // between lanes, for a few processes
	laneGapMin = 30.0 // for many
	colGap     = 26.0 // between columns; the median gap on the wall axis
	minGap     = 5.0  // the least gap between two columns on the wall axis
	maxGap     = 3 * colGap
	breakGap   = 2 * colGap // an idle stretch cut short
	stubLen    = 2.2 * colGap
	margin     = 16.0
	edgePad    = 3 * colGap // room for messages that come from or go out of the window
	barWidth   = 8.0
	rowAbove   = 46.0 // room above a row's first lane: its ticks and the marks over the lane
	rowBelow   = 36.0 // below its last lane
	fontMsg    = 7.5
	fontMark   = 8.5
	fontLane   = 12.0
	fontSmall  = 8.0
	fontTitle  = 12.0
	fontText   = 9.5
)

// The bounds of a page: a window too long for one row wraps into rows
// (each row its own lanes, read left to right then down, as text), and
// rows that do not fit one page go to the next. A page is never wider than
// MaxWidth nor (but for a single row of very many lanes) taller than
// MaxHeight, and a short window is drawn narrower so that its page is no
// more than MaxAspect times as wide as it is tall.
const (
	MaxWidth    = 1400.0
	MaxHeight   = 1800.0
	MaxAspect   = 3.0
	minRowWidth = 420.0
)

// Colours: dmx's one palette (render/palette), shared with the viewer,
// the plots and the report.
const (
	colLane       = palette.Lane
	colDown       = palette.Down
	colEvent      = palette.Event
	colMinor      = palette.Minor
	colCrash      = palette.Crash
	colLost       = palette.Lost
	colRecover    = palette.Recover
	colLeader     = palette.Leader
	colLeaderInk  = palette.LeaderInk
	colElect      = palette.Election
	colSuspect    = palette.Suspect
	colTrust      = palette.Trust
	colDeliver    = palette.Deliver
	colFinding    = palette.Finding
	colText       = palette.Text
	colNote       = palette.Note
	colBackground = palette.Background
	colFault      = palette.Fault
)

// background message types are drawn faint and without labels.
func background(typ string) bool { return palette.IsBackground(typ) }

// minor kinds are drawn small and collapsed when they come in runs.
func minor(k trace.Kind) bool {
	switch k {
	case trace.KindInternal, trace.KindTimeout, trace.KindWait, trace.KindStart, trace.KindStop:
		return true
	case trace.KindSend, trace.KindReceive, trace.KindDrop, trace.KindCSRequest, trace.KindCSEnter, trace.KindCSExit,
		trace.KindCrash, trace.KindRecover, trace.KindLeader, trace.KindElectionStart, trace.KindSuspect, trace.KindTrust,
		trace.KindDeliver, trace.KindFault:
		return false
	}
	return true // kinds of other programs
}

// layout is what the pages of one diagram share: colours, the events'
// positions along the time axis, the rows and the pages.
type layout struct {
	d        *Diagram
	maxW     float64 // the widest a page may be
	gap      float64 // between lanes
	msgCol   map[string]string
	resCol   map[string]string
	msgOrder []string
	resOrder []string
	rep      []int     // event -> the event that stands for it (itself, or the head of its collapsed run)
	count    []int     // head -> the events it stands for
	pos      []float64 // event -> its place along the time axis, from 0
	breaks   []brk     // idle stretches cut short (wall axis)
	rows     []span    // the stretches of the axis, one per row
	row      []int32   // event -> its row
	byRow    [][]int32 // row -> its events
	pages    [][2]int  // rows [a, b) of each page
	msgs     [][]int32 // page -> the messages with an end on it
	labelW   float64   // the lane labels' width
	left     float64   // x of a row's start
	width    float64   // the pages' width
	rowH     float64
	header   float64 // estimated heights of a page's head and foot
	footer   float64
	legend   []legendItem
	hasWait  bool
}

type brk struct {
	pos float64
	txt string
}

type span struct{ lo, hi float64 }

// Pages lays the diagram out: one picture per page. A window that fits one
// row is one page; a longer one wraps into rows and pages (see MaxWidth).
// With collapse, runs of three or more local events of a process that
// nothing else refers to are drawn as one node.
func Pages(d *Diagram, collapse bool) []*Picture { return pagesWithin(d, collapse, MaxWidth) }

// pagesWithin is Pages with pages no wider than maxW.
func pagesWithin(d *Diagram, collapse bool, maxW float64) []*Picture {
	l := &layout{d: d, maxW: maxW}
	l.prepare(collapse)
	out := make([]*Picture, len(l.pages))
	for i := range l.pages {
		out[i] = l.page(i)
	}
	return out
}

// EachPage lays the diagram out as Pages does and hands fn the pages one
// at a time (n from 1 of total), so that a long window never holds more
// than one page in memory.
func EachPage(d *Diagram, collapse bool, fn func(n, total int, p *Picture) error) error {
	l := &layout{d: d, maxW: MaxWidth}
	l.prepare(collapse)
	for i := range l.pages {
		if err := fn(i+1, len(l.pages), l.page(i)); err != nil {
			return err
		}
	}
	return nil
}

// Layout lays the diagram out and returns its first page (see Pages).
func Layout(d *Diagram, collapse bool) *Picture { return Pages(d, collapse)[0] }

func (l *layout) prepare(collapse bool) {
	d := l.d
	// Colours by name (render/palette), the run's whole set of types and
	// resources known: the same in every window and in dmx serve.
	l.msgCol = palette.Types(d.MsgTypes, d.Types)
	l.resCol = palette.ResourceColours(d.Resources)
	var types, res []string
	for _, m := range d.Msgs {
		types = append(types, m.Type)
		if _, ok := l.msgCol[m.Type]; !ok {
			l.msgCol[m.Type] = palette.Messages[0]
		}
	}
	l.msgOrder = palette.Order(d.MsgTypes, types)
	for _, s := range d.Sections {
		res = append(res, s.Resource)
		if _, ok := l.resCol[s.Resource]; !ok {
			l.resCol[s.Resource] = palette.Resources[0]
		}
	}
	slices.Sort(res)
	l.resOrder = slices.Compact(res)
	l.gap = laneGapMax
	if n := len(d.Lanes); n > 8 {
		l.gap = max(laneGapMin, laneGapMax-4*float64(n-8))
	}
	for _, o := range d.Findings {
		for _, p := range o.Parts {
			if p.Role == "waits-for" {
				l.hasWait = true
			}
		}
	}

	l.collapse(collapse)
	if d.Axis == Wall {
		l.wallPositions()
	} else {
		l.causalPositions()
	}
	for _, ln := range d.Lanes {
		l.labelW = max(l.labelW, textWidth(ln.Name, fontLane, true), textWidth(ln.Sub, fontSmall, false), textWidth(ln.Role, fontSmall, false))
	}
	l.left = margin + l.labelW + 12 + edgePad
	l.rowH = rowAbove + float64(max(len(d.Lanes)-1, 0))*l.gap + rowBelow
	l.legend = l.legendItems()
	l.fit()
	// Each event's row, each row's events, each page's messages: drawing
	// a page looks at its own only, whatever the number of pages.
	l.row = make([]int32, len(d.Events))
	l.byRow = make([][]int32, len(l.rows))
	for i := range d.Events {
		r := l.rowOf(l.pos[i])
		l.row[i] = int32(r)
		l.byRow[r] = append(l.byRow[r], int32(i))
	}
	pageOf := make([]int, len(l.rows))
	for n, pg := range l.pages {
		for r := pg[0]; r < pg[1]; r++ {
			pageOf[r] = n
		}
	}
	l.msgs = make([][]int32, len(l.pages))
	for i, m := range d.Msgs {
		a, b := -1, -1
		if m.Send != outside {
			a = pageOf[l.row[m.Send]]
			l.msgs[a] = append(l.msgs[a], int32(i))
		}
		if m.Recv != outside {
			if b = pageOf[l.row[m.Recv]]; b != a {
				l.msgs[b] = append(l.msgs[b], int32(i))
			}
		}
	}
}

// collapse decides which events are drawn: per event, the event that
// stands for it (itself, or the first of its collapsed run).
func (l *layout) collapse(on bool) {
	d := l.d
	l.rep = make([]int, len(d.Events))
	l.count = make([]int, len(d.Events))
	for i := range l.rep {
		l.rep[i] = i
	}
	if on {
		used := make([]bool, len(d.Events))
		mark := func(i int) {
			if i >= 0 {
				used[i] = true
			}
		}
		for _, m := range d.Msgs {
			mark(m.Send)
			mark(m.Recv)
			mark(m.Drop)
		}
		for _, s := range d.Sections {
			mark(s.Request)
			mark(s.Enter)
			mark(s.Exit)
		}
		for _, r := range d.Reigns {
			mark(r.Start)
			mark(r.End)
		}
		for _, f := range d.Faults {
			mark(f.Start)
			mark(f.End)
		}
		for _, o := range d.Findings {
			for _, i := range o.Events {
				mark(i)
			}
			for _, p := range o.Parts {
				for _, i := range p.At {
					mark(i)
				}
			}
		}
		byLane := make([][]int, len(d.Lanes))
		for i, e := range d.Events {
			byLane[e.Lane] = append(byLane[e.Lane], i)
		}
		for _, evs := range byLane {
			slices.SortFunc(evs, func(a, b int) int { return cmp.Compare(d.Events[a].Seq, d.Events[b].Seq) })
			for i := 0; i < len(evs); {
				j := i
				for j < len(evs) && minor(d.Events[evs[j]].Kind) && !used[evs[j]] {
					j++
				}
				if j-i >= 3 {
					for _, e := range evs[i:j] {
						l.rep[e] = evs[i]
					}
				}
				i = max(j, i+1)
			}
		}
	}
	for i := range l.rep {
		l.count[l.rep[i]]++
	}
}

// barrier says whether e starts a column of its own after everything that
// happened before it in wall time: a fault begins or ends (a partition
// heals, a paused process resumes) or a process recovers. Drawn by
// happens-before alone, a process paused for 600ms would show its next
// events beside what the others did 600ms earlier.
func barrier(e *Event) bool {
	return e.Kind == trace.KindRecover || (e.Kind == trace.KindFault && e.Fault != "")
}

// causalPositions places events in columns by happens-before: each event
// one column right of its process's previous one and of the send of a
// message it receives (the layering ShiViz draws, close to one column per
// Lamport time). Where the run's wall clock agrees with happens-before,
// events are taken in wall-time order, and a fault's start or end, or a
// recovery, goes right of every event before it in wall time.
func (l *layout) causalPositions() {
	d := l.d
	var order []int
	for i := range d.Events {
		if l.rep[i] == i {
			order = append(order, i)
		}
	}
	if d.Causal {
		slices.SortFunc(order, func(a, b int) int {
			x, y := &d.Events[a], &d.Events[b]
			return cmp.Or(cmp.Compare(x.Wall, y.Wall), cmp.Compare(x.Lamport, y.Lamport), cmp.Compare(x.Lane, y.Lane), cmp.Compare(x.Seq, y.Seq))
		})
	} else {
		slices.SortFunc(order, func(a, b int) int {
			x, y := &d.Events[a], &d.Events[b]
			return cmp.Or(cmp.Compare(x.Lamport, y.Lamport), cmp.Compare(x.Lane, y.Lane), cmp.Compare(x.Seq, y.Seq))
		})
	}
	sendOf := make(map[int]int)
	for _, m := range d.Msgs {
		if m.Send != outside && m.Recv != outside {
			sendOf[m.Recv] = m.Send
		}
	}
	col := make([]int, len(d.Events))
	done := make([]bool, len(d.Events))
	last := make([]int, len(d.Lanes))
	for i := range last {
		last[i] = -1
	}
	group := map[string]int{}
	maxCol := -1
	for _, i := range order {
		e := &d.Events[i]
		c := last[e.Lane] + 1
		if s, ok := sendOf[i]; ok && done[l.rep[s]] {
			c = max(c, col[l.rep[s]]+1)
		}
		if d.Causal && barrier(e) {
			k := e.Fault
			if k == "" {
				k = e.Ref.String()
			}
			g, ok := group[k]
			if !ok {
				g = maxCol + 1
				group[k] = g
			}
			c = max(c, g)
		}
		col[i], done[i] = c, true
		last[e.Lane] = c
		maxCol = max(maxCol, c)
	}
	l.pos = make([]float64, len(d.Events))
	for i := range d.Events {
		l.pos[i] = float64(col[l.rep[i]]) * colGap
	}
}

// wallPositions places events by wall time: the median gap between two
// columns is colGap, no gap is narrower than minGap, and an idle stretch
// of more than 1.5 maxGap is cut to breakGap and marked with its length.
func (l *layout) wallPositions() {
	d := l.d
	var keys []int64
	for i, e := range d.Events {
		if l.rep[i] == i {
			keys = append(keys, e.Key)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	xs := make(map[int64]float64, len(keys))
	x := 0.0
	if len(keys) > 0 {
		xs[keys[0]] = 0
	}
	if len(keys) > 1 {
		gaps := make([]int64, 0, len(keys)-1)
		for i := 1; i < len(keys); i++ {
			gaps = append(gaps, keys[i]-keys[i-1])
		}
		sorted := slices.Clone(gaps)
		slices.Sort(sorted)
		scale := colGap / float64(max(sorted[len(sorted)/2], 1))
		for i, g := range gaps {
			w := float64(g) * scale
			switch {
			case w > 1.5*maxGap:
				l.breaks = append(l.breaks, brk{x + breakGap/2, FormatDur(g) + " idle"})
				w = breakGap
			case w > maxGap:
				w = maxGap
			case w < minGap:
				w = minGap
			}
			x += w
			xs[keys[i+1]] = x
		}
	}
	l.pos = make([]float64, len(d.Events))
	for i := range d.Events {
		l.pos[i] = xs[d.Events[l.rep[i]].Key]
	}
}

// fit chooses the rows' width, the rows and the pages within the bounds.
func (l *layout) fit() {
	right := edgePad + margin
	maxContent := max(l.maxW-l.left-right, minRowWidth/2)
	content := maxContent
	for range 12 {
		l.rows = l.split(content)
		if n := len(l.rows); n > 1 {
			// Rows of about one length: the last as long as the others,
			// the picture no wider than it needs.
			total := l.rows[n-1].hi - l.rows[0].lo
			if even := l.split(min(content, total/float64(n)*1.06+colGap)); len(even) == n {
				l.rows = even
			}
		}
		widest := 0.0
		for _, r := range l.rows {
			widest = max(widest, r.hi-r.lo)
		}
		l.width = max(l.left+widest+right, minRowWidth)
		l.estimate()
		perPage := max(1, int((MaxHeight-l.header-l.footer)/l.rowH))
		rows := min(len(l.rows), perPage)
		h := l.header + float64(rows)*l.rowH + l.footer
		if len(l.rows) > perPage || l.width/h <= MaxAspect || content <= minRowWidth {
			break
		}
		content = max(minRowWidth, min(content*0.8, widest*0.8))
	}
	perPage := max(1, int((MaxHeight-l.header-l.footer)/l.rowH))
	pages := (len(l.rows) + perPage - 1) / perPage
	// Balanced: every page holds the same number of rows, or one less,
	// so that the last is not a lone row (too wide for its height).
	l.pages = nil
	for i, a := 0, 0; i < pages; i++ {
		n := len(l.rows) / pages
		if i < len(l.rows)%pages {
			n++
		}
		l.pages = append(l.pages, [2]int{a, a + n})
		a += n
	}
}

// split cuts the axis into rows of at most width points, each at the
// column boundary near its end that the fewest messages cross.
func (l *layout) split(width float64) []span {
	d := l.d
	var ps []float64
	for i := range d.Events {
		if l.rep[i] == i {
			ps = append(ps, l.pos[i])
		}
	}
	slices.Sort(ps)
	ps = slices.Compact(ps)
	if len(ps) == 0 {
		return []span{{0, 0}}
	}
	idx := func(p float64) int { i, _ := slices.BinarySearch(ps, p); return i }
	// cross[j]: messages drawn across the boundary after column j.
	cross := make([]int, len(ps)+1)
	for _, m := range d.Msgs {
		if m.Send == outside || m.Recv == outside || background(m.Type) {
			continue
		}
		a, b := idx(l.pos[m.Send]), idx(l.pos[m.Recv])
		if a > b {
			a, b = b, a
		}
		cross[a]++
		cross[b]--
	}
	for j := 1; j < len(cross); j++ {
		cross[j] += cross[j-1]
	}
	var rows []span
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1]-ps[i] <= width {
			j++
		}
		if j == len(ps)-1 {
			rows = append(rows, span{ps[i], ps[j]})
			break
		}
		best := j
		for k := j; k > i && k >= j-(j-i)/4; k-- {
			if cross[k] < cross[best] {
				best = k
			}
		}
		rows = append(rows, span{ps[i], ps[best]})
		i = best + 1
	}
	return rows
}

// estimate sets the heights of a page's head (title, window, hints) and
// foot (key and captions) at the current width.
func (l *layout) estimate() {
	w := l.width - 2*margin
	n := len(wrap(l.d.title(), fontTitle, w, 3, true))
	for _, s := range l.d.headLines() {
		n += len(wrap(s, fontText, w, 3, false))
	}
	l.header = margin + float64(n)*(fontText+5) + 8
	rows := 1
	x := margin + 28
	for _, it := range l.legend {
		if x+it.w > l.width-margin && x > margin {
			rows++
			x = margin
		}
		x += it.w + 16
	}
	f := 8 + float64(rows)*18 + 6
	for _, s := range l.d.captionLines() {
		f += float64(len(wrap(s.text, fontText, w, captionLinesMax, false)))*(fontText+4) + 3
	}
	l.footer = f + margin
}

// row returns the row of a position.
func (l *layout) rowOf(p float64) int {
	i, _ := slices.BinarySearchFunc(l.rows, p, func(r span, p float64) int {
		switch {
		case r.hi < p:
			return -1
		case r.lo > p:
			return 1
		}
		return 0
	})
	return min(i, len(l.rows)-1)
}

// pg is the state of drawing one page.
type pg struct {
	l      *layout
	p      *Picture
	n      int       // page index
	a, b   int       // its rows [a, b)
	top    []float64 // y of the first lane of each of its rows (by row index - a)
	item   []int     // event -> the node that shows it; -1 if not on this page
	pl     placer
	want   []label
	notes  []string
	bottom float64
}

func (l *layout) page(n int) *Picture {
	pg := &pg{l: l, p: &Picture{Width: l.width}, n: n, a: l.pages[n][0], b: l.pages[n][1], pl: newPlacer()}
	d := l.d
	pg.p.Title = d.title()
	if len(l.pages) > 1 {
		pg.p.Title += fmt.Sprintf(" · page %d of %d", n+1, len(l.pages))
	}
	y := pg.head()
	for r := pg.a; r < pg.b; r++ {
		pg.top = append(pg.top, y+rowAbove)
		pg.p.rows = append(pg.p.rows, y)
		y += l.rowH
	}
	pg.bottom = y
	pg.item = make([]int, len(d.Events))
	for i := range pg.item {
		pg.item[i] = -1
	}
	for r := pg.a; r < pg.b; r++ {
		pg.lanes(r)
	}
	pg.bars()
	pg.events()
	pg.messages()
	pg.findings()
	pg.place()
	y = pg.legend(y)
	y = pg.caption(y)
	pg.p.Height = y + margin
	return pg.p
}

// on says whether event i is drawn on this page, and in which row.
func (pg *pg) on(i int) (int, bool) {
	if i == outside {
		return 0, false
	}
	r := int(pg.l.row[i])
	return r, r >= pg.a && r < pg.b
}

// xy is where event i's glyph is on this page (it must be on it).
func (pg *pg) xy(i int) Pt {
	l := pg.l
	r := int(l.row[i])
	return Pt{l.left + l.pos[i] - l.rows[r].lo, pg.laneY(r, pg.l.d.Events[i].Lane)}
}

func (pg *pg) laneY(row, lane int) float64 { return pg.top[row-pg.a] + float64(lane)*pg.l.gap }

// rowX is the x of a position in row r (clamped to the row's lane ends).
func (pg *pg) rowX(r int, p float64) float64 {
	l := pg.l
	x := l.left + p - l.rows[r].lo
	return min(max(x, pg.x0()), pg.x1(r))
}

// x0 and x1 are where a row's lanes begin and end.
func (pg *pg) x0() float64      { return pg.l.left - edgePad + 8 }
func (pg *pg) x1(r int) float64 { return pg.l.left + pg.l.rows[r].hi - pg.l.rows[r].lo + edgePad - 8 }

// node adds a node and returns its index.
func (pg *pg) node(n Node) int {
	pg.p.Nodes = append(pg.p.Nodes, n)
	return len(pg.p.Nodes) - 1
}

func (pg *pg) anchor(p Pt) int { return pg.node(Node{X: p.X, Y: p.Y, Shape: Anchor}) }

// line adds a straight edge between two nodes and returns its index.
func (pg *pg) line(a, b int, e Edge) int {
	na, nb := pg.p.Nodes[a], pg.p.Nodes[b]
	e.From, e.To = a, b
	e.P0, e.P3 = Pt{na.X, na.Y}, Pt{nb.X, nb.Y}
	if e.Arrow {
		// Stop at the target's rim.
		dir := unit(e.P3.sub(e.P0))
		e.P3 = e.P3.sub(dir.mul(nb.R + 0.5))
	}
	e.C1, e.C2 = e.P0, e.P3
	pg.p.Edges = append(pg.p.Edges, e)
	return len(pg.p.Edges) - 1
}

// seg draws a straight line between two points.
func (pg *pg) seg(a, b Pt, e Edge) int { return pg.line(pg.anchor(a), pg.anchor(b), e) }

// curve adds a curved edge that bows by bow points to the left of its
// direction.
func (pg *pg) curve(a, b int, bow float64, e Edge) int {
	na, nb := pg.p.Nodes[a], pg.p.Nodes[b]
	e.From, e.To = a, b
	p0, p3 := Pt{na.X, na.Y}, Pt{nb.X, nb.Y}
	dir := unit(p3.sub(p0))
	nrm := Pt{dir.Y, -dir.X}.mul(bow)
	e.P0, e.P3 = p0, p3
	e.C1 = lerp(p0, p3, 0.25).add(nrm)
	e.C2 = lerp(p0, p3, 0.75).add(nrm)
	if e.Arrow {
		end := unit(p3.sub(e.C2))
		e.P3 = p3.sub(end.mul(nb.R + 1))
	}
	pg.p.Edges = append(pg.p.Edges, e)
	return len(pg.p.Edges) - 1
}

// fixed writes text at a place of its own (a lane's name, the key, the
// captions), with its left end at x (anchor "start"), its centre
// ("middle") or its right end ("end"); the placer keeps other text off it.
func (pg *pg) fixed(x, y float64, s string, size float64, bold bool, col, anchor string) int {
	w := textWidth(s, size, bold)
	var align byte
	switch anchor {
	case "start":
		x += w / 2
		align = 'l'
	case "end":
		x -= w / 2
		align = 'r'
	}
	pg.pl.take(textBox(Pt{x, y}, s, size, bold))
	return pg.node(Node{X: x, Y: y, Shape: Text, Label: s, Size: size, Bold: bold, Color: col, W: w, Align: align, Class: "text"})
}

// head writes the title, the window and how to see the rest; it returns
// the y below.
func (pg *pg) head() float64 {
	l, d := pg.l, pg.l.d
	w := l.width - 2*margin
	y := margin + fontTitle/2
	for _, s := range wrap(pg.p.Title, fontTitle, w, 3, true) {
		pg.fixed(margin, y, s, fontTitle, true, colText, "start")
		y += fontTitle + 4
	}
	for _, s := range d.headLines() {
		for _, line := range wrap(s, fontText, w, 3, false) {
			pg.fixed(margin, y, line, fontText, false, colNote, "start")
			y += fontText + 5
		}
	}
	return y + 4
}

// headLines say which window the picture shows, why, and how to see the
// rest of the run.
func (d *Diagram) headLines() []string {
	var win string
	if d.Whole {
		win = "window: the whole run"
	} else {
		win = "window: " + d.Window()
	}
	if d.Why != "" && d.Why != "the whole run" {
		win += ", " + d.Why
	}
	n := plural.Count(len(d.Events), "event")
	if !d.Whole {
		n = fmt.Sprintf("%d of %s", len(d.Events), plural.Count(d.Total, "event"))
	}
	win += " · " + n
	if d.Hidden > 0 {
		win += fmt.Sprintf(" (%s not drawn: dmx render --heartbeats draws them)", plural.Count(d.Hidden, "heartbeat event"))
	}
	lines := []string{win}
	// Faults of the network acting in the window: named, not drawn (a
	// band across every lane would hide the lanes).
	var other []string
	for _, f := range d.Faults {
		if f.Kind != "pause" && f.Kind != "partition" && !slices.Contains(other, f.Spec) {
			other = append(other, f.Spec)
		}
	}
	if len(other) > 0 {
		lines = append(lines, "faults acting in this window: "+strings.Join(other, ", "))
	}
	if !d.Whole {
		tr := d.TracePath
		if tr == "" {
			tr = "TRACE"
		}
		span := d.span(d.RunLo, d.RunHi)
		lines = append(lines, fmt.Sprintf("to see the rest: dmx render %s -o FILE --from A --to B (this window: %s; the run: %s), or dmx serve %s",
			tr, d.Bounds(), span, tr))
	}
	return lines
}

// lanes draws row r's lanes (up and down stretches), their names and its
// ticks.
func (pg *pg) lanes(r int) {
	l, d := pg.l, pg.l.d
	x0, x1 := pg.x0(), pg.x1(r)
	for i, ln := range d.Lanes {
		y := pg.laneY(r, i)
		sub := ln.Sub
		if ln.Role != "" {
			if sub != "" {
				sub += " · "
			}
			sub += ln.Role
		}
		if sub != "" && textWidth(sub, fontSmall, false) > l.labelW {
			sub = ln.Role
		}
		pg.fixed(x0-10, y-(fontLane/2)*boolf(sub != ""), ln.Name, fontLane, true, colText, "end")
		if sub != "" {
			pg.fixed(x0-10, y+fontSmall, sub, fontSmall, false, colNote, "end")
		}
		// Down stretches: dashed.
		type cut struct{ a, b float64 }
		var downs []cut
		for _, dn := range d.Downs {
			if dn.Lane != i {
				continue
			}
			a, b, ok := pg.stretch(r, dn.Crash, dn.Recover)
			if ok {
				downs = append(downs, cut{a, b})
			}
		}
		slices.SortFunc(downs, func(p, q cut) int { return cmp.Compare(p.a, q.a) })
		at := x0
		for _, c := range downs {
			if c.a > at {
				pg.seg(Pt{at, y}, Pt{c.a, y}, Edge{Color: colLane, Width: 1.2, Class: "lane"})
			}
			pg.seg(Pt{max(c.a, at), y}, Pt{c.b, y}, Edge{Color: colDown, Width: 1.2, Dash: true, Class: "down", Tip: fmt.Sprintf("%s is down", ln.Name)})
			at = max(at, c.b)
		}
		if at < x1 {
			pg.seg(Pt{at, y}, Pt{x1, y}, Edge{Color: colLane, Width: 1.2, Class: "lane"})
		}
	}
	pg.ticks(r)
	// Idle stretches cut short: a mark across the lanes.
	if len(d.Lanes) > 0 {
		y0, y1 := pg.top[r-pg.a]-l.gap/3, pg.laneY(r, len(d.Lanes)-1)+l.gap/3
		for _, b := range l.breaks {
			if b.pos < l.rows[r].lo || b.pos > l.rows[r].hi {
				continue
			}
			x := l.left + b.pos - l.rows[r].lo
			pg.seg(Pt{x, y0}, Pt{x, y1}, Edge{Color: colDown, Width: 1, Dash: true, Class: "idle", Tip: b.txt + ", cut short"})
			pg.want = append(pg.want, label{text: b.txt, size: fontMsg, col: colNote, prio: 1, cands: []Pt{{x, y1 + 8}, {x, y0 - 6}}})
		}
	}
}

// stretch maps a span between two events (-1: before the window, or after
// it and to its end) onto row r: its x range there, if it shows in it.
func (pg *pg) stretch(r, from, to int) (a, b float64, ok bool) {
	l := pg.l
	lo, hi := math.Inf(-1), math.Inf(1)
	if from != outside {
		lo = l.pos[from]
	}
	if to != outside {
		hi = l.pos[to]
	}
	rs := l.rows[r]
	if hi < rs.lo || lo > rs.hi || (lo == hi && from != outside && l.rowOf(lo) != r) {
		return 0, 0, false
	}
	a, b = pg.x0(), pg.x1(r)
	if lo >= rs.lo {
		a = pg.rowX(r, lo)
	}
	if hi <= rs.hi {
		b = pg.rowX(r, hi)
	}
	return a, b, b >= a
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// ticks writes the time above a row's first lane every hundred points
// or so: wall time since the run's start on a wall picture and on a
// causal one whose clock agrees with happens-before, Lamport time
// otherwise.
func (pg *pg) ticks(r int) {
	l, d := pg.l, pg.l.d
	ty := pg.top[r-pg.a] - rowAbove + 12
	wall := d.Axis == Wall || d.Causal
	if r == 0 {
		what := "Lamport time →"
		switch {
		case d.Axis == Wall:
			what = "wall time since the run's first event →"
		case wall:
			what = "events in causal order; times since the run's first event →"
		}
		pg.fixed(margin, ty, what, fontSmall, false, colNote, "start")
	}
	type col struct {
		x   float64
		key int64
	}
	var cols []col
	for _, i := range l.byRow[r] {
		if l.rep[i] != int(i) {
			continue
		}
		e := &d.Events[i]
		k := int64(e.Lamport)
		if wall {
			k = e.Wall
		}
		cols = append(cols, col{l.left + l.pos[i] - l.rows[r].lo, k})
	}
	slices.SortFunc(cols, func(a, b col) int { return cmp.Or(cmp.Compare(a.x, b.x), cmp.Compare(a.key, b.key)) })
	next, last := math.Inf(-1), int64(math.MinInt64)
	for _, c := range cols {
		if c.x < next || c.key < last {
			continue
		}
		s := fmt.Sprint(c.key)
		if wall {
			s = "+" + FormatDur(c.key)
		}
		w := textWidth(s, fontSmall, false)
		box := textBox(Pt{c.x, ty}, s, fontSmall, false)
		if !pg.pl.free(box) || c.x+w/2 > l.width-margin {
			continue
		}
		pg.fixed(c.x, ty, s, fontSmall, false, colNote, "middle")
		next, last = c.x+max(90, w+20), c.key
	}
}

// bars draws the stretches of the lanes: faults (partitions, pauses),
// reigns and critical sections, each from the window's edge if it began
// before it.
func (pg *pg) bars() {
	l, d := pg.l, pg.l.d
	for r := pg.a; r < pg.b; r++ {
		labelled := map[string]bool{}
		for _, f := range d.Faults {
			a, b, ok := pg.stretch(r, f.Start, f.End)
			if !ok {
				continue
			}
			y := pg.laneY(r, f.Lane)
			tip := fmt.Sprintf("%s: %s", d.Lanes[f.Lane].Name, f.Spec)
			col, w, txt := palette.Partition, 20.0, ""
			switch f.Kind {
			case "pause":
				col, w = palette.Pause+"c0", 14
				txt = "paused"
				if f.Start != outside && f.End != outside {
					txt += " " + FormatDur(d.Events[f.End].Wall-d.Events[f.Start].Wall)
				}
			case "partition":
				txt = PartitionWords(f.Spec)
			default:
				continue // a fault of the network (delay, loss...): named at the head
			}
			if f.Start == outside && r == pg.a {
				txt += " (since before the window)"
			}
			pg.seg(Pt{a, y}, Pt{b, y}, Edge{Color: col, Width: w, Class: "fault " + f.Kind, Tip: tip})
			if !labelled[f.Spec] && (f.Start == outside || l.rowOf(l.pos[f.Start]) == r) {
				labelled[f.Spec] = true
				pg.want = append(pg.want, label{text: txt, size: fontMark, col: colFault, prio: 3, halo: true, tip: tip,
					cands: []Pt{{a + 4, y - w/2 - 8}, {a + 4, y + w/2 + 8}, {a + 40, y - w/2 - 18}, {a + 4, y + w/2 + 18}}, left: true})
			}
		}
		for _, rg := range d.Reigns {
			a, b, ok := pg.stretch(r, rg.Start, rg.End)
			if !ok {
				continue
			}
			y := pg.laneY(r, rg.Lane) - 7
			name := d.Lanes[rg.Lane].Name
			pg.seg(Pt{a, y}, Pt{b, y}, Edge{Color: palette.Reign + "c0", Width: 3, Class: "reign", Tip: name + " believes it leads"})
			if rg.Start == outside && r == pg.a {
				pg.want = append(pg.want, label{text: name + " leads (since before the window)", size: fontMark, col: colLeaderInk, prio: 3, halo: true,
					cands: []Pt{{a + 4, y - 9}, {a + 4, y + 22}, {a + 60, y - 19}}, left: true})
			}
		}
		for _, s := range d.Sections {
			y := pg.laneY(r, s.Lane)
			col := l.resCol[s.Resource]
			if s.Request != outside && (s.Enter != outside || s.Exit == outside) {
				// The wait: from the request to the entry (or the edge),
				// dashed just under the lane, which stays a line (a
				// dashed lane is a process down).
				if a, b, ok := pg.stretch(r, s.Request, s.Enter); ok && b > a {
					pg.seg(Pt{a, y + 4}, Pt{b, y + 4}, Edge{Color: col, Width: 2, Dash: true, Class: "wait",
						Tip: fmt.Sprintf("%s waits for %s", d.Lanes[s.Lane].Name, s.Resource)})
				}
			}
			if s.Enter == outside && s.Exit == outside && s.Request != outside {
				continue // requested, never entered in the window
			}
			a, b, ok := pg.stretch(r, s.Enter, s.Exit)
			if !ok {
				continue
			}
			tip := fmt.Sprintf("%s in the critical section of %s", d.Lanes[s.Lane].Name, s.Resource)
			if s.Crashed {
				tip += " until it crashed"
			}
			pg.seg(Pt{a, y}, Pt{max(b, a+2), y}, Edge{Color: col + "d8", Width: barWidth, Class: "section", Tip: tip})
		}
	}
}

// PartitionWords says a partition's sides: "partition P0 P1 | P2 P3 P4".
func PartitionWords(spec string) string {
	body := strings.TrimPrefix(spec, "partition:")
	body, _, _ = strings.Cut(body, "@")
	var sides []string
	for _, g := range strings.Split(body, ":") {
		var ps []string
		for _, p := range strings.Split(g, "+") {
			if p != "" {
				ps = append(ps, "P"+strings.TrimPrefix(p, "P"))
			}
		}
		sides = append(sides, strings.Join(ps, " "))
	}
	return "partition " + strings.Join(sides, " | ")
}

// events draws each shown event (or collapsed run) on this page.
func (pg *pg) events() {
	l, d := pg.l, pg.l.d
	for r := pg.a; r < pg.b; r++ {
		for _, i32 := range l.byRow[r] {
			if i := int(i32); l.rep[i] == i {
				pg.event(i, &d.Events[i])
			}
		}
	}
}

// glyph is how an event is drawn that is one filled shape: its radius,
// its fill, and the colour of its mark.
type glyph struct {
	shape      Shape
	r          float64
	fill, mark string
}

// glyphs are the kinds of event drawn as one filled shape; pg.event draws
// the others, and a kind in neither as a small grey dot.
var glyphs = map[trace.Kind]glyph{
	trace.KindSend:          {Dot, 2.6, colEvent, colEvent},
	trace.KindReceive:       {Dot, 2.6, colEvent, colEvent},
	trace.KindDrop:          {Dot, 2.6, colEvent, colEvent},
	trace.KindCSEnter:       {Dot, 3, colEvent, colEvent},
	trace.KindCSExit:        {Dot, 3, colEvent, colEvent},
	trace.KindElectionStart: {Diamond, 5, colElect, colElect},
	trace.KindSuspect:       {Triangle, 4.5, colSuspect, colSuspect},
	trace.KindTrust:         {Triangle, 4.5, colTrust, colTrust},
	trace.KindDeliver:       {Square, 3, colDeliver, colEvent},
	trace.KindFault:         {Diamond, 3.5, colFault, colFault},
}

// event draws event i (the head of its collapsed run if it has one).
func (pg *pg) event(i int, e *Event) {
	l := pg.l
	c := pg.xy(i)
	n := Node{X: c.X, Y: c.Y, Tip: e.Tip, Class: string(e.Kind)}
	if k := l.count[i]; k > 1 {
		n.Shape, n.R, n.Stroke, n.Pen, n.Fill = Ring, 4, colMinor, 1.2, "#ffffff"
		n.Tip = fmt.Sprintf("%d local events from %v (%s)", k, e.Ref, l.kinds(i))
		n.Class = "collapsed"
		pg.item[i] = pg.node(n)
		pg.pl.obstacle(c, 4)
		pg.want = append(pg.want, label{text: fmt.Sprintf("×%d", k), size: fontSmall, col: colNote, prio: 5,
			cands: []Pt{{c.X, c.Y + 12}, {c.X, c.Y - 12}, {c.X + 12, c.Y + 10}}})
		return
	}
	col := colEvent
	switch e.Kind {
	case trace.KindCSRequest:
		n.Shape, n.R, n.Fill = Triangle, 4, l.resCol[e.Resource]
		if n.Fill == "" {
			n.Fill = palette.Resources[0]
		}
		n.Stroke, n.Pen = colEvent, 0.6
	case trace.KindCrash:
		n.Shape, n.R = Anchor, 6
		col = colCrash
		pg.cross(c, 6, colCrash, e.Tip)
	case trace.KindRecover:
		n.Shape, n.R, n.Stroke, n.Pen, n.Fill = Ring, 5, colRecover, 2, "#ffffff"
		col = colRecover
	case trace.KindLeader:
		n.Shape, n.R, n.Fill, n.Stroke, n.Pen = Star, 7, colLeader, colLeaderInk, 0.8
		col = colLeaderInk
	default:
		g, ok := glyphs[e.Kind]
		if !ok {
			g = glyph{Dot, 2.2, colMinor, colEvent}
		}
		n.Shape, n.R, n.Fill, col = g.shape, g.r, g.fill, g.mark
	}
	pg.item[i] = pg.node(n)
	pg.pl.obstacle(c, max(n.R, 2))
	if e.Mark != "" && !(e.Kind == trace.KindFault && e.Fault != "" && !strings.HasSuffix(e.Fault, "not applied")) {
		// A fault's start and end are drawn as its band, which says
		// what it is.
		pg.want = append(pg.want, label{text: e.Mark, size: fontMark, bold: true, col: col, prio: 2, halo: true, note: e.Ref.String(),
			cands: []Pt{{c.X, c.Y - 12}, {c.X, c.Y + 15}, {c.X, c.Y - 23}, {c.X, c.Y + 26},
				{c.X + textWidth(e.Mark, fontMark, true)/2 + 7, c.Y - 10}, {c.X - textWidth(e.Mark, fontMark, true)/2 - 7, c.Y - 10}}})
	}
}

// kinds lists the kinds of a collapsed run.
func (l *layout) kinds(head int) string {
	count := map[trace.Kind]int{}
	var order []trace.Kind
	for i, r := range l.rep {
		if r == head {
			k := l.d.Events[i].Kind
			if count[k] == 0 {
				order = append(order, k)
			}
			count[k]++
		}
	}
	var parts []string
	for _, k := range order {
		if count[k] > 1 {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, count[k]))
		} else {
			parts = append(parts, string(k))
		}
	}
	return strings.Join(parts, ", ")
}

// cross draws an x of half-size r at p.
func (pg *pg) cross(p Pt, r float64, col, tip string) {
	for _, d := range []Pt{{r, r}, {r, -r}} {
		pg.seg(p.sub(d), p.add(d), Edge{Color: col, Width: 2.4, Tip: tip, Class: "cross"})
	}
}

// messages draws each message with an end on this page: an arrow between
// its ends when both are in one row; otherwise a stub from the end this
// page shows to the row's edge (towards the other end, and named).
func (pg *pg) messages() {
	l, d := pg.l, pg.l.d
	for _, mi := range l.msgs[pg.n] {
		m := &d.Msgs[mi]
		col := l.msgCol[m.Type]
		sr, sOn := pg.on(m.Send)
		rr, rOn := pg.on(m.Recv)
		if !sOn && !rOn {
			continue
		}
		if background(m.Type) {
			if sOn && rOn && sr == rr {
				pg.line(pg.item[l.rep[m.Send]], pg.item[l.rep[m.Recv]], Edge{Color: colBackground, Width: 0.7, Arrow: true, Class: "message background",
					Tip: fmt.Sprintf("%s from P%d to P%d", m.Type, m.From, m.To)})
			}
			continue
		}
		tip := fmt.Sprintf("%s from P%d to P%d (%s): %s", m.Type, m.From, m.To, trace.MsgName(m.ID, m.From), strings.ReplaceAll(m.Fate, "_", " "))
		toLane, toShown := l.lane(m.To)
		fromLane, fromShown := l.lane(m.From)
		if sOn && rOn && sr == rr {
			if m.From == m.To {
				// To itself (a multicast's own copy): a loop over the
				// lane, not an arrow along it.
				pg.loop(pg.item[m.Send], pg.item[m.Recv], m.Type, col, tip)
				continue
			}
			pg.message(pg.item[m.Send], pg.item[m.Recv], m.Type, col, false, tip)
			continue
		}
		// Ends in different rows (or one outside the window): a stub at
		// each end this page shows.
		if sOn {
			s := pg.item[m.Send]
			sp := Pt{pg.p.Nodes[s].X, pg.p.Nodes[s].Y}
			ty := sp.Y + l.gap*0.6
			if toShown {
				ty = lerp(sp, Pt{sp.X, pg.laneY(sr, toLane)}, 0.6).Y
			} else if fromLane == len(d.Lanes)-1 && fromShown {
				ty = sp.Y - l.gap*0.6
			}
			if math.Abs(ty-sp.Y) < 1 { // to itself: above the lane, not along it
				ty = sp.Y - l.gap*0.4
			}
			end := Pt{min(sp.X+stubLen, pg.x1(sr)), ty}
			switch {
			case m.Recv != outside:
				// Received in a later row (or page): to the row's edge.
				end.X = pg.x1(sr)
				pg.lineTo(s, pg.anchor(end), fmt.Sprintf("%s → %s", m.Type, l.name(m.To)), col, false, true, tip)
			case m.Fate == "dropped" || m.Fate == "lost_to_crash":
				if _, ok := pg.on(m.Drop); ok {
					end.X = max(pg.xy(m.Drop).X, sp.X+colGap)
				}
				how := "dropped"
				if m.Fate == "lost_to_crash" {
					how = "lost: crash"
				}
				e := pg.anchor(end)
				pg.lineTo(s, e, m.Type+" ("+how+")", col, false, false, tip)
				pg.cross(end, 4.5, colLost, tip)
			case m.Fate == "in_flight" || m.Fate == "duplicated":
				end = Pt{pg.x1(sr), ty}
				pg.lineTo(s, pg.anchor(end), m.Type+" (in flight)", col, true, true, tip)
			default:
				pg.lineTo(s, pg.anchor(end), fmt.Sprintf("%s → %s", m.Type, l.name(m.To)), col, true, true, tip)
			}
		}
		if rOn {
			r := pg.item[m.Recv]
			rp := Pt{pg.p.Nodes[r].X, pg.p.Nodes[r].Y}
			fy := rp.Y - l.gap*0.6
			if fromShown {
				fy = lerp(rp, Pt{rp.X, pg.laneY(rr, fromLane)}, 0.6).Y
			} else if toLane == 0 {
				fy = rp.Y + l.gap*0.6
			}
			if math.Abs(fy-rp.Y) < 1 { // from itself: above the lane
				fy = rp.Y - l.gap*0.4
			}
			start := Pt{max(rp.X-stubLen, pg.x0()), fy}
			dash := true
			if m.Send != outside {
				start.X, dash = pg.x0(), false // sent in an earlier row
			}
			pg.lineTo(pg.anchor(start), r, fmt.Sprintf("%s ← %s", m.Type, l.name(m.From)), col, dash, true, tip)
		}
	}
}

// name is how the picture names a process: its lane's name.
func (l *layout) name(proc int) string {
	if i, ok := l.lane(proc); ok {
		return l.d.Lanes[i].Name
	}
	return fmt.Sprintf("P%d", proc)
}

func (l *layout) lane(proc int) (int, bool) {
	for i, ln := range l.d.Lanes {
		if ln.Proc == proc {
			return i, true
		}
	}
	return 0, false
}

// message draws an arrow from node a to node b with its label.
func (pg *pg) message(a, b int, label, col string, dash bool, tip string) {
	pg.lineTo(a, b, label, col, dash, true, tip)
}

// loop draws a message a process sent itself: an arc over its lane.
func (pg *pg) loop(a, b int, text, col, tip string) {
	na, nb := pg.p.Nodes[a], pg.p.Nodes[b]
	p0, p3 := Pt{na.X, na.Y}, Pt{nb.X, nb.Y}
	bow := min(22, 8+math.Abs(p3.X-p0.X)/6)
	e := pg.curve(a, b, bow, Edge{Color: col, Width: 1, Arrow: true, LabelSize: fontMsg, LabelCol: col, Tip: tip, Class: "message self"})
	top := lerp(p0, p3, 0.5).add(Pt{0, -bow*0.75 - 7})
	pg.want = append(pg.want, label{text: text, size: fontMsg, col: col, prio: 6, edge: e + 1, cands: []Pt{top, top.add(Pt{0, -9})}})
}

// lineTo draws a message's line and asks for its label along it: where the
// arrow crosses the middle of the first gap between lanes after its sender
// (near who sent it), then further along.
func (pg *pg) lineTo(a, b int, text, col string, dash, arrow bool, tip string) {
	na, nb := pg.p.Nodes[a], pg.p.Nodes[b]
	e := pg.line(a, b, Edge{Color: col, Width: 1, Dash: dash, Arrow: arrow, LabelSize: fontMsg, LabelCol: col, Tip: tip, Class: "message"})
	p0, p3 := Pt{na.X, na.Y}, Pt{nb.X, nb.Y}
	dy := math.Abs(p3.Y - p0.Y)
	gap := pg.l.gap
	var ts []float64
	if dy > gap*1.01 {
		for g := 0.5; g*gap < dy; g++ {
			ts = append(ts, g*gap/dy, (g-0.25)*gap/dy, (g+0.25)*gap/dy)
		}
	} else {
		ts = []float64{0.5, 0.3, 0.7, 0.2, 0.8}
	}
	var cands []Pt
	for _, t := range ts {
		cands = append(cands, lerp(p0, p3, t).add(Pt{0, -4}))
	}
	pg.want = append(pg.want, label{text: text, size: fontMsg, col: col, prio: 6, edge: e + 1, cands: cands})
}

// findings draws the findings in the window: their sections and reigns as
// red bars, missing orderings as red arrows, the deliveries of one
// multicast joined by red dashes, every event of a finding ringed in red
// and tagged with the finding's number; a deadlock's wait-for edges are
// tagged at the events that made them (the graph itself is WaitFor's).
func (pg *pg) findings() {
	l, d := pg.l, pg.l.d
	for _, o := range d.Findings {
		tag := fmt.Sprintf("#%d", o.N)
		tip := fmt.Sprintf("finding %d (%s): %s", o.N, o.Check, o.Message)
		ringed := map[int]bool{}
		ring := func(i int) {
			if _, ok := pg.on(i); !ok || ringed[pg.item[l.rep[i]]] {
				return
			}
			it := pg.item[l.rep[i]]
			ringed[it] = true
			n := pg.p.Nodes[it]
			pg.node(Node{X: n.X, Y: n.Y, Shape: Ring, R: max(n.R, 3) + 4, Stroke: colFinding, Pen: 2, Tip: tip, Class: "finding"})
		}
		tagAt := func(i int, s string) {
			c := pg.xy(i)
			w := textWidth(s, fontMark, true)
			pg.want = append(pg.want, label{text: s, size: fontMark, bold: true, col: colFinding, prio: 1, halo: true, tip: tip, note: d.Events[i].Ref.String(),
				cands: []Pt{{c.X + w/2 + 9, c.Y - 12}, {c.X - w/2 - 9, c.Y - 12}, {c.X + w/2 + 9, c.Y + 13}, {c.X - w/2 - 9, c.Y + 13}, {c.X, c.Y - 24}, {c.X, c.Y + 26}}})
		}
		labelled := false
		edge := 0
		for _, p := range o.Parts {
			switch p.Role {
			case "section", "reign":
				lane, ok := l.lane(p.Events[0].Proc)
				end := outside
				if len(p.At) > 1 {
					end = p.At[1]
				}
				if !ok || (p.At[0] == outside && p.Side[0] > 0) || (len(p.At) > 1 && end == outside && p.Side[1] < 0) {
					continue // at a process not shown, or not in the window
				}
				txt := tag
				if p.Label != "" {
					txt += " " + p.Label
				}
				first := true
				for r := pg.a; r < pg.b; r++ {
					a, b, ok := pg.stretch(r, p.At[0], end)
					if !ok {
						continue
					}
					y, w := pg.laneY(r, lane), barWidth
					if p.Role == "reign" {
						y, w = y-7, 4
					}
					pg.seg(Pt{a, y}, Pt{max(b, a+2), y}, Edge{Color: colFinding + "d0", Width: w, Class: "finding", Tip: tip})
					if first {
						first = false
						pg.want = append(pg.want, label{text: txt, size: fontMark, bold: true, col: colFinding, prio: 1, halo: true, tip: tip, left: true,
							cands: []Pt{{a + 6, y + 15}, {a + 6, y - 15}, {a + 30, y + 25}, {a + 30, y - 25}}})
					}
				}
				labelled = true
			case "not-before":
				if a, b, ok := pg.pair(p.At); ok {
					ea, eb := d.Events[p.At[0]], d.Events[p.At[1]]
					pg.findingEdge(a, b, fmt.Sprintf("%s missing: %v → %v", tag, ea.Ref, eb.Ref), tip)
					labelled = true
				}
			case "waits-for":
				edge++
				// The event that made the edge: a wait event of the
				// waiter, or the holder's entry.
				maker := 0
				if strings.HasPrefix(p.Label, "holds") {
					maker = 1
				}
				if len(p.At) > maker {
					if _, ok := pg.on(p.At[maker]); ok {
						tagAt(p.At[maker], fmt.Sprintf("%s.%d", tag, edge))
					}
				}
				labelled = true
			case "same":
				if a, b, ok := pg.pair(p.At); ok {
					na, nb := pg.p.Nodes[a], pg.p.Nodes[b]
					e := pg.line(a, b, Edge{Color: colFinding, Width: 1.8, Dash: true, LabelSize: fontMark, LabelCol: colFinding, Tip: tip, Class: "finding"})
					mid := lerp(Pt{na.X, na.Y}, Pt{nb.X, nb.Y}, 0.5)
					pg.want = append(pg.want, label{text: tag + " " + p.Label, size: fontMark, col: colFinding, prio: 1, edge: e + 1,
						cands: []Pt{mid.add(Pt{0, -6}), mid.add(Pt{0, 8}), lerp(Pt{na.X, na.Y}, Pt{nb.X, nb.Y}, 0.3).add(Pt{0, -6})}})
					labelled = true
				}
			}
			for _, i := range p.At {
				ring(i)
			}
		}
		for _, i := range o.Events {
			ring(i)
		}
		if !labelled {
			for _, i := range o.Events {
				if _, ok := pg.on(i); ok {
					tagAt(i, tag)
					break
				}
			}
		}
	}
}

// pair returns the items of a finding part's two events when both are
// drawn on this page in one row: only then does an edge join them.
func (pg *pg) pair(at []int) (a, b int, ok bool) {
	if len(at) != 2 {
		return 0, 0, false
	}
	ra, oa := pg.on(at[0])
	rb, ob := pg.on(at[1])
	if !oa || !ob || ra != rb {
		return 0, 0, false
	}
	return pg.item[pg.l.rep[at[0]]], pg.item[pg.l.rep[at[1]]], true
}

// findingEdge draws a red curved arrow between two events of a finding.
func (pg *pg) findingEdge(a, b int, text, tip string) {
	na, nb := pg.p.Nodes[a], pg.p.Nodes[b]
	p0, p3 := Pt{na.X, na.Y}, Pt{nb.X, nb.Y}
	bow := 18.0
	if math.Abs(p0.Y-p3.Y) < 1 {
		bow = 26 // along one lane: bow clear of it
	}
	e := pg.curve(a, b, bow, Edge{Color: colFinding, Width: 1.8, Dash: true, Arrow: true, Tip: tip, Class: "finding", LabelSize: fontMark, LabelCol: colFinding})
	dir := unit(p3.sub(p0))
	nrm := Pt{dir.Y, -dir.X}.mul(bow)
	mid := lerp(p0, p3, 0.5).add(nrm.mul(0.75))
	pg.want = append(pg.want, label{text: text, size: fontMark, col: colFinding, prio: 1, edge: e + 1,
		cands: []Pt{mid.add(Pt{0, -6}), mid.add(Pt{0, 10}), mid.add(nrm.mul(0.6)), lerp(p0, p3, 0.3).add(nrm.mul(0.75))}})
}

// legendItem is one entry of the key.
type legendItem struct {
	label string
	w     float64
	draw  func(pg *pg, x, y float64)
}

// legendItems lists the key's entries for what the diagram shows.
func (l *layout) legendItems() []legendItem {
	d := l.d
	var out []legendItem
	add := func(label string, draw func(pg *pg, x, y float64)) {
		out = append(out, legendItem{label, 18 + textWidth(label, fontSmall, false), draw})
	}
	for _, t := range l.msgOrder {
		col := l.msgCol[t]
		add(t, func(pg *pg, x, y float64) {
			pg.seg(Pt{x - 6, y + 3}, Pt{x + 8, y - 3}, Edge{Color: col, Width: 1, Arrow: true, Class: "legend"})
		})
	}
	for _, m := range d.Msgs {
		if m.Fate == "dropped" || m.Fate == "lost_to_crash" {
			add("message lost (dropped, or to a crash)", func(pg *pg, x, y float64) { pg.cross(Pt{x, y}, 4, colLost, "") })
			break
		}
	}
	for _, r := range l.resOrder {
		col := l.resCol[r]
		add("critical section "+r, func(pg *pg, x, y float64) {
			pg.seg(Pt{x - 6, y}, Pt{x + 8, y}, Edge{Color: col + "d8", Width: barWidth, Class: "legend"})
		})
	}
	if len(l.resOrder) > 0 {
		add("request (dashes: waiting)", func(pg *pg, x, y float64) {
			pg.node(Node{X: x, Y: y, Shape: Triangle, R: 4, Fill: palette.Resources[0], Stroke: colEvent, Pen: 0.6, Class: "legend"})
		})
	}
	seen := map[trace.Kind]bool{}
	for _, e := range d.Events {
		seen[e.Kind] = true
	}
	type key struct {
		kind  trace.Kind
		n     Node
		label string
	}
	for _, k := range []key{
		{trace.KindCrash, Node{}, "crash (lane dashed while down)"},
		{trace.KindRecover, Node{Shape: Ring, R: 5, Stroke: colRecover, Pen: 2, Fill: "#ffffff"}, "recover"},
		{trace.KindElectionStart, Node{Shape: Diamond, R: 5, Fill: colElect}, "election started"},
		{trace.KindLeader, Node{Shape: Star, R: 7, Fill: colLeader, Stroke: colLeaderInk, Pen: 0.8}, "leader decided"},
		{trace.KindSuspect, Node{Shape: Triangle, R: 4.5, Fill: colSuspect}, "suspicion"},
		{trace.KindTrust, Node{Shape: Triangle, R: 4.5, Fill: colTrust}, "trust again"},
		{trace.KindDeliver, Node{Shape: Square, R: 3, Fill: colDeliver}, "multicast delivered"},
	} {
		if !seen[k.kind] {
			continue
		}
		add(k.label, func(pg *pg, x, y float64) {
			if k.kind == trace.KindCrash {
				pg.cross(Pt{x, y}, 5, colCrash, "")
				return
			}
			n := k.n
			n.X, n.Y, n.Class = x, y, "legend"
			pg.node(n)
		})
	}
	if len(d.Reigns) > 0 {
		add("reign: believes it leads", func(pg *pg, x, y float64) {
			pg.seg(Pt{x - 6, y}, Pt{x + 8, y}, Edge{Color: palette.Reign + "c0", Width: 3, Class: "legend"})
		})
	}
	kinds := map[string]bool{}
	for _, f := range d.Faults {
		kinds[f.Kind] = true
	}
	if kinds["pause"] {
		add("paused", func(pg *pg, x, y float64) {
			pg.seg(Pt{x - 6, y}, Pt{x + 8, y}, Edge{Color: palette.Pause + "c0", Width: 10, Class: "legend"})
		})
	}
	if kinds["partition"] {
		add("partitioned", func(pg *pg, x, y float64) {
			pg.seg(Pt{x - 6, y}, Pt{x + 8, y}, Edge{Color: palette.Partition, Width: 10, Class: "legend"})
		})
	}
	for i := range d.Events {
		if l.count[i] > 1 {
			add("×N local events collapsed", func(pg *pg, x, y float64) {
				pg.node(Node{X: x, Y: y, Shape: Ring, R: 4, Stroke: colMinor, Pen: 1.2, Fill: "#ffffff", Class: "legend"})
			})
			break
		}
	}
	if len(d.Findings) > 0 {
		add("event of a finding (red)", func(pg *pg, x, y float64) {
			pg.node(Node{X: x, Y: y, Shape: Ring, R: 6, Stroke: colFinding, Pen: 2, Class: "legend"})
		})
	}
	return out
}

// legend draws the key under the rows and returns the y below it.
func (pg *pg) legend(y float64) float64 {
	x0 := margin
	width := pg.l.width - margin
	rowH := 18.0
	y += 8
	pg.fixed(x0, y, "key:", fontSmall, true, colText, "start")
	x := x0 + 28
	for _, it := range pg.l.legend {
		if x+it.w > width && x > x0 {
			x = x0
			y += rowH
		}
		it.draw(pg, x+6, y)
		pg.fixed(x+16, y, it.label, fontSmall, false, colText, "start")
		x += it.w + 16
	}
	return y + rowH
}

// captionLine is a line under the key: a finding, or a note.
type captionLine struct {
	text string
	col  string
}

// captionLines are the findings drawn, those outside the window, and the
// notes on what else lies outside it.
func (d *Diagram) captionLines() []captionLine {
	var out []captionLine
	for _, o := range d.Findings {
		out = append(out, captionLine{fmt.Sprintf("#%d %s: %s", o.N, o.Check, o.Message), colFinding})
	}
	if d.Outside > 0 {
		out = append(out, captionLine{fmt.Sprintf("%s no event in this window (dmx render --finding N draws the Nth)",
			plural.Count(d.Outside, "more finding")+" "+plural.Form(d.Outside, "has", "have")), colNote})
	}
	for _, r := range d.Rest {
		out = append(out, captionLine{"outside this window: " + r, colNote})
	}
	return out
}

// caption writes the caption lines, wrapped, and the numbered notes of
// words that found no room beside their event; it returns the y below.
func (pg *pg) caption(y float64) float64 {
	width := pg.l.width - 2*margin
	lines := pg.l.d.captionLines()
	for _, n := range pg.notes {
		lines = append(lines, captionLine{n, colNote})
	}
	if len(lines) == 0 {
		return y
	}
	y += 6
	for _, c := range lines {
		// Every line of a finding in the finding's colour: a continuation
		// drawn as plain text read as a separate note.
		for _, s := range wrap(c.text, fontText, width, captionLinesMax, false) {
			pg.fixed(margin, y, s, fontText, false, c.col, "start")
			y += fontText + 4
		}
		y += 3
	}
	return y
}

// captionLinesMax is the most lines of a finding under the picture (the
// whole of it is in dmx check's report).
const captionLinesMax = 5

// wrap breaks s into lines no wider than width, at most n of them; the
// last one ends in "…" if s did not fit.
func wrap(s string, size, width float64, n int, bold bool) []string {
	var lines []string
	words := strings.Fields(s)
	cur := ""
	for i, w := range words {
		next := w
		if cur != "" {
			next = cur + " " + w
		}
		if cur == "" || textWidth(next, size, bold) <= width {
			cur = next
			continue
		}
		lines = append(lines, cur)
		cur = w
		if len(lines) == n-1 {
			rest := []rune(strings.Join(words[i:], " "))
			if textWidth(string(rest), size, bold) <= width {
				return append(lines, string(rest))
			}
			rest = rest[:min(len(rest), int(width/(size*0.4)))]
			for len(rest) > 1 && textWidth(string(rest)+"…", size, bold) > width {
				rest = rest[:len(rest)-1]
			}
			return append(lines, string(rest)+"…")
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	// A single word wider than the line: cut it.
	for i, s := range lines {
		if textWidth(s, size, bold) > width {
			r := []rune(s)
			for len(r) > 1 && textWidth(string(r)+"…", size, bold) > width {
				r = r[:len(r)-1]
			}
			lines[i] = string(r) + "…"
		}
	}
	return lines
}

// RunTitle names a run in a picture's title: "ricart-agrawala · run 1 ·
// seed 4 · sim" (an imported run has no seed).
func RunTitle(r trace.Run) string {
	s := r.Algorithm
	if s == "" {
		s = "trace"
	}
	s += fmt.Sprintf(" · run %d", r.ID)
	if r.Mode != "import" && r.Mode != "" {
		s += fmt.Sprintf(" · seed %d · %s", r.Seed, r.Mode)
	}
	return s
}

// title says what the picture shows.
func (d *Diagram) title() string {
	r := d.Run
	s := RunTitle(r)
	if !r.Complete && r.Status != "" {
		s += " · " + r.Status
	}
	return s
}

// FormatDur formats ns compactly: 12.5ms, 1.2s, 340µs, 0.
func FormatDur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return trimZeros(fmt.Sprintf("%.2f", d.Seconds())) + "s"
	case d >= time.Millisecond:
		return trimZeros(fmt.Sprintf("%.2f", float64(d)/1e6)) + "ms"
	case d >= time.Microsecond:
		return trimZeros(fmt.Sprintf("%.1f", float64(d)/1e3)) + "µs"
	}
	if ns == 0 {
		return "0"
	}
	return fmt.Sprintf("%dns", ns)
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

package spacetime

import (
	"cmp"
	"fmt"
	"github.com/dmxlab/dmx/render/palette"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dmxlab/dmx/render/plural"
	"github.com/dmxlab/dmx/trace"
)

// Layout sizes, in points.
const (
	laneGap   = 64.0 // between lanes
	colGap    = 26.0 // between Lamport columns; the median gap on the wall axis
	minGap    = 5.0  // the least gap between two columns on the wall axis
	maxGap    = 3 * colGap
	breakGap  = 2 * colGap // an idle stretch cut short
	stubLen   = 2.2 * colGap
	waitGap   = 130.0 // between the edges of a wait-for cycle, right of the lanes
	margin    = 14.0
	edgePad   = 3 * colGap // room for messages that come from or go out of the window
	barWidth  = 8.0
	fontMsg   = 7.5
	fontMark  = 8.5
	fontLane  = 12.0
	fontSmall = 8.0
	fontTitle = 12.0
	fontText  = 9.5
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
)

// layout is the state of laying out one diagram.
type layout struct {
	d        *Diagram
	p        *Picture
	item     []int // event index -> node index of what shows it
	x        []float64
	laneY    []float64
	left     float64 // x of the window's left edge
	right    float64
	top      float64
	msgCol   map[string]string
	resCol   map[string]string
	msgOrder []string
	resOrder []string
	groups   map[int]int // node index of a collapsed run -> how many events
	marks    []markSlot  // per lane: where the last mark text ends, above and below
	breaks   []float64   // x of cut idle stretches
	breakTxt []string
	waitX    float64           // where the zone of wait-for edges begins
	occupied map[[2]int][]rect // message labels placed, by grid cell
}

type rect struct{ x0, y0, x1, y1 float64 }

type markSlot struct{ above, below float64 }

// Layout computes the picture of d.
func Layout(d *Diagram, collapse bool) *Picture {
	l := &layout{d: d, p: &Picture{}, msgCol: map[string]string{}, resCol: map[string]string{}, groups: map[int]int{},
		occupied: map[[2]int][]rect{}}
	l.p.Title = d.title()
	// Colours by name (render/palette), the run's whole set of types and
	// resources known: the same in every window and in dmx serve.
	l.msgCol = palette.Types(d.MsgTypes, d.Types)
	l.resCol = palette.ResourceColours(d.Resources)
	var types, res []string
	for _, m := range d.Msgs {
		types = append(types, m.Type)
		if _, ok := l.msgCol[m.Type]; !ok { // a type the scan did not see: none
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
	// Lane labels set the left margin.
	labelW := 0.0
	for _, ln := range d.Lanes {
		labelW = max(labelW, textWidth(ln.Name, fontLane, true), textWidth(ln.Role, fontSmall, false))
	}
	l.left = margin + labelW + 10 + edgePad
	l.top = margin + 2*fontTitle + 34
	l.laneY = make([]float64, len(d.Lanes))
	for i := range d.Lanes {
		l.laneY[i] = l.top + float64(i)*laneGap
	}
	l.marks = make([]markSlot, len(d.Lanes))
	for i := range l.marks {
		l.marks[i] = markSlot{math.Inf(-1), math.Inf(-1)}
	}
	visible := l.collapse(collapse)
	l.columns(visible)
	l.right = l.left
	for _, x := range l.x {
		l.right = max(l.right, x)
	}
	l.right += edgePad
	if n := l.waitParts(); n > 0 {
		l.waitX = l.right
		l.right += float64(n)*waitGap + 80 // the last edge's label
	}
	bottom := l.top + float64(max(len(d.Lanes)-1, 0))*laneGap + 26

	// Lanes first (drawn under everything), then sections, messages,
	// findings; nodes are drawn above edges.
	l.lanes()
	l.axis()
	l.events(visible)
	l.sections()
	l.messages()
	l.findings()
	y := l.legend(bottom)
	y = l.caption(y)
	l.p.Width = max(l.right+margin, l.p.Width)
	l.p.Height = y + margin
	return l.p
}

// waitParts counts the wait-for edges of the findings.
func (l *layout) waitParts() int {
	n := 0
	for _, o := range l.d.Findings {
		for _, p := range o.Parts {
			if p.Role == "waits-for" {
				n++
			}
		}
	}
	return n
}

// background message types are drawn faint and without labels.
func background(typ string) bool { return palette.IsBackground(typ) }

// minor kinds are drawn small and collapsed when they come in runs.
func minor(k trace.Kind) bool {
	switch k {
	case trace.KindInternal, trace.KindTimeout, trace.KindWait, trace.KindStart, trace.KindStop:
		return true
	case trace.KindSend, trace.KindReceive, trace.KindDrop, trace.KindCSRequest, trace.KindCSEnter, trace.KindCSExit,
		trace.KindCrash, trace.KindRecover, trace.KindLeader, trace.KindElectionStart, trace.KindSuspect, trace.KindTrust, trace.KindDeliver:
		return false
	}
	return true // kinds of other programs
}

// collapse decides which events are drawn: it returns, per event, the
// event that stands for it (itself, or the first of its collapsed run).
func (l *layout) collapse(on bool) []int {
	d := l.d
	rep := make([]int, len(d.Events))
	for i := range rep {
		rep[i] = i
	}
	if !on {
		return rep
	}
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
					rep[e] = evs[i]
				}
			}
			i = max(j, i+1)
		}
	}
	return rep
}

// columns gives every shown event its x.
func (l *layout) columns(rep []int) {
	d := l.d
	var keys []int64
	for i, e := range d.Events {
		if rep[i] == i {
			keys = append(keys, e.Key)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	xs := make(map[int64]float64, len(keys))
	x := l.left
	if d.Axis == Wall && len(keys) > 1 {
		gaps := make([]int64, 0, len(keys)-1)
		for i := 1; i < len(keys); i++ {
			gaps = append(gaps, keys[i]-keys[i-1])
		}
		sorted := slices.Clone(gaps)
		slices.Sort(sorted)
		scale := colGap / float64(max(sorted[len(sorted)/2], 1))
		xs[keys[0]] = x
		for i, g := range gaps {
			w := float64(g) * scale
			switch {
			case w > 1.5*maxGap:
				l.breaks = append(l.breaks, x+breakGap/2)
				l.breakTxt = append(l.breakTxt, "+"+fmtDur(g))
				w = breakGap
			case w > maxGap:
				w = maxGap
			case w < minGap:
				w = minGap
			}
			x += w
			xs[keys[i+1]] = x
		}
	} else {
		for i, k := range keys {
			xs[k] = x + float64(i)*colGap
		}
	}
	l.x = make([]float64, len(d.Events))
	for i := range d.Events {
		l.x[i] = xs[d.Events[rep[i]].Key]
	}
}

// node adds a node and returns its index.
func (l *layout) node(n Node) int {
	l.p.Nodes = append(l.p.Nodes, n)
	return len(l.p.Nodes) - 1
}

func (l *layout) anchor(p Pt) int { return l.node(Node{X: p.X, Y: p.Y, Shape: Anchor}) }

// line adds a straight edge between two nodes.
func (l *layout) line(a, b int, e Edge) {
	na, nb := l.p.Nodes[a], l.p.Nodes[b]
	e.From, e.To = a, b
	e.P0, e.P3 = Pt{na.X, na.Y}, Pt{nb.X, nb.Y}
	if e.Arrow {
		// Stop at the target's rim.
		dir := unit(e.P3.sub(e.P0))
		e.P3 = e.P3.sub(dir.mul(nb.R + 0.5))
	}
	e.C1, e.C2 = e.P0, e.P3
	l.p.Edges = append(l.p.Edges, e)
}

// curve adds a curved edge that bows by bow points to the left of its
// direction.
func (l *layout) curve(a, b int, bow float64, e Edge) {
	na, nb := l.p.Nodes[a], l.p.Nodes[b]
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
	l.p.Edges = append(l.p.Edges, e)
}

// text adds a text node with its left end at x (anchor "start"), centre
// ("middle") or right end ("end").
func (l *layout) text(x, y float64, s string, size float64, bold bool, col, anchor string) int {
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
	return l.node(Node{X: x, Y: y, Shape: Text, Label: s, Size: size, Bold: bold, Color: col, W: w, Align: align, Class: "text"})
}

func (l *layout) lanes() {
	d := l.d
	x0, x1 := l.left-edgePad+8, l.right-8
	for i, ln := range d.Lanes {
		y := l.laneY[i]
		l.text(x0-10, y-(fontLane/2)*boolf(ln.Role != ""), ln.Name, fontLane, true, colText, "end")
		if ln.Role != "" {
			l.text(x0-10, y+fontSmall, ln.Role, fontSmall, false, colNote, "end")
		}
		// Up and down stretches.
		type cut struct{ a, b float64 }
		var downs []cut
		for _, dn := range d.Downs {
			if dn.Lane != i {
				continue
			}
			a, b := x0, x1
			if dn.Crash != outside {
				a = l.x[dn.Crash]
			}
			if dn.Recover != outside {
				b = l.x[dn.Recover]
			}
			downs = append(downs, cut{a, b})
		}
		slices.SortFunc(downs, func(p, q cut) int { return cmp.Compare(p.a, q.a) })
		at := x0
		for _, c := range downs {
			if c.a > at {
				l.line(l.anchor(Pt{at, y}), l.anchor(Pt{c.a, y}), Edge{Color: colLane, Width: 1.2, Class: "lane"})
			}
			l.line(l.anchor(Pt{max(c.a, at), y}), l.anchor(Pt{c.b, y}), Edge{Color: colDown, Width: 1.2, Dash: true, Class: "down", Tip: fmt.Sprintf("%s is down", ln.Name)})
			at = max(at, c.b)
		}
		if at < x1 {
			l.line(l.anchor(Pt{at, y}), l.anchor(Pt{x1, y}), Edge{Color: colLane, Width: 1.2, Class: "lane"})
		}
	}
	// Idle stretches cut short: a mark across the lanes.
	if len(d.Lanes) > 0 {
		y0, y1 := l.laneY[0]-laneGap/2, l.laneY[len(l.laneY)-1]+laneGap/3
		for i, x := range l.breaks {
			l.line(l.anchor(Pt{x, y0}), l.anchor(Pt{x, y1}), Edge{Color: colDown, Width: 1, Dash: true, Class: "idle"})
			l.text(x, y0-4, l.breakTxt[i], fontSmall, false, colNote, "middle")
		}
	}
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// axis writes the title and tick labels along the top.
func (l *layout) axis() {
	d := l.d
	l.text(margin, margin+fontTitle/2, l.p.Title, fontTitle, true, colText, "start")
	ty := l.top - laneGap/2 - 6
	what := "Lamport time →"
	if d.Axis == Wall {
		what = "wall time since the run's first event →"
	}
	l.text(margin, ty, what, fontSmall, false, colNote, "start")
	// Ticks: the key of the column closest to every ~90 points.
	type col struct {
		x   float64
		key int64
	}
	var cols []col
	for i, e := range d.Events {
		cols = append(cols, col{l.x[i], e.Key})
	}
	slices.SortFunc(cols, func(a, b col) int { return cmp.Or(cmp.Compare(a.x, b.x), cmp.Compare(a.key, b.key)) })
	next := math.Inf(-1)
	for _, c := range cols {
		if c.x < next {
			continue
		}
		s := fmt.Sprint(c.key)
		if d.Axis == Wall {
			s = "+" + fmtDur(c.key)
		}
		l.text(c.x, ty, s, fontSmall, false, colNote, "middle")
		next = c.x + max(90, textWidth(s, fontSmall, false)+20)
	}
}

// events draws each shown event (or collapsed run).
func (l *layout) events(rep []int) {
	d := l.d
	l.item = make([]int, len(d.Events))
	counts := make(map[int]int)
	for i := range d.Events {
		counts[rep[i]]++
	}
	for i, e := range d.Events {
		if rep[i] != i {
			l.item[i] = l.item[rep[i]]
			continue
		}
		y := l.laneY[e.Lane]
		n := Node{X: l.x[i], Y: y, Tip: e.Tip, Class: string(e.Kind)}
		if c := counts[i]; c > 1 {
			n.Shape, n.R, n.Stroke, n.Pen, n.Fill = Ring, 4, colMinor, 1.2, "#ffffff"
			n.Tip = fmt.Sprintf("%d local events from %v (%s)", c, e.Ref, l.kinds(rep, i))
			n.Class = "collapsed"
			l.item[i] = l.node(n)
			l.text(n.X, y+12, fmt.Sprintf("×%d", c), fontSmall, false, colNote, "middle")
			continue
		}
		col := colEvent
		switch e.Kind {
		case trace.KindSend, trace.KindReceive, trace.KindDrop:
			n.Shape, n.R, n.Fill = Dot, 2.6, colEvent
		case trace.KindCSRequest:
			n.Shape, n.R, n.Fill = Triangle, 4, l.resCol[e.Resource]
			if n.Fill == "" {
				n.Fill = palette.Resources[0]
			}
		case trace.KindCSEnter, trace.KindCSExit:
			n.Shape, n.R, n.Fill = Dot, 3, colEvent
		case trace.KindCrash:
			n.Shape, n.R = Anchor, 6
			col = colCrash
			l.cross(Pt{n.X, y}, 6, colCrash, e.Tip)
		case trace.KindRecover:
			n.Shape, n.R, n.Stroke, n.Pen, n.Fill = Ring, 5, colRecover, 2, "#ffffff"
			col = colRecover
		case trace.KindLeader:
			n.Shape, n.R, n.Fill, n.Stroke, n.Pen = Star, 7, colLeader, colLeaderInk, 0.8
			col = colLeaderInk
		case trace.KindElectionStart:
			n.Shape, n.R, n.Fill = Diamond, 5, colElect
			col = colElect
		case trace.KindSuspect:
			n.Shape, n.R, n.Fill = Triangle, 4.5, colSuspect
			col = colSuspect
		case trace.KindTrust:
			n.Shape, n.R, n.Fill = Triangle, 4.5, colTrust
			col = colTrust
		case trace.KindDeliver:
			n.Shape, n.R, n.Fill = Square, 3, colDeliver
		default:
			n.Shape, n.R, n.Fill = Dot, 2.2, colMinor
		}
		l.item[i] = l.node(n)
		if e.Mark != "" {
			l.mark(e.Lane, n.X, y, e.Mark, col)
		}
	}
}

// kinds lists the kinds of a collapsed run.
func (l *layout) kinds(rep []int, head int) string {
	count := map[trace.Kind]int{}
	var order []trace.Kind
	for i, r := range rep {
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

// mark writes a few words above (or, when that is taken, below) a marked
// event on a lane.
func (l *layout) mark(lane int, x, y float64, s, col string) {
	w := textWidth(s, fontMark, true)
	a, b := x-w/2, x+w/2
	slot := &l.marks[lane]
	switch {
	case a > slot.above+3:
		l.text(x, y-11, s, fontMark, true, col, "middle")
		slot.above = b
	case a > slot.below+3:
		l.text(x, y+15, s, fontMark, true, col, "middle")
		slot.below = b
	default:
		l.text(x, y-21, s, fontMark, true, col, "middle")
		slot.above = b
	}
}

// cross draws an x of half-size r at p.
func (l *layout) cross(p Pt, r float64, col, tip string) {
	for _, d := range []Pt{{r, r}, {r, -r}} {
		l.line(l.anchor(p.sub(d)), l.anchor(p.add(d)), Edge{Color: col, Width: 2.4, Tip: tip, Class: "cross"})
	}
}

// edgeX is the x of an end of a section or reign: its event's, or the
// window's edge.
func (l *layout) edgeX(i int, start bool) float64 {
	if i != outside {
		return l.x[i]
	}
	if start {
		return l.left - edgePad + 8
	}
	return l.right - 8
}

func (l *layout) sections() {
	for _, s := range l.d.Sections {
		y := l.laneY[s.Lane]
		col := l.resCol[s.Resource]
		if s.Request != outside && (s.Enter != outside || s.Exit == outside) {
			// The wait: from the request to the entry (or the edge).
			a := l.x[s.Request]
			b := l.edgeX(s.Enter, false)
			if b > a {
				l.line(l.anchor(Pt{a, y}), l.anchor(Pt{b, y}), Edge{Color: col + "a0", Width: 1.6, Dash: true, Class: "wait",
					Tip: fmt.Sprintf("%s waits for %s", l.d.Lanes[s.Lane].Name, s.Resource)})
			}
		}
		if s.Enter == outside && s.Exit == outside && s.Request != outside {
			continue // requested, never entered in the window
		}
		a, b := l.edgeX(s.Enter, true), l.edgeX(s.Exit, false)
		tip := fmt.Sprintf("%s in the critical section of %s", l.d.Lanes[s.Lane].Name, s.Resource)
		if s.Crashed {
			tip += " until it crashed"
		}
		l.line(l.anchor(Pt{a, y}), l.anchor(Pt{b, y}), Edge{Color: col + "b0", Width: barWidth, Class: "section", Tip: tip})
	}
}

func (l *layout) messages() {
	d := l.d
	for _, m := range d.Msgs {
		col := l.msgCol[m.Type]
		if background(m.Type) && m.Send != outside && m.Recv != outside {
			l.line(l.item[m.Send], l.item[m.Recv], Edge{Color: colBackground, Width: 0.7, Arrow: true, Class: "message background",
				Tip: fmt.Sprintf("%s from P%d to P%d", m.Type, m.From, m.To)})
			continue
		}
		tip := fmt.Sprintf("%s from P%d to P%d (message %d): %s", m.Type, m.From, m.To, m.ID, strings.ReplaceAll(m.Fate, "_", " "))
		toLane, toShown := l.lane(m.To)
		fromLane, fromShown := l.lane(m.From)
		switch {
		case m.Send != outside && m.Recv != outside:
			l.message(l.item[m.Send], l.item[m.Recv], m.Type, col, false, tip)
		case m.Send != outside:
			s := l.item[m.Send]
			sp := Pt{l.p.Nodes[s].X, l.p.Nodes[s].Y}
			ty := sp.Y + laneGap*0.6
			if toShown {
				ty = lerp(sp, Pt{sp.X, l.laneY[toLane]}, 0.6).Y
			} else if fromLane == len(d.Lanes)-1 && fromShown {
				ty = sp.Y - laneGap*0.6
			}
			end := Pt{min(sp.X+stubLen, l.right-8), ty}
			switch m.Fate {
			case "dropped", "lost_to_crash":
				if m.Drop != outside {
					end.X = max(l.x[m.Drop], sp.X+colGap)
				}
				how := "dropped"
				if m.Fate == "lost_to_crash" {
					how = "lost: crash"
				}
				e := l.anchor(end)
				l.lineTo(s, e, m.Type+" ("+how+")", col, false, false, tip)
				l.cross(end, 4.5, colLost, tip)
			case "in_flight", "duplicated":
				end = Pt{l.right - 8, ty}
				l.lineTo(s, l.anchor(end), m.Type+" (in flight)", col, true, true, tip)
			default:
				l.lineTo(s, l.anchor(end), fmt.Sprintf("%s → P%d", m.Type, m.To), col, true, true, tip)
			}
		default:
			r := l.item[m.Recv]
			rp := Pt{l.p.Nodes[r].X, l.p.Nodes[r].Y}
			fy := rp.Y - laneGap*0.6
			if fromShown {
				fy = lerp(rp, Pt{rp.X, l.laneY[fromLane]}, 0.6).Y
			} else if toLane == 0 {
				fy = rp.Y + laneGap*0.6
			}
			start := Pt{max(rp.X-stubLen, l.left-edgePad+8), fy}
			l.message(l.anchor(start), r, fmt.Sprintf("%s ← P%d", m.Type, m.From), col, true, tip)
		}
	}
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
func (l *layout) message(a, b int, label, col string, dash bool, tip string) {
	l.lineTo(a, b, label, col, dash, true, tip)
}

func (l *layout) lineTo(a, b int, label, col string, dash, arrow bool, tip string) {
	na, nb := l.p.Nodes[a], l.p.Nodes[b]
	at, ok := l.labelSpot(Pt{na.X, na.Y}, Pt{nb.X, nb.Y}, label)
	if !ok {
		label = "" // the colour says the type, the tooltip the rest
	}
	l.line(a, b, Edge{Color: col, Width: 1, Dash: dash, Arrow: arrow, Label: label, LabelAt: at,
		LabelSize: fontMsg, LabelCol: col, Tip: tip, Class: "message"})
}

// labelSpot finds where a message's label can go without covering
// another: first where the arrow crosses the middle of the first gap
// between lanes after its sender (between lanes, near who sent it), then
// further along. It reports false if every spot is taken.
func (l *layout) labelSpot(a, b Pt, label string) (Pt, bool) {
	w, h := textWidth(label, fontMsg, false)+4, fontMsg+2
	dy := math.Abs(b.Y - a.Y)
	var ts []float64
	if dy > laneGap*1.01 {
		for g := 0.5; g*laneGap < dy; g++ {
			ts = append(ts, g*laneGap/dy, (g-0.25)*laneGap/dy, (g+0.25)*laneGap/dy)
		}
	} else {
		ts = []float64{0.5, 0.3, 0.7}
	}
	for _, t := range ts {
		c := lerp(a, b, t).add(Pt{0, -4})
		r := rect{c.X - w/2, c.Y - h/2, c.X + w/2, c.Y + h/2}
		if l.free(r) {
			l.take(r)
			return c, true
		}
	}
	return Pt{}, false
}

const cell = 64.0

func (l *layout) cells(r rect, fn func(k [2]int) bool) bool {
	for cx := int(math.Floor(r.x0 / cell)); cx <= int(math.Floor(r.x1/cell)); cx++ {
		for cy := int(math.Floor(r.y0 / cell)); cy <= int(math.Floor(r.y1/cell)); cy++ {
			if !fn([2]int{cx, cy}) {
				return false
			}
		}
	}
	return true
}

func (l *layout) free(r rect) bool {
	return l.cells(r, func(k [2]int) bool {
		for _, o := range l.occupied[k] {
			if r.x0 < o.x1 && o.x0 < r.x1 && r.y0 < o.y1 && o.y0 < r.y1 {
				return false
			}
		}
		return true
	})
}

func (l *layout) take(r rect) {
	l.cells(r, func(k [2]int) bool {
		l.occupied[k] = append(l.occupied[k], r)
		return true
	})
}

// findings draws the findings in the window: their sections and reigns as
// red bars, missing orderings and wait-for edges as red arrows, the
// deliveries of one multicast joined by red dashes, every event of a
// finding ringed in red, tagged with the finding's number.
func (l *layout) findings() {
	type bar struct {
		a, b, y, w float64
		tags       []string
		label      string
		tip        string
	}
	var bars []*bar
	barAt := map[[3]float64]*bar{}
	waits := 0
	for _, o := range l.d.Findings {
		tag := fmt.Sprintf("#%d", o.N)
		tip := fmt.Sprintf("finding %d (%s): %s", o.N, o.Check, o.Message)
		ringed := map[int]bool{}
		ring := func(i int) {
			if i == outside || ringed[l.item[i]] {
				return
			}
			ringed[l.item[i]] = true
			n := l.p.Nodes[l.item[i]]
			l.node(Node{X: n.X, Y: n.Y, Shape: Ring, R: max(n.R, 3) + 4, Stroke: colFinding, Pen: 2, Tip: tip, Class: "finding"})
		}
		labelled := false
		edge := 0
		for _, p := range o.Parts {
			both := len(p.At) == 2 && p.At[0] != outside && p.At[1] != outside
			switch p.Role {
			case "section", "reign":
				lane := -1
				for _, i := range p.At {
					if i != outside {
						lane = l.d.Events[i].Lane
					}
				}
				if lane < 0 {
					continue
				}
				end := outside
				if len(p.At) > 1 {
					end = p.At[1]
				}
				a, b := l.edgeX(p.At[0], true), l.edgeX(end, false)
				y, w := l.laneY[lane], barWidth
				if p.Role == "reign" {
					y, w = y-7, 4
				}
				k := [3]float64{a, b, y}
				br := barAt[k]
				if br == nil {
					br = &bar{a: a, b: b, y: y, w: w, label: p.Label, tip: tip}
					barAt[k] = br
					bars = append(bars, br)
				}
				br.tags = append(br.tags, tag)
				if br.label == "" {
					br.label = p.Label
				}
				labelled = true
			case "not-before":
				if both {
					a, b := l.d.Events[p.At[0]], l.d.Events[p.At[1]]
					lab := fmt.Sprintf("%s missing: %v → %v", tag, a.Ref, b.Ref)
					l.findingEdge(l.item[p.At[0]], l.item[p.At[1]], lab, tip, true)
				}
			case "waits-for":
				edge++
				waits++
				l.waitEdge(p, fmt.Sprintf("%s.%d", tag, edge), waits, tip)
				// The event that made the edge: a wait event of the
				// waiter, or the holder's entry.
				maker := 0
				if strings.HasPrefix(p.Label, "holds") {
					maker = 1
				}
				if len(p.At) > maker && p.At[maker] != outside {
					n := l.p.Nodes[l.item[p.At[maker]]]
					l.text(n.X, n.Y+(18+5*float64(edge%3))*float64(1-2*maker), fmt.Sprintf("%s.%d", tag, edge), fontMark, true, colFinding, "middle")
				}
				labelled = true
			case "same":
				if both {
					a, b := l.item[p.At[0]], l.item[p.At[1]]
					na, nb := l.p.Nodes[a], l.p.Nodes[b]
					mid := lerp(Pt{na.X, na.Y}, Pt{nb.X, nb.Y}, 0.5)
					l.line(a, b, Edge{Color: colFinding, Width: 1.8, Dash: true, Label: tag + " " + p.Label, LabelAt: mid.add(Pt{0, -5}),
						LabelSize: fontMark, LabelCol: colFinding, Tip: tip, Class: "finding"})
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
				if i != outside {
					n := l.p.Nodes[l.item[i]]
					l.text(n.X+10, n.Y-14, tag, fontMark, true, colFinding, "start")
					break
				}
			}
		}
	}
	for _, br := range bars {
		l.line(l.anchor(Pt{br.a, br.y}), l.anchor(Pt{br.b, br.y}), Edge{Color: colFinding + "d0", Width: br.w, Class: "finding", Tip: br.tip})
		lab := strings.Join(br.tags, " ")
		if br.label != "" {
			lab += " " + br.label
		}
		l.text(br.a+14, br.y+16, lab, fontMark, true, colFinding, "start")
	}
}

// waitEdge draws edge k of a wait-for cycle in the zone right of the
// lanes, where the run ended and the cycle stands: a red arrow from the
// waiting process's lane to the lane of the one it waits for.
func (l *layout) waitEdge(p OverPart, label string, k int, tip string) {
	from, ok1 := l.lane(p.From)
	to, ok2 := l.lane(p.To)
	if !ok1 || !ok2 {
		return
	}
	x := l.waitX + float64(k-1)*waitGap + waitGap/2
	a := l.anchor(Pt{x, l.laneY[from]})
	b := l.node(Node{X: x, Y: l.laneY[to], Shape: Anchor, R: 3})
	bow := 10.0
	if l.laneY[to] > l.laneY[from] {
		bow = -10
	}
	e := Edge{Color: colFinding, Width: 2, Arrow: true, Tip: tip, Class: "finding"}
	l.curve(a, b, bow, e)
	mid := lerp(Pt{x, l.laneY[from]}, Pt{x, l.laneY[to]}, 0.5)
	why := fmt.Sprintf("%s P%d→P%d", label, p.From, p.To)
	if p.Label != "" {
		why += ": " + p.Label
	}
	if k == 1 && len(l.laneY) > 0 {
		l.text(l.waitX+8, l.laneY[0]-laneGap/2+4, "wait-for edges at the end of the run", fontMark, true, colFinding, "start")
	}
	l.text(mid.X+6, mid.Y, why, fontMark, true, colFinding, "start")
	// Dots where the edge leaves and arrives.
	l.node(Node{X: x, Y: l.laneY[from], Shape: Dot, R: 3, Fill: colFinding, Tip: tip, Class: "finding"})
}

// findingEdge draws a red curved arrow between two events of a finding.
func (l *layout) findingEdge(a, b int, label, tip string, dash bool) {
	na, nb := l.p.Nodes[a], l.p.Nodes[b]
	p0, p3 := Pt{na.X, na.Y}, Pt{nb.X, nb.Y}
	bow := 18.0
	if math.Abs(p0.Y-p3.Y) < 1 {
		bow = 26 // along one lane: bow clear of it
	}
	e := Edge{Color: colFinding, Width: 1.8, Dash: dash, Arrow: true, Tip: tip, Class: "finding", LabelSize: fontMark, LabelCol: colFinding, Label: label}
	dir := unit(p3.sub(p0))
	nrm := Pt{dir.Y, -dir.X}.mul(bow)
	e.LabelAt = lerp(p0, p3, 0.5).add(nrm.mul(0.75)).add(Pt{0, -4})
	l.curve(a, b, bow, e)
}

// legend draws the key under the lanes and returns the y below it.
func (l *layout) legend(y float64) float64 {
	x0 := margin
	x := x0
	width := max(l.right, 760)
	l.p.Width = max(l.p.Width, width+margin)
	rowH := 18.0
	y += 8
	put := func(w float64) (float64, float64) {
		if x+w > width && x > x0 {
			x = x0
			y += rowH
		}
		px, py := x, y
		x += w + 16
		return px, py
	}
	item := func(draw func(px, py float64), label string) {
		w := 18 + textWidth(label, fontSmall, false)
		px, py := put(w)
		draw(px+6, py)
		l.text(px+16, py, label, fontSmall, false, colText, "start")
	}
	l.text(x, y, "key:", fontSmall, true, colText, "start")
	x += 28
	for _, t := range l.msgOrder {
		col := l.msgCol[t]
		item(func(px, py float64) {
			l.line(l.anchor(Pt{px - 6, py + 3}), l.anchor(Pt{px + 8, py - 3}), Edge{Color: col, Width: 1, Arrow: true, Class: "legend"})
		}, t)
	}
	for _, m := range l.d.Msgs {
		if m.Fate == "dropped" || m.Fate == "lost_to_crash" {
			item(func(px, py float64) { l.cross(Pt{px, py}, 4, colLost, "") }, "message lost (dropped, or to a crash)")
			break
		}
	}
	for _, r := range l.resOrder {
		col := l.resCol[r]
		item(func(px, py float64) {
			l.line(l.anchor(Pt{px - 6, py}), l.anchor(Pt{px + 8, py}), Edge{Color: col + "b0", Width: barWidth, Class: "legend"})
		}, "critical section "+r)
	}
	if len(l.resOrder) > 0 {
		item(func(px, py float64) {
			l.node(Node{X: px, Y: py, Shape: Triangle, R: 4, Fill: palette.Resources[0], Class: "legend"})
		}, "request (dashes: waiting)")
	}
	seen := map[trace.Kind]bool{}
	for _, e := range l.d.Events {
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
		item(func(px, py float64) {
			if k.kind == trace.KindCrash {
				l.cross(Pt{px, py}, 5, colCrash, "")
				return
			}
			n := k.n
			n.X, n.Y, n.Class = px, py, "legend"
			l.node(n)
		}, k.label)
	}
	if len(l.groups) > 0 || l.hasCollapsed() {
		item(func(px, py float64) {
			l.node(Node{X: px, Y: py, Shape: Ring, R: 4, Stroke: colMinor, Pen: 1.2, Fill: "#ffffff", Class: "legend"})
		}, "×N local events collapsed")
	}
	if len(l.d.Findings) > 0 {
		item(func(px, py float64) {
			l.node(Node{X: px, Y: py, Shape: Ring, R: 6, Stroke: colFinding, Pen: 2, Class: "legend"})
		}, "event of a finding (red)")
	}
	return y + rowH
}

func (l *layout) hasCollapsed() bool {
	for _, n := range l.p.Nodes {
		if n.Class == "collapsed" {
			return true
		}
	}
	return false
}

// caption lists the findings drawn, and those outside the window.
func (l *layout) caption(y float64) float64 {
	d := l.d
	if len(d.Findings) == 0 && d.Outside == 0 {
		return y
	}
	width := max(l.right, 760) - 2*margin
	y += 6
	for _, o := range d.Findings {
		lines := wrap(fmt.Sprintf("#%d %s: %s", o.N, o.Check, o.Message), fontText, width, 3)
		// Every line of a finding in the finding's colour: a continuation
		// drawn as plain text read as a separate note.
		for _, s := range lines {
			l.text(margin, y, s, fontText, false, colFinding, "start")
			y += fontText + 4
		}
		y += 3
	}
	if d.Outside > 0 {
		l.text(margin, y, fmt.Sprintf("%s no event in this window (dmx render --finding N shows the Nth)", plural.Count(d.Outside, "more finding")+" "+plural.Form(d.Outside, "has", "have")), fontText, false, colNote, "start")
		y += fontText + 4
	}
	return y
}

// wrap breaks s into lines no wider than width, at most n of them; the
// last one ends in "…" if s did not fit.
func wrap(s string, size, width float64, n int) []string {
	var lines []string
	words := strings.Fields(s)
	cur := ""
	for i, w := range words {
		next := w
		if cur != "" {
			next = cur + " " + w
		}
		if cur == "" || textWidth(next, size, false) <= width {
			cur = next
			continue
		}
		lines = append(lines, cur)
		cur = w
		if len(lines) == n-1 {
			rest := []rune(strings.Join(words[i:], " "))
			if textWidth(string(rest), size, false) <= width {
				return append(lines, string(rest))
			}
			rest = rest[:min(len(rest), int(width/(size*0.4)))]
			for len(rest) > 1 && textWidth(string(rest)+"…", size, false) > width {
				rest = rest[:len(rest)-1]
			}
			return append(lines, string(rest)+"…")
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// title says what the picture shows.
func (d *Diagram) title() string {
	r := d.Run
	s := r.Algorithm
	if s == "" {
		s = "trace"
	}
	s += fmt.Sprintf(" · run %d", r.ID)
	if r.Mode != "import" && r.Mode != "" {
		s += fmt.Sprintf(" · seed %d · %s", r.Seed, r.Mode)
	}
	axis := "Lamport"
	if d.Axis == Wall {
		axis = "wall time"
	}
	if d.Whole {
		s += " · all " + plural.Count(d.Total, "event")
	} else {
		s += fmt.Sprintf(" · %d of %s, %s %s", len(d.Events), plural.Count(d.Total, "event"), axis, d.span(d.Lo, d.Hi))
	}
	if !r.Complete && r.Status != "" {
		s += " · " + r.Status
	}
	return s
}

// fmtDur formats ns compactly: 12.5ms, 1.2s, 340µs.
func fmtDur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return trimZeros(fmt.Sprintf("%.2f", d.Seconds())) + "s"
	case d >= time.Millisecond:
		return trimZeros(fmt.Sprintf("%.2f", float64(d)/1e6)) + "ms"
	case d >= time.Microsecond:
		return trimZeros(fmt.Sprintf("%.1f", float64(d)/1e3)) + "µs"
	}
	return fmt.Sprintf("%dns", ns)
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

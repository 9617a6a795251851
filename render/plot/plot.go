package plot

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/render/palette"
	"github.com/dmxlab/dmx/render/spacetime"
	"github.com/dmxlab/dmx/trace"
)

// Data is what the plots show of one run, read from its events: wall
// times in ns since the run's first event.
type Data struct {
	Run     trace.Run
	Names   []string // the processes, as the run names them
	Span    int64    // the run's extent in wall time
	Entries []Entry  // critical sections entered
	Lat     []Sample // message latencies, at their receipt
	Bands   []Band   // faults acting, crashed processes
	Reigns  []Reign  // processes believing they lead
	Marks   []Mark   // findings, where they close
}

// Reign is a stretch in which a process believed it led: from its leader
// event naming itself to its next decision, its crash or the end.
type Reign struct {
	Proc     int
	From, To int64
}

// Entry is one entry into a critical section.
type Entry struct {
	Proc int
	At   int64 // the cs_enter
	Wait int64 // since its cs_request; -1 if none was recorded
}

// Sample is one message's latency, from its send to its receipt.
type Sample struct {
	Proc int // the receiver
	At   int64
	D    int64
}

// Band is a stretch of wall time in which a fault acted: a crash (until
// the recovery or the end), a partition, a pause.
type Band struct {
	From, To int64
	Label    string
}

// Mark is a finding, drawn where it closes: at its last event (the second
// entry of an overlap, the second leader of a split brain, the wait that
// closed a cycle).
type Mark struct {
	N   int
	At  int64
	Tip string
}

// maxSpan is the longest run a plot draws: 100 years of wall time, far
// beyond any run, far below what overflows int64 arithmetic on it.
const maxSpan = int64(100 * 365 * 24 * time.Hour)

// Read reads the run's events into Data; findings (dmx check's, in its
// order) are marked where they close, at their last event.
func Read(run trace.Run, r trace.Reader, findings []analyze.Finding) (*Data, error) {
	d := &Data{Run: run}
	type csKey struct {
		proc int
		res  string
	}
	// Times are kept as read (ns since the epoch) and made relative to the
	// run's first event at the end: events come process by process, the
	// first read is not the earliest.
	origin, last := int64(math.MaxInt64), int64(math.MinInt64)
	request := map[csKey]int64{}
	sends := map[int64]int64{}
	recvs := map[int64]Sample{}
	down := map[int]int64{}
	leads := map[int]int64{}
	endReign := func(p int, w int64) {
		if f, ok := leads[p]; ok {
			d.Reigns = append(d.Reigns, Reign{p, f, w})
			delete(leads, p)
		}
	}
	type fault struct {
		from, to int64
		label    string
	}
	faults := map[string]*fault{}
	var order []string
	refs := map[trace.Ref]int64{}
	for _, f := range findings {
		for _, e := range f.Events {
			refs[e] = math.MinInt64
		}
	}
	procs := run.Nodes
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		w := ev.Wall
		origin, last = min(origin, w), max(last, w)
		procs = max(procs, ev.Proc+1)
		if _, ok := refs[ev.Ref()]; ok {
			refs[ev.Ref()] = w
		}
		switch ev.Kind {
		case trace.KindCSRequest:
			request[csKey{ev.Proc, ev.Resource}] = w
		case trace.KindCSEnter:
			k := csKey{ev.Proc, ev.Resource}
			wait := int64(-1)
			if q, ok := request[k]; ok {
				wait = w - q
				delete(request, k)
			}
			d.Entries = append(d.Entries, Entry{ev.Proc, w, wait})
		case trace.KindSend:
			if s, ok := recvs[ev.Msg]; ok {
				s.D = s.At - w
				d.Lat = append(d.Lat, s)
				delete(recvs, ev.Msg)
			} else {
				sends[ev.Msg] = w
			}
		case trace.KindReceive:
			if s, ok := sends[ev.Msg]; ok {
				d.Lat = append(d.Lat, Sample{ev.Proc, w, w - s})
				delete(sends, ev.Msg) // a duplicate's latency counts from its first receipt
			} else if _, dup := recvs[ev.Msg]; !dup {
				recvs[ev.Msg] = Sample{Proc: ev.Proc, At: w}
			}
		case trace.KindLeader:
			l, _ := ev.Leader()
			if _, ok := leads[ev.Proc]; l.Leader == ev.Proc && !ok {
				leads[ev.Proc] = w
			} else if l.Leader != ev.Proc {
				endReign(ev.Proc, w)
			}
		case trace.KindCrash:
			down[ev.Proc] = w
			endReign(ev.Proc, w)
		case trace.KindRecover:
			if c, ok := down[ev.Proc]; ok {
				d.Bands = append(d.Bands, Band{c, w, fmt.Sprintf("P%d down", ev.Proc)})
				delete(down, ev.Proc)
			}
		case trace.KindFault:
			f, err := ev.Fault()
			if err != nil || f.Phase == trace.FaultNotApplied {
				break
			}
			x := faults[f.Fault]
			if x == nil {
				x = &fault{from: w, to: math.MinInt64, label: faultLabel(f.Fault, ev.Proc)}
				faults[f.Fault] = x
				order = append(order, f.Fault)
			}
			if f.Phase == trace.FaultStart {
				x.from = min(x.from, w)
			} else {
				x.to = max(x.to, w)
			}
		}
	}
	if origin > last {
		origin, last = 0, 0
	}
	if last-origin < 0 || last-origin > maxSpan {
		// Nonsense wall times (MinInt64 beside real ones overflowed the
		// span, and the plot made a slice of negative length: found by
		// the adversarial pass of issue 22) cannot share one axis.
		return nil, fmt.Errorf("broken trace: its wall times go from %d to %d ns, more than %v apart: it cannot be plotted", origin, last, time.Duration(maxSpan))
	}
	for p, c := range down {
		d.Bands = append(d.Bands, Band{c, last, fmt.Sprintf("P%d down", p)})
	}
	for p := range leads {
		endReign(p, last)
	}
	for _, k := range order {
		f := faults[k]
		to := f.to
		if to < f.from {
			to = last
		}
		d.Bands = append(d.Bands, Band{f.from, to, f.label})
	}
	// Relative to the first event.
	d.Span = last - origin
	for i := range d.Entries {
		d.Entries[i].At -= origin
	}
	for i := range d.Lat {
		d.Lat[i].At -= origin
	}
	for i := range d.Bands {
		d.Bands[i].From -= origin
		d.Bands[i].To -= origin
	}
	for i := range d.Reigns {
		d.Reigns[i].From -= origin
		d.Reigns[i].To -= origin
	}
	slices.SortFunc(d.Reigns, func(a, b Reign) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Proc, b.Proc)) })
	for k, v := range refs {
		if v != math.MinInt64 {
			refs[k] = v - origin
		}
	}
	slices.SortStableFunc(d.Bands, func(a, b Band) int { return cmp.Or(cmp.Compare(a.From, b.From), strings.Compare(a.Label, b.Label)) })
	for i, f := range findings {
		at := int64(math.MinInt64)
		for _, e := range f.Events {
			if w := refs[e]; w != math.MinInt64 {
				at = max(at, w)
			}
		}
		if at != math.MinInt64 {
			d.Marks = append(d.Marks, Mark{N: i + 1, At: at, Tip: fmt.Sprintf("#%d %s: %s", i+1, f.Check, f.Message)})
		}
	}
	for p := range procs {
		name := fmt.Sprintf("P%d", p)
		if p < len(run.Names) && run.Names[p] != "" {
			name = run.Names[p]
		}
		d.Names = append(d.Names, name)
	}
	slices.SortFunc(d.Entries, func(a, b Entry) int { return cmp.Compare(a.At, b.At) })
	slices.SortFunc(d.Lat, func(a, b Sample) int { return cmp.Compare(a.At, b.At) })
	return d, nil
}

// faultLabel names a fault's band: "partition P0 P1 | P2 P3 P4", "P4
// paused".
func faultLabel(spec string, proc int) string {
	kind, _, _ := strings.Cut(spec, ":")
	kind, _, _ = strings.Cut(kind, "@")
	switch kind {
	case "partition":
		return spacetime.PartitionWords(spec)
	case "pause":
		return fmt.Sprintf("P%d paused", proc)
	}
	return kind
}

// Sizes, in points.
const (
	width    = 1100.0
	left     = 70.0 // room for the y axis's labels
	right    = 24.0
	panelH   = 150.0
	panelGap = 58.0
	margin   = 16.0
	fontT    = 12.0
	fontL    = 9.0
	fontS    = 8.0
)

// Draw plots d: critical sections entered per second, the waiting time
// of each entry, and message latency, over wall time; per process (in
// the palette's colours) and in total (black); the faults' stretches
// shaded across the three, the findings marked in red.
func Draw(d *Data) *spacetime.Picture {
	p := &pic{p: &spacetime.Picture{Width: width}, d: d}
	p.p.Title = title(d.Run)
	x0, x1 := left, width-right
	span := max(d.Span, 1)
	p.x = func(t int64) float64 { return x0 + float64(t)/float64(span)*(x1-x0) }
	bin := niceStep(span / 80)
	p.bin = bin
	y := margin + fontT/2
	p.text(margin, y, p.p.Title, fontT, true, palette.Text, 'l')
	y += fontT + 6
	p.text(margin, y, "wall time since the run's first event; shaded: faults acting (crashes until their recovery, partitions, pauses); red: findings, where they close", fontL, false, palette.Note, 'l')
	y += 14
	// A strip for the names of the faults and the findings' numbers.
	strip := y + 4
	y = strip + p.stripRows()*12 + 8
	// The panels: those of critical sections if the run entered any, who
	// leads if a process ever led, and message latency.
	type panel struct {
		h    float64
		draw func(top float64)
	}
	var panels []panel
	if len(d.Entries) > 0 {
		panels = append(panels, panel{panelH, p.throughput}, panel{panelH, p.waiting})
	}
	if len(d.Reigns) > 0 {
		panels = append(panels, panel{p.reignsH(), p.reigns})
	}
	panels = append(panels, panel{panelH, p.latency})
	var tops, bots []float64
	top := y + 16
	for _, pn := range panels {
		tops = append(tops, top)
		bots = append(bots, top+pn.h)
		top += pn.h + panelGap
	}
	bottom := bots[len(bots)-1]
	p.bands(tops, bots, strip)
	p.marks(tops[0], bottom, strip)
	for i, pn := range panels {
		pn.draw(tops[i])
	}
	p.xAxis(bottom)
	if len(d.Entries) == 0 {
		p.text(width-right, tops[0]-10, "no critical section in this run", fontS, false, palette.Note, 'r')
	}
	y = p.legend(bottom + 34)
	p.p.Height = y + margin
	return p.p
}

// pic is the state of drawing one plot.
type pic struct {
	p      *spacetime.Picture
	d      *Data
	x      func(int64) float64
	bin    int64
	labels []spacetime.Rect // the strip's labels placed
}

func title(r trace.Run) string {
	return spacetime.RunTitle(r) + " · over wall time"
}

func (p *pic) node(n spacetime.Node) int {
	p.p.Nodes = append(p.p.Nodes, n)
	return len(p.p.Nodes) - 1
}

// text writes s with its left end (align 'l'), right end ('r') or centre
// (0) at x.
func (p *pic) text(x, y float64, s string, size float64, bold bool, col string, align byte) {
	w := spacetime.TextWidth(s, size, bold)
	switch align {
	case 'l':
		x += w / 2
	case 'r':
		x -= w / 2
	}
	p.node(spacetime.Node{X: x, Y: y, Shape: spacetime.Text, Label: s, Size: size, Bold: bold, Color: col, W: w, Align: align, Class: "text"})
}

// line draws a straight line.
func (p *pic) line(a, b spacetime.Pt, col string, w float64, dash bool, class, tip string) {
	i := p.node(spacetime.Node{X: a.X, Y: a.Y, Shape: spacetime.Anchor})
	j := p.node(spacetime.Node{X: b.X, Y: b.Y, Shape: spacetime.Anchor})
	p.p.Edges = append(p.p.Edges, spacetime.Edge{From: i, To: j, P0: a, C1: a, C2: b, P3: b, Color: col, Width: w, Dash: dash, Class: class, Tip: tip})
}

// polyline draws the points joined, skipping the gaps (NaN).
func (p *pic) polyline(ps []spacetime.Pt, col string, w float64, dash bool, class, tip string) {
	for i := 1; i < len(ps); i++ {
		if math.IsNaN(ps[i-1].Y) || math.IsNaN(ps[i].Y) {
			continue
		}
		p.line(ps[i-1], ps[i], col, w, dash, class, tip)
	}
}

// stripRows counts the rows the strip of names above the panels needs.
func (p *pic) stripRows() float64 {
	n := float64(len(p.d.Bands) + len(p.d.Marks))
	return min(max(n, 1), 4)
}

// strip places a label in the strip above the panels, in the first row
// where it covers none; false if it fits nowhere (its tooltip stays).
func (p *pic) strip(x, top float64, s, col, tip string) bool {
	w := spacetime.TextWidth(s, fontS, true)
	for row := range int(p.stripRows()) {
		y := top + float64(row)*12
		r := spacetime.Rect{X0: x - 1, Y0: y - fontS*0.6, X1: x + w + 1, Y1: y + fontS*0.6}
		if r.X1 > width-margin {
			r.X0, r.X1 = width-margin-w-1, width-margin
		}
		free := true
		for _, o := range p.labels {
			if r.Overlaps(o) {
				free = false
				break
			}
		}
		if free {
			p.labels = append(p.labels, r)
			p.node(spacetime.Node{X: (r.X0 + r.X1) / 2, Y: y, Shape: spacetime.Text, Label: s, Size: fontS, Bold: true, Color: col,
				W: w, Tip: tip, Class: "text"})
			return true
		}
	}
	return false
}

// bands shades the faults' stretches across the panels.
func (p *pic) bands(tops, bots []float64, strip float64) {
	for _, b := range p.d.Bands {
		a, c := p.x(b.From), p.x(b.To)
		if c-a < 2 {
			c = a + 2
		}
		for i := range tops {
			p.line(spacetime.Pt{X: (a + c) / 2, Y: tops[i]}, spacetime.Pt{X: (a + c) / 2, Y: bots[i]}, palette.Partition+"b0", c-a, false, "fault", b.Label)
		}
		p.strip(a, strip, b.Label, palette.Fault, b.Label)
	}
}

// marks draws the findings: a red line through the panels at each one's
// first event, numbered in the strip.
func (p *pic) marks(top, bottom, strip float64) {
	for _, m := range p.d.Marks {
		x := p.x(m.At)
		p.line(spacetime.Pt{X: x, Y: top - 4}, spacetime.Pt{X: x, Y: bottom}, palette.Finding, 1.2, true, "finding", m.Tip)
		p.strip(x, strip, fmt.Sprintf("#%d", m.N), palette.Finding, m.Tip)
	}
}

// frame draws a panel's box, its title, its y axis up to hi (in unit,
// named by name) and the vertical grid.
func (p *pic) frame(top float64, heading string, hi float64, fmtY func(float64) string) func(float64) float64 {
	return p.frameH(top, panelH, heading, hi, fmtY)
}

// frameH is frame for a panel h points high.
func (p *pic) frameH(top, h float64, heading string, hi float64, fmtY func(float64) string) func(float64) float64 {
	panelH := h
	x0, x1 := left, width-right
	p.text(x0, top-10, heading, fontL+0.5, true, palette.Text, 'l')
	step := niceFloat(hi / 4)
	if step <= 0 {
		step = 1
	}
	hi = math.Max(step*math.Ceil(hi/step), step)
	y := func(v float64) float64 { return top + panelH - v/hi*panelH }
	for v := 0.0; v <= hi+step/2; v += step {
		yy := y(v)
		p.line(spacetime.Pt{X: x0, Y: yy}, spacetime.Pt{X: x1, Y: yy}, palette.Grid, 0.7, false, "grid", "")
		p.text(x0-6, yy, fmtY(v), fontS, false, palette.Note, 'r')
	}
	for _, t := range p.ticks() {
		xx := p.x(t)
		p.line(spacetime.Pt{X: xx, Y: top}, spacetime.Pt{X: xx, Y: top + panelH}, palette.Grid, 0.7, false, "grid", "")
	}
	p.line(spacetime.Pt{X: x0, Y: top + panelH}, spacetime.Pt{X: x1, Y: top + panelH}, palette.Lane, 1, false, "axis", "")
	p.line(spacetime.Pt{X: x0, Y: top}, spacetime.Pt{X: x0, Y: top + panelH}, palette.Lane, 1, false, "axis", "")
	return y
}

// ticks are the x axis's ticks: round times, at least 80 points apart.
func (p *pic) ticks() []int64 {
	span := max(p.d.Span, 1)
	step := niceStep(span / 10)
	for p.x(step)-p.x(0) < 80 {
		step = niceStep(step + 1)
	}
	var out []int64
	for t := int64(0); t <= span; t += step {
		out = append(out, t)
	}
	return out
}

func (p *pic) xAxis(bottom float64) {
	for _, t := range p.ticks() {
		p.text(p.x(t), bottom+12, "+"+spacetime.FormatDur(t), fontS, false, palette.Note, 0)
	}
	p.text(width-right, bottom+26, "wall time →", fontS, false, palette.Note, 'r')
}

// colour is a process's colour.
func colour(proc int) string { return palette.Messages[proc%len(palette.Messages)] }

// throughput: critical sections entered per second, per bin.
func (p *pic) throughput(top float64) {
	d := p.d
	nb := int(d.Span/p.bin) + 1
	per := make([][]float64, len(d.Names))
	for i := range per {
		per[i] = make([]float64, nb)
	}
	total := make([]float64, nb)
	for _, e := range d.Entries {
		b := int(e.At / p.bin)
		if b < nb && e.Proc < len(per) {
			per[e.Proc][b]++
			total[b]++
		}
	}
	scale := float64(time.Second) / float64(p.bin)
	hi := 0.0
	for b := range total {
		total[b] *= scale
		hi = max(hi, total[b])
		for i := range per {
			per[i][b] *= scale
		}
	}
	y := p.frame(top, "critical sections entered per second", max(hi, 1), func(v float64) string { return trimZeros(fmt.Sprintf("%.1f", v)) })
	pts := func(vs []float64) []spacetime.Pt {
		out := make([]spacetime.Pt, len(vs))
		for b, v := range vs {
			out[b] = spacetime.Pt{X: p.x(int64(b)*p.bin + p.bin/2), Y: y(v)}
		}
		return out
	}
	for i := range per {
		p.polyline(pts(per[i]), colour(i), 1, false, "series", d.Names[i]+": entries per second")
	}
	p.polyline(pts(total), palette.Text, 1.8, false, "series total", "all processes: entries per second")
}

// waiting: each entry's wait since its request, and the median per bin.
func (p *pic) waiting(top float64) {
	d := p.d
	var hi int64
	var waits []Entry
	for _, e := range d.Entries {
		if e.Wait >= 0 {
			waits = append(waits, e)
			hi = max(hi, e.Wait)
		}
	}
	unit, name := durUnit(hi)
	y := p.frame(top, "waiting time, request to entry (dots: each entry; line: median)", max(float64(hi), 1)/unit, func(v float64) string { return trimZeros(fmt.Sprintf("%.2f", v)) + name })
	if len(waits) == 0 {
		p.text(left+12, top+panelH/2, "no request recorded before the entries", fontL, false, palette.Note, 'l')
		return
	}
	step := max(1, len(waits)/4000) // at most some 4,000 dots
	for i := 0; i < len(waits); i += step {
		e := waits[i]
		p.node(spacetime.Node{X: p.x(e.At), Y: y(float64(e.Wait) / unit), Shape: spacetime.Dot, R: 1.6, Fill: colour(e.Proc) + "c0", Class: "dot"})
	}
	p.polyline(p.quantiles(len(waits), func(i int) (int64, int64) { return waits[i].At, waits[i].Wait }, 0.5, y, unit), palette.Text, 1.8, false, "series total", "median wait")
}

// reignsH is the height of the panel of reigns: a row per process.
func (p *pic) reignsH() float64 { return float64(len(p.d.Names))*16 + 8 }

// reigns: a row per process, a bar where it believed it led; two bars
// over one stretch of time are two leaders at once.
func (p *pic) reigns(top float64) {
	h := p.reignsH()
	x0, x1 := left, width-right
	p.text(x0, top-10, "who believes it leads (two bars at one time: two leaders)", fontL+0.5, true, palette.Text, 'l')
	for _, t := range p.ticks() {
		xx := p.x(t)
		p.line(spacetime.Pt{X: xx, Y: top}, spacetime.Pt{X: xx, Y: top + h}, palette.Grid, 0.7, false, "grid", "")
	}
	row := func(proc int) float64 { return top + 12 + float64(proc)*16 }
	for i, n := range p.d.Names {
		p.text(x0-6, row(i), n, fontS, false, palette.Note, 'r')
		p.line(spacetime.Pt{X: x0, Y: row(i)}, spacetime.Pt{X: x1, Y: row(i)}, palette.Grid, 0.7, false, "grid", "")
	}
	for _, r := range p.d.Reigns {
		a, b := p.x(r.From), max(p.x(r.To), p.x(r.From)+2)
		p.line(spacetime.Pt{X: a, Y: row(r.Proc)}, spacetime.Pt{X: b, Y: row(r.Proc)}, colour(r.Proc), 8, false, "reign",
			fmt.Sprintf("%s leads from +%s to +%s", p.d.Names[r.Proc], spacetime.FormatDur(r.From), spacetime.FormatDur(r.To)))
	}
	p.line(spacetime.Pt{X: x0, Y: top + h}, spacetime.Pt{X: x1, Y: top + h}, palette.Lane, 1, false, "axis", "")
	p.line(spacetime.Pt{X: x0, Y: top}, spacetime.Pt{X: x0, Y: top + h}, palette.Lane, 1, false, "axis", "")
}

// latency: per bin, each receiver's median and the median and 99th
// percentile of all.
func (p *pic) latency(top float64) {
	d := p.d
	var hi int64
	for _, s := range d.Lat {
		hi = max(hi, s.D)
	}
	// The axis to the 99.5th percentile: a few slow messages would flatten
	// the rest.
	if len(d.Lat) > 0 {
		ds := make([]int64, len(d.Lat))
		for i, s := range d.Lat {
			ds[i] = s.D
		}
		slices.Sort(ds)
		hi = ds[min(len(ds)-1, len(ds)*995/1000)]
	}
	unit, name := durUnit(hi)
	y := p.frame(top, "message latency, send to receipt (lines: median per process and of all; dashes: 99th percentile of all)", max(float64(hi), 1)/unit,
		func(v float64) string { return trimZeros(fmt.Sprintf("%.2f", v)) + name })
	if len(d.Lat) == 0 {
		p.text(left+12, top+panelH/2, "no message received in this run", fontL, false, palette.Note, 'l')
		return
	}
	clip := func(v float64) float64 { return math.Max(y(v), top) }
	yc := func(v float64) float64 { return clip(v) }
	for proc := range d.Names {
		var mine []Sample
		for _, s := range d.Lat {
			if s.Proc == proc {
				mine = append(mine, s)
			}
		}
		p.polyline(p.quantiles(len(mine), func(i int) (int64, int64) { return mine[i].At, mine[i].D }, 0.5, yc, unit), colour(proc), 1, false, "series",
			d.Names[proc]+": median latency of what it received")
	}
	all := func(i int) (int64, int64) { return d.Lat[i].At, d.Lat[i].D }
	p.polyline(p.quantiles(len(d.Lat), all, 0.5, yc, unit), palette.Text, 1.8, false, "series total", "median latency, all messages")
	p.polyline(p.quantiles(len(d.Lat), all, 0.99, yc, unit), palette.Text, 1.2, true, "series total", "99th percentile latency, all messages")
}

// quantiles is the q-quantile of each bin of n samples (at, value),
// sorted by at, as points; a bin with none is a gap (NaN).
func (p *pic) quantiles(n int, at func(int) (int64, int64), q float64, y func(float64) float64, unit float64) []spacetime.Pt {
	nb := int(p.d.Span/p.bin) + 1
	out := make([]spacetime.Pt, nb)
	var vs []int64
	i := 0
	for b := range nb {
		vs = vs[:0]
		for ; i < n; i++ {
			t, v := at(i)
			if int(t/p.bin) != b {
				break
			}
			vs = append(vs, v)
		}
		out[b] = spacetime.Pt{X: p.x(int64(b)*p.bin + p.bin/2), Y: math.NaN()}
		if len(vs) > 0 {
			slices.Sort(vs)
			out[b].Y = y(float64(vs[min(len(vs)-1, int(q*float64(len(vs))))]) / unit)
		}
	}
	return out
}

// legend draws the key under the plots and returns the y below it.
func (p *pic) legend(y float64) float64 {
	x := margin
	item := func(draw func(x float64), label string) {
		w := 24 + spacetime.TextWidth(label, fontS, false)
		if x+w > width-margin {
			x = margin
			y += 16
		}
		draw(x)
		p.text(x+20, y, label, fontS, false, palette.Text, 'l')
		x += w + 12
	}
	p.text(x, y, "key:", fontS, true, palette.Text, 'l')
	x += 28
	item(func(x float64) {
		p.line(spacetime.Pt{X: x, Y: y}, spacetime.Pt{X: x + 16, Y: y}, palette.Text, 1.8, false, "legend", "")
	}, "all processes")
	for i, n := range p.d.Names {
		col := colour(i)
		item(func(x float64) {
			p.line(spacetime.Pt{X: x, Y: y}, spacetime.Pt{X: x + 16, Y: y}, col, 1.2, false, "legend", "")
		}, n)
	}
	if len(p.d.Bands) > 0 {
		item(func(x float64) {
			p.line(spacetime.Pt{X: x + 8, Y: y - 5}, spacetime.Pt{X: x + 8, Y: y + 5}, palette.Partition+"b0", 16, false, "legend", "")
		}, "fault acting")
	}
	if len(p.d.Marks) > 0 {
		item(func(x float64) {
			p.line(spacetime.Pt{X: x + 8, Y: y - 6}, spacetime.Pt{X: x + 8, Y: y + 6}, palette.Finding, 1.2, true, "legend", "")
		}, "finding (dmx check), where it closes")
	}
	return y + 12
}

// niceStep rounds ns up to 1, 2 or 5 times a power of ten (at least 1µs).
func niceStep(ns int64) int64 {
	ns = max(ns, 1000)
	p := int64(1)
	for p*10 <= ns {
		p *= 10
	}
	for _, m := range []int64{1, 2, 5, 10} {
		if m*p >= ns {
			return m * p
		}
	}
	return 10 * p
}

// niceFloat rounds v up to 1, 2 or 5 times a power of ten.
func niceFloat(v float64) float64 {
	if v <= 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// durUnit is the unit durations up to hi are best read in.
func durUnit(hi int64) (float64, string) {
	switch {
	case hi >= int64(time.Second):
		return float64(time.Second), "s"
	case hi >= int64(time.Millisecond):
		return float64(time.Millisecond), "ms"
	case hi >= int64(time.Microsecond):
		return float64(time.Microsecond), "µs"
	}
	return 1, "ns"
}

// trimZeros drops a decimal's trailing zeros: 2.50 is 2.5, 3.00 is 3.
func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

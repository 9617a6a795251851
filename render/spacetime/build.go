package spacetime

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/trace"
)

// Source opens a fresh reader of one run's events. A diagram reads them
// twice: once to find the window, once to keep what is in it. A reader that
// is an io.Closer is closed after use.
type Source func() (trace.Reader, error)

// Diagram is what one window of one run shows, before layout: the lanes,
// the events in the window, and what links them (messages, critical
// sections, reigns, faults, down times, findings), with events named by
// their index in Events and -1 for one outside the window.
type Diagram struct {
	Run  trace.Run
	Axis Axis // what places events along the picture: Lamport (causal) or wall time
	// Win is the axis the window is cut on: Lo..Hi and RunLo..RunHi are on
	// it. A Lamport picture cut by wall time (a window chosen for a run
	// whose wall clock agrees with happens-before) keeps a paused
	// process's events after its pause in the window.
	Win          Axis
	Lo, Hi       int64 // the window on Win
	RunLo, RunHi int64 // the run's extent on Win
	Origin       int64 // the wall time of the run's first event (wall axis 0)
	Total        int64 // events in the run
	Whole        bool  // the window shows every event of the run (background aside)
	// Causal says the run's wall clock agrees with happens-before (every
	// message received after it was sent, in wall time): a Lamport
	// picture then aligns what resumes after a pause or a partition with
	// what the others did meanwhile.
	Causal bool
	// Focus is the finding the window was chosen for (1-based; 0: none).
	Focus int
	// Why says why this window: "finding 1 (split-brain)", "the faults
	// and what followed", "the whole run", "the start of the run", or ""
	// for a window the user gave.
	Why string
	// Rest says what of interest lies outside the window, each with how
	// to draw it ("crash:leader@1.3s at +1.3s: --from 1.2s --to 1.6s").
	Rest []string
	// Hidden counts the background events (heartbeats) of the window not
	// drawn (Options.Heartbeats draws them).
	Hidden    int
	Lanes     []Lane
	Events    []Event
	Msgs      []Msg
	Sections  []Section
	Reigns    []Reign
	Faults    []FaultSpan
	Downs     []Down
	Findings  []Overlay
	Outside   int // findings with no event in the window
	TracePath string

	// The run's message types and resources, all of them (not only the
	// window's), and the types its algorithm declares: they colour the
	// picture by name (render/palette).
	Types, Resources, MsgTypes []string
}

// Lane is one process's line.
type Lane struct {
	Proc int
	Name string // as the run names it: the host of an imported log, else "P2"
	Sub  string // under the name: "P2" when the run names it otherwise
	Role string // at the start: "coordinator", "token holder"; "" if none
}

// Event is one event in the window.
type Event struct {
	trace.Ref
	Kind     trace.Kind
	Key      int64 // position on the picture's axis (Lamport, or ns since Origin)
	Lamport  uint64
	Wall     int64 // ns since Origin
	Lane     int
	Peer     int
	Resource string
	MsgType  string
	Mark     string // a few words drawn beside a marked event ("crash", "leader P2")
	Tip      string // what a tooltip says
	Fault    string // a fault event: its spec and phase, which align it with the others of its kind
}

// Msg is one message with an end in the window. Send or Recv is -1 when
// that end is outside the window (or at a process not shown).
type Msg struct {
	ID       int64
	Type     string
	From, To int
	Send     int
	Recv     int
	Drop     int    // the drop event in the window, or -1
	Fate     string // "delivered", "dropped", "lost_to_crash", "in_flight"
}

// Section is one critical section that overlaps the window.
type Section struct {
	Lane     int
	Resource string
	Request  int // its cs_request in the window, or -1
	Enter    int // -1: entered before the window
	Exit     int // -1: left after the window, or never
	Crashed  bool
}

// Reign is a time a process believed it led (from its leader event naming
// itself to its next decision or its crash) that overlaps the window.
type Reign struct {
	Lane       int
	Start, End int // -1: before the window (drawn from its edge), after it or never
	Crashed    bool
}

// FaultSpan is an injected fault acting at a process (a partition, a
// pause, a delay...) over a stretch that overlaps the window.
type FaultSpan struct {
	Lane       int
	Kind       string // "partition", "pause"
	Spec       string // "partition:0+1:2+3+4@500ms-1.2s"
	Start, End int    // -1: before the window (drawn from its edge), after it or never
}

// Down is a time a process spent crashed.
type Down struct {
	Lane           int
	Crash, Recover int // -1: outside the window (the crash before it, the recovery after it or never)
}

// Overlay is a finding drawn in.
type Overlay struct {
	N       int // 1-based, in the order of Options.Findings
	Check   string
	Message string
	Events  []int      // the finding's events, -1 outside the window
	Parts   []OverPart // its structure, if the check gave one
}

// OverPart is an analyze.Part with its events as indices.
type OverPart struct {
	analyze.Part
	At []int
	// Side says where each event outside the window is: -1 before it, 1
	// after it, 0 in it (or at a process not shown), so that a section or
	// a reign that spans the whole window is drawn across it.
	Side []int
}

const outside = -1

// Build reads the run's events from src and returns the diagram of the
// window opts describe. A window holding more than opts.MaxEvents events is
// a *TooBigError.
func Build(run trace.Run, src Source, opts Options) (*Diagram, error) {
	sc, err := scan(src, &opts)
	if err != nil {
		return nil, err
	}
	d := &Diagram{Run: run, Axis: opts.axis(), Total: sc.total, Origin: sc.wallLo, MsgTypes: opts.MsgTypes,
		Causal: sc.causal(), TracePath: opts.Trace}
	for t := range sc.types {
		d.Types = append(d.Types, t)
	}
	for r := range sc.resources {
		d.Resources = append(d.Resources, r)
	}
	slices.Sort(d.Types)
	slices.Sort(d.Resources)
	d.Win = d.Axis
	if d.Axis == Lamport && (opts.WallWindow || (opts.auto() && d.Causal)) {
		d.Win = Wall
	}
	if d.Win == Wall {
		d.RunLo, d.RunHi = 0, sc.wallHi-sc.wallLo
	} else {
		d.RunLo, d.RunHi = int64(sc.lamLo), int64(sc.lamHi)
	}
	if sc.total == 0 {
		d.RunLo, d.RunHi = 0, 0
	}
	if err := d.window(sc, &opts); err != nil {
		return nil, err
	}
	b := newBuilder(d, &opts, sc)
	if err := b.read(src); err != nil {
		return nil, err
	}
	if b.count > opts.maxEvents() {
		return nil, &TooBigError{Events: b.count, Max: opts.maxEvents(), Axis: d.Win, Lo: d.Lo, Hi: d.Hi, RunLo: d.RunLo, RunHi: d.RunHi}
	}
	b.finish()
	return d, nil
}

// scanned is what the first pass learns.
type scanned struct {
	total          int64
	lamLo, lamHi   uint64
	wallLo, wallHi int64
	procs          int
	refs           map[trace.Ref]point // the events the window is defined by
	first          []int64             // Lamport and wall of the first opts.First events (pairs)
	types          map[string]bool     // message types
	resources      map[string]bool

	// For a window chosen (Options.Auto): where the drawn events are, and
	// the faults.
	pts    []point // every event but background and local ones
	faults []faultPt

	// Whether wall time agrees with happens-before: the wall time of each
	// message's send and receipt, compared when both are seen.
	sendWall, recvWall map[int64]int64
	backwards          int
}

type point struct {
	lamport uint64
	wall    int64
}

// faultPt is a fault event (or a crash or recovery) as the scan saw it.
type faultPt struct {
	point
	ref  trace.Ref
	what string // "crash:leader@600ms", "partition:0+1:2+3+4@500ms-1.2s"
	kind string // "crash", "recover", "partition", "pause"...
	end  bool   // the fault stops acting here (recover, phase end)
}

// causal says the run's wall clock agrees with happens-before, and tells
// its events apart at all (an imported log may have no wall times).
func (sc *scanned) causal() bool { return sc.backwards == 0 && sc.wallHi > sc.wallLo }

func each(src Source, fn func(ev *trace.Event) error) error {
	r, err := src()
	if err != nil {
		return err
	}
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}

// hidden says whether ev is background traffic not drawn unless asked
// (Options.Heartbeats).
func hidden(ev *trace.Event, opts *Options) bool {
	return !opts.Heartbeats && ev.MsgType != "" && background(ev.MsgType) &&
		(ev.Kind == trace.KindSend || ev.Kind == trace.KindReceive || ev.Kind == trace.KindDrop)
}

// scan is the first pass: the run's extent, and where the events that
// define the window are.
func scan(src Source, opts *Options) (*scanned, error) {
	sc := &scanned{lamLo: math.MaxUint64, wallLo: math.MaxInt64, wallHi: math.MinInt64, refs: make(map[trace.Ref]point),
		types: make(map[string]bool), resources: make(map[string]bool),
		sendWall: make(map[int64]int64), recvWall: make(map[int64]int64)}
	if opts.Around != nil {
		sc.refs[*opts.Around] = point{}
	}
	if opts.Finding > 0 && opts.Finding > len(opts.Findings) {
		return nil, fmt.Errorf("no finding %d: the checks found %d", opts.Finding, len(opts.Findings))
	}
	for _, f := range opts.Findings {
		for _, r := range f.Events {
			sc.refs[r] = point{}
		}
	}
	found := make(map[trace.Ref]bool)
	auto := opts.auto()
	err := each(src, func(ev *trace.Event) error {
		sc.total++
		sc.lamLo, sc.lamHi = min(sc.lamLo, ev.Lamport), max(sc.lamHi, ev.Lamport)
		sc.wallLo, sc.wallHi = min(sc.wallLo, ev.Wall), max(sc.wallHi, ev.Wall)
		sc.procs = max(sc.procs, ev.Proc+1)
		if ev.MsgType != "" && !sc.types[ev.MsgType] {
			sc.types[ev.MsgType] = true
		}
		if (ev.Kind == trace.KindCSEnter || ev.Kind == trace.KindCSRequest) && ev.Resource != "" && !sc.resources[ev.Resource] {
			sc.resources[ev.Resource] = true
		}
		switch ev.Kind {
		case trace.KindSend:
			if w, ok := sc.recvWall[ev.Msg]; ok && w < ev.Wall {
				sc.backwards++
			}
			sc.sendWall[ev.Msg] = ev.Wall
		case trace.KindReceive:
			if w, ok := sc.sendWall[ev.Msg]; ok && w > ev.Wall {
				sc.backwards++
			}
			sc.recvWall[ev.Msg] = ev.Wall
		}
		if _, ok := sc.refs[ev.Ref()]; ok {
			sc.refs[ev.Ref()] = point{ev.Lamport, ev.Wall}
			found[ev.Ref()] = true
		}
		if len(sc.first) < 2*opts.First {
			sc.first = append(sc.first, int64(ev.Lamport), ev.Wall)
		}
		if auto && !hidden(ev, opts) && !minor(ev.Kind) {
			// Local events are left out of the budget: runs of them
			// are drawn as one.
			sc.pts = append(sc.pts, point{ev.Lamport, ev.Wall})
			if f, ok := faultOf(ev); ok {
				sc.faults = append(sc.faults, f)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sc.sendWall, sc.recvWall = nil, nil
	if sc.total == 0 {
		sc.lamLo, sc.wallLo, sc.wallHi = 0, 0, 0
	}
	if opts.Around != nil && !found[*opts.Around] {
		return nil, fmt.Errorf("no event %v in the run", *opts.Around)
	}
	return sc, nil
}

// faultOf reads a fault, crash or recovery event.
func faultOf(ev *trace.Event) (faultPt, bool) {
	f := faultPt{point: point{ev.Lamport, ev.Wall}, ref: ev.Ref()}
	switch ev.Kind {
	case trace.KindCrash:
		f.kind, f.what = "crash", fmt.Sprintf("P%d crashes", ev.Proc)
		if c, err := ev.Crash(); err == nil && c.Fault != "" {
			f.what = c.Fault
		}
	case trace.KindRecover:
		f.kind, f.what, f.end = "recover", fmt.Sprintf("P%d recovers", ev.Proc), true
		if c, err := ev.Crash(); err == nil && c.Fault != "" {
			f.what = c.Fault
		}
	case trace.KindFault:
		d, err := ev.Fault()
		if err != nil || d.Phase == trace.FaultNotApplied {
			return f, false
		}
		f.what, f.kind, f.end = d.Fault, faultKind(d.Fault), d.Phase == trace.FaultEnd
	default:
		return f, false
	}
	return f, true
}

// faultKind is the kind of a fault spec: "partition" of
// "partition:0+1:2@1s-2s".
func faultKind(spec string) string {
	kind, _, _ := strings.Cut(spec, ":")
	kind, _, _ = strings.Cut(kind, "@")
	return kind
}

// window sets the diagram's window from the options and the scan.
func (d *Diagram) window(sc *scanned, opts *Options) error {
	key := func(p point) int64 {
		if d.Win == Wall {
			return p.wall - sc.wallLo
		}
		return int64(p.lamport)
	}
	radius := opts.Radius
	if radius <= 0 {
		radius = defaultRadius
		if d.Win == Wall {
			radius = max(1, (d.RunHi-d.RunLo)/20)
		}
	}
	d.Lo, d.Hi = d.RunLo, d.RunHi
	switch {
	case opts.Around != nil:
		k := key(sc.refs[*opts.Around])
		d.Lo, d.Hi = k-radius, k+radius
	case opts.Finding > 0 && !opts.auto():
		d.Focus = opts.Finding
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, r := range opts.Findings[opts.Finding-1].Events {
			if p, ok := sc.refs[r]; ok && (p != point{}) {
				lo, hi = min(lo, key(p)), max(hi, key(p))
			}
		}
		if lo > hi {
			return fmt.Errorf("finding %d names no event of the run", opts.Finding)
		}
		d.Lo, d.Hi = lo-radius, hi+radius
	case opts.auto():
		if err := d.choose(sc, opts, key); err != nil {
			return err
		}
	case opts.First > 0 && !opts.HasFrom && !opts.HasTo:
		hi := int64(math.MinInt64)
		for i := 0; i < len(sc.first); i += 2 {
			hi = max(hi, key(point{uint64(sc.first[i]), sc.first[i+1]}))
		}
		if hi > math.MinInt64 {
			d.Hi = hi
		}
	}
	if opts.HasFrom {
		d.Lo = opts.From
	}
	if opts.HasTo {
		d.Hi = opts.To
	}
	d.Lo, d.Hi = max(d.Lo, d.RunLo), min(d.Hi, d.RunHi)
	if d.Lo > d.Hi {
		what := "Lamport"
		if d.Win == Wall {
			what = "wall time"
		}
		return fmt.Errorf("the window is empty: the run spans %s %s", what, d.span(d.RunLo, d.RunHi))
	}
	d.Whole = d.Lo <= d.RunLo && d.Hi >= d.RunHi && len(opts.Procs) == 0
	return nil
}

// choose picks the window of a picture nobody gave one for (Options.Auto),
// by what matters: the window of the first finding (or of
// Options.Finding); with none, of the run's faults (each crash, pause and
// partition with what followed it); else the whole run if it holds no
// more than the budget of events; else its start. Background events
// (heartbeats) do not count. A finding or fault too long for the budget is
// drawn where it closes (the last of its events, the overlap or the cycle
// complete), what began before drawn from the window's edge; the rest is
// listed in d.Rest with how to draw it.
func (d *Diagram) choose(sc *scanned, opts *Options, key func(point) int64) error {
	budget := opts.Auto
	keys := make([]int64, len(sc.pts))
	for i, p := range sc.pts {
		keys[i] = key(p)
	}
	slices.Sort(keys)
	n := len(keys)
	if n == 0 {
		d.Why = "the whole run"
		return nil
	}
	margin := max(budget/8, 1)
	at := func(k int64) int { // the index of the first event at k or after
		i, _ := slices.BinarySearch(keys, k)
		return min(i, n-1)
	}
	last := func(k int64) int { // the index of the last event at k or before
		i, found := slices.BinarySearch(keys, k+1)
		if !found && i > 0 {
			i--
		}
		for i > 0 && keys[i] > k {
			i--
		}
		return i
	}
	set := func(i0, i1 int) {
		if i1 > n-1 { // at the run's end: the budget's worth before it
			i0 -= i1 - (n - 1)
		}
		i0, i1 = max(i0, 0), min(i1, n-1)
		d.Lo, d.Hi = keys[i0], keys[i1]
	}
	if n <= budget {
		// A short run reads whole, its findings and faults in it.
		d.Why = "the whole run"
		if len(opts.Findings) > 0 {
			d.Focus = max(opts.Finding, 1)
		}
		return nil
	}
	// fit draws events i0..i1 with a margin before and what followed
	// after, or, too long, the budget's worth ending where they close.
	fit := func(i0, i1 int) bool {
		if i1-i0+margin <= budget {
			lo := max(i0-margin, 0)
			set(lo, lo+budget)
			return true
		}
		hi := min(i1+margin, n-1)
		set(hi-budget, hi)
		return false
	}
	focus := opts.Finding
	if focus == 0 && len(opts.Findings) > 0 {
		focus = 1
	}
	if focus > 0 {
		f := opts.Findings[focus-1]
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, r := range f.Events {
			if p, ok := sc.refs[r]; ok && (p != point{}) {
				lo, hi = min(lo, key(p)), max(hi, key(p))
			}
		}
		if lo > hi {
			return fmt.Errorf("finding %d names no event of the run", focus)
		}
		d.Focus = focus
		d.Why = fmt.Sprintf("finding %d (%s)", focus, f.Check)
		if !fit(at(lo), last(hi)) {
			d.Why += ", where it closes"
		}
		return nil
	}
	if len(sc.faults) > 0 {
		fs := slices.Clone(sc.faults)
		slices.SortStableFunc(fs, func(a, b faultPt) int { return cmp.Compare(key(a.point), key(b.point)) })
		i0 := at(key(fs[0].point))
		// As many faults as fit, each with what followed it: a third of
		// the budget after the last one.
		upto := 0
		for j := range fs {
			if last(key(fs[j].point))-i0+margin+budget/3 <= budget {
				upto = j
			}
		}
		set(i0-margin, i0-margin+budget)
		names := faultNames(fs[:upto+1])
		d.Why = "the faults (" + names + ") and what followed"
		if upto < len(fs)-1 {
			d.Why = "the first faults (" + names + ") and what followed"
			seen := map[string]bool{}
			for _, f := range fs[upto+1:] {
				if seen[f.what] || f.end || key(f.point) <= d.Hi {
					continue
				}
				seen[f.what] = true
				j := at(key(f.point))
				lo, hi := keys[max(j-margin, 0)], keys[min(j-margin+budget, n-1)]
				d.Rest = append(d.Rest, fmt.Sprintf("%s at %s: %s", f.what, d.at(key(f.point)), d.bounds(lo, hi)))
			}
		}
		return nil
	}
	d.Why = "the start of the run"
	set(0, budget)
	return nil
}

// faultNames lists the faults that start in fs, once each.
func faultNames(fs []faultPt) string {
	var names []string
	for _, f := range fs {
		if !f.end && !slices.Contains(names, f.what) {
			names = append(names, f.what)
		}
	}
	if len(names) == 0 {
		return "recoveries"
	}
	return strings.Join(names, ", ")
}

// at names a point of the window axis: "+600ms", "Lamport 247".
func (d *Diagram) at(k int64) string {
	if d.Win == Wall {
		return "+" + FormatDur(k)
	}
	return fmt.Sprintf("Lamport %d", k)
}

// bounds is the --from/--to of dmx render that draws lo..hi on the window
// axis.
func (d *Diagram) bounds(lo, hi int64) string {
	if d.Win == Wall {
		return fmt.Sprintf("--from %s --to %s", flagDur(lo), flagDur(hi))
	}
	return fmt.Sprintf("--from %d --to %d", lo, hi)
}

// flagDur writes ns as a duration --from reads back, rounded to what
// matters at its size (1.28s, 520.99ms, 294.7µs).
func flagDur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		d = d.Round(10 * time.Millisecond)
	case d >= 10*time.Millisecond:
		d = d.Round(10 * time.Microsecond)
	case d >= time.Microsecond:
		d = d.Round(100 * time.Nanosecond)
	}
	return d.String()
}

// builder is the second pass.
type builder struct {
	d      *Diagram
	opts   *Options
	count  int
	lane   map[int]int // proc -> lane
	open   map[csKey]*openCS
	reign  map[int]*openSpan // proc -> its reign while it leads
	fault  map[faultKey]*openSpan
	down   map[int]int // proc -> its crash's index in Downs while down
	sends  map[int64]int
	recvs  []recv
	later  map[int64]bool // messages received outside the window
	drops  map[int64]int  // drop events: index in the window, or outside
	refIdx map[trace.Ref]int
	side   map[trace.Ref]int // the findings' events outside the window: before (-1) or after it (1)
}

type csKey struct {
	proc int
	res  string
}

type openCS struct {
	enterKey int64
	enter    int // index, or outside
	request  int // index of the pending request, or outside
}

// openSpan is a reign or a fault begun and not ended yet.
type openSpan struct {
	key   int64 // where it began, on the window axis
	start int   // index, or outside
}

type faultKey struct {
	proc int
	spec string
}

type recv struct {
	id  int64
	idx int
}

func newBuilder(d *Diagram, opts *Options, sc *scanned) *builder {
	b := &builder{d: d, opts: opts, lane: make(map[int]int), open: make(map[csKey]*openCS), down: make(map[int]int),
		reign: make(map[int]*openSpan), fault: make(map[faultKey]*openSpan),
		sends: make(map[int64]int), later: make(map[int64]bool), drops: make(map[int64]int), refIdx: make(map[trace.Ref]int),
		side: make(map[trace.Ref]int)}
	n := max(d.Run.Nodes, sc.procs)
	procs := opts.Procs
	if len(procs) == 0 {
		for p := range n {
			procs = append(procs, p)
		}
	}
	for _, p := range procs {
		ln := Lane{Proc: p, Name: fmt.Sprintf("P%d", p), Role: opts.Roles[p]}
		if p < len(d.Run.Names) && d.Run.Names[p] != "" {
			// The run's own name for the process (an imported log's
			// host), with dmx's number under it.
			ln.Name, ln.Sub = d.Run.Names[p], ln.Name
		}
		b.lane[p] = len(d.Lanes)
		d.Lanes = append(d.Lanes, ln)
	}
	for _, f := range opts.Findings {
		for _, r := range f.Events {
			b.refIdx[r] = outside
		}
		for _, p := range f.Parts {
			for _, r := range p.Events {
				b.refIdx[r] = outside
			}
		}
	}
	return b
}

// key is ev's place on the window axis.
func (b *builder) key(ev *trace.Event) int64 {
	if b.d.Win == Wall {
		return ev.Wall - b.d.Origin
	}
	return int64(ev.Lamport)
}

func (b *builder) read(src Source) error {
	return each(src, b.event)
}

func (b *builder) event(ev *trace.Event) error {
	d := b.d
	k := b.key(ev)
	ln, shown := b.lane[ev.Proc]
	in := shown && k >= d.Lo && k <= d.Hi
	if _, named := b.refIdx[ev.Ref()]; named && !in {
		b.side[ev.Ref()] = cmp.Compare(k, d.Lo)
		if k >= d.Lo {
			b.side[ev.Ref()] = cmp.Compare(k, d.Hi)
		}
	}
	if in && hidden(ev, b.opts) {
		if _, named := b.refIdx[ev.Ref()]; !named {
			d.Hidden++
			return nil
		}
	}
	if in {
		b.count++
	}
	keep := in && b.count <= b.opts.maxEvents()
	idx := outside
	if keep {
		idx = len(d.Events)
		d.Events = append(d.Events, b.describe(ev, ln))
		if _, ok := b.refIdx[ev.Ref()]; ok {
			b.refIdx[ev.Ref()] = idx
		}
	}
	switch ev.Kind {
	case trace.KindSend:
		if keep {
			b.sends[ev.Msg] = idx
		}
	case trace.KindReceive:
		if keep {
			b.recvs = append(b.recvs, recv{ev.Msg, idx})
		} else if k >= d.Lo || !shown {
			b.later[ev.Msg] = true
		}
	case trace.KindDrop:
		if _, seen := b.drops[ev.Msg]; !seen || keep {
			b.drops[ev.Msg] = idx
		}
	}
	if !shown {
		return nil
	}
	switch ev.Kind {
	case trace.KindCSRequest:
		c := b.cs(ev.Proc, ev.Resource)
		c.request = idx
	case trace.KindCSEnter:
		c := b.cs(ev.Proc, ev.Resource)
		c.enterKey, c.enter = k, idx
	case trace.KindCSExit:
		b.closeCS(csKey{ev.Proc, ev.Resource}, k, idx, false)
	case trace.KindLeader:
		l, _ := ev.Leader()
		switch r := b.reign[ev.Proc]; {
		case l.Leader == ev.Proc && r == nil:
			b.reign[ev.Proc] = &openSpan{key: k, start: idx}
		case l.Leader != ev.Proc && r != nil:
			b.closeReign(ev.Proc, k, idx, false)
		}
	case trace.KindFault:
		f, err := ev.Fault()
		if err != nil || f.Phase == trace.FaultNotApplied {
			break
		}
		fk := faultKey{ev.Proc, f.Fault}
		if f.Phase == trace.FaultStart {
			b.fault[fk] = &openSpan{key: k, start: idx}
		} else if o := b.fault[fk]; o != nil {
			delete(b.fault, fk)
			if o.key <= d.Hi && k >= d.Lo {
				d.Faults = append(d.Faults, FaultSpan{Lane: ln, Kind: faultKind(f.Fault), Spec: f.Fault, Start: o.start, End: idx})
			}
		}
	case trace.KindCrash:
		for _, ck := range b.openKeys() {
			if ck.proc == ev.Proc {
				b.closeCS(ck, k, idx, true)
			}
		}
		if b.reign[ev.Proc] != nil {
			b.closeReign(ev.Proc, k, idx, true)
		}
		if k <= d.Hi {
			b.down[ev.Proc] = len(d.Downs)
			d.Downs = append(d.Downs, Down{Lane: ln, Crash: idx, Recover: outside})
		}
	case trace.KindRecover:
		if i, ok := b.down[ev.Proc]; ok {
			delete(b.down, ev.Proc)
			if k < d.Lo {
				d.Downs = slices.Delete(d.Downs, i, i+1)
				for p, j := range b.down {
					if j > i {
						b.down[p] = j - 1
					}
				}
			} else {
				d.Downs[i].Recover = idx
			}
		}
	}
	return nil
}

// closeReign ends proc's reign at key (a decision for another, or its
// crash), adding it to the diagram if it overlaps the window.
func (b *builder) closeReign(proc int, key int64, end int, crashed bool) {
	r := b.reign[proc]
	delete(b.reign, proc)
	if r.key <= b.d.Hi && key >= b.d.Lo {
		b.d.Reigns = append(b.d.Reigns, Reign{Lane: b.lane[proc], Start: r.start, End: end, Crashed: crashed})
	}
}

// cs returns the open-or-pending state of proc on res, creating it.
func (b *builder) cs(proc int, res string) *openCS {
	k := csKey{proc, res}
	c := b.open[k]
	if c == nil {
		c = &openCS{enterKey: math.MaxInt64, enter: outside, request: outside}
		b.open[k] = c
	}
	return c
}

// openKeys returns the keys of b.open in order, so that sections are
// drawn in the same order every time.
func (b *builder) openKeys() []csKey {
	keys := make([]csKey, 0, len(b.open))
	for k := range b.open {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, c csKey) int { return cmp.Or(cmp.Compare(a.proc, c.proc), strings.Compare(a.res, c.res)) })
	return keys
}

// closeCS ends the section open on k at key (exit or crash), adding it to
// the diagram if it overlaps the window.
func (b *builder) closeCS(k csKey, key int64, exit int, crashed bool) {
	c := b.open[k]
	if c == nil || c.enterKey == math.MaxInt64 {
		if crashed {
			delete(b.open, k)
		}
		return
	}
	delete(b.open, k)
	if c.enterKey <= b.d.Hi && key >= b.d.Lo {
		b.d.Sections = append(b.d.Sections, Section{Lane: b.lane[k.proc], Resource: k.res, Request: c.request,
			Enter: c.enter, Exit: exit, Crashed: crashed})
	}
}

// finish pairs messages, adds the sections still open, and resolves the
// findings.
func (b *builder) finish() {
	d := b.d
	for _, k := range b.openKeys() {
		c := b.open[k]
		if c.enterKey != math.MaxInt64 && c.enterKey <= d.Hi {
			d.Sections = append(d.Sections, Section{Lane: b.lane[k.proc], Resource: k.res, Request: c.request,
				Enter: c.enter, Exit: outside})
		} else if c.request != outside {
			// requested in the window and never entered in it: the wait
			// still shows, as a section with neither end.
			d.Sections = append(d.Sections, Section{Lane: b.lane[k.proc], Resource: k.res, Request: c.request,
				Enter: outside, Exit: outside})
		}
	}
	for _, p := range slices.Sorted(maps.Keys(b.reign)) {
		if r := b.reign[p]; r.key <= d.Hi {
			d.Reigns = append(d.Reigns, Reign{Lane: b.lane[p], Start: r.start, End: outside})
		}
	}
	fks := slices.SortedFunc(maps.Keys(b.fault), func(a, c faultKey) int { return cmp.Or(cmp.Compare(a.proc, c.proc), strings.Compare(a.spec, c.spec)) })
	for _, fk := range fks {
		if o := b.fault[fk]; o.key <= d.Hi {
			d.Faults = append(d.Faults, FaultSpan{Lane: b.lane[fk.proc], Kind: faultKind(fk.spec), Spec: fk.spec, Start: o.start, End: outside})
		}
	}
	// Messages: a send in the window pairs with its receives in it; a
	// receive whose send is not in it comes from outside.
	paired := make(map[int64]bool)
	for _, r := range b.recvs {
		ev := &d.Events[r.idx]
		m := Msg{ID: r.id, Type: ev.MsgType, From: ev.Peer, To: ev.Proc, Send: outside, Recv: r.idx, Drop: outside, Fate: "delivered"}
		if s, ok := b.sends[r.id]; ok {
			m.Send = s
			paired[r.id] = true
		}
		d.Msgs = append(d.Msgs, m)
	}
	for id, s := range b.sends {
		if paired[id] {
			continue
		}
		ev := &d.Events[s]
		m := Msg{ID: id, Type: ev.MsgType, From: ev.Proc, To: ev.Peer, Send: s, Recv: outside, Drop: outside, Fate: "delivered"}
		switch di, dropped := b.drops[id]; {
		case dropped:
			m.Fate, m.Drop = "dropped", di
		case b.later[id]:
		case b.opts.Fates[id] != "":
			m.Fate = b.opts.Fates[id]
		default:
			m.Fate = "in_flight"
		}
		d.Msgs = append(d.Msgs, m)
	}
	slices.SortFunc(d.Msgs, func(a, c Msg) int {
		return cmp.Or(cmp.Compare(first(a), first(c)), cmp.Compare(a.ID, c.ID), cmp.Compare(a.Recv, c.Recv))
	})
	// Findings.
	for i, f := range b.opts.Findings {
		o := Overlay{N: i + 1, Check: f.Check, Message: f.Message}
		any := false
		at := func(r trace.Ref) int {
			j := b.refIdx[r]
			if j != outside {
				any = true
			}
			return j
		}
		for _, r := range f.Events {
			o.Events = append(o.Events, at(r))
		}
		for _, p := range f.Parts {
			op := OverPart{Part: p}
			for _, r := range p.Events {
				op.At = append(op.At, at(r))
				op.Side = append(op.Side, b.side[r])
			}
			// A section or reign across the whole window shows in it.
			if (p.Role == analyze.RoleSection || p.Role == analyze.RoleReign) && len(op.At) > 0 && op.Side[0] < 0 &&
				(len(op.At) == 1 || op.Side[1] > 0) {
				if _, ok := b.lane[p.Events[0].Proc]; ok {
					any = true
				}
			}
			o.Parts = append(o.Parts, op)
		}
		if !any {
			d.Outside++
			continue
		}
		d.Findings = append(d.Findings, o)
	}
}

// first is the index of a message's first end in the window, for a stable
// order.
func first(m Msg) int {
	if m.Send != outside {
		return m.Send
	}
	return m.Recv
}

// describe makes the window's record of ev.
func (b *builder) describe(ev *trace.Event, lane int) Event {
	e := Event{Ref: ev.Ref(), Kind: ev.Kind, Lamport: ev.Lamport, Wall: ev.Wall - b.d.Origin, Lane: lane, Peer: ev.Peer,
		Resource: ev.Resource, MsgType: ev.MsgType}
	e.Key = int64(ev.Lamport)
	if b.d.Axis == Wall {
		e.Key = e.Wall
	}
	var what string
	e.Mark, what = Describe(ev)
	e.Tip = fmt.Sprintf("%v %s; Lamport %d, +%s", ev.Ref(), what, ev.Lamport, FormatDur(e.Wall))
	if ev.Kind == trace.KindFault {
		if f, err := ev.Fault(); err == nil {
			e.Fault = f.Fault + " " + f.Phase
		}
	}
	return e
}

// Describe says what ev is in a few words ("send request to P1", "crash:
// killed", "decides: leader P2 (term 3)"), and for the events a diagram
// marks with words beside them (crashes, recoveries, elections, leaders,
// suspicions), those words ("crash", "leader P2"); mark is "" for the
// others. The diagrams and dmx serve's page say the same.
func Describe(ev *trace.Event) (mark, what string) {
	switch ev.Kind {
	case trace.KindSend:
		what = fmt.Sprintf("send %s to P%d", ev.MsgType, ev.Peer)
	case trace.KindReceive:
		what = fmt.Sprintf("receive %s from P%d", ev.MsgType, ev.Peer)
	case trace.KindDrop:
		what = fmt.Sprintf("drop %s (P%d)", ev.MsgType, ev.Peer)
		if d, err := ev.Drop(); err == nil && d.Fault != "" {
			what += " by " + d.Fault
			if d.Resend {
				what += ", sent again"
			}
		}
	case trace.KindFault:
		// An injected fault begins, ends, or could not be applied: marked
		// by its kind ("partition", "pause ends"), the whole of it in the
		// tip.
		f, _ := ev.Fault()
		kind, _, _ := strings.Cut(f.Fault, ":")
		kind, _, _ = strings.Cut(kind, "@")
		switch f.Phase {
		case trace.FaultStart:
			mark = kind
		case trace.FaultEnd:
			mark = kind + " ends"
		default:
			mark = kind + " " + f.Phase
		}
		what = "fault " + f.Fault + ": " + f.Phase
		if f.Reason != "" {
			what += ": " + f.Reason
		}
	case trace.KindCSRequest, trace.KindCSEnter, trace.KindCSExit:
		what = fmt.Sprintf("%s(%s)", ev.Kind, ev.Resource)
	case trace.KindCrash:
		mark = "crash"
		what = "crash"
		if c, err := ev.Crash(); err == nil {
			// The fault, then how the process ended (killed by SIGKILL,
			// stopped by the simulator).
			if c.Fault != "" {
				what += " by fault " + c.Fault
			}
			if c.Reason != "" {
				what += ": " + c.Reason
			}
		}
	case trace.KindRecover:
		mark, what = "recover", "recover"
	case trace.KindLeader:
		l, _ := ev.Leader()
		switch {
		case l.Leader == ev.Proc:
			mark = "leads"
		case l.Leader < 0:
			mark = "no leader"
		default:
			mark = fmt.Sprintf("leader P%d", l.Leader)
		}
		what = "decides: " + mark
		if l.Term > 0 {
			what += fmt.Sprintf(" (term %d)", l.Term)
		}
	case trace.KindElectionStart:
		mark, what = "election", "starts an election"
		if s, err := ev.ElectionStart(); err == nil && s.Term > 0 {
			what += fmt.Sprintf(" (term %d)", s.Term)
		}
	case trace.KindSuspect:
		mark = fmt.Sprintf("suspects P%d", ev.Peer)
		what = mark
	case trace.KindTrust:
		mark = fmt.Sprintf("trusts P%d", ev.Peer)
		what = mark
	case trace.KindDeliver:
		what = "deliver"
		if m, err := ev.Delivery(); err == nil {
			what = fmt.Sprintf("deliver P%d's multicast (stamp %d, id %d)", m.From, m.Stamp, m.ID)
		}
	case trace.KindTimeout:
		what = "timeout"
		if t, err := ev.Timeout(); err == nil && t.Timer != "" {
			what += " " + t.Timer
		}
	case trace.KindWait:
		w, _ := ev.Wait()
		what = fmt.Sprintf("waits for %v", w.WaitingFor)
		if ev.Resource != "" {
			what += " on " + ev.Resource
		}
	default:
		what = string(ev.Kind)
		if len(ev.Detail) > 0 {
			what += " " + truncate(string(ev.Detail), 80)
		}
	}
	return mark, what
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Window says what part of the run the diagram shows: "Lamport 40..100",
// "wall time +1.2ms..+5ms", "all".
func (d *Diagram) Window() string {
	if d.Whole {
		return "all"
	}
	if d.Win == Wall {
		return "wall time " + d.span(d.Lo, d.Hi)
	}
	return "Lamport " + d.span(d.Lo, d.Hi)
}

// Bounds are the flags of dmx render that draw this window again
// ("--from 480ms --to 1.15s").
func (d *Diagram) Bounds() string { return d.bounds(d.Lo, d.Hi) }

// span formats a range on the window's axis.
func (d *Diagram) span(lo, hi int64) string {
	if d.Win == Wall {
		return fmt.Sprintf("+%v..+%v", FormatDur(lo), FormatDur(hi))
	}
	return fmt.Sprintf("%d..%d", lo, hi)
}

package spacetime

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/trace"
)

// Source opens a fresh reader of one run's events. A diagram reads them
// twice: once to find the window, once to keep what is in it. A reader that
// is an io.Closer is closed after use.
type Source func() (trace.Reader, error)

// Diagram is what one window of one run shows, before layout: the lanes,
// the events in the window, and what links them (messages, critical
// sections, down times, findings), with events named by their index in
// Events and -1 for one outside the window.
type Diagram struct {
	Run          trace.Run
	Axis         Axis
	Lo, Hi       int64 // the window on the axis
	RunLo, RunHi int64 // the run's extent on the axis
	Origin       int64 // Wall: the wall time of axis 0 (the run's first event)
	Total        int64 // events in the run
	Whole        bool  // the window shows every event of the run
	Lanes        []Lane
	Events       []Event
	Msgs         []Msg
	Sections     []Section
	Downs        []Down
	Findings     []Overlay
	Outside      int // findings with no event in the window

	// The run's message types and resources, all of them (not only the
	// window's), and the types its algorithm declares: they colour the
	// picture by name (render/palette).
	Types, Resources, MsgTypes []string
}

// Lane is one process's line.
type Lane struct {
	Proc int
	Name string // "P2", or the imported name
	Role string // at the start: "coordinator", "token holder"; "" if none
}

// Event is one event in the window.
type Event struct {
	trace.Ref
	Kind     trace.Kind
	Key      int64 // position on the axis
	Lamport  uint64
	Wall     int64
	Lane     int
	Peer     int
	Resource string
	MsgType  string
	Mark     string // a few words drawn beside a marked event ("crash", "leader P2")
	Tip      string // what a tooltip says
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
	d := &Diagram{Run: run, Axis: opts.axis(), Total: sc.total, Origin: sc.wallLo, MsgTypes: opts.MsgTypes}
	for t := range sc.types {
		d.Types = append(d.Types, t)
	}
	for r := range sc.resources {
		d.Resources = append(d.Resources, r)
	}
	slices.Sort(d.Types)
	slices.Sort(d.Resources)
	if d.Axis == Wall {
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
		return nil, &TooBigError{Events: b.count, Max: opts.maxEvents(), Axis: d.Axis, Lo: d.Lo, Hi: d.Hi, RunLo: d.RunLo, RunHi: d.RunHi}
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
}

type point struct {
	lamport uint64
	wall    int64
}

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

// scan is the first pass: the run's extent, and where the events that
// define the window are.
func scan(src Source, opts *Options) (*scanned, error) {
	sc := &scanned{lamLo: math.MaxUint64, wallLo: math.MaxInt64, wallHi: math.MinInt64, refs: make(map[trace.Ref]point),
		types: make(map[string]bool), resources: make(map[string]bool)}
	if opts.Around != nil {
		sc.refs[*opts.Around] = point{}
	}
	if opts.Finding > 0 {
		if opts.Finding > len(opts.Findings) {
			return nil, fmt.Errorf("no finding %d: the checks found %d", opts.Finding, len(opts.Findings))
		}
		for _, r := range opts.Findings[opts.Finding-1].Events {
			sc.refs[r] = point{}
		}
	}
	found := make(map[trace.Ref]bool)
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
		if _, ok := sc.refs[ev.Ref()]; ok {
			sc.refs[ev.Ref()] = point{ev.Lamport, ev.Wall}
			found[ev.Ref()] = true
		}
		if len(sc.first) < 2*opts.First {
			sc.first = append(sc.first, int64(ev.Lamport), ev.Wall)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if sc.total == 0 {
		sc.lamLo, sc.wallLo, sc.wallHi = 0, 0, 0
	}
	if opts.Around != nil && !found[*opts.Around] {
		return nil, fmt.Errorf("no event %v in the run", *opts.Around)
	}
	return sc, nil
}

// window sets the diagram's window from the options and the scan.
func (d *Diagram) window(sc *scanned, opts *Options) error {
	key := func(p point) int64 {
		if d.Axis == Wall {
			return p.wall - sc.wallLo
		}
		return int64(p.lamport)
	}
	radius := opts.Radius
	if radius <= 0 {
		radius = defaultRadius
		if d.Axis == Wall {
			radius = max(1, (d.RunHi-d.RunLo)/20)
		}
	}
	d.Lo, d.Hi = d.RunLo, d.RunHi
	switch {
	case opts.Around != nil:
		k := key(sc.refs[*opts.Around])
		d.Lo, d.Hi = k-radius, k+radius
	case opts.Finding > 0:
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
		if d.Axis == Wall {
			what = "wall time"
		}
		return fmt.Errorf("the window is empty: the run spans %s %s", what, d.span(d.RunLo, d.RunHi))
	}
	d.Whole = d.Lo <= d.RunLo && d.Hi >= d.RunHi && len(opts.Procs) == 0
	return nil
}

// builder is the second pass.
type builder struct {
	d      *Diagram
	opts   *Options
	count  int
	lane   map[int]int // proc -> lane
	open   map[csKey]*openCS
	down   map[int]int // proc -> its crash's index in Downs while down
	sends  map[int64]int
	recvs  []recv
	later  map[int64]bool // messages received outside the window
	drops  map[int64]int  // drop events: index in the window, or outside
	refIdx map[trace.Ref]int
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

type recv struct {
	id  int64
	idx int
}

func newBuilder(d *Diagram, opts *Options, sc *scanned) *builder {
	b := &builder{d: d, opts: opts, lane: make(map[int]int), open: make(map[csKey]*openCS), down: make(map[int]int),
		sends: make(map[int64]int), later: make(map[int64]bool), drops: make(map[int64]int), refIdx: make(map[trace.Ref]int)}
	n := max(d.Run.Nodes, sc.procs)
	procs := opts.Procs
	if len(procs) == 0 {
		for p := range n {
			procs = append(procs, p)
		}
	}
	for _, p := range procs {
		name := fmt.Sprintf("P%d", p)
		if p < len(d.Run.Names) && d.Run.Names[p] != "" {
			name += " " + d.Run.Names[p]
		}
		b.lane[p] = len(d.Lanes)
		d.Lanes = append(d.Lanes, Lane{Proc: p, Name: name, Role: opts.Roles[p]})
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

func (b *builder) key(ev *trace.Event) int64 {
	if b.d.Axis == Wall {
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
	if in {
		b.count++
	}
	keep := in && b.count <= b.opts.maxEvents()
	idx := outside
	if keep {
		idx = len(d.Events)
		d.Events = append(d.Events, b.describe(ev, k, ln))
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
	case trace.KindCrash:
		for _, ck := range b.openKeys() {
			if ck.proc == ev.Proc {
				b.closeCS(ck, k, idx, true)
			}
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
func (b *builder) describe(ev *trace.Event, k int64, lane int) Event {
	e := Event{Ref: ev.Ref(), Kind: ev.Kind, Key: k, Lamport: ev.Lamport, Wall: ev.Wall, Lane: lane, Peer: ev.Peer,
		Resource: ev.Resource, MsgType: ev.MsgType}
	var what string
	e.Mark, what = Describe(ev)
	e.Tip = fmt.Sprintf("%v %s; Lamport %d", ev.Ref(), what, ev.Lamport)
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
		if c, err := ev.Crash(); err == nil && c.Reason != "" {
			what += ": " + c.Reason
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
	if d.Axis == Wall {
		return "wall time " + d.span(d.Lo, d.Hi)
	}
	return "Lamport " + d.span(d.Lo, d.Hi)
}

// span formats a range on the diagram's axis.
func (d *Diagram) span(lo, hi int64) string {
	if d.Axis == Wall {
		return fmt.Sprintf("+%v..+%v", fmtDur(lo), fmtDur(hi))
	}
	return fmt.Sprintf("%d..%d", lo, hi)
}

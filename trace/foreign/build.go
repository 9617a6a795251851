package foreign

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// Options say how to import a log.
type Options struct {
	Rules       []Rule // kinds by text, first match wins
	Lenient     bool   // skip what breaks the rules instead of failing
	ToolVersion string // the dmx that imports, for the runs table
	// Cut says the log is an excerpt: what happened before or after it
	// is not in it, so its runs are incomplete (no check says ok of them,
	// and a request still waiting at its end is unknown, not violated).
	Cut bool
}

// Run is a run built from one execution of a log: the run's row and its
// events in a causal order (every event after the events it merged), ready
// for a trace.Writer.
type Run struct {
	Run    trace.Run
	Events []trace.Event
	Label  string // the execution's label in the log, if it has one
}

// Build turns each execution of lg into a run, following the rules in the
// package documentation. The problems it finds go to ps, each naming its
// file and line; Build always returns what it could build, skipping what
// breaks the rules, and the caller decides whether problems are errors
// (they are unless opt.Lenient).
func Build(lg *Log, opt Options, ps *Problems) []Run {
	var runs []Run
	for i := range lg.Executions {
		var local Problems
		r := build(&lg.Executions[i], opt, &local)
		ps.list = append(ps.list, local.list...)
		if len(r.Events) == 0 {
			continue // an execution with nothing left is no run
		}
		skipped := lg.Executions[i].Skipped + local.Len()
		r.Label = lg.Executions[i].Label
		r.Run.Algorithm = lg.Format
		r.Run.Mode = "import"
		r.Run.NoSeed = true
		r.Run.ToolVersion = opt.ToolVersion
		r.Run.Params = runParams(lg, &lg.Executions[i], opt.Rules)
		r.Run.Complete = skipped == 0 && !opt.Cut
		r.Run.Status = "imported"
		if opt.Cut {
			r.Run.Status += "; an excerpt of a longer log (--cut)"
		}
		if skipped > 0 {
			r.Run.Status += fmt.Sprintf("; %s skipped (--lenient)", plural.Count(skipped, "problem"))
		}
		runs = append(runs, r)
	}
	return runs
}

func runParams(lg *Log, ex *Execution, rules []Rule) json.RawMessage {
	p := map[string]any{"format": lg.Format, "files": lg.Files}
	for k, v := range lg.Params {
		p[k] = v
	}
	if ex.Label != "" {
		p["execution"] = ex.Label
	}
	if len(rules) > 0 {
		p["rules"] = len(rules)
	}
	for _, r := range rules {
		if r.HigherTerm {
			p["step_down"] = "higher-term" // analyze.StepDownHigherTerm
		}
	}
	b, _ := json.Marshal(p) // strings, numbers and string slices always marshal
	return b
}

// node is an event of the execution being built.
type node struct {
	ev    *Event
	idx   int // its index in the execution's events
	host  int
	own   uint64 // its own clock entry
	seq   int64  // its position among its host's events kept
	clock map[int]uint64
	cands []*node // events it merged that were new to its host

	rule   *Rule
	groups map[string]string
	key    string // message id of a send or receive given by a rule's msg group

	in, out []*edge

	indeg   int
	done    bool
	vc      trace.VC
	lamport uint64
}

type edge struct {
	from, to *node // to is nil for a send nobody received
	id       int64
	dropped  bool
}

func (n *node) pos() string { return n.ev.At.String() }

// builder holds the state of building one execution.
type builder struct {
	ps     *Problems
	hosts  map[string]int
	names  []string
	byHost [][]*node // each host's events, in order
	byOwn  []map[uint64]*node
	nodes  []*node // in the order of the log
	edges  []*edge
}

func build(ex *Execution, opt Options, ps *Problems) Run {
	// Build goes on past every problem the same way; whether problems
	// fail the import is the caller's choice (Options.Lenient).
	b := &builder{ps: ps, hosts: map[string]int{}}
	b.keep(ex)
	b.classify(opt.Rules)
	b.clocks()
	b.merges()
	b.pair()
	order := b.order()
	b.stamp(order)
	return Run{Run: trace.Run{Nodes: len(b.names), Names: b.names, Started: minWall(b.nodes), Ended: maxWall(b.nodes)},
		Events: b.events(order)}
}

// keep numbers the hosts and orders each host's events by their own clock
// entry, as ShiViz does, keeping those whose entry rises by exactly 1 from
// the one before ([rule 2]).
func (b *builder) keep(ex *Execution) {
	var perHost [][]*node
	for i := range ex.Events {
		ev := &ex.Events[i]
		if ev.Host == "" {
			b.ps.Add(ev.At, ReasonNoHost, "the event has no host name")
			continue
		}
		own, ok := uint64(0), false
		for _, e := range ev.Clock {
			if e.Host == ev.Host {
				own, ok = e.Value, true
			}
		}
		if !ok || own == 0 {
			b.ps.Add(ev.Clock0, ReasonNoOwnEntry, "the clock %s of host %q has no entry for %q itself", ClockText(ev.Clock), ev.Host, ev.Host)
			continue
		}
		h, ok := b.hosts[ev.Host]
		if !ok {
			h = len(b.names)
			b.hosts[ev.Host] = h
			b.names = append(b.names, ev.Host)
			perHost = append(perHost, nil)
		}
		perHost[h] = append(perHost[h], &node{ev: ev, idx: i, host: h, own: own})
	}
	b.byHost = make([][]*node, len(perHost))
	b.byOwn = make([]map[uint64]*node, len(perHost))
	for h, evs := range perHost {
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].own < evs[j].own })
		b.byOwn[h] = map[uint64]*node{}
		var prev *node
		for _, n := range evs {
			var last uint64
			if prev != nil {
				last = prev.own
			}
			switch {
			case n.own == last+1:
			case n.own == last:
				b.ps.Add(n.ev.Clock0, ReasonClockBackwards, "host %q's own clock entry is %d, as at %s: it must rise by exactly 1 from one event to the next (does the clock go backwards?)",
					n.ev.Host, n.own, prev.ev.Clock0)
				continue
			case prev == nil:
				b.ps.Add(n.ev.Clock0, ReasonClockStart, "host %q's first event has its own clock entry at %d: it must start at 1", n.ev.Host, n.own)
			default:
				b.ps.Add(n.ev.Clock0, ReasonClockJump, "host %q's own clock entry jumps from %d (%s) to %d: it must rise by exactly 1",
					n.ev.Host, last, prev.ev.Clock0, n.own)
			}
			// Past a start or a jump (lenient), the event is kept with the
			// next sequence number: what other hosts merged of it is found
			// by its own entry.
			n.seq = int64(len(b.byHost[h]) + 1)
			b.byHost[h] = append(b.byHost[h], n)
			b.byOwn[h][n.own] = n
			prev = n
		}
	}
	// The events kept, in the order of the log.
	for _, evs := range b.byHost {
		b.nodes = append(b.nodes, evs...)
	}
	sort.Slice(b.nodes, func(i, j int) bool { return b.nodes[i].idx < b.nodes[j].idx })
}

// classify applies the rules to each event's text and reads their groups
// ([rule 5]); a rule whose groups cannot be used is a problem, and the
// event then goes by its clock alone.
func (b *builder) classify(rules []Rule) {
	for _, n := range b.nodes {
		r, groups := match(rules, n.ev.Text)
		if r == nil {
			continue
		}
		if err := b.checkGroups(r, groups); err != nil {
			b.ps.Add(n.ev.At, ReasonRule, "rule %s (%s): %v", short(r.Re.String()), r.From, err)
			continue
		}
		n.rule, n.groups = r, groups
		if r.Kind == trace.KindSend || r.Kind == trace.KindReceive {
			n.key = msgKey(groups["msg"])
		}
	}
}

// msgKey is the key that pairs a send with its receive: a message named
// as dmx export names it ("P1's message 1", "message 7") is keyed by its
// id, so that a send and a receive pair whichever way each names it (an
// export before trace.MsgName wrote msg=4294967297); any other key is
// kept as the log wrote it. Problems quote the log's own words.
func msgKey(s string) string {
	if n, ok := strings.CutPrefix(s, "message "); ok {
		if _, err := strconv.ParseInt(n, 10, 64); err == nil {
			return n
		}
		return s
	}
	p, k, ok := strings.Cut(s, "'s message ")
	if !ok || !strings.HasPrefix(p, "P") {
		return s
	}
	from, err1 := strconv.Atoi(p[1:])
	seq, err2 := strconv.ParseInt(k, 10, 64)
	if err1 != nil || err2 != nil || from < 0 || seq <= 0 || seq >= 1<<32 {
		return s
	}
	return strconv.FormatInt(trace.MsgID(from, seq), 10)
}

func (b *builder) checkGroups(r *Rule, g map[string]string) error {
	if v, ok := g["leader"]; ok {
		if _, ok := b.hosts[v]; !ok {
			return fmt.Errorf("leader %q is not a host of the log", v)
		}
	}
	if v, ok := g["term"]; ok {
		if _, err := strconv.ParseUint(v, 10, 64); err != nil {
			return fmt.Errorf("term %q is not a whole number", v)
		}
	}
	for _, h := range splitHosts(g["waiting_for"]) {
		if _, ok := b.hosts[h]; !ok {
			return fmt.Errorf("waits for %q, which is not a host of the log", h)
		}
	}
	return nil
}

func splitHosts(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
}

// clocks reads each event's clock against the event before it on its host
// ([rule 2]): entries of unknown hosts, falling entries and entries of
// events no host logged are problems and left out. What rose names an
// event merged ([rule 3]).
func (b *builder) clocks() {
	for h, evs := range b.byHost {
		prev := map[int]uint64{}
		reported := map[int]uint64{} // the largest unmatched entry reported per host
		for _, n := range evs {
			n.clock = make(map[int]uint64, len(prev)+1)
			for x, v := range prev { // an entry left out is taken as unchanged
				n.clock[x] = v
			}
			n.clock[h] = n.own
			for _, e := range n.ev.Clock {
				if e.Host == n.ev.Host || e.Value == 0 {
					continue
				}
				x, ok := b.hosts[e.Host]
				if !ok {
					b.ps.Add(n.ev.Clock0, ReasonUnknownHost, "the clock names host %q, which logged no event", e.Host)
					continue
				}
				p := prev[x]
				switch {
				case e.Value < p:
					b.ps.Add(n.ev.Clock0, ReasonClockBackwards, "host %q's clock entry for %q goes back from %d to %d", n.ev.Host, e.Host, p, e.Value)
				case e.Value == p:
				default:
					src := b.byOwn[x][e.Value]
					if src == nil {
						if e.Value > reported[x] {
							reported[x] = e.Value
							b.ps.Add(n.ev.Clock0, ReasonUnmatchedRecv, "the clock shows event %d of host %q, which the log of %q does not have (it has %s): a receive whose send is missing",
								e.Value, e.Host, e.Host, plural.Count(len(b.byHost[x]), "event"))
						}
						continue
					}
					n.clock[x] = e.Value
					n.cands = append(n.cands, src)
				}
			}
			prev = n.clock
		}
	}
}

// merges keeps, of the events each event merged, those that no other
// merged event knew ([rule 3]), checks that the event's clock dominates
// theirs ([rule 4]), and makes each a message.
func (b *builder) merges() {
	for _, n := range b.nodes {
		for _, c := range n.cands {
			if b.implied(c, n.cands) {
				continue
			}
			b.dominates(n, c)
			b.link(c, n)
		}
	}
}

// implied reports whether another of cands knew c: its clock shows c's
// host at c's own entry or more.
func (b *builder) implied(c *node, cands []*node) bool {
	for _, d := range cands {
		if d != c && d.clock[c.host] >= c.own {
			return true
		}
	}
	return false
}

// dominates checks that n's clock dominates the clock of src, which n
// merged.
func (b *builder) dominates(n, src *node) {
	for x, v := range src.clock {
		if n.clock[x] < v {
			b.ps.Add(n.ev.Clock0, ReasonNotDominating, "the clock does not dominate that of the event it merged, %q's event %d (%s): %q is %d there and %d here",
				src.ev.Host, src.own, src.ev.Clock0, b.names[x], v, n.clock[x])
			return
		}
	}
}

func (b *builder) link(from, to *node) {
	e := &edge{from: from, to: to}
	from.out = append(from.out, e)
	if to != nil {
		to.in = append(to.in, e)
	}
	b.edges = append(b.edges, e)
}

// pair links the sends and receives that rules gave a message id ([rule
// 5]): a receive whose send its host already knew shows nothing in its
// clock, and a send nobody received is a message still.
func (b *builder) pair() {
	sends := map[string]*node{}
	for _, n := range b.nodes {
		if n.rule == nil || n.rule.Kind != trace.KindSend || n.key == "" {
			continue
		}
		if first, ok := sends[n.key]; ok {
			b.ps.Add(n.ev.At, ReasonDuplicateMsg, "message id %q was sent already at %s", n.groups["msg"], first.pos())
			n.key = ""
			continue
		}
		sends[n.key] = n
	}
	received := map[*node]bool{}
	for _, n := range b.nodes {
		if n.rule == nil || n.rule.Kind != trace.KindReceive {
			continue
		}
		s := sends[n.key]
		if s == nil {
			switch {
			case n.key != "":
				b.ps.Add(n.ev.At, ReasonUnmatchedRecv, "the rules make this a receive of message %q, which no event sends", n.groups["msg"])
			case len(n.in) == 0:
				b.ps.Add(n.ev.At, ReasonUnmatchedRecv, "the rules make this a receive (%s), but its clock merged no other host's event", n.rule.From)
			}
			if len(n.in) == 0 {
				n.rule = nil // nothing to receive: it goes by its clock
			}
			continue
		}
		received[s] = true
		b.dominates(n, s)
		// The send's message replaces what the clock showed of s and
		// of what s knew.
		for _, e := range n.in {
			if e.from == s || s.clock[e.from.host] >= e.from.own {
				e.dropped = true
			}
		}
		b.link(s, n)
		n.in = liveEdges(n.in)
	}
	for _, e := range b.edges {
		if e.dropped {
			e.from.out = liveEdges(e.from.out)
		}
	}
	// A send the rules name that reached nobody is a message in flight.
	for _, n := range b.nodes {
		if n.rule != nil && n.rule.Kind == trace.KindSend && !received[n] && len(n.out) == 0 {
			b.link(n, nil)
		}
	}
	b.edges = liveEdges(b.edges)
}

func liveEdges(es []*edge) []*edge {
	out := es[:0]
	for _, e := range es {
		if !e.dropped {
			out = append(out, e)
		}
	}
	return out
}

// order returns the events in a causal order (program order and every
// message), breaking the causal cycles it finds ([rule 4]) by dropping
// the messages inside them.
func (b *builder) order() []*node {
	for {
		for _, n := range b.nodes {
			n.indeg, n.done = len(n.in), false
			if n.seq > 1 {
				n.indeg++
			}
		}
		var order, queue []*node
		for _, evs := range b.byHost {
			if evs[0].indeg == 0 {
				queue = append(queue, evs[0])
			}
		}
		release := func(n *node) {
			if n.indeg--; n.indeg == 0 {
				queue = append(queue, n)
			}
		}
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			n.done = true
			order = append(order, n)
			if int(n.seq) < len(b.byHost[n.host]) {
				release(b.byHost[n.host][n.seq])
			}
			for _, e := range n.out {
				if e.to != nil {
					release(e.to)
				}
			}
		}
		if len(order) == len(b.nodes) {
			return order
		}
		// The events left wait on each other. Drop the messages between
		// them; what remains is program order, which cannot loop.
		for _, e := range b.edges {
			if e.to != nil && !e.from.done && !e.to.done {
				b.ps.Add(e.to.ev.Clock0, ReasonCycle, "the event merged the clock of %q's event %d (%s), which itself happened after this one (a causal cycle)",
					e.from.ev.Host, e.from.own, e.from.pos())
				e.dropped = true
			}
		}
		for _, n := range b.nodes {
			n.in, n.out = liveEdges(n.in), liveEdges(n.out)
		}
		b.edges = liveEdges(b.edges)
	}
}

// stamp derives each event's vector clock and Lamport clock from happens-
// before ([rule 6]) and numbers the messages. The clock a valid log wrote
// is the one derived; one that differs is a problem.
func (b *builder) stamp(order []*node) {
	n := len(b.names)
	for _, x := range order {
		vc := make(trace.VC, n)
		var lam uint64
		if x.seq > 1 {
			p := b.byHost[x.host][x.seq-2]
			copy(vc, p.vc)
			lam = p.lamport
		}
		for _, e := range x.in {
			vc.Merge(e.from.vc)
			lam = max(lam, e.from.lamport)
		}
		vc[x.host] = uint64(x.seq)
		x.vc, x.lamport = vc, lam+1
	}
	// Message ids: the k-th message a host sends, in the order of its
	// events and then of the receivers.
	sort.SliceStable(b.edges, func(i, j int) bool {
		ei, ej := b.edges[i], b.edges[j]
		if ei.from.host != ej.from.host {
			return ei.from.host < ej.from.host
		}
		if ei.from.seq != ej.from.seq {
			return ei.from.seq < ej.from.seq
		}
		ki, kj := recvKey(ei), recvKey(ej)
		return ki[0] < kj[0] || ki[0] == kj[0] && ki[1] < kj[1]
	})
	sent := make([]int64, n)
	for _, e := range b.edges {
		sent[e.from.host]++
		e.id = trace.MsgID(e.from.host, sent[e.from.host])
	}
	for _, x := range b.nodes {
		sort.Slice(x.in, func(i, j int) bool { return x.in[i].id < x.in[j].id })
		sort.Slice(x.out, func(i, j int) bool { return x.out[i].id < x.out[j].id })
	}
	if b.ps.Len() > 0 {
		return // past a problem, the derived clocks are the ones to keep
	}
	for _, x := range b.nodes {
		for h, v := range x.vc {
			if x.clock[h] != v {
				b.ps.Add(x.ev.Clock0, ReasonClockMismatched, "the clock %s says %d events of %q, happens-before says %d", ClockText(x.ev.Clock), x.clock[h], b.names[h], v)
				break
			}
		}
	}
}

// recvKey orders the receivers of one send: by host and position; a send
// nobody received comes last.
func recvKey(e *edge) [2]int64 {
	if e.to == nil {
		return [2]int64{1 << 62, 0}
	}
	return [2]int64{int64(e.to.host), e.to.seq}
}

// events makes the trace events, in order.
func (b *builder) events(order []*node) []trace.Event {
	out := make([]trace.Event, 0, len(order))
	for _, n := range order {
		out = append(out, b.event(n))
	}
	return out
}

func (b *builder) event(n *node) trace.Event {
	ev := trace.Event{Proc: n.host, Seq: n.seq, Kind: trace.KindInternal, Lamport: n.lamport, VC: n.vc,
		Wall: n.ev.Wall, Peer: trace.NoPeer}
	in, out := n.in, n.out
	var d trace.Detail
	kind := trace.Kind("")
	if n.rule != nil {
		kind = n.rule.Kind
	}
	g := n.groups
	switch kind {
	case trace.KindCSRequest, trace.KindCSEnter, trace.KindCSExit:
		ev.Kind, ev.Resource = kind, orDefault(g["resource"], "cs")
	case trace.KindWait:
		ev.Kind, ev.Resource = kind, orDefault(g["resource"], "cs")
		w := trace.Wait{WaitingFor: []int{}}
		for _, h := range splitHosts(g["waiting_for"]) {
			w.WaitingFor = append(w.WaitingFor, b.hosts[h])
		}
		sort.Ints(w.WaitingFor)
		d = w
	case trace.KindElectionStart:
		term, _ := strconv.ParseUint(g["term"], 10, 64)
		ev.Kind, ev.Resource, d = kind, g["resource"], trace.ElectionStart{Term: term}
	case trace.KindLeader:
		term, _ := strconv.ParseUint(g["term"], 10, 64)
		ev.Kind, ev.Resource, d = kind, g["resource"], trace.Leader{Leader: b.hosts[g["leader"]], Term: term}
	case KindStepDown:
		term, _ := strconv.ParseUint(g["term"], 10, 64)
		ev.Kind, ev.Resource, d = trace.KindLeader, g["resource"], trace.Leader{Leader: -1, Term: term}
	case trace.KindCrash, trace.KindRecover:
		ev.Kind = kind
	default:
		// Send and receive by the clocks and the messages the rules
		// paired: an event that merged a message is a receive, unless a
		// rule says it sends.
		switch {
		case len(in) > 0 && (kind != trace.KindSend || len(out) == 0):
			ev.Kind, ev.Msg, ev.Peer = trace.KindReceive, in[0].id, in[0].from.host
			in = in[1:]
		case len(out) > 0:
			ev.Kind, ev.Msg, ev.Peer = trace.KindSend, out[0].id, trace.NoPeer
			if out[0].to != nil {
				ev.Peer = out[0].to.host
			}
			out = out[1:]
		}
		if ev.Kind != trace.KindInternal {
			ev.MsgType, ev.Resource = orDefault(g["type"], "msg"), g["resource"]
			if term, err := strconv.ParseUint(g["term"], 10, 64); err == nil && term > 0 {
				d = trace.Message{Term: term} // the term the message carries
			}
		}
	}
	var links trace.Links
	for _, e := range in {
		links.Recv = append(links.Recv, trace.Link{Msg: e.id, Peer: e.from.host})
	}
	for _, e := range out {
		peer := trace.NoPeer
		if e.to != nil {
			peer = e.to.host
		}
		links.Sent = append(links.Sent, trace.Link{Msg: e.id, Peer: peer})
	}
	ev.Detail = trace.EncodeImported(d, trace.Origin{Src: n.pos(), Text: n.ev.Text, Fields: n.ev.Fields}, links)
	return ev
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func minWall(ns []*node) int64 {
	var w int64
	for _, n := range ns {
		if n.ev.Wall != 0 && (w == 0 || n.ev.Wall < w) {
			w = n.ev.Wall
		}
	}
	return w
}

func maxWall(ns []*node) int64 {
	var w int64
	for _, n := range ns {
		w = max(w, n.ev.Wall)
	}
	return w
}

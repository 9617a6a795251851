package foreign

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/dmxlab/dmx/trace"
)

// Exporter writes the runs of a trace in another tool's format. A format
// writes one file (File) or a directory of files (Dir), never both.
type Exporter struct {
	Name    string // as dmx export takes it
	Summary string // one line for dmx export --help
	File    func(w io.Writer, runs []Exported, opt ExportOptions) error
	Dir     func(dir string, runs []Exported, opt ExportOptions) error
}

// ExportOptions are the choices an export may offer.
type ExportOptions struct {
	Timestamps bool // write wall times where the format has room for them (GoVector)
}

// Exported is a run of a trace as exporters take it.
type Exported struct {
	Run      trace.Run
	Hosts    []string        // a name per process: unique, not empty, without white space
	Events   []ExportedEvent // in a causal order: by derived Lamport clock, process, seq
	Messages []Message       // by id
}

// ExportedEvent is an event with the clocks happens-before gives it. Its
// text is the Exported's TextOf, made as it is written: a run of a million
// events is held whole, and the text would be a tenth of it again.
type ExportedEvent struct {
	trace.Event // Lamport: derived from happens-before, not as recorded; VC nil (see Clock)
	// Clock is the vector clock happens-before gives the event: its
	// non-zero entries, in process order (a dense clock per event takes
	// memory in the processes squared).
	Clock []Count
	// Origin is where an imported event comes from in its log; nil for
	// dmx's own events.
	Origin *trace.Origin
}

// TextOf is what Text says of ev, an event of x.
func (x *Exported) TextOf(ev *ExportedEvent) string {
	if o := ev.Origin; o != nil && o.Src != "" {
		return oneLine(o.Text)
	}
	return Text(&ev.Event, x.Hosts)
}

// Count is an entry of a vector clock: how many events of process Proc
// happened before or at an event.
type Count struct {
	Proc int
	N    uint64
}

// VCOf returns e's clock as a dense vector clock of n processes.
func (e *ExportedEvent) VCOf(n int) trace.VC {
	vc := make(trace.VC, n)
	for _, c := range e.Clock {
		if c.Proc < n {
			vc[c.Proc] = c.N
		}
	}
	return vc
}

// Message is a message of a run: its send and its receives (none if it
// was never delivered, more than one if it was duplicated).
type Message struct {
	ID    int64
	Type  string
	Send  int   // index in Events of its send; -1 if none was recorded
	Recvs []int // indexes in Events of its receives
}

// BuildExport makes the exported form of one run from its events, given in a
// causal order (the order in which analyze.Walk visits them), each with
// the vector clock happens-before gives it: it derives their Lamport
// clocks, sorts them by Lamport clock, process and seq, names the hosts
// and lists the messages. analyze.ExportRun and analyze.ExportRuns give
// exporters their runs so; trace does not rebuild happens-before itself.
func BuildExport(r trace.Run, evs []ExportedEvent) Exported {
	x := Exported{Run: r, Events: evs}
	sendLam := map[int64]uint64{} // Lamport clock of each message's send
	procLam := map[int]uint64{}
	for i := range x.Events {
		e := &x.Events[i]
		links, _ := e.Links() // happens-before refused a trace whose links do not read
		lam := procLam[e.Proc]
		if e.Kind == trace.KindReceive {
			lam = max(lam, sendLam[e.Msg])
		}
		for _, k := range links.Recv {
			lam = max(lam, sendLam[k.Msg])
		}
		lam++
		procLam[e.Proc] = lam
		e.Lamport = lam
		if e.Kind == trace.KindSend && e.Msg != 0 {
			sendLam[e.Msg] = lam
		}
		for _, k := range links.Sent {
			sendLam[k.Msg] = lam
		}
	}
	sort.SliceStable(x.Events, func(i, j int) bool {
		a, b := &x.Events[i], &x.Events[j]
		if a.Lamport != b.Lamport {
			return a.Lamport < b.Lamport
		}
		if a.Proc != b.Proc {
			return a.Proc < b.Proc
		}
		return a.Seq < b.Seq
	})
	n := r.Nodes
	for _, e := range x.Events {
		n = max(n, e.Proc+1)
	}
	x.Hosts = hostNames(r.Names, n)
	x.Messages = messages(x.Events)
	return x
}

// hostNames names n processes: by the trace's names where it has them,
// else P0, P1...; white space and { (which would end the name in a clock
// line) become _, and a name taken twice gets #2, #3...
func hostNames(names []string, n int) []string {
	out := make([]string, n)
	taken := map[string]bool{}
	for p := range out {
		name := ""
		if p < len(names) {
			name = strings.Map(func(r rune) rune {
				if unicode.IsSpace(r) || r == '{' {
					return '_'
				}
				return r
			}, names[p])
		}
		if name == "" {
			name = "P" + strconv.Itoa(p)
		}
		base := name
		for k := 2; taken[name]; k++ {
			name = fmt.Sprintf("%s#%d", base, k)
		}
		taken[name] = true
		out[p] = name
	}
	return out
}

// messages lists the messages of evs: their sends and receives, by the
// msg column and the Links.
func messages(evs []ExportedEvent) []Message {
	byID := map[int64]*Message{}
	get := func(id int64, typ string) *Message {
		m := byID[id]
		if m == nil {
			m = &Message{ID: id, Type: typ, Send: -1}
			byID[id] = m
		}
		return m
	}
	for i := range evs {
		ev := &evs[i]
		links, _ := ev.Links()
		switch {
		case ev.Kind == trace.KindSend && ev.Msg != 0:
			get(ev.Msg, ev.MsgType).Send = i
		case ev.Kind == trace.KindReceive && ev.Msg != 0:
			m := get(ev.Msg, ev.MsgType)
			m.Recvs = append(m.Recvs, i)
		}
		for _, k := range links.Sent {
			get(k.Msg, ev.MsgType).Send = i
		}
		for _, k := range links.Recv {
			m := get(k.Msg, ev.MsgType)
			m.Recvs = append(m.Recvs, i)
		}
	}
	out := make([]Message, 0, len(byID))
	for _, m := range byID {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Text says what an event is in one line: for an imported event, the
// text its log had; for dmx's own, a line that DMXRules reads back:
//
//	send request to P4 (P1's message 1) on cs {"stamp":2,"id":1}
//	receive request from P1 (P1's message 1) on cs {"stamp":2,"id":1}
//	drop request (P1's message 1) on cs {"fault":"loss:20%"}
//	cs_request cs, cs_enter cs, cs_exit cs
//	wait cs for P1,P3
//	election_start term 3, leader P4 term 3 (with " on RESOURCE" if any)
//	step_down term 3: a leader event that names no leader
//	crash {"reason":"killed by SIGKILL"}, and KIND DETAIL for the rest
//
// Line ends are written \n, so that the text stays one line.
func Text(ev *trace.Event, hosts []string) string {
	if o, err := ev.Origin(); err == nil && o.Src != "" {
		return oneLine(o.Text)
	}
	host := func(p int) string {
		if p >= 0 && p < len(hosts) {
			return hosts[p]
		}
		return "P" + strconv.Itoa(p)
	}
	detail := ""
	if len(ev.Detail) > 0 {
		detail = " " + string(ev.Detail)
	}
	typ := orDefault(ev.MsgType, "msg")
	// A message is named as a reader says it, "P1's message 1", not by
	// its id, 4294967297 (trace.MsgName); the name pairs a send with its
	// receive as well, for a name is one id's. (Exports before said
	// msg=ID: DMXRules reads both.)
	var s string
	switch ev.Kind {
	case trace.KindSend:
		s = fmt.Sprintf("send %s to %s (%s)%s%s", typ, host(ev.Peer), trace.MsgName(ev.Msg, ev.Proc), on(ev.Resource), detail)
	case trace.KindReceive:
		s = fmt.Sprintf("receive %s from %s (%s)%s%s", typ, host(ev.Peer), trace.MsgName(ev.Msg, ev.Peer), on(ev.Resource), detail)
	case trace.KindDrop:
		s = fmt.Sprintf("drop %s (%s)%s%s", typ, trace.MsgName(ev.Msg, ev.Proc), on(ev.Resource), detail)
	case trace.KindCSRequest, trace.KindCSEnter, trace.KindCSExit:
		s = fmt.Sprintf("%s %s", ev.Kind, orDefault(ev.Resource, "cs"))
	case trace.KindWait:
		w, _ := ev.Wait()
		names := make([]string, len(w.WaitingFor))
		for i, p := range w.WaitingFor {
			names[i] = host(p)
		}
		s = fmt.Sprintf("wait %s for %s", orDefault(ev.Resource, "cs"), strings.Join(names, ","))
	case trace.KindElectionStart:
		d, _ := ev.ElectionStart()
		s = fmt.Sprintf("election_start term %d%s", d.Term, on(ev.Resource))
	case trace.KindLeader:
		d, _ := ev.Leader()
		if d.Leader < 0 {
			s = fmt.Sprintf("step_down term %d%s", d.Term, on(ev.Resource))
			break
		}
		s = fmt.Sprintf("leader %s term %d%s", host(d.Leader), d.Term, on(ev.Resource))
	default:
		s = string(ev.Kind)
		if ev.Peer != trace.NoPeer {
			s += " " + host(ev.Peer)
		}
		if ev.Resource != "" {
			s += on(ev.Resource)
		}
		s += detail
	}
	return oneLine(s)
}

func on(resource string) string {
	if resource == "" {
		return ""
	}
	return " on " + resource
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}

// Clock returns an event's vector clock as host entries, for the formats
// that write clocks as {"host": count}: the non-zero entries, the event's
// own host first.
func Clock(ev *ExportedEvent, hosts []string) []Entry {
	out := []Entry{{hosts[ev.Proc], 0}}
	for _, c := range ev.Clock {
		switch {
		case c.Proc == ev.Proc:
			out[0].Value = c.N
		case c.N > 0 && c.Proc < len(hosts):
			out = append(out, Entry{hosts[c.Proc], c.N})
		}
	}
	return out
}

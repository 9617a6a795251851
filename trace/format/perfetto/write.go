package perfetto

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/foreign"
)

// Exporter writes Chrome trace-event JSON for ui.perfetto.dev.
var Exporter = foreign.Exporter{
	Name:    "perfetto",
	Summary: "Chrome trace-event JSON for ui.perfetto.dev: a track per process, sections as slices, messages as arrows",
	File:    Write,
}

// event is one entry of the traceEvents array (the Trace Event Format).
type event struct {
	Name    string         `json:"name"`
	Cat     string         `json:"cat,omitempty"`
	Ph      string         `json:"ph"`
	Ts      float64        `json:"ts"`
	Dur     *float64       `json:"dur,omitempty"`
	Pid     int            `json:"pid"`
	Tid     int            `json:"tid"`
	ID      string         `json:"id,omitempty"`
	Scope   string         `json:"s,omitempty"`
	BindID  int64          `json:"bind_id,omitempty"`
	FlowIn  bool           `json:"flow_in,omitempty"`
	FlowOut bool           `json:"flow_out,omitempty"`
	Args    map[string]any `json:"args,omitempty"`
}

// Write writes runs as one trace: each run's processes are processes of
// the trace, named "P0" (with the run, "run 2 P0", when there are several
// runs). Each trace event is written as it is made, one a line: the file
// stays readable, grep finds an event, and a run of a million events is
// not held a second time as trace events.
func Write(w io.Writer, runs []foreign.Exported, _ foreign.ExportOptions) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"displayTimeUnit":"ns","otherData":{"source":"dmx export perfetto"},"traceEvents":[`)
	x := &writer{w: bw}
	for _, r := range runs {
		x.run(&r, len(runs) > 1)
	}
	if x.err != nil {
		return x.err
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

type writer struct {
	w     *bufio.Writer
	n     int   // trace events written
	err   error // the first error of encoding one
	pid   int   // the last pid handed out
	flows int64 // the last flow id handed out
	async int   // the last async slice id handed out
}

var zero = 0.0

// run writes one run.
func (x *writer) run(r *foreign.Exported, several bool) {
	hasWall := false
	var start int64
	for _, ev := range r.Events {
		if ev.Wall != 0 {
			if !hasWall || ev.Wall < start {
				start = ev.Wall
			}
			hasWall = true
		}
	}
	ts := func(ev *foreign.ExportedEvent) float64 {
		if hasWall {
			return float64(ev.Wall-start) / 1000 // µs
		}
		return float64(ev.Lamport)
	}
	pids := make([]int, len(r.Hosts))
	for p, h := range r.Hosts {
		x.pid++
		pids[p] = x.pid
		name := h
		if several {
			name = fmt.Sprintf("run %d %s", r.Run.ID, h)
		}
		x.emit(event{Name: "process_name", Ph: "M", Pid: x.pid, Tid: x.pid, Args: map[string]any{"name": name}})
		x.emit(event{Name: "process_sort_index", Ph: "M", Pid: x.pid, Tid: x.pid, Args: map[string]any{"sort_index": x.pid}})
		x.emit(event{Name: "thread_name", Ph: "M", Pid: x.pid, Tid: x.pid, Args: map[string]any{"name": name}})
	}
	// Flow endpoints: a flow per (message, receive).
	type end struct {
		id  int64
		out bool
	}
	ends := make([][]end, len(r.Events))
	for _, m := range r.Messages {
		if m.Send < 0 {
			continue
		}
		for _, rv := range m.Recvs {
			x.flows++
			ends[m.Send] = append(ends[m.Send], end{x.flows, true})
			ends[rv] = append(ends[rv], end{x.flows, false})
		}
	}
	open := map[string]*span{} // by process and resource: requests and sections
	for i := range r.Events {
		ev := &r.Events[i]
		pid := pids[ev.Proc]
		t := ts(ev)
		args := map[string]any{"seq": ev.Seq, "lamport": ev.Lamport, "vc": foreign.ClockText(foreign.Clock(ev, r.Hosts)), "text": r.TextOf(ev)}
		if o := ev.Origin; o != nil && o.Src != "" {
			args["src"] = o.Src
		}
		switch ev.Kind {
		case trace.KindCrash, trace.KindRecover:
			x.emit(event{Name: string(ev.Kind), Cat: "fault", Ph: "i", Scope: "p", Ts: t, Pid: pid, Tid: pid, Args: args})
			if ev.Kind == trace.KindCrash {
				// A crash ends what the process was waiting for or holding.
				for k, s := range open {
					if s.proc == ev.Proc {
						x.close(s, t, "ended by a crash")
						delete(open, k)
					}
				}
			}
		default:
			slice := event{Name: name(ev, r.Hosts), Cat: string(ev.Kind), Ph: "X", Ts: t, Dur: &zero, Pid: pid, Tid: pid, Args: args}
			for k, e := range ends[i] {
				s := slice
				if k > 0 { // one flow per slice: the others get a slice of their own
					s.Args = nil
				}
				s.BindID, s.FlowOut, s.FlowIn = e.id, e.out, !e.out
				x.emit(s)
			}
			if len(ends[i]) == 0 {
				x.emit(slice)
			}
		}
		key := fmt.Sprintf("%d/%s", ev.Proc, ev.Resource)
		switch ev.Kind {
		case trace.KindCSRequest:
			if s := open[key]; s != nil {
				x.close(s, t, "a new request")
			}
			open[key] = x.begin("wait "+ev.Resource, "wait", ev.Proc, pid, t)
		case trace.KindCSEnter:
			if s := open[key]; s != nil {
				x.close(s, t, "")
			}
			open[key] = x.begin("holds "+ev.Resource, "cs", ev.Proc, pid, t)
		case trace.KindCSExit:
			if s := open[key]; s != nil {
				x.close(s, t, "")
				delete(open, key)
			}
		}
	}
	var last float64
	for i := range r.Events {
		last = max(last, ts(&r.Events[i]))
	}
	for _, s := range sortedSpans(open) {
		x.close(s, last, "the run ended")
	}
}

// span is an async slice begun and not yet ended.
type span struct {
	name, cat     string
	proc, pid, id int
}

func (x *writer) begin(name, cat string, proc, pid int, t float64) *span {
	x.async++
	s := &span{name: name, cat: cat, proc: proc, pid: pid, id: x.async}
	x.emit(event{Name: name, Cat: cat, Ph: "b", Ts: t, Pid: pid, Tid: pid, ID: fmt.Sprint(s.id)})
	return s
}

func (x *writer) close(s *span, t float64, why string) {
	e := event{Name: s.name, Cat: s.cat, Ph: "e", Ts: t, Pid: s.pid, Tid: s.pid, ID: fmt.Sprint(s.id)}
	if why != "" {
		e.Args = map[string]any{"unfinished": why}
	}
	x.emit(e)
}

func sortedSpans(m map[string]*span) []*span {
	out := make([]*span, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// emit writes a trace event, after a comma unless it is the first.
func (x *writer) emit(e event) {
	if x.err != nil {
		return
	}
	b, err := json.Marshal(e)
	if err != nil {
		x.err = err
		return
	}
	if x.n > 0 {
		x.w.WriteByte(',')
	}
	x.n++
	x.w.WriteString("\n")
	x.w.Write(b)
}

// name is a slice's name: the event's kind and what it is about.
func name(ev *foreign.ExportedEvent, hosts []string) string {
	host := func(p int) string {
		if p >= 0 && p < len(hosts) {
			return hosts[p]
		}
		return fmt.Sprintf("P%d", p)
	}
	switch ev.Kind {
	case trace.KindSend:
		return fmt.Sprintf("send %s to %s", ev.MsgType, host(ev.Peer))
	case trace.KindReceive:
		return fmt.Sprintf("receive %s from %s", ev.MsgType, host(ev.Peer))
	case trace.KindLeader:
		d, _ := ev.Leader()
		return "leader " + host(d.Leader)
	}
	if ev.Resource != "" {
		return string(ev.Kind) + " " + ev.Resource
	}
	if ev.Origin != nil && ev.Origin.Src != "" && ev.Kind == trace.KindInternal {
		return strings.TrimSpace(firstWords(ev.Origin.Text, 6))
	}
	return string(ev.Kind)
}

// firstWords shortens a text to its first n words.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		return strings.Join(f[:n], " ") + " ..."
	}
	return strings.Join(f, " ")
}

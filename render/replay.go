package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dmxlab/dmx/runner/replay"
	"github.com/dmxlab/dmx/trace"
)

// ReplayFormats are the formats of dmx replay, the default first.
var ReplayFormats = []string{"text", "json"}

// Event is the JSON form of an event in dmx's output (dmx replay, dmx
// explore): the columns of the events table, the detail as its JSON.
type Event struct {
	Ref      string          `json:"ref"` // "P2#17"
	Proc     int             `json:"proc"`
	Seq      int64           `json:"seq"`
	Kind     trace.Kind      `json:"kind"`
	Lamport  uint64          `json:"lamport"`
	VC       trace.VC        `json:"vc"`
	Wall     int64           `json:"wall_ns"`
	Msg      int64           `json:"msg,omitempty"`
	MsgType  string          `json:"msg_type,omitempty"`
	Peer     *int            `json:"peer,omitempty"`
	Resource string          `json:"resource,omitempty"`
	Detail   json.RawMessage `json:"detail,omitempty"`
}

// EventJSON returns the JSON form of ev.
func EventJSON(ev *trace.Event) *Event {
	if ev == nil {
		return nil
	}
	e := &Event{Ref: ev.Ref().String(), Proc: ev.Proc, Seq: ev.Seq, Kind: ev.Kind, Lamport: ev.Lamport, VC: ev.VC, Wall: ev.Wall,
		Msg: ev.Msg, MsgType: ev.MsgType, Resource: ev.Resource}
	if ev.Peer != trace.NoPeer {
		p := ev.Peer
		e.Peer = &p
	}
	if len(ev.Detail) > 0 {
		e.Detail = ev.Detail
		if !json.Valid(ev.Detail) {
			b, _ := json.Marshal(string(ev.Detail))
			e.Detail = b
		}
	}
	return e
}

// ReplayStep writes one step of dmx replay --step: in text, the event, its
// clocks and, for an input, the process's machines' state after it and
// what it changed; in JSON, one line {"step": {...}}.
func ReplayStep(w io.Writer, format string, s *replay.Step) error {
	switch format {
	case "text":
		return replayStepText(w, s)
	case "json":
		b, err := json.Marshal(struct {
			Step stepJSON `json:"step"`
		}{newStepJSON(s)})
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	return unknownFormat(format, ReplayFormats)
}

type stepJSON struct {
	Index   int64            `json:"index"`
	Event   *Event           `json:"event"`
	Input   bool             `json:"input"`
	Cause   string           `json:"cause,omitempty"` // an output's input
	State   replay.ProcState `json:"state"`
	Changed []replay.Change  `json:"changed,omitempty"`
}

func newStepJSON(s *replay.Step) stepJSON {
	j := stepJSON{Index: s.Index, Event: EventJSON(&s.Event), Input: s.Input, State: s.State, Changed: s.Changed}
	if !s.Input {
		j.Cause = s.Cause.String()
	}
	return j
}

func replayStepText(w io.Writer, s *replay.Step) error {
	var b bytes.Buffer
	ev := &s.Event
	fmt.Fprintf(&b, "#%d %s  lamport %d vc %v", s.Index, EventLine(ev), ev.Lamport, ev.VC)
	if len(ev.Detail) > 0 && ev.Kind != trace.KindStart {
		fmt.Fprintf(&b, "  %s", ev.Detail)
	}
	if !s.Input {
		fmt.Fprintf(&b, "  (output of %v)\n", s.Cause)
		_, err := w.Write(b.Bytes())
		return err
	}
	b.WriteByte('\n')
	st := &s.State
	if st.Down {
		b.WriteString("    down\n")
	}
	for _, m := range st.Machines {
		fmt.Fprintf(&b, "    %s%s\n", label(m.Resource), m.State)
	}
	if len(st.Timers) > 0 {
		fmt.Fprintf(&b, "    timers set: %s\n", strings.Join(st.Timers, ", "))
	}
	for _, c := range s.Changed {
		fmt.Fprintf(&b, "    changed %s%s: %s -> %s\n", label(c.Resource), c.Key, c.Before, c.After)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// EventLine names an event for people: "P2#17 send request to P0 (cs)",
// "P1#4 cs_enter(cs)".
func EventLine(ev *trace.Event) string {
	switch ev.Kind {
	case trace.KindSend, trace.KindReceive, trace.KindDrop:
		dir := "to"
		if ev.Kind == trace.KindReceive {
			dir = "from"
		}
		s := fmt.Sprintf("P%d#%d %s %s %s P%d", ev.Proc, ev.Seq, ev.Kind, ev.MsgType, dir, ev.Peer)
		if ev.Resource != "" {
			s += " (" + ev.Resource + ")"
		}
		return s
	}
	return ev.String()
}

// label prefixes what concerns an algorithm instance with its resource
// ("cs: "), when it guards one.
func label(resource string) string {
	if resource == "" {
		return ""
	}
	return resource + ": "
}

// ReplayInfo is what dmx replay says about the run besides the result:
// the file it read and the version of dmx replaying it.
type ReplayInfo struct {
	File    string
	Version string
}

// ReplayResult writes what a replay found: in text, whether the machines
// reproduced the run (and how many events of each process) or the first
// divergence, with the recorded and the replayed event and the process's
// state before the input; in JSON, one object (a line of its own after
// --step's lines).
func ReplayResult(w io.Writer, format string, res *replay.Result, info ReplayInfo) error {
	switch format {
	case "text":
		return replayText(w, res, info)
	case "json":
		return replayJSON(w, res, info)
	}
	return unknownFormat(format, ReplayFormats)
}

type divergenceJSON struct {
	Proc     int              `json:"proc"`
	Input    *Event           `json:"input,omitempty"`
	Recorded *Event           `json:"recorded"`
	Replayed *Event           `json:"replayed"`
	Reason   string           `json:"reason"`
	Before   replay.ProcState `json:"before"`
}

type replayJSONResult struct {
	File        string          `json:"file"`
	Run         int64           `json:"run"`
	Algorithm   string          `json:"algorithm"`
	Mode        string          `json:"mode"`
	Recorded    string          `json:"recorded_by"` // the dmx version that recorded the run
	Replayed    string          `json:"replayed_by"`
	Status      string          `json:"status,omitempty"` // the run's, as recorded: why a cut run was cut
	Verdict     string          `json:"verdict"`          // matches, diverges, cut (matches up to the cut), stopped (matches so far)
	Events      int64           `json:"events"`
	PerProc     []int64         `json:"per_process"`
	Divergence  *divergenceJSON `json:"divergence,omitempty"`
	Explanation string          `json:"explanation,omitempty"`
}

// ReplayVerdict names the outcome of a replay: matches, diverges, cut
// (matched up to where the run was cut short) or stopped (matched up to
// where --until or the caller ended it).
func ReplayVerdict(res *replay.Result) string {
	switch {
	case res.Divergence != nil:
		return "diverges"
	case res.Stopped:
		return "stopped"
	case res.Cut:
		return "cut"
	}
	return "matches"
}

// otherVersion explains a divergence on a run another version of dmx
// recorded, whose algorithms may have changed since.
func otherVersion(res *replay.Result, info ReplayInfo) string {
	if res.Divergence == nil || res.Run.ToolVersion == "" || res.Run.ToolVersion == info.Version {
		return ""
	}
	return fmt.Sprintf("the run was recorded by dmx %s and replayed by dmx %s: the algorithm may have changed in between", res.Run.ToolVersion, info.Version)
}

func replayJSON(w io.Writer, res *replay.Result, info ReplayInfo) error {
	out := replayJSONResult{File: info.File, Run: res.Run.ID, Algorithm: res.Run.Algorithm, Mode: res.Run.Mode,
		Recorded: res.Run.ToolVersion, Replayed: info.Version, Status: res.Run.Status, Verdict: ReplayVerdict(res), Events: res.Events, PerProc: res.PerProc,
		Explanation: otherVersion(res, info)}
	if d := res.Divergence; d != nil {
		out.Divergence = &divergenceJSON{Proc: d.Proc, Input: EventJSON(d.Input), Recorded: EventJSON(d.Recorded), Replayed: EventJSON(d.Replayed),
			Reason: d.Reason, Before: d.Before}
	}
	b, err := json.Marshal(struct {
		Result replayJSONResult `json:"result"`
	}{out})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func replayText(w io.Writer, res *replay.Result, info ReplayInfo) error {
	var b bytes.Buffer
	run := res.Run
	fmt.Fprintf(&b, "replay of %s run %d (%s, %d processes, %s", info.File, run.ID, run.Algorithm, run.Nodes, run.Mode)
	if run.ToolVersion != "" {
		fmt.Fprintf(&b, ", recorded by dmx %s", run.ToolVersion)
	}
	b.WriteString("): ")
	switch v := ReplayVerdict(res); v {
	case "matches":
		b.WriteString("matches: every event reproduced\n")
	case "cut":
		b.WriteString("matches up to the cut: the run was cut short")
		if run.Status != "" {
			fmt.Fprintf(&b, " (%s)", run.Status)
		}
		b.WriteString(", so what came after is unknown\n")
	case "stopped":
		b.WriteString("matches as far as it went\n")
	default:
		fmt.Fprintf(&b, "diverges at P%d\n", res.Divergence.Proc)
	}
	fmt.Fprintf(&b, "events reproduced: %d (", res.Events)
	for i, n := range res.PerProc {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "P%d %d", i, n)
	}
	b.WriteString(")\n")
	if d := res.Divergence; d != nil {
		if d.Input != nil {
			fmt.Fprintf(&b, "  input:    %s\n", describe(d.Input, ""))
		}
		fmt.Fprintf(&b, "  recorded: %s\n", describe(d.Recorded, "nothing: the trace has no more events of P"+fmt.Sprint(d.Proc)))
		fmt.Fprintf(&b, "  replayed: %s\n", describe(d.Replayed, "nothing more"))
		fmt.Fprintf(&b, "  why:      %s\n", d.Reason)
		what := "at its start"
		if d.Input != nil {
			what = "before " + d.Input.Ref().String()
		}
		fmt.Fprintf(&b, "  state of P%d %s: lamport %d vc %v\n", d.Proc, what, d.Before.Lamport, d.Before.VC)
		for _, m := range d.Before.Machines {
			fmt.Fprintf(&b, "    %s%s\n", label(m.Resource), m.State)
		}
		if x := otherVersion(res, info); x != "" {
			fmt.Fprintf(&b, "note: %s\n", x)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// describe is an event with its clocks and detail, or none if ev is nil.
func describe(ev *trace.Event, none string) string {
	if ev == nil {
		return none
	}
	s := fmt.Sprintf("%s lamport %d vc %v", EventLine(ev), ev.Lamport, ev.VC)
	if ev.Peer != trace.NoPeer && ev.Kind != trace.KindSend && ev.Kind != trace.KindReceive {
		s += fmt.Sprintf(" peer %d", ev.Peer)
	}
	if len(ev.Detail) > 0 {
		s += " " + string(ev.Detail)
	}
	return s
}

// stateJSON is the JSON form of a process's state after an event.
type stateJSON struct {
	Step         stepJSON        `json:"step"`
	InputChanged []replay.Change `json:"inputChanged,omitempty"`
	From         int64           `json:"from"`
	Replayed     int64           `json:"replayed"`
	Cached       bool            `json:"cached"`
	Ms           float64         `json:"ms"`
}

// ReplayState returns the JSON form of a process's state after one of its
// events, which dmx serve's page shows: {"step"} as dmx replay --step
// --format json prints it (its index counting the process's own events),
// "inputChanged" for an output (what its input changed), and what the
// answer cost: "from" the sequence number the replay went on from,
// "replayed" events, "cached", and "ms" the time it took.
func ReplayState(s *replay.StateAt, took time.Duration) ([]byte, error) {
	return json.Marshal(stateJSON{Step: newStepJSON(s.Step), InputChanged: s.InputChanged, From: s.From, Replayed: s.Replayed,
		Cached: s.Cached, Ms: float64(took.Microseconds()) / 1000})
}

package algotest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// FormatMsg formats a message the way scripts show it: its type, then the
// fields that are not zero ("request stamp=5 id=1", "token vals=[0 3 0]").
// A zero id is therefore not shown: the header of a delivery names the
// sender.
func FormatMsg(m algo.Msg) string {
	var b strings.Builder
	b.WriteString(m.Type)
	if m.Stamp != 0 {
		fmt.Fprintf(&b, " stamp=%d", m.Stamp)
	}
	if m.ID != 0 {
		fmt.Fprintf(&b, " id=%d", m.ID)
	}
	if m.Term != 0 {
		fmt.Fprintf(&b, " term=%d", m.Term)
	}
	if len(m.Vals) > 0 {
		fmt.Fprintf(&b, " vals=%v", m.Vals)
	}
	return b.String()
}

// FormatOutput formats one output of node id, for scripts and run logs
// alike: "send 1->0 request stamp=5 id=1", "enter", and the outputs of
// election machines: "leader 4 term=2", "start-election term=2",
// "suspect 3", "trust 3", "persist state term=2".
func FormatOutput(id int, o algo.Output) string {
	switch o.Kind {
	case algo.Send:
		return fmt.Sprintf("send %d->%d %s", id, o.To, FormatMsg(o.Msg))
	case algo.SetTimer:
		return fmt.Sprintf("set-timer %s %v", o.TimerName, time.Duration(o.After))
	case algo.CancelTimer:
		return "cancel-timer " + o.TimerName
	case algo.Enter:
		return "enter"
	case algo.Leader:
		s := "leader " + strconv.Itoa(o.Leader)
		if o.Leader < 0 {
			s = "leader none"
		}
		if o.Msg.Term != 0 {
			s += fmt.Sprintf(" term=%d", o.Msg.Term)
		}
		return s
	case algo.MulticastDelivered:
		return fmt.Sprintf("delivered from=%d %s", o.From, FormatMsg(o.Msg))
	case algo.Wait:
		return "wait " + formatSet(o.Set)
	case algo.Note:
		return "note: " + o.Text
	case algo.StartElection:
		if o.Msg.Term != 0 {
			return fmt.Sprintf("start-election term=%d", o.Msg.Term)
		}
		return "start-election"
	case algo.Suspect:
		return "suspect " + strconv.Itoa(o.To)
	case algo.Trust:
		return "trust " + strconv.Itoa(o.To)
	case algo.Persist:
		return "persist " + FormatMsg(o.Msg)
	}
	return fmt.Sprintf("output(%d) %+v", o.Kind, o)
}

func formatSet(s []int) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.Itoa(v)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// describeInput formats node id's input the way scripts head it: a
// delivery with its message, a timer's name, a Recover with the value
// stored, else the input's kind; then the input's clock.
func describeInput(id int, in algo.Input) string {
	switch in.Kind {
	case algo.Receive:
		return fmt.Sprintf("deliver %d->%d %s @%d", in.From, id, FormatMsg(in.Msg), in.Clock)
	case algo.Timer:
		return fmt.Sprintf("timer %s @%d", in.TimerName, in.Clock)
	case algo.Recover:
		if in.Msg.Type != "" {
			return fmt.Sprintf("recover stored=[%s] @%d", FormatMsg(in.Msg), in.Clock)
		}
	}
	return fmt.Sprintf("%s @%d", in.Kind, in.Clock)
}

// formatEvent formats a recorded event for a failure report:
// "t=1.2ms P2#17 send request to P1 (cs) L=9 {"stamp":5}".
func formatEvent(ev *trace.Event) string {
	s := fmt.Sprintf("t=%-10v P%d#%d %s", time.Duration(ev.Wall), ev.Proc, ev.Seq, ev.Kind)
	switch {
	case ev.Kind == trace.KindSend:
		s += fmt.Sprintf(" %s to P%d", ev.MsgType, ev.Peer)
	case ev.Kind == trace.KindReceive:
		s += fmt.Sprintf(" %s from P%d", ev.MsgType, ev.Peer)
	case ev.Peer != trace.NoPeer:
		s += fmt.Sprintf(" P%d", ev.Peer)
	}
	if ev.Resource != "" {
		s += " (" + ev.Resource + ")"
	}
	s += fmt.Sprintf(" L=%d", ev.Lamport)
	if len(ev.Detail) > 0 {
		s += " " + string(ev.Detail)
	}
	return s
}

package algotest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
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

// FormatOutput formats one output of node id.
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
		return "leader " + strconv.Itoa(o.Leader)
	case algo.Delivered:
		return fmt.Sprintf("delivered from=%d %s", o.From, FormatMsg(o.Msg))
	case algo.Wait:
		return "wait " + formatSet(o.Set)
	case algo.Note:
		return "note: " + o.Text
	case algo.StartElection:
		return "start-election"
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

package exec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
)

// The input lines (to the program). Each is one JSON object on one line;
// fields after those of protocol version 1 are additions: "version" and
// "resource" in init, and "clock" everywhere: the Lamport clock dmx
// stamped on the event that records the input, which a program that
// wants dmx's timestamps (to conform: dmx check --conform) uses as its own.

func appendInit(b []byte, m *machine, restart bool, clock uint64) []byte {
	b = append(b, `{"type":"init","node":`...)
	b = strconv.AppendInt(b, int64(m.id), 10)
	b = append(b, `,"nodes":`...)
	b = strconv.AppendInt(b, int64(m.n), 10)
	b = append(b, `,"seed":`...)
	b = strconv.AppendUint(b, m.seed, 10)
	b = append(b, `,"params":{`...)
	for i, k := range slices.Sorted(maps.Keys(m.params)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, m.params[k])
	}
	b = append(b, `},"restart":`...)
	b = strconv.AppendBool(b, restart)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, Version, 10)
	if m.kind == algo.MutualExclusion {
		b = append(b, `,"resource":`...)
		b = appendString(b, m.resource)
	}
	return appendClock(b, clock)
}

// appendRequest is a request or release line.
func appendRequest(b []byte, typ, resource string, clock uint64) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","resource":`...)
	b = appendString(b, resource)
	return appendClock(b, clock)
}

func appendMessage(b []byte, from int, msg algo.Msg, clock uint64) []byte {
	b = append(b, `{"type":"message","from":`...)
	b = strconv.AppendInt(b, int64(from), 10)
	b = append(b, `,"body":`...)
	if msg.Body != "" {
		b = append(b, msg.Body...)
	} else {
		// Not a program's message (none should reach one): its type.
		b = append(b, `{"type":`...)
		b = appendString(b, msg.Type)
		b = append(b, '}')
	}
	return appendClock(b, clock)
}

func appendTimer(b []byte, name string, clock uint64) []byte {
	b = append(b, `{"type":"timer","name":`...)
	b = appendString(b, name)
	return appendClock(b, clock)
}

func appendClock(b []byte, clock uint64) []byte {
	b = append(b, `,"clock":`...)
	b = strconv.AppendUint(b, clock, 10)
	return append(b, '}')
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// OutputTypes are the types of the lines a program writes, version 1's
// and the additions (cancel, election).
var OutputTypes = []string{"send", "enter", "exit", "leader", "waiting", "timer", "cancel", "note", "election", "done"}

// outLine is an output line as read; pointers tell a missing member from
// a zero one.
type outLine struct {
	Type     *string         `json:"type"`
	To       *int            `json:"to"`
	Body     json.RawMessage `json:"body"`
	Resource *string         `json:"resource"`
	Leader   *int            `json:"leader"`
	Term     *uint64         `json:"term"`
	For      *[]int          `json:"for"`
	Name     *string         `json:"name"`
	AfterMS  *float64        `json:"after_ms"`
	Text     *string         `json:"text"`
}

// output takes one line the program wrote: an output, done, or a line
// that is not valid protocol (a finding, and the line is ignored). It
// reports whether the line was done.
func (m *machine) output(l []byte) bool {
	bad := func(format string, args ...any) bool {
		m.fail("P%d: output line %d %s: %s; answering input line %d %s", m.id, m.outNo, quote(l), fmt.Sprintf(format, args...), m.inLine, quote(m.input))
		return false
	}
	t := bytes.TrimSpace(l)
	if len(t) == 0 {
		return bad("an empty line (every line is one JSON object)")
	}
	if t[0] != '{' {
		return bad("not a JSON object (a program writes its diagnostics on stderr)")
	}
	var o outLine
	if err := json.Unmarshal(t, &o); err != nil {
		return bad("%s", jsonProblem(err))
	}
	if o.Type == nil {
		return bad(`no "type" (want one of %s)`, strings.Join(OutputTypes, ", "))
	}
	need := func(name string, ok bool) bool {
		if !ok {
			bad(`a %s line needs "%s"`, *o.Type, name)
		}
		return ok
	}
	proc := func(name string, p int) bool {
		if p < 0 || p >= m.n {
			bad(`"%s": %d is not a node of this run (0..%d)`, name, p, m.n-1)
			return false
		}
		return true
	}
	switch *o.Type {
	case "done":
		return true
	case "send":
		if !need("to", o.To != nil) || !need("body", o.Body != nil) || !proc("to", *o.To) {
			return false
		}
		return m.sendLine(*o.To, o.Body, bad)
	case "enter", "exit":
		return m.csLine(*o.Type, o.Resource, bad)
	case "leader":
		if !need("leader", o.Leader != nil) {
			return false
		}
		if *o.Leader >= m.n || *o.Leader < -1 {
			return bad(`"leader": %d is not a node of this run (0..%d; -1: none)`, *o.Leader, m.n-1)
		}
		out := algo.Output{Kind: algo.Leader, Leader: *o.Leader}
		if o.Term != nil {
			out.Msg.Term = *o.Term
		}
		m.outs = append(m.outs, out)
	case "waiting":
		if !need("for", o.For != nil) {
			return false
		}
		for _, p := range *o.For {
			if !proc("for", p) {
				return false
			}
		}
		m.outs = append(m.outs, algo.WaitFor(*o.For))
	case "timer":
		if !need("name", o.Name != nil && *o.Name != "") || !need("after_ms", o.AfterMS != nil) {
			return false
		}
		ms := *o.AfterMS
		if ms < 0 || math.IsNaN(ms) || ms > float64(24*time.Hour/time.Millisecond) {
			return bad(`"after_ms": %v, want 0 up to a day`, ms)
		}
		m.outs = append(m.outs, algo.SetTimerOut(*o.Name, int64(ms*float64(time.Millisecond))))
	case "cancel":
		if !need("name", o.Name != nil && *o.Name != "") {
			return false
		}
		m.outs = append(m.outs, algo.CancelTimerOut(*o.Name))
	case "note":
		if !need("text", o.Text != nil) {
			return false
		}
		m.outs = append(m.outs, algo.Output{Kind: algo.Note, Text: *o.Text})
	case "election":
		out := algo.Output{Kind: algo.StartElection}
		if o.Term != nil {
			out.Msg.Term = *o.Term
		}
		m.outs = append(m.outs, out)
	default:
		return bad("unknown type %q (want one of %s)", *o.Type, strings.Join(OutputTypes, ", "))
	}
	return false
}

// sendLine takes a send line's body, to process to; bad reports what is
// wrong with the line (and returns false).
func (m *machine) sendLine(to int, raw json.RawMessage, bad func(string, ...any) bool) bool {
	body := bytes.TrimSpace(raw)
	if len(body) > maxBody {
		return bad(`"body": %d bytes, more than the %d a message may carry`, len(body), maxBody)
	}
	var b struct {
		Type *string `json:"type"`
	}
	if body[0] != '{' || json.Unmarshal(body, &b) != nil {
		return bad(`"body" is not a JSON object`)
	}
	if b.Type == nil || *b.Type == "" {
		return bad(`"body" has no "type": the message's type is its body's "type"`)
	}
	m.outs = append(m.outs, algo.SendTo(to, algo.Msg{Type: *b.Type, Body: string(body)}))
	return false
}

// csLine takes an enter or exit line (typ) naming resource (nil: none):
// a program enters the critical section the workload asked for, and exits
// only when the workload releases it.
func (m *machine) csLine(typ string, resource *string, bad func(string, ...any) bool) bool {
	if m.kind != algo.MutualExclusion {
		return bad("an election program enters no critical section (--param kind=%s)", m.kind)
	}
	if resource != nil && *resource != m.resource {
		return bad(`"resource": %q, but this program guards %q`, *resource, m.resource)
	}
	if typ == "enter" {
		switch m.state {
		case held:
			return bad("it entered the critical section of %s while inside it already", m.resource)
		case idle:
			return bad("it entered the critical section of %s, which the workload had not asked for (enter answers a request)", m.resource)
		}
		m.state = held
		m.outs = append(m.outs, algo.EnterCS())
		return false
	}
	if !m.leave {
		if m.state == held {
			return bad("it left the critical section of %s before the workload released it (dmx decides when a process leaves: exit answers release)", m.resource)
		}
		return bad("it left the critical section of %s, which it was not inside", m.resource)
	}
	m.leave = false // its cs_exit is recorded already, with the release
	return false
}

// jsonProblem says what encoding/json found wrong, in the protocol's
// terms.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := te.Type.String()
		switch {
		case strings.Contains(want, "int"), strings.Contains(want, "float"):
			want = "a number"
			if strings.Contains(te.Type.String(), "uint") {
				want = "a number of 0 or more"
			}
		case strings.Contains(want, "string"):
			want = "a string"
		case strings.Contains(want, "[]"):
			want = "an array of numbers"
		}
		if te.Field != "" {
			return fmt.Sprintf(`"%s": want %s, got %s`, te.Field, want, te.Value)
		}
		return fmt.Sprintf("want %s, got %s", want, te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("not valid JSON (at byte %d: %v)", se.Offset, err)
	}
	return "not valid JSON: " + err.Error()
}

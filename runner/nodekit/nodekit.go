package nodekit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"time"
)

// Version is the version of the node protocol nodekit speaks.
const Version = 1

// Body is a message body with the fields dmx's own algorithms use (dmx
// list ALGO shows which each of their messages carries). A program that
// uses them, with these names, can be compared with dmx's algorithm of the
// same vocabulary (dmx check --conform). Any value that encodes to a JSON
// object with a "type" may be sent instead.
type Body struct {
	Type  string   `json:"type"`
	Stamp uint64   `json:"stamp,omitempty"` // a timestamp, e.g. a request's
	ID    int      `json:"id,omitempty"`    // a process id it carries
	Term  uint64   `json:"term,omitempty"`  // an epoch, term or round
	Vals  []uint64 `json:"vals,omitempty"`  // an array
}

// Message is a message delivered to the node.
type Message struct {
	From int
	Type string          // its body's "type"
	Raw  json.RawMessage // its body, exactly as its sender sent it
}

// Decode decodes the message's body into v (a struct, a map, or a *Body).
func (m Message) Decode(v any) error { return json.Unmarshal(m.Raw, v) }

// Body decodes the message's body as a Body.
func (m Message) Body() Body {
	var b Body
	json.Unmarshal(m.Raw, &b)
	return b
}

// Node is one node of a run. Set its handlers, then call Run.
type Node struct {
	ID       int               // this node, 0..N-1
	N        int               // the nodes of the run
	Seed     uint64            // a seed for the node's own random draws (see Rand)
	Params   map[string]string // the run's --param values (dmx's own left out)
	Restart  bool              // this incarnation restarts one that crashed
	Resource string            // the resource this program guards (mutual exclusion)
	// Clock is the Lamport clock dmx stamped on the input being handled:
	// a request's timestamp, for a program that uses dmx's clock.
	Clock uint64
	// Rand draws from Seed: the same seed, the same draws.
	Rand *rand.Rand

	// The handlers; nil ones ignore their input.
	OnInit    func()
	OnRequest func(resource string)
	OnRelease func(resource string)
	OnMessage func(m Message)
	OnTimer   func(name string)

	out *bufio.Writer
	err error
	buf []byte
}

// New returns a node with no handlers.
func New() *Node { return &Node{} }

// input is one input line.
type input struct {
	Type     string            `json:"type"`
	Node     int               `json:"node"`
	Nodes    int               `json:"nodes"`
	Seed     uint64            `json:"seed"`
	Params   map[string]string `json:"params"`
	Restart  bool              `json:"restart"`
	Resource string            `json:"resource"`
	From     int               `json:"from"`
	Body     json.RawMessage   `json:"body"`
	Name     string            `json:"name"`
	Clock    uint64            `json:"clock"`
}

// Run serves the protocol on stdin and stdout until stdin ends.
func (n *Node) Run() error { return n.Serve(os.Stdin, os.Stdout) }

// Serve serves the protocol: it reads input lines from r, calls the
// handler of each, and writes its outputs and done to w, flushed after
// each input. It returns nil when r ends, or the first error reading r,
// decoding a line or writing w.
func (n *Node) Serve(r io.Reader, w io.Writer) error {
	n.out = bufio.NewWriter(w)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var in input
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			return fmt.Errorf("nodekit: input line %q: %w", sc.Bytes(), err)
		}
		n.Clock = in.Clock
		switch in.Type {
		case "init":
			n.ID, n.N, n.Seed, n.Params, n.Restart, n.Resource = in.Node, in.Nodes, in.Seed, in.Params, in.Restart, in.Resource
			n.Rand = rand.New(rand.NewPCG(in.Seed, uint64(in.Node)))
			if n.OnInit != nil {
				n.OnInit()
			}
		case "request":
			if n.OnRequest != nil {
				n.OnRequest(in.Resource)
			}
		case "release":
			if n.OnRelease != nil {
				n.OnRelease(in.Resource)
			}
		case "message":
			var b struct {
				Type string `json:"type"`
			}
			json.Unmarshal(in.Body, &b)
			if n.OnMessage != nil {
				n.OnMessage(Message{From: in.From, Type: b.Type, Raw: in.Body})
			}
		case "timer":
			if n.OnTimer != nil {
				n.OnTimer(in.Name)
			}
		}
		n.write(line{Type: "done"})
		if err := n.out.Flush(); err != nil && n.err == nil {
			n.err = err
		}
		if n.err != nil {
			return n.err
		}
	}
	return sc.Err()
}

// line is an output line, "type" first.
type line struct {
	Type     string          `json:"type"`
	To       *int            `json:"to,omitempty"`
	Body     json.RawMessage `json:"body,omitempty"`
	Resource *string         `json:"resource,omitempty"`
	Leader   *int            `json:"leader,omitempty"`
	Term     *uint64         `json:"term,omitempty"`
	For      *[]int          `json:"for,omitempty"`
	Name     *string         `json:"name,omitempty"`
	AfterMS  *float64        `json:"after_ms,omitempty"`
	Text     *string         `json:"text,omitempty"`
}

// write writes one output line.
func (n *Node) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		if n.err == nil {
			n.err = fmt.Errorf("nodekit: %w", err)
		}
		return
	}
	n.out.Write(b)
	n.out.WriteByte('\n')
}

// Send sends body to node to. body encodes to a JSON object whose "type"
// is the message's type: a Body, a struct of your own, or a map.
func (n *Node) Send(to int, body any) {
	b, err := json.Marshal(body)
	if err != nil {
		n.err = errors.Join(n.err, fmt.Errorf("nodekit: send to %d: %w", to, err))
		return
	}
	n.write(line{Type: "send", To: &to, Body: b})
}

// Broadcast sends body to every other node, in the order of their ids.
func (n *Node) Broadcast(body any) {
	for j := 0; j < n.N; j++ {
		if j != n.ID {
			n.Send(j, body)
		}
	}
}

// Enter says the node is now in the critical section of resource: the
// answer to a request, when the algorithm lets it in.
func (n *Node) Enter(resource string) {
	n.write(line{Type: "enter", Resource: &resource})
}

// Exit says the node has left the critical section of resource: the
// answer to a release.
func (n *Node) Exit(resource string) {
	n.write(line{Type: "exit", Resource: &resource})
}

// Leader says the node decided that leader leads (in term, if not 0).
func (n *Node) Leader(leader int, term uint64) {
	l := line{Type: "leader", Leader: &leader}
	if term != 0 {
		l.Term = &term
	}
	n.write(l)
}

// Waiting says whom the node now waits for (none: it no longer waits),
// for dmx's deadlock check.
func (n *Node) Waiting(ids ...int) {
	ids = append([]int{}, ids...)
	sort.Ints(ids)
	n.write(line{Type: "waiting", For: &ids})
}

// Timer sets the timer name to fire after d (a timer of that name set
// before is replaced): OnTimer(name) then. Under dmx sim d is simulated
// time.
func (n *Node) Timer(name string, d time.Duration) {
	ms := float64(d) / float64(time.Millisecond)
	n.write(line{Type: "timer", Name: &name, AfterMS: &ms})
}

// Cancel cancels the timer name, if it is set.
func (n *Node) Cancel(name string) {
	n.write(line{Type: "cancel", Name: &name})
}

// Note records a note event in the trace.
func (n *Node) Note(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	n.write(line{Type: "note", Text: &text})
}

package trace

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Kind is the kind of an event. The set is open: importers may record kinds
// of their own, and analyzers ignore kinds they do not know.
type Kind string

// The event kinds dmx itself records (DESIGN.md, "Event kinds").
const (
	KindStart         Kind = "start"          // a process began (detail: Start)
	KindSend          Kind = "send"           // a message left; Msg, Peer (receiver), MsgType set (detail: Message)
	KindReceive       Kind = "receive"        // a message was delivered to the algorithm; Msg, Peer (sender) set
	KindDrop          Kind = "drop"           // a message was discarded by fault injection; Msg and Peer set (detail: Drop)
	KindInternal      Kind = "internal"       // anything else worth recording (detail: Persist, Multicast, Note, Failure)
	KindCSRequest     Kind = "cs_request"     // the workload asked for Resource
	KindCSEnter       Kind = "cs_enter"       // the algorithm let the process into Resource
	KindCSExit        Kind = "cs_exit"        // the process left Resource
	KindElectionStart Kind = "election_start" // the process started an election (detail: ElectionStart)
	KindLeader        Kind = "leader"         // the process decided who leads (detail: Leader)
	KindCrash         Kind = "crash"          // the process crashed (detail: Crash)
	KindRecover       Kind = "recover"        // the process came back
	KindTimeout       Kind = "timeout"        // a timer of the algorithm fired (detail: Timeout)
	KindDeliver       Kind = "deliver"        // a totally-ordered multicast was delivered (detail: Delivery)
	KindWait          Kind = "wait"           // the waiting-for set changed (detail: Wait)
	KindStop          Kind = "stop"           // the process ended normally
	KindSuspect       Kind = "suspect"        // the failure detector began to suspect Peer
	KindTrust         Kind = "trust"          // the failure detector stopped suspecting Peer
	KindFault         Kind = "fault"          // an injected fault began, ended, or could not be applied (detail: Fault)
)

// Kinds are the kinds of events dmx records.
var Kinds = []Kind{KindStart, KindSend, KindReceive, KindDrop, KindInternal, KindCSRequest, KindCSEnter,
	KindCSExit, KindElectionStart, KindLeader, KindCrash, KindRecover, KindTimeout, KindDeliver, KindWait,
	KindStop, KindSuspect, KindTrust, KindFault}

// Known reports whether dmx records events of kind k (an imported trace
// may hold others).
func (k Kind) Known() bool { return slices.Contains(Kinds, k) }

// NoPeer is the Peer of an event that involves no other process.
const NoPeer = -1

// Event is one recorded event. Proc and Seq identify it within its run: Seq
// counts the events of Proc from 1 without gaps, in program order.
type Event struct {
	ID       int64  // row id in a store; 0 for events not read from a store
	Run      int64  // run id in a store
	Proc     int    // process id, 0..N-1
	Seq      int64  // 1-based position in Proc's program order
	Kind     Kind   // what happened
	Lamport  uint64 // Lamport clock as recorded (0: not recorded)
	VC       VC     // vector clock as recorded (nil: not recorded)
	Wall     int64  // wall-clock time in ns since the Unix epoch (simulated runs: simulated ns)
	Msg      int64  // message id for send, receive and drop; 0 otherwise
	MsgType  string // message type, for send/receive/drop
	Peer     int    // the other process of a send/receive/drop, or a wait target; NoPeer if none
	Resource string // resource name for cs_* and wait events
	// Detail is the kind-specific JSON object (see Detail and the
	// accessors, e.g. Leader); nil if none.
	Detail json.RawMessage
}

// String formats the event the way findings and errors name events:
// "P2#17 cs_enter(cs)".
func (e *Event) String() string {
	s := fmt.Sprintf("P%d#%d %s", e.Proc, e.Seq, e.Kind)
	switch {
	case e.Resource != "":
		s += "(" + e.Resource + ")"
	case e.Kind == KindSend || e.Kind == KindReceive || e.Kind == KindDrop:
		dir := "to"
		if e.Kind == KindReceive {
			dir = "from"
		}
		s += fmt.Sprintf("(%s %s P%d)", e.MsgType, dir, e.Peer)
	}
	return s
}

// Ref names an event within a run: its process and sequence number.
type Ref struct {
	Proc int
	Seq  int64
}

func (r Ref) String() string { return fmt.Sprintf("P%d#%d", r.Proc, r.Seq) }

// Ref returns the event's reference.
func (e *Event) Ref() Ref { return Ref{e.Proc, e.Seq} }

// MsgID makes the id of the k-th message (k >= 1) sent by process from.
// Message ids are unique within a run; users should treat them as opaque.
func MsgID(from int, k int64) int64 { return int64(from)<<32 | k }

// MsgName says which message id is for a reader: "P2's message 1" for the
// id MsgID(2, 1), 8589934593, that dmx's runtime gives P2's first message
// (the number alone told nobody anything), and "message N" for an id made
// otherwise (an imported log's).
func MsgName(id int64, from int) string {
	if from >= 0 && id>>32 == int64(from) && id&(1<<32-1) != 0 {
		return fmt.Sprintf("P%d's message %d", from, id&(1<<32-1))
	}
	return fmt.Sprintf("message %d", id)
}

// Run describes one recorded run (a row of the runs table).
type Run struct {
	ID        int64
	Algorithm string
	Nodes     int
	Seed      uint64
	// NoSeed says the run has no seed: an imported log of a program dmx
	// did not run. It is stored as an empty seed column and read back so;
	// Seed is then 0.
	NoSeed      bool
	Mode        string          // "udp", "sim" or "import"
	Params      json.RawMessage // algorithm and workload parameters
	Faults      json.RawMessage // fault specification, JSON array
	ToolVersion string
	Started     int64 // wall ns
	Ended       int64 // wall ns, 0 while running
	Complete    bool  // the run ended normally and the trace holds all of it
	Status      string
	Names       []string // optional process names (imports); index = Proc
}

// FaultKinds returns the kinds of the run's faults (of texts such as
// "pause:2@10ms-20ms"), each once, sorted; none for a run without faults
// or a Faults that is not a JSON array of texts.
func (r Run) FaultKinds() []string {
	var fs []string
	if len(r.Faults) == 0 || json.Unmarshal(r.Faults, &fs) != nil {
		return nil
	}
	var out []string
	for _, f := range fs {
		k := f
		if i := strings.IndexAny(k, ":@"); i >= 0 {
			k = k[:i]
		}
		if k != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Reader hands out the events of one run one at a time, each process's
// events in program order. Next returns io.EOF after the last event. The
// returned Event may be reused by the next call: copy what must be kept.
type Reader interface {
	Next() (*Event, error)
}

// SliceReader is a Reader over events in memory.
type SliceReader struct {
	Events []Event
	i      int
}

// Next implements Reader.
func (r *SliceReader) Next() (*Event, error) {
	if r.i >= len(r.Events) {
		return nil, errEOF
	}
	r.i++
	return &r.Events[r.i-1], nil
}

// ParseRef reads an event reference as Ref.String writes it: "P3#40"
// (the P may be lower case or left out: "3#40").
func ParseRef(s string) (Ref, error) {
	proc, seq, ok := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(s, "P"), "p"), "#")
	p, err1 := strconv.Atoi(proc)
	q, err2 := strconv.ParseInt(seq, 10, 64)
	if !ok || err1 != nil || err2 != nil || p < 0 || q < 1 {
		return Ref{}, fmt.Errorf("event %q: want PROCESS#SEQ, e.g. P3#40", s)
	}
	return Ref{Proc: p, Seq: q}, nil
}

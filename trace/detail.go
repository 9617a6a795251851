package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// An event's detail column holds a JSON object whose shape depends on the
// event's kind. This file owns those shapes: one Go type per shape, one
// encoder (AppendDetail) that the runtime records with, and one decoder
// (Event.Details and the typed accessors below) that checks, renderers and
// importers read with.
//
// The encoder writes the bytes dmx always wrote (keys in the same order,
// the same members left out when empty), because the detail column is part
// of the public schema and the simulator's traces are compared byte for
// byte. The decoder reads traces dmx did not write too: unknown keys are
// skipped, a null member counts as absent, integers may be written as
// whole floats (3.0) or quoted ("3"), and anything else it cannot read is an
// error that names the event, the key and what is wrong with it.
//
// Adding a member to a shape (say "model" to Wait) is one field in its type,
// one line in its appendDetail and one case in its decoder.

// Detail is the typed detail of an event. Its dynamic type is one of
// Start, Crash, ElectionStart, Leader, Wait, Timeout, Delivery, Message,
// Drop, Fault, Persist, Multicast, Note and Failure; Event.Details returns the one that
// the event's kind (and, for internal events, its keys) calls for. The set
// is closed: a detail of another shape (an importer's, say) is written to
// Event.Detail as JSON directly, and read from there.
type Detail interface {
	appendDetail(b []byte) []byte
}

// AppendDetail appends the JSON encoding of d, as the events table's detail
// column holds it, to b. A detail with nothing to say (a Message without
// fields, or nil) appends nothing: such an event has no detail.
func AppendDetail(b []byte, d Detail) []byte {
	if d == nil {
		return b
	}
	return d.appendDetail(b)
}

// EncodeDetail returns the JSON encoding of d, or nil if d has nothing to
// say. The result is what Event.Detail holds.
func EncodeDetail(d Detail) json.RawMessage {
	b := AppendDetail(nil, d)
	if len(b) == 0 {
		return nil
	}
	return b
}

// Start is the detail of a start event: what the process was started as.
type Start struct {
	Algorithm string   // the algorithm's name
	N         int      // processes in the run
	Resources []string // the resources its workload asks for; nil if none is named
	// Origin is the wall-clock time (Unix ns) the run's time counts from:
	// the machines of a real run see Input.Now = the wall time of the
	// event that recorded the input minus Origin, so that a replay gives
	// them the same values. 0 (and left out, "t0") in simulated runs,
	// whose wall times are the simulated time itself.
	Origin int64
	// Addr is the address the process's node listened on in a real run
	// ("198.18.0.3:41235" under dmx run --net netns, "127.0.0.1:41235"
	// over loopback); "" (left out) in simulated runs.
	Addr string
	// Netns names the network namespace the process ran in (dmx run --net
	// netns: "dmx-k3f9q2-3"); "" (left out) when it shared the host's.
	Netns string
}

func (d Start) appendDetail(b []byte) []byte {
	b = append(b, `{"algorithm":`...)
	b = appendString(b, d.Algorithm)
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, int64(d.N), 10)
	b = append(b, `,"resources":`...)
	if d.Resources == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, r := range d.Resources {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, r)
		}
		b = append(b, ']')
	}
	if d.Origin != 0 {
		b = append(b, `,"t0":`...)
		b = strconv.AppendInt(b, d.Origin, 10)
	}
	if d.Addr != "" {
		b = append(b, `,"addr":`...)
		b = appendString(b, d.Addr)
	}
	if d.Netns != "" {
		b = append(b, `,"netns":`...)
		b = appendString(b, d.Netns)
	}
	return append(b, '}')
}

func (d *Start) decode(detail []byte) error {
	return fields(detail, func(k, v []byte) (err error) {
		switch string(k) {
		case "algorithm":
			d.Algorithm, err = jsonString(v)
		case "n":
			d.N, err = jsonIntN(v)
		case "resources":
			d.Resources, err = jsonArray(v, jsonString)
		case "t0":
			d.Origin, err = jsonInt(v)
		case "addr":
			d.Addr, err = jsonString(v)
		case "netns":
			d.Netns, err = jsonString(v)
		}
		return err
	})
}

// Crash is the detail of a crash event, and the shape a recover event's
// detail takes: why the process went down, and the injected fault that
// brought it down, if one did. dmx records a recover event's detail only
// for a restart with amnesia ({"amnesia":true,...}): a replay must restart
// the process without what it persisted.
type Crash struct {
	Reason string // e.g. "killed by SIGKILL", "fault crash(P1@2s)"
	Fault  string // the fault that caused it; "" if none or if Reason names it
	// Amnesia, on a recover event, says the process restarted without
	// what its machines persisted (a recover:P:amnesia fault).
	Amnesia bool
}

func (d Crash) appendDetail(b []byte) []byte {
	b = append(b, '{')
	if d.Amnesia {
		b = append(b, `"amnesia":true,`...)
	}
	if d.Fault != "" {
		b = append(b, `"fault":`...)
		b = appendString(b, d.Fault)
		b = append(b, ',')
	}
	b = append(b, `"reason":`...)
	b = appendString(b, d.Reason)
	return append(b, '}')
}

func (d *Crash) decode(detail []byte) error {
	return fields(detail, func(k, v []byte) (err error) {
		switch string(k) {
		case "reason":
			d.Reason, err = jsonString(v)
		case "fault":
			d.Fault, err = jsonString(v)
		case "amnesia":
			d.Amnesia, err = jsonBool(v)
		}
		return err
	})
}

// ElectionStart is the detail of an election_start event.
type ElectionStart struct {
	Term uint64 // the election's number; 0 if the algorithm numbers none
}

func (d ElectionStart) appendDetail(b []byte) []byte {
	b = append(b, `{"term":`...)
	b = strconv.AppendUint(b, d.Term, 10)
	return append(b, '}')
}

// Leader is the detail of a leader event: a process decided who leads.
type Leader struct {
	Leader int    // the process decided on; negative: no leader known
	Term   uint64 // the term or election it was decided in; 0 if none
}

func (d Leader) appendDetail(b []byte) []byte {
	b = append(b, `{"leader":`...)
	b = strconv.AppendInt(b, int64(d.Leader), 10)
	b = append(b, `,"term":`...)
	b = strconv.AppendUint(b, d.Term, 10)
	return append(b, '}')
}

// term is the one rule for the number of an election, which the elections
// view of the schema applies too: a detail's "election" if it has one, else
// its "term" (dmx writes "term"; other tools number elections).
type term struct {
	election, term uint64
	hasElection    bool
}

// read reads key if it is one of the two.
func (t *term) read(key, v []byte) (err error) {
	switch string(key) {
	case "election":
		t.election, err = jsonUint(v)
		t.hasElection = true
	case "term":
		t.term, err = jsonUint(v)
	}
	return err
}

func (t *term) value() uint64 {
	if t.hasElection {
		return t.election
	}
	return t.term
}

// Wait is the detail of a wait event: the processes the event's process now
// waits for (on the event's Resource), and whether it waits for all of them
// or for any one.
type Wait struct {
	// WaitingFor is the waiting-for set, sorted; nil or empty when the
	// process no longer waits.
	WaitingFor []int
	// Model is WaitAll ("", the AND model of seed 001: every process of
	// the set must act before this one goes on; what dmx's algorithms
	// record) or WaitAny ("or", the OR model: any one of them will do,
	// as a process waiting for the first of several replies).
	Model string
}

// The models of a wait (Wait.Model).
const (
	WaitAll = ""   // the AND model; a detail says so by no "model", or "and"
	WaitAny = "or" // the OR model: {"model":"or"}
)

// appendDetail writes an AND wait as dmx always did, without a model, and
// an OR wait with "model" first, as encoding/json orders a map's keys. An
// empty set is [], never null, so that json_array_length reads 0.
func (d Wait) appendDetail(b []byte) []byte {
	b = append(b, '{')
	if d.Model == WaitAny {
		b = append(b, `"model":"or",`...)
	}
	b = append(b, `"waiting_for":`...)
	if d.WaitingFor == nil {
		b = append(b, "[]"...)
	} else {
		b = appendInts(b, d.WaitingFor)
	}
	return append(b, '}')
}

func appendInts(b []byte, xs []int) []byte {
	if xs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

// Timeout is the detail of a timeout event: which timer of the algorithm
// fired.
type Timeout struct {
	Timer string
}

func (d Timeout) appendDetail(b []byte) []byte {
	b = append(b, `{"timer":`...)
	b = appendString(b, d.Timer)
	return append(b, '}')
}

func (d *Timeout) decode(detail []byte) error {
	return fields(detail, func(k, v []byte) (err error) {
		if string(k) == "timer" {
			d.Timer, err = jsonString(v)
		}
		return err
	})
}

// Delivery is the detail of a deliver event: which totally-ordered
// multicast was delivered. (From, Stamp, ID) names the multicast; every
// process that delivers it records the same three.
type Delivery struct {
	From  int    // the process that multicast it
	Stamp uint64 // its timestamp
	ID    int    // its id at its origin
}

func (d Delivery) appendDetail(b []byte) []byte {
	b = append(b, `{"from":`...)
	b = strconv.AppendInt(b, int64(d.From), 10)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, int64(d.ID), 10)
	b = append(b, `,"stamp":`...)
	b = strconv.AppendUint(b, d.Stamp, 10)
	return append(b, '}')
}

func (d *Delivery) decode(detail []byte) error {
	if t := trimSpace(detail); len(t) == 0 || isNull(t) {
		return errors.New("no detail, so no multicast named")
	}
	return fields(detail, func(k, v []byte) (err error) {
		switch string(k) {
		case "from":
			d.From, err = jsonIntN(v)
		case "stamp":
			d.Stamp, err = jsonUint(v)
		case "id":
			d.ID, err = jsonIntN(v)
		}
		return err
	})
}

// Message is an algorithm message: the detail of a send, receive or drop
// event, and what Persist holds. Its fields are those of runner/algo.Msg, in
// the same order, so that each converts to the other.
//
// In the detail of a send, receive or drop only Stamp, ID, Term, Vals and Body
// appear, each only when set: Type and Resource are the event's MsgType and
// Resource columns, and Event.Message fills them in from there.
type Message struct {
	Type     string   // e.g. "request", "ok", "token"
	Resource string   // the resource of the algorithm instance it belongs to
	Stamp    uint64   // an algorithm timestamp
	ID       int      // a process id it carries
	Term     uint64   // an epoch, term or round
	Vals     []uint64 // arrays (ra-token's token[], a ring election's ids)
	// Body is a foreign program's message as it sent it (the node
	// protocol, runner/exec): a JSON object, kept raw. Empty for dmx's own
	// algorithms.
	Body string
}

// IDMessage is a Message whose ID is recorded even when it is 0: its
// type carries a process id (runner/algo.Spec.IDTypes), and P0's is 0.
type IDMessage Message

func (m IDMessage) appendDetail(b []byte) []byte {
	b = append(b, '{')
	return append(Message(m).appendFieldsID(b, len(b), true), '}')
}

// appendDetail writes the hot path of recording: every send and receive
// has one, so it is written by hand, without reflection.
func (m Message) appendDetail(b []byte) []byte {
	if m.Stamp == 0 && m.ID == 0 && m.Term == 0 && len(m.Vals) == 0 && m.Body == "" {
		return b
	}
	b = append(b, '{')
	return append(m.appendFields(b, len(b)), '}')
}

// appendFields appends m's set fields among Stamp, ID, Term, Vals and Body, each
// preceded by a comma unless it is the first one and the object opened at
// offset open.
func (m Message) appendFields(b []byte, open int) []byte {
	return m.appendFieldsID(b, open, false)
}

// appendFieldsID is appendFields, with ID written even when it is 0 if
// keepID.
func (m Message) appendFieldsID(b []byte, open int, keepID bool) []byte {
	sep := func(b []byte) []byte {
		if len(b) > open {
			b = append(b, ',')
		}
		return b
	}
	if m.Stamp != 0 {
		b = append(sep(b), `"stamp":`...)
		b = strconv.AppendUint(b, m.Stamp, 10)
	}
	if m.ID != 0 || keepID {
		b = append(sep(b), `"id":`...)
		b = strconv.AppendInt(b, int64(m.ID), 10)
	}
	if m.Term != 0 {
		b = append(sep(b), `"term":`...)
		b = strconv.AppendUint(b, m.Term, 10)
	}
	if len(m.Vals) > 0 {
		b = append(sep(b), `"vals":`...)
		b = VC(m.Vals).AppendText(b)
	}
	if m.Body != "" {
		// Raw: the runtime takes a body only once it is a valid JSON
		// object (runner/exec checks every line it reads).
		b = append(sep(b), `"body":`...)
		b = append(b, m.Body...)
	}
	return b
}

// appendFull appends all of m as one JSON object, type and resource
// included, the way encoding/json writes runner/algo.Msg.
func (m Message) appendFull(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, m.Type)
	if m.Resource != "" {
		b = append(b, `,"resource":`...)
		b = appendString(b, m.Resource)
	}
	return append(m.appendFields(b, -1), '}') // -1: a comma before the first, type came first
}

// decode reads a message's members; Type and Resource only if full. Empty
// Vals are nil: a message has them or not, as its encoding does.
func (m *Message) decode(detail []byte, full bool) error {
	defer func() {
		if len(m.Vals) == 0 {
			m.Vals = nil
		}
	}()
	return fields(detail, func(k, v []byte) (err error) {
		switch string(k) {
		case "stamp":
			m.Stamp, err = jsonUint(v)
		case "id":
			m.ID, err = jsonIntN(v)
		case "term":
			m.Term, err = jsonUint(v)
		case "vals":
			m.Vals, err = jsonArray(v, jsonUint)
		case "body":
			if !isNull(trimSpace(v)) {
				m.Body = string(trimSpace(v))
			}
		case "type":
			if full {
				m.Type, err = jsonString(v)
			}
		case "resource":
			if full {
				m.Resource, err = jsonString(v)
			}
		}
		return err
	})
}

// Drop is the detail of a drop event: the message an injected fault
// discarded (its fields as in a send's detail), the fault, and whether the
// transport sends it again. A message whose datagram was dropped and sent
// again has a drop event for each lost copy, and its receive when a copy
// gets through (its fate is then delivered); with Resend false the drop is
// final and its fate is dropped.
type Drop struct {
	Msg    Message // Type and Resource come from the event's columns
	Fault  string  // the fault that dropped it, e.g. "loss:20%"; "" if not known
	Resend bool    // the transport retransmits it (reliable channels)
}

func (d Drop) appendDetail(b []byte) []byte {
	if d.Fault == "" && !d.Resend {
		return d.Msg.appendDetail(b)
	}
	open := len(b)
	b = d.Msg.appendFields(append(b, '{'), open+1)
	if len(b) > open+1 {
		b = append(b, ',')
	}
	b = append(b, `"fault":`...)
	b = appendString(b, d.Fault)
	if d.Resend {
		b = append(b, `,"resend":true`...)
	}
	return append(b, '}')
}

func (d *Drop) decode(detail []byte) error {
	if err := d.Msg.decode(detail, false); err != nil {
		return err
	}
	return fields(detail, func(k, v []byte) (err error) {
		switch string(k) {
		case "fault":
			d.Fault, err = jsonString(v)
		case "resend":
			d.Resend, err = jsonBool(v)
		}
		return err
	})
}

// The phases of an injected fault, as a fault event's detail names them.
const (
	FaultStart      = "start"       // the fault now acts at this process (a partition began, the process pauses, its clock is set off)
	FaultEnd        = "end"         // it no longer does (healed, resumed)
	FaultNotApplied = "not applied" // it could not be carried out; Reason says why
)

// Fault is the detail of a fault event: an injected fault, in the fault
// language's canonical form, began or ended acting at the event's process,
// or could not be applied at all (then recorded at the lowest live
// process, which stands for the injector).
type Fault struct {
	Fault  string // e.g. "partition:0+1@1s-2s"
	Phase  string // FaultStart, FaultEnd or FaultNotApplied
	Reason string // why it was not applied; "" otherwise
	// By says what made a network fault of a real run: FaultByKernel
	// (nftables rules, netem) or FaultByTransport (dmx's transport judged
	// each datagram); "" (left out) for other faults and in simulated
	// runs. How says it in words: the kernel's means, or why the
	// transport made it; at the end of a kernel fault, what it dropped.
	By  string
	How string
}

// What made a network fault (Fault.By).
const (
	FaultByKernel    = "kernel"
	FaultByTransport = "transport"
)

func (d Fault) appendDetail(b []byte) []byte {
	b = append(b, `{"fault":`...)
	b = appendString(b, d.Fault)
	b = append(b, `,"phase":`...)
	b = appendString(b, d.Phase)
	if d.Reason != "" {
		b = append(b, `,"reason":`...)
		b = appendString(b, d.Reason)
	}
	if d.By != "" {
		b = append(b, `,"by":`...)
		b = appendString(b, d.By)
	}
	if d.How != "" {
		b = append(b, `,"how":`...)
		b = appendString(b, d.How)
	}
	return append(b, '}')
}

func (d *Fault) decode(detail []byte) error {
	return fields(detail, func(k, v []byte) (err error) {
		switch string(k) {
		case "fault":
			d.Fault, err = jsonString(v)
		case "phase":
			d.Phase, err = jsonString(v)
		case "reason":
			d.Reason, err = jsonString(v)
		case "by":
			d.By, err = jsonString(v)
		case "how":
			d.How, err = jsonString(v)
		}
		return err
	})
}

// Persist is the detail of an internal event that records what an
// algorithm instance saved to stable storage: a restarted process gets it
// back.
type Persist struct {
	State Message
}

func (d Persist) appendDetail(b []byte) []byte {
	b = append(b, `{"persist":`...)
	b = d.State.appendFull(b)
	return append(b, '}')
}

// Multicast is the detail of the internal event with which a multicast
// algorithm's process starts a multicast that its workload asked for.
type Multicast struct {
	Entry    int    // 1 for the first multicast of the process on Resource, 2...
	Resource string // the workload's resource it counts as an entry of
}

func (d Multicast) appendDetail(b []byte) []byte {
	b = append(b, `{"multicast":`...)
	b = strconv.AppendInt(b, int64(d.Entry), 10)
	b = append(b, `,"resource":`...)
	b = appendString(b, d.Resource)
	return append(b, '}')
}

// Note is the detail of an internal event that says something in words: an
// algorithm's note, or the runtime's about a message it ignored.
type Note struct {
	Text string
	Msg  int64 // the message it is about; 0 if none
}

func (d Note) appendDetail(b []byte) []byte {
	b = append(b, '{')
	if d.Msg != 0 {
		b = append(b, `"msg":`...)
		b = strconv.AppendInt(b, d.Msg, 10)
		b = append(b, ',')
	}
	b = append(b, `"note":`...)
	b = appendString(b, d.Text)
	return append(b, '}')
}

// Failure is the detail of an internal event that records a broken rule of
// the runtime's contract, such as an algorithm sending to a process that
// does not exist.
type Failure struct {
	Text string
}

func (d Failure) appendDetail(b []byte) []byte {
	b = append(b, `{"error":`...)
	b = appendString(b, d.Text)
	return append(b, '}')
}

// decodeInternal reads the detail of an internal event, whose shape its
// keys tell: "persist", "multicast", "error" or "note". It returns nil for
// an internal event with none of them.
func decodeInternal(detail []byte) (Detail, error) {
	var persist, multicast, failure, note, resource, msg []byte
	err := fields(detail, func(k, v []byte) error {
		switch string(k) {
		case "persist":
			persist = v
		case "multicast":
			multicast = v
		case "error":
			failure = v
		case "note":
			note = v
		case "resource":
			resource = v
		case "msg":
			msg = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	member := func(key string, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	}
	switch {
	case persist != nil:
		var d Persist
		if err := d.State.decode(persist, true); err != nil {
			return nil, member("persist", err)
		}
		return d, nil
	case multicast != nil:
		var d Multicast
		var err error
		if d.Entry, err = jsonIntN(multicast); err != nil {
			return nil, member("multicast", err)
		}
		if resource != nil {
			if d.Resource, err = jsonString(resource); err != nil {
				return nil, member("resource", err)
			}
		}
		return d, nil
	case failure != nil:
		s, err := jsonString(failure)
		if err != nil {
			return nil, member("error", err)
		}
		return Failure{s}, nil
	case note != nil:
		var d Note
		var err error
		if d.Text, err = jsonString(note); err != nil {
			return nil, member("note", err)
		}
		if msg != nil {
			if d.Msg, err = jsonInt(msg); err != nil {
				return nil, member("msg", err)
			}
		}
		return d, nil
	}
	return nil, nil
}

// The accessors. Each reads the detail of an event of its kind and returns
// an error naming the event if the event is of another kind or its detail
// cannot be read. The value returned with an error is what the event says
// without its detail (for Leader, Peer as the leader; for Wait, Peer as the
// one process waited for), so that a reader that tolerates a broken detail,
// as the election checks do, carries on from there.

// Details returns the typed detail of the event, whose dynamic type its
// kind selects: Start, Crash (crash and recover), ElectionStart, Leader,
// Wait, Timeout, Delivery, Message (send, receive), Drop, Fault and, for internal
// events, whichever of Persist, Multicast, Failure and Note its keys name.
// It returns nil and no error for kinds without a detail of their own
// (cs_request, stop, kinds of an importer...) and for internal events that
// are none of those four. With an error, the detail is what the kind's
// accessor returns with it.
func (e *Event) Details() (Detail, error) {
	switch e.Kind {
	case KindStart:
		return detail(e.Start())
	case KindCrash, KindRecover:
		return detail(e.Crash())
	case KindElectionStart:
		return detail(e.ElectionStart())
	case KindLeader:
		return detail(e.Leader())
	case KindWait:
		return detail(e.Wait())
	case KindTimeout:
		return detail(e.Timeout())
	case KindDeliver:
		return detail(e.Delivery())
	case KindSend, KindReceive:
		return detail(e.Message())
	case KindDrop:
		return detail(e.Drop())
	case KindFault:
		return detail(e.Fault())
	case KindInternal:
		d, err := decodeInternal(e.Detail)
		if err != nil {
			return nil, e.badDetail(err)
		}
		return d, nil
	}
	return nil, nil
}

func detail[T Detail](d T, err error) (Detail, error) { return d, err }

// Start returns the detail of a start event.
func (e *Event) Start() (Start, error) { return read[Start](e, e.Kind == KindStart, "a start") }

// Crash returns the detail of a crash or recover event.
func (e *Event) Crash() (Crash, error) {
	return read[Crash](e, e.Kind == KindCrash || e.Kind == KindRecover, "a crash or recover")
}

// ElectionStart returns the detail of an election_start event. Its Term is
// the detail's "election", else its "term", as the elections view reads it.
func (e *Event) ElectionStart() (ElectionStart, error) {
	if e.Kind != KindElectionStart {
		return ElectionStart{}, e.notKind("an election_start")
	}
	var t term
	err := fields(e.Detail, t.read)
	if err != nil {
		return ElectionStart{}, e.badDetail(err)
	}
	return ElectionStart{Term: t.value()}, nil
}

// Leader returns the detail of a leader event. The leader is the detail's
// "leader", else the event's Peer; the term is the detail's "election",
// else its "term". The elections view of the schema reads both the same
// way.
func (e *Event) Leader() (Leader, error) {
	d := Leader{Leader: e.Peer}
	if e.Kind != KindLeader {
		return d, e.notKind("a leader")
	}
	var t term
	err := fields(e.Detail, func(k, v []byte) (err error) {
		if string(k) == "leader" {
			d.Leader, err = jsonIntN(v)
			return err
		}
		return t.read(k, v)
	})
	if err != nil {
		return Leader{Leader: e.Peer}, e.badDetail(err)
	}
	d.Term = t.value()
	return d, nil
}

// Wait returns the detail of a wait event. A trace that names the one
// process waited for in Peer instead of a "waiting_for" set (or sets it to
// null) waits for Peer; one with neither waits for nobody. Its "model" is
// "and" (or absent: WaitAll) or "or" (WaitAny), in any case; another model
// is an error, and the wait is then taken for an AND wait.
func (e *Event) Wait() (Wait, error) {
	var d Wait
	if e.Kind != KindWait {
		return d, e.notKind("a wait")
	}
	err := fields(e.Detail, func(k, v []byte) (err error) {
		switch string(k) {
		case "waiting_for":
			d.WaitingFor, err = jsonArray(v, jsonIntN)
		case "model":
			var m string
			if m, err = jsonString(v); err == nil {
				switch strings.ToLower(m) {
				case "and":
					d.Model = WaitAll
				case "or":
					d.Model = WaitAny
				default:
					err = fmt.Errorf("want \"and\" or \"or\", got %q", m)
				}
			}
		}
		return err
	})
	if err != nil {
		d.WaitingFor, d.Model = nil, WaitAll
		err = e.badDetail(err)
	}
	if d.WaitingFor == nil && e.Peer != NoPeer {
		d.WaitingFor = []int{e.Peer}
	}
	if len(d.WaitingFor) == 0 {
		d.WaitingFor = nil // [] and null alike: waits for nobody
	}
	return d, err
}

// Timeout returns the detail of a timeout event.
func (e *Event) Timeout() (Timeout, error) {
	return read[Timeout](e, e.Kind == KindTimeout, "a timeout")
}

// Delivery returns the detail of a deliver event. A deliver event must have
// one: without it, it does not say which multicast was delivered.
func (e *Event) Delivery() (Delivery, error) {
	return read[Delivery](e, e.Kind == KindDeliver, "a deliver")
}

// Message returns the message of a send, receive or drop event: Type and
// Resource from the event's MsgType and Resource, the rest from its detail.
func (e *Event) Message() (Message, error) {
	m := Message{Type: e.MsgType, Resource: e.Resource}
	if e.Kind != KindSend && e.Kind != KindReceive && e.Kind != KindDrop {
		return m, e.notKind("a send, receive or drop")
	}
	if err := m.decode(e.Detail, false); err != nil {
		return Message{Type: e.MsgType, Resource: e.Resource}, e.badDetail(err)
	}
	return m, nil
}

// Drop returns the detail of a drop event: Msg's Type and Resource from the
// event's MsgType and Resource, the rest from its detail.
func (e *Event) Drop() (Drop, error) {
	d, err := read[Drop](e, e.Kind == KindDrop, "a drop")
	d.Msg.Type, d.Msg.Resource = e.MsgType, e.Resource
	return d, err
}

// Fault returns the detail of a fault event.
func (e *Event) Fault() (Fault, error) { return read[Fault](e, e.Kind == KindFault, "a fault") }

// read decodes the detail of e into a T if ok (e is of T's kind), and
// otherwise says that e is not want.
func read[T any, P interface {
	*T
	decode([]byte) error
}](e *Event, ok bool, want string) (T, error) {
	var d T
	if !ok {
		return d, e.notKind(want)
	}
	if err := P(&d).decode(e.Detail); err != nil {
		var zero T
		return zero, e.badDetail(err)
	}
	return d, nil
}

func (e *Event) notKind(want string) error {
	return fmt.Errorf("%v: not %s event", e, want)
}

func (e *Event) badDetail(err error) error {
	return fmt.Errorf("%v: detail %s: %w", e, truncate(e.Detail), err)
}

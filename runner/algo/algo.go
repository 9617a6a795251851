package algo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dmxlab/dmx/analyze/theory"
)

// InputKind says what an Input is.
type InputKind int

// Input kinds.
const (
	Start   InputKind = iota + 1 // the node starts; sent once, before anything else
	Receive                      // a message arrived: From, Msg
	Timer                        // a timer set by the machine fired: TimerName
	Request                      // the workload wants the critical section of Resource
	Release                      // the workload leaves the critical section of Resource
	Recover                      // the node restarts after a crash: a machine fresh from New, Msg = what it last Persisted
)

func (k InputKind) String() string {
	switch k {
	case Start:
		return "start"
	case Receive:
		return "receive"
	case Timer:
		return "timer"
	case Request:
		return "request"
	case Release:
		return "release"
	case Recover:
		return "recover"
	}
	return "input(" + strconv.Itoa(int(k)) + ")"
}

// Msg is an algorithm message. It is deliberately a small fixed record so
// that the runtime can encode, stamp and record it without knowing the
// algorithm; algorithms use the fields they need and document which.
type Msg struct {
	Type     string   `json:"type"`               // e.g. "request", "ok", "token"
	Resource string   `json:"resource,omitempty"` // set by the runtime to the machine's resource
	Stamp    uint64   `json:"stamp,omitempty"`    // an algorithm timestamp (e.g. a request's T_Pi)
	ID       int      `json:"id,omitempty"`       // a process id carried by the message (election id, requester)
	Term     uint64   `json:"term,omitempty"`     // an epoch/term/round number
	Vals     []uint64 `json:"vals,omitempty"`     // arrays (ra-token's token[], ids collected by a ring election)
	// Body is a foreign program's message (runner/exec): the JSON object
	// it sent, byte for byte, which its receiver gets as it was sent
	// (Type is the object's "type"). dmx's own algorithms leave it empty.
	Body string `json:"body,omitempty"`
}

// Input is one thing that happens to a machine.
type Input struct {
	Kind      InputKind
	Now       int64  // ns since the run started (simulated or real)
	Clock     uint64 // the node's Lamport clock at the event recording this input
	From      int    // Receive: the sender
	Msg       Msg    // Receive: the message
	TimerName string // Timer: the name given to SetTimer
	Resource  string // Request, Release: the resource
}

// OutputKind says what an Output asks for.
type OutputKind int

// Output kinds.
const (
	Send               OutputKind = iota + 1 // send Msg to To
	SetTimer                                 // fire TimerName after After ns (replaces a timer of that name)
	CancelTimer                              // cancel TimerName
	Enter                                    // the node now holds the critical section of its resource
	Leader                                   // the node decided that Leader leads
	MulticastDelivered                       // a totally-ordered multicast (From, Msg.Stamp, Msg.ID) is delivered
	Wait                                     // the node is now blocked waiting for Set (empty: no longer blocked)
	Note                                     // an internal event worth recording; Text says what
	StartElection                            // the node starts an election (Msg.Term: its number, if any)
	Persist                                  // keep Msg in stable storage: it survives a crash and comes back with Recover
	Suspect                                  // the failure detector now suspects To has crashed
	Trust                                    // the failure detector no longer suspects To
	Fail                                     // the machine broke the runtime's contract in a way the run survives (a foreign program's bad line): Text says how; recorded as a failure event
	Halt                                     // the machine can take no more input (a foreign program died or was stopped): the node goes down as in a crash; Text says why
)

// Output is one effect a machine asks the runtime to carry out.
type Output struct {
	Kind      OutputKind
	To        int
	From      int
	Msg       Msg
	TimerName string
	After     int64 // ns
	Leader    int
	Set       []int
	Text      string
}

// SendTo is a Send output.
func SendTo(to int, m Msg) Output { return Output{Kind: Send, To: to, Msg: m} }

// SetTimerOut is a SetTimer output.
func SetTimerOut(name string, after int64) Output {
	return Output{Kind: SetTimer, TimerName: name, After: after}
}

// CancelTimerOut is a CancelTimer output.
func CancelTimerOut(name string) Output { return Output{Kind: CancelTimer, TimerName: name} }

// EnterCS is an Enter output.
func EnterCS() Output { return Output{Kind: Enter} }

// WaitFor is a Wait output; an empty set means the node is no longer blocked.
func WaitFor(set []int) Output {
	c := make([]int, len(set))
	copy(c, set)
	return Output{Kind: Wait, Set: c}
}

// NoteOut is a Note output.
func NoteOut(format string, args ...any) Output {
	return Output{Kind: Note, Text: fmt.Sprintf(format, args...)}
}

// Machine is one algorithm instance at one node for one resource.
type Machine interface {
	// Step applies in and returns what the runtime must do, in order.
	Step(in Input) []Output
}

// Closer is implemented by machines that hold something outside the
// runtime, such as a foreign program's process (runner/exec): the node
// closes its machines when it crashes (crash true: a crash kills the
// program at once) and when it stops (the program is let go in order).
// Close must be safe to call more than once.
type Closer interface {
	Close(crash bool)
}

// Inspector is implemented by machines that show their state. dmx replay
// --step prints it after every event, and its JSON output carries it, so
// State names what a reader of the seed's rules looks for: the queue, the
// votes, the token, the deferred replies, the clocks, the leader, the term.
// It returns a fresh value that encoding/json encodes as an object (a
// struct with json tags, or a map); the caller may keep it, and it must
// not share slices with the machine.
type Inspector interface {
	State() any
}

// Abstracter is implemented by machines whose state keeps values that no
// longer decide anything, such as the timestamp of a request long served.
// The schedule search (dmx explore) hashes the value Abstract returns in
// place of the machine, so that two states that differ only there count
// as one state: far fewer states to visit, every behaviour still visited.
//
// Abstract must be exact about the future: two states of the machine whose
// Abstract values are equal must, fed the same inputs, produce the same
// outputs and again states with equal Abstract values. clock is the
// node's Lamport clock now; every later input's Input.Clock is larger.
// The value returned is hashed, not kept: it may share nothing or
// anything with the machine.
type Abstracter interface {
	Abstract(clock uint64) any
}

// Cloner is implemented by machines that copy themselves faster than a
// deep copy by reflection does (the schedule search copies every machine
// at every branch). Clone returns a machine that shares nothing mutable
// with the receiver.
type Cloner interface {
	Clone() Machine
}

// Shifter is implemented by Abstracters whose machines read Lamport
// timestamps only through comparisons between them and max (the runtime
// adds the +1), never against a constant, and whose messages' Stamps are
// all Lamport timestamps. Such a machine behaves the same if every
// timestamp of the run, the nodes' clocks and the stamps in flight
// included, is raised by the same amount; so the schedule search counts
// two states that differ only by such a shift as one (the translation
// reduction, dmx explore).
//
// AbstractFrom writes to out the words of what Abstract(clock) keeps, with
// every timestamp lowered by base (modulo 2^64: base may exceed some of
// them; a value kept as a flag rather than as a timestamp stays as it
// is), in an encoding no other state's words begin with. Words, not a
// value: the search calls it for every machine of every state it meets.
//
// A recovery that resets timestamps to zero breaks the shift; the search
// uses it only on runs where no process crashes.
type Shifter interface {
	Abstracter
	AbstractFrom(out Words, clock, base uint64)
}

// StampAbstracter is implemented by Shifters that can say what of the
// Stamp of a message in flight to them will count when it arrives, given
// their state now: the schedule search then hashes that instead of the
// Stamp (lowered by base). AbstractStamp writes to out, for msg on its
// way to the machine whose node's Lamport clock is clock, words that are
// equal for two stamps exactly when the machine, in its state now or in
// any state it can reach before msg arrives, would act alike on either
// (a stamp kept whole is written lowered by base, as AbstractFrom does).
type StampAbstracter interface {
	Shifter
	AbstractStamp(out Words, msg Msg, clock, base uint64)
}

// Pender is implemented by Shifters whose machines' future depends on
// the timestamps they receive only through how those compare with the
// timestamp of their own request while it waits, and on nothing but the
// workload's next request when none waits (that request's timestamp is
// above every clock then). Pending returns the timestamp of the waiting
// request, and whether one waits.
//
// So where no process will request again, a timestamp above every waiting
// request's compares alike with every timestamp it can still meet (a
// clock only rises, by one or by taking in a larger timestamp), and the
// search counts all such timestamps as one (runner.World.Fingerprint):
// the words a machine writes with Stamp.
type Pender interface {
	Shifter
	Pending() (t uint64, waiting bool)
}

// Words receives the words a Shifter describes its state with.
type Words interface {
	Word(uint64)
}

// StampWords is a Words that tells timestamps apart from the other words,
// so that the search can count alike the timestamps that compare alike
// with every one still to come: one below every node's clock (lowered by
// the base, the smallest clock: negative), since every timestamp sent
// from now on is above it, and those of Pender.
type StampWords interface {
	Words
	Stamp(uint64)
}

// Stamp writes to out the timestamp v (lowered by base, as AbstractFrom
// lowers every timestamp): as a timestamp if out tells them apart, else
// as a word. A Shifter writes with Stamp only timestamps whose
// comparisons with those it holds now its other words already say, and
// which it otherwise reads only by comparing them with timestamps still
// to come (received later, or of its own later requests).
func Stamp(out Words, v uint64) {
	if s, ok := out.(StampWords); ok {
		s.Stamp(v)
		return
	}
	out.Word(v)
}

// StampedRequest is a request (T, id): the timestamp it was made with and
// the process that made it; the requests that lamport, maekawa and majority
// queue, and as a State shows them.
type StampedRequest struct {
	T  uint64 `json:"t"`
	ID int    `json:"id"`
}

// Before is the total order of requests: by timestamp, ties by process id
// (seed 003 slide 7: "if timestamps are equal, process identifiers are
// compared"; seed 002: L(e) = M*Li(e) + i).
func (a StampedRequest) Before(b StampedRequest) bool {
	return a.T < b.T || (a.T == b.T && a.ID < b.ID)
}

// String is the request as machines' String methods show it: (T,id).
func (a StampedRequest) String() string { return fmt.Sprintf("(%d,%d)", a.T, a.ID) }

// Request returns a itself: a StampedRequest is Queued.
func (a StampedRequest) Request() StampedRequest { return a }

// Queued is a request as a machine queues it: a StampedRequest, or a
// struct that embeds one beside what else the machine keeps of it
// (maekawa's failed flag).
type Queued interface{ Request() StampedRequest }

// Enqueue inserts r into q, which is in Before order, after the requests
// before it, and returns the queue and r's place in it.
func Enqueue[R Queued](q []R, r R) ([]R, int) {
	i := 0
	for i < len(q) && q[i].Request().Before(r.Request()) {
		i++
	}
	return slices.Insert(q, i, r), i
}

// Config is what a machine is built from.
type Config struct {
	ID       int               // this node, 0..N-1
	N        int               // group size
	Resource string            // the resource this instance guards
	Params   map[string]string // algorithm parameters (--param k=v), validated by New
	Rand     *rand.Rand        // seeded; the only source of randomness a machine may use; nil when New is called only to validate Params (the machine is then discarded unstepped)
}

// Param returns the parameter named k, or def if it is not set.
func (c Config) Param(k, def string) string {
	if v, ok := c.Params[k]; ok {
		return v
	}
	return def
}

// Kind is what an algorithm is for.
type Kind string

// Algorithm kinds.
const (
	MutualExclusion Kind = "mutual-exclusion"
	Election        Kind = "election"
	Multicast       Kind = "multicast"
)

// Spec describes an algorithm for dmx list and builds its machines.
type Spec struct {
	Name     string   // as in DESIGN.md, e.g. "ricart-agrawala"
	Kind     Kind     // what it is for
	Summary  string   // one line
	Seeds    []string // the course notes it follows, e.g. "003 [RA1]-[RH1]"
	MsgTypes []string // the message types it sends
	// IDTypes are the message types that carry a process id (Msg.ID: the
	// requester, a candidate, the process granted). Their recorded detail
	// holds "id" even when it is 0, so that P0's messages say it as the
	// others' do (0 is also "no id" for the types that carry none).
	IDTypes    []string
	Properties []string // the checks that apply to its traces
	// Validity names the rule of check validity that the leaders the
	// algorithm decides obey: "highest-id" (seed 001: the highest id
	// among the processes that are up; bully, ring, chang-roberts) or
	// "participant" (a process that took part and that the decider did
	// not know to be down; lease, where any live server may win). Empty
	// if it decides no leader.
	Validity string
	Costs    []theory.Cost // what it costs: the seeds' figures (dmx stats compares runs with them) and dmx's own counts
	Params   []Param       // parameters it accepts
	// UDPParams, if set, returns the parameters a run over real UDP
	// starts from where the plan sets none, given the plan's own
	// parameters (a variant they choose may need others): time-outs that
	// the stalls of a loaded machine do not break, where the defaults suit
	// the simulator, whose processes are never off the CPU (see
	// runner.Plan.DefaultParams). Parameters the algorithm does not accept
	// are left out.
	UDPParams func(params map[string]string) map[string]string
	// Variants are the configurations worth testing besides the defaults:
	// the variants the seeds name and the options that change the protocol
	// (see Variant). Tests run every algorithm of the registry with its
	// defaults and with each of these, so that a new variant is tested by
	// adding it here.
	Variants []Variant
	// Roles, if set, names the processes that start the run in a role of
	// their own (the coordinator, the holder of the token), given the
	// group size and the run's parameters; diagrams label their lanes so.
	Roles func(n int, params map[string]string) map[int]string
	// Doc is the algorithm's package documentation (its doc.go, embedded:
	// see PackageDoc), which quotes the seeds' rules by name ([RA1], ...)
	// and says how the machine follows them. dmx list ALGO shows it, so
	// that the rules are at hand without the source.
	Doc string
	New func(Config) (Machine, error)
	// Parts says which parts its processes play that a fault can aim at
	// (crash:leader, crash:coordinator, crash:token) in a configuration;
	// nil means none. Faults aimed at a part the algorithm has not are
	// refused before a run starts.
	Parts func(params map[string]string) Parts
}

// NoProc is a Parts field's "no such process".
const NoProc = -1

// Parts are the parts processes play in one configuration of an
// algorithm that faults can aim at, as far as the runner can follow them
// from the events.
type Parts struct {
	// Leader: the algorithm decides leaders (its leader events name them).
	// The leader is then also its coordinator.
	Leader bool
	// Coordinator is the process that coordinates from the start when no
	// election picks it (central's coordinator parameter); NoProc if none.
	Coordinator int
	// Token is the message type of a token that one process holds at a
	// time; "" if the algorithm has none. The holder is the last process
	// that received it (at the start: TokenHolder).
	Token       string
	TokenHolder int
}

// ElectionParts are the parts of an election algorithm: the leader it
// elects (whom seed 000's bully calls the coordinator).
func ElectionParts(map[string]string) Parts {
	return Parts{Leader: true, Coordinator: NoProc, TokenHolder: NoProc}
}

// PartsOf returns the parts of spec in the configuration params: none if
// the algorithm declares none.
func (s *Spec) PartsOf(params map[string]string) Parts {
	if s.Parts == nil {
		return Parts{Coordinator: NoProc, TokenHolder: NoProc}
	}
	return s.Parts(params)
}

// Variant is one configuration of an algorithm: the parameters that differ
// from the defaults. A Variant with no Params annotates the defaults.
type Variant struct {
	Params map[string]string
	Doc    string // what it changes, and the seed that names it
	// Flawed, if not empty, says how this configuration breaks a property
	// its algorithm's Properties claim with no fault injected, as the
	// seeds describe (basic Maekawa deadlocks). Sweeps that demand every
	// check pass on every schedule leave it out; examples show the flaw.
	Flawed string
}

// Configurations returns the configurations tests run: the defaults first,
// then each of Variants.
func (s *Spec) Configurations() []Variant {
	out := []Variant{{}}
	for _, v := range s.Variants {
		if len(v.Params) == 0 {
			out[0] = v
			continue
		}
		out = append(out, v)
	}
	return out
}

// Param documents one algorithm parameter.
type Param struct {
	Name, Default, Doc string
}

// Validate validates the parts of c every machine relies on: a group of at least
// one node, an id inside it, and no parameter that known does not declare
// (a misspelled --param must not be silently ignored). Algorithms call it
// first thing in New.
func (c Config) Validate(known []Param) error {
	if c.N < 1 {
		return fmt.Errorf("group size %d: need at least 1 node", c.N)
	}
	if c.ID < 0 || c.ID >= c.N {
		return fmt.Errorf("node id %d: must be in 0..%d", c.ID, c.N-1)
	}
	names := make([]string, len(known))
	for i, p := range known {
		names[i] = p.Name
	}
	given := make([]string, 0, len(c.Params))
	for k := range c.Params {
		given = append(given, k)
	}
	sort.Strings(given) // the same parameter is named whatever the map's order
	for _, k := range given {
		if !slices.Contains(names, k) {
			return &UnknownParamError{Name: k, Known: names}
		}
	}
	return nil
}

// UnknownParamError is Config.Validate's error for a parameter the
// algorithm does not declare.
type UnknownParamError struct {
	Name  string   // the parameter given
	Known []string // the algorithm's parameters
}

func (e *UnknownParamError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("unknown parameter %q: this algorithm takes none", e.Name)
	}
	return fmt.Sprintf("unknown parameter %q: known are %s", e.Name, strings.Join(e.Known, ", "))
}

// IntParam returns the parameter named k as an int, or def if it is not set.
func (c Config) IntParam(k string, def int) (int, error) {
	v, ok := c.Params[k]
	if !ok {
		return def, nil
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("parameter %s=%q: want an integer", k, v)
	}
	return i, nil
}

// NodeParam returns the parameter named k, a node id, or 0 (node 0) if it
// is not set.
func (c Config) NodeParam(k string) (int, error) {
	i, err := c.IntParam(k, 0)
	if err == nil && (i < 0 || i >= c.N) {
		err = fmt.Errorf("parameter %s=%d: must be a node id in 0..%d", k, i, c.N-1)
	}
	return i, err
}

// DurationParam returns the parameter named k as ns, or def if it is not
// set. The value is either a plain integer (ns) or a Go duration ("1ms").
func (c Config) DurationParam(k string, def int64) (int64, error) {
	v, ok := c.Params[k]
	if !ok {
		return def, nil
	}
	if i, err := strconv.ParseInt(v, 10, 64); err == nil && i >= 0 {
		return i, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("parameter %s=%q: want a duration such as 1ms or a number of ns", k, v)
	}
	return int64(d), nil
}

// Outsider reports whether in is a delivery from an id outside the group
// 0..n-1. The runtime's transport drops such datagrams, but a machine must
// not index its per-process arrays with one (it would panic): machines
// ignore the message with the Note this returns.
func (in Input) Outsider(n int) (Output, bool) {
	if in.Kind != Receive || (in.From >= 0 && in.From < n) {
		return Output{}, false
	}
	return NoteOut("%s from P%d ignored: not in the group 0..%d", in.Msg.Type, in.From, n-1), true
}

// CSState is where a process stands with a critical section, in seed
// 003's words ([RI1], [RA1], [RE1]): the state of the machines that track
// no more than this.
type CSState int

const (
	Released CSState = iota
	Requested
	Held
)

func (s CSState) String() string {
	return [...]string{"RELEASED", "REQUESTED", "HELD"}[s]
}

// Ignored returns the Note with which a machine in state s, of a group of
// n, ignores in: a message from outside the group (see Outsider), a
// Request unless s is Released, a Release unless s is Held.
func (in Input) Ignored(n int, s CSState) (Output, bool) {
	switch {
	case in.Kind == Request && s != Released:
		return NoteOut("request ignored: already %v", s), true
	case in.Kind == Release && s != Held:
		return NoteOut("release ignored: not in the critical section (%v)", s), true
	}
	return in.Outsider(n)
}

// WaitSet is the set of processes a machine last said it waits for.
type WaitSet []int

// Set appends to out a Wait for set when set is not the one last said.
func (w *WaitSet) Set(out []Output, set []int) []Output {
	if slices.Equal(*w, set) {
		return out
	}
	*w = slices.Clone(set)
	return append(out, WaitFor(set))
}

// Outbox gathers the outputs of one Step of a machine that is also one of
// its own peers (Maekawa's process is in its own voting set, a majority
// coordinator is also a requester): a message to itself is queued and
// handled after the current one, never sent (and so never counted).
type Outbox struct {
	Self  int      // the machine's own id
	Out   []Output // the outputs so far
	inbox []Msg    // the messages to itself, not yet handled
}

// Send sends m to P_to; to itself, it queues m for Deliver.
func (b *Outbox) Send(to int, m Msg) {
	if to == b.Self {
		b.inbox = append(b.inbox, m)
		return
	}
	b.Out = append(b.Out, SendTo(to, m))
}

// Note appends a Note output.
func (b *Outbox) Note(format string, args ...any) {
	b.Out = append(b.Out, NoteOut(format, args...))
}

// Deliver hands the messages to itself to deliver, in the order sent,
// those sent while delivering too.
func (b *Outbox) Deliver(deliver func(from int, m Msg)) {
	for len(b.inbox) > 0 {
		m := b.inbox[0]
		b.inbox = b.inbox[1:]
		deliver(b.Self, m)
	}
}

// Step is the frame of a Step of a machine built on the box: an input
// from outside the group of n is refused (Input.Outsider); otherwise
// handle takes the input, deliver then each message the machine sent
// itself (Deliver), and settle runs last (the machine's Wait update).
// Step returns the outputs gathered.
func (b *Outbox) Step(in Input, n int, handle func(Input), deliver func(from int, m Msg), settle func()) []Output {
	if o, ok := in.Outsider(n); ok {
		return []Output{o}
	}
	b.Out = nil
	handle(in)
	b.Deliver(deliver)
	settle()
	return b.Take()
}

// Take returns the outputs gathered and empties the box for the next Step.
func (b *Outbox) Take() []Output {
	out := b.Out
	b.Out = nil
	return out
}

// Members returns the indices i with b[i] set, in order: how a machine's
// State shows a per-process []bool (replies received, votes held).
func Members(b []bool) []int {
	out := []int{}
	for i, x := range b {
		if x {
			out = append(out, i)
		}
	}
	return out
}

// Clone returns a copy of xs that is never nil: a State shows an empty set
// as [], not null.
func Clone[T any](xs []T) []T {
	return append(make([]T, 0, len(xs)), xs...)
}

// CarriesID reports whether messages of type t carry a process id (see
// Spec.IDTypes).
func (s *Spec) CarriesID(t string) bool {
	return s != nil && slices.Contains(s.IDTypes, t)
}

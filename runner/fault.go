package runner

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/link"
)

// The fault language. A fault is one item of text, so that a schedule can
// be given on a command line or in a scenario file, printed, stored with
// the run (runs.faults) and read back (after pebble's errorfs):
//
//	spec   = fault { sep fault }          sep: "," ";" or blanks
//	fault  = kind [ ":" field { ":" field } ] [ "@" when ]
//
// The kinds, their fields and their when are in faultKinds; `dmx run
// --help` prints that table. Shared pieces:
//
//	WHO    = PROC | leader | coordinator | token | cs
//	PROC   = 2 | P2
//	SET    = PROC { "+" PROC }            e.g. 0+1+2
//	LINK   = { ":" ( from=SET | to=SET | type=NAME ) }   default: every link, every message
//	RATE   = 20% | 0.2
//	DIST   = 20ms | 10ms-50ms | exp=20ms  fixed, uniform, exponential (mean)
//	TIME   = a duration since the start of the run: 500ms, 1.5s
//	WINDOW = FROM | FROM-TO | FROM+LENGTH (open: until heal or the end)
//
// ParseFaults reads a spec; Fault.String prints one fault in canonical
// form (what runs.faults stores and Plan.Args repeats), which parses back
// to the same fault. A new kind is a constant and an entry in faultKinds
// (its form, what it acts on, its fields and checks), and its effect in
// each driver that can apply it (see faultKinds).

// FaultKind is what a fault does.
type FaultKind string

// Fault kinds.
const (
	FaultCrash     FaultKind = "crash"     // the process stops (under dmx run: SIGKILL)
	FaultRecover   FaultKind = "recover"   // a crashed process restarts (fresh state plus what it persisted, or none: amnesia)
	FaultPause     FaultKind = "pause"     // the process stops for a while and resumes (SIGSTOP, SIGCONT)
	FaultSkew      FaultKind = "skew"      // the process's wall clock is set off
	FaultLoss      FaultKind = "loss"      // messages are lost with a probability
	FaultDelay     FaultKind = "delay"     // messages take longer (channels stay FIFO)
	FaultReorder   FaultKind = "reorder"   // messages get a random extra delay and may overtake each other
	FaultDuplicate FaultKind = "duplicate" // messages arrive twice with a probability
	FaultPartition FaultKind = "partition" // groups of processes cannot reach each other
	FaultIsolate   FaultKind = "isolate"   // one process can reach nobody, nobody can reach it
	FaultCut       FaultKind = "cut"       // one-way: messages from some processes to others are lost
	FaultHeal      FaultKind = "heal"      // every partition, isolation and cut in force ends
)

// Target is what a fault kind acts on, and so how a driver carries it out
// (FaultDriver): a process (crash and recover, and any other through
// FaultDriver.Process), its clock (through FaultDriver.Process too), or
// the network (FaultDriver.NetStart and NetEnd, messages judged by a
// NetFaults or, in a driver that can, by the kernel).
type Target string

// The targets.
const (
	TargetProcess Target = "process"
	TargetClock   Target = "clock"
	TargetNetwork Target = "network"
)

// faultKind is one kind of the language: how it reads and prints, what it
// acts on, and how much later it makes messages arrive. The table
// faultKinds has one a kind; parseFault, Fault.String, Fault.validate and
// the Injector work from it.
type faultKind struct {
	kind    FaultKind
	alias   string // another name it is read under, printed as kind
	form    string
	example string
	doc     string
	target  Target
	// severs: it cuts links (and so heal ends it).
	severs bool
	// who: its first field names a process or a part (WHO).
	who bool
	// fields reads the fields that follow WHO (or the kind) before its
	// LINK, returning the rest; print writes them back. nil: none.
	fields func(f *Fault, args []string, need func(string) error, form string) ([]string, error)
	print  func(f *Fault, field func(string))
	// link: the LINK fields it takes.
	link linkForm
	// when: what may follow its "@".
	when whenForm
	// check is what validate checks of it beyond the fields every kind
	// shares; nil: nothing.
	check func(f *Fault, n int) error
	// late bounds how much later than usual it makes a message arrive
	// (faultsDelay); nil: not at all.
	late func(f *Fault) time.Duration
}

// linkForm is which LINK fields a kind takes.
type linkForm int

const (
	linkNone  linkForm = iota
	linkTyped          // from=SET, to=SET, type=NAME, each optional
	linkCut            // from=SET and to=SET, both needed; no type
)

// whenForm is what a kind's "@" may say.
type whenForm int

const (
	whenTime     whenForm = iota // TIME, needed (heal)
	whenCrash                    // TIME, enter#K or send:TYPE#K, needed
	whenRecover                  // TIME or +DELAY (after its crash), needed
	whenOptional                 // TIME, optional (skew: from the start)
	whenPause                    // WINDOW with an end, needed
	whenWindow                   // WINDOW, optional (network faults: the whole run)
)

// faultKinds are the kinds of the language, in the order help and errors
// list them. A new kind is an entry here and its effect where it is
// carried out: for a process or clock fault a case of each driver's
// FaultDriver.Process that can apply it (the simulator's in sim.go,
// runner/udp's launcher and node), for a network fault a case of
// NetFaults.Judge (netfault.go); a driver that cannot apply it says so in
// its DriverSpec.Applies, and Plan.Validate refuses the plan before
// anything starts.
var faultKinds = []faultKind{
	{kind: FaultCrash, form: "crash:WHO@TIME | crash:PROC@enter#K | crash:PROC@send:TYPE#K", example: "crash:leader@600ms",
		doc:    "the process stops, losing its state (SIGKILL under run). A part (leader, coordinator, token: its holder, cs: a process in the critical section) is the process that plays it at TIME, or, if none does, the first to take it after. enter#K: right after the process's K-th cs_enter; send:TYPE#K: right after it sent its K-th TYPE message",
		target: TargetProcess, who: true, when: whenCrash},
	{kind: FaultRecover, alias: "restart", form: "recover:PROC[:amnesia]@TIME | recover:WHO[:amnesia]@+DELAY", example: "recover:leader:amnesia@+50ms",
		doc:    "a crashed process restarts with fresh state and what it persisted (amnesia: without it). @+DELAY: that long after the crash before it with the same WHO",
		target: TargetProcess, who: true, when: whenRecover, fields: amnesiaField, print: printAmnesia},
	{kind: FaultPause, form: "pause:WHO@FROM-TO", example: "pause:leader@600ms-1s",
		doc:    "the process stops and later resumes where it was (SIGSTOP and SIGCONT under run): its time-outs fire late, its peers' fire on a live process",
		target: TargetProcess, who: true, when: whenPause},
	{kind: FaultSkew, form: "skew:PROC:OFFSET[@TIME]", example: "skew:1:+5ms",
		doc:    "the process's wall clock reads OFFSET (+ or -) off from TIME on: the wall_ns of its events, not its time-outs",
		target: TargetClock, who: true, when: whenOptional, fields: skewField, print: printSkew, check: checkSkew},
	{kind: FaultLoss, form: "loss:RATE[LINK][@WINDOW]", example: "loss:20%:from=1:type=request@1s-2s",
		doc:    "each message on the links is lost with probability RATE (with reliable channels: each datagram, sent again until one gets through)",
		target: TargetNetwork, link: linkTyped, when: whenWindow, fields: rateField, print: printRate, late: lateByLoss},
	{kind: FaultDelay, form: "delay:DIST[LINK][@WINDOW]", example: "delay:exp=20ms:to=3",
		doc:    "each message on the links takes DIST longer; channels stay FIFO (with raw channels they may not)",
		target: TargetNetwork, link: linkTyped, when: whenWindow, fields: delayField, print: printDist, late: lateByDist},
	{kind: FaultReorder, alias: "jitter", form: "reorder[:DIST][LINK][@WINDOW]", example: "reorder:0ms-10ms",
		doc:    "the links are no longer FIFO: each message takes DIST (default 0ms-5ms) longer, drawn anew, so later ones overtake earlier ones",
		target: TargetNetwork, link: linkTyped, when: whenWindow, fields: jitterField, print: printJitter, late: lateByDist},
	{kind: FaultDuplicate, form: "duplicate:RATE[LINK][@WINDOW]", example: "duplicate:10%",
		doc:    "each message on the links arrives twice with probability RATE (reliable channels drop the copy; raw ones deliver it)",
		target: TargetNetwork, link: linkTyped, when: whenWindow, fields: rateField, print: printRate},
	{kind: FaultPartition, form: "partition:SET[:SET...][@WINDOW]", example: "partition:0+1:2+3+4@1s-2s",
		doc:    "processes in different groups cannot reach each other (the processes not named form one more group)",
		target: TargetNetwork, severs: true, when: whenWindow, fields: groupsField, print: printGroups, check: checkGroups, late: lateByLoss},
	{kind: FaultIsolate, form: "isolate:WHO[@WINDOW]", example: "isolate:leader@600ms-1.5s",
		doc:    "the process can reach nobody and nobody can reach it (a part is resolved when it starts)",
		target: TargetNetwork, severs: true, who: true, when: whenWindow, late: lateByLoss},
	{kind: FaultCut, form: "cut:from=SET:to=SET[@WINDOW]", example: "cut:from=4:to=0+1@500ms-1s",
		doc:    "one-way partition: what the from processes send to the to processes is lost; the other way still works",
		target: TargetNetwork, severs: true, link: linkCut, when: whenWindow, late: lateByLoss},
	{kind: FaultHeal, form: "heal@TIME", example: "heal@2s",
		doc:    "every partition, isolation and cut in force ends",
		target: TargetNetwork, when: whenTime},
}

// kindOf returns the table's entry for k, nil for a kind it does not know.
func kindOf(k FaultKind) *faultKind {
	for i := range faultKinds {
		if faultKinds[i].kind == k {
			return &faultKinds[i]
		}
	}
	return nil
}

// Target is what kind k acts on ("" for a kind the language does not
// know).
func (k FaultKind) Target() Target {
	if fk := kindOf(k); fk != nil {
		return fk.target
	}
	return ""
}

// FaultHelp describes the fault language for `dmx run --help`: every
// kind with its form, an example and what it does.
func FaultHelp() string {
	var b strings.Builder
	b.WriteString("Faults (--faults SPEC, repeatable or comma-separated; the same text in a scenario's \"faults\"):\n")
	for _, k := range faultKinds {
		fmt.Fprintf(&b, "\n  %s\n      e.g. %s\n", k.form, k.example)
		for _, line := range wrap(k.doc, 72) {
			fmt.Fprintf(&b, "      %s\n", line)
		}
	}
	b.WriteString(`
  WHO: a process (2 or P2), or leader, coordinator, token, cs. SET: 0+1+2.
  LINK: any of :from=SET :to=SET :type=NAME (default every link, every message).
  RATE: 20% or 0.2. DIST: 20ms, 10ms-50ms (uniform), exp=20ms (exponential, mean).
  TIME counts from the start of the run. WINDOW: FROM, FROM-TO or FROM+LENGTH;
  without an end it lasts until heal or the end of the run.
`)
	return b.String()
}

func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

// MaxSkew bounds a skew's offset either way: a clock a day off is far
// beyond any skew a run needs, and an offset near the range of int64
// would wrap the wall clock (ns since 1970) it is added to.
const MaxSkew = 24 * time.Hour

// Parts a fault can aim at instead of a process (Fault.Proc): which process
// plays the part is known only when the fault fires.
const (
	Leader      = -1 // the live leader most recently decided by a live process
	Coordinator = -2 // the coordinator: the leader if the algorithm elects one, else its fixed coordinator
	TokenHolder = -3 // the last process that received the token (at the start: its first holder)
	InCS        = -4 // a process in a critical section
)

var roleNames = []struct {
	proc int
	name string
}{{Leader, "leader"}, {Coordinator, "coordinator"}, {TokenHolder, "token"}, {InCS, "cs"}}

func roleName(p int) string {
	for _, r := range roleNames {
		if r.proc == p {
			return r.name
		}
	}
	return "P" + strconv.Itoa(p)
}

// Trigger is what a condition-triggered crash waits for: its process's
// Count-th cs_enter (Event "enter"), or its Count-th send of a Type
// message (Event "send").
type Trigger struct {
	Event string
	Type  string
	Count int
}

// Fault is one fault of a schedule. Which fields mean something depends
// on Kind (see faultKinds); the others are zero.
type Fault struct {
	Kind FaultKind
	// Proc is the process of crash, recover, pause, skew and isolate, or a
	// part (Leader, Coordinator, TokenHolder, InCS).
	Proc int
	// At is when the fault starts, from the start of the run; for a
	// recover with AfterCrash, how long after its crash.
	At time.Duration
	// End closes the window of a pause or a network fault; 0 leaves a
	// network fault open until heal or the end of the run.
	End time.Duration
	// AfterCrash: a recover At after the crash before it with the same Proc.
	AfterCrash bool
	// Trigger, if its Event is set, fires a crash instead of At.
	Trigger Trigger
	// Amnesia: a recover without what the process persisted.
	Amnesia bool
	// Rate is the probability of loss and duplicate.
	Rate float64
	// Dist is the extra delay of delay, the jitter of reorder.
	Dist Dist
	// Skew is the offset of a skew, at most MaxSkew either way.
	Skew time.Duration
	// From and To name the links of a network fault (nil: every process);
	// Type its messages ("": every type).
	From, To []int
	Type     string
	// Groups are a partition's groups.
	Groups [][]int
}

// defaultJitter is reorder's DIST when none is given: about the spread of
// the simulator's default delay, far above loopback's.
var defaultJitter = Dist{Min: 0, Max: 5 * time.Millisecond}

// Network reports whether f acts on messages (judged by a NetFaults, or
// by the kernel) rather than on a process: a network fault but heal,
// which ends others.
func (f *Fault) Network() bool {
	return f.Kind.Target() == TargetNetwork && f.Kind != FaultHeal
}

// severs reports whether f cuts links (and so is ended by heal).
func (f *Fault) severs() bool {
	fk := kindOf(f.Kind)
	return fk != nil && fk.severs
}

// String prints f in canonical form: what ParseFaults reads back to f.
func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	field := func(s string) { b.WriteString(":" + s) }
	fk := kindOf(f.Kind)
	if fk == nil {
		return b.String()
	}
	if fk.who {
		field(procString(f.Proc))
	}
	if fk.print != nil {
		fk.print(&f, field)
	}
	if fk.link != linkNone {
		if f.From != nil {
			field("from=" + setString(f.From))
		}
		if f.To != nil {
			field("to=" + setString(f.To))
		}
		if f.Type != "" {
			field("type=" + f.Type)
		}
	}
	b.WriteString(f.whenString(fk.when))
	return b.String()
}

// whenString prints what follows f's "@", "" for nothing.
func (f *Fault) whenString(w whenForm) string {
	switch {
	case f.Trigger.Event == "enter":
		return fmt.Sprintf("@enter#%d", f.Trigger.Count)
	case f.Trigger.Event == "send":
		return fmt.Sprintf("@send:%s#%d", f.Trigger.Type, f.Trigger.Count)
	case f.AfterCrash:
		return "@+" + f.At.String()
	case w == whenTime || w == whenCrash || w == whenRecover:
		return "@" + f.At.String()
	case w == whenOptional:
		if f.At != 0 {
			return "@" + f.At.String()
		}
	case f.End != 0:
		return "@" + f.At.String() + "-" + f.End.String()
	case f.At != 0:
		return "@" + f.At.String()
	}
	return ""
}

func procString(p int) string {
	if p < 0 {
		return roleName(p)
	}
	return strconv.Itoa(p)
}

func setString(s []int) string {
	parts := make([]string, len(s))
	for i, p := range s {
		parts[i] = strconv.Itoa(p)
	}
	return strings.Join(parts, "+")
}

func rateString(r float64) string {
	return strconv.FormatFloat(r*100, 'f', -1, 64) + "%"
}

// ParseFaults reads a fault specification: one or more faults separated by
// commas, semicolons or blanks. An error names the fault, the token that is
// wrong and what was expected there. What needs the run (the group size,
// the algorithm's parts and message types, the order of crashes and
// recoveries) is for Plan.Validate.
func ParseFaults(spec string) ([]Fault, error) {
	var out []Fault
	for _, item := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == ' ' || r == ';' || r == '\t' || r == '\n' }) {
		f, err := parseFault(item)
		if err != nil {
			return nil, fmt.Errorf("fault %q: %w", item, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func parseFault(s string) (Fault, error) {
	head, when, hasWhen := strings.Cut(s, "@")
	fields := strings.Split(head, ":")
	name := fields[0]
	var f Fault
	var fk *faultKind
	for i := range faultKinds {
		if k := &faultKinds[i]; name == string(k.kind) || name == k.alias && k.alias != "" {
			fk = k
		}
	}
	if fk == nil {
		return f, fmt.Errorf("unknown fault %q (known: %s)", name, knownFaultKinds())
	}
	f.Kind = fk.kind
	args := fields[1:]
	form := kindForm(f.Kind)
	need := func(what string) error {
		if len(args) == 0 || args[0] == "" {
			return fmt.Errorf("want %s after %q: %s", what, name+":", form)
		}
		return nil
	}
	if fk.who {
		if err := need("a process"); err != nil {
			return f, err
		}
		p, err := parseWho(args[0])
		if err != nil {
			return f, err
		}
		f.Proc, args = p, args[1:]
	}
	if fk.fields != nil {
		var err error
		if args, err = fk.fields(&f, args, need, form); err != nil {
			return f, err
		}
	}
	if fk.link != linkNone {
		var err error
		if args, err = f.parseLink(args, fk.link, form); err != nil {
			return f, err
		}
	}
	if len(args) > 0 {
		return f, fmt.Errorf("%q: unexpected: %s", strings.Join(args, ":"), form)
	}
	return f, f.parseWhen(fk.when, when, hasWhen, form)
}

// The fields of the kinds that have some (faultKind.fields and print).
// Each reads from args[0] on, with form's error wording, and returns what
// it did not read.

func amnesiaField(f *Fault, args []string, _ func(string) error, form string) ([]string, error) {
	if len(args) > 0 {
		if args[0] != "amnesia" {
			return args, fmt.Errorf("%q: want amnesia or nothing after the process: %s", args[0], form)
		}
		f.Amnesia, args = true, args[1:]
	}
	return args, nil
}

func printAmnesia(f *Fault, field func(string)) {
	if f.Amnesia {
		field("amnesia")
	}
}

func skewField(f *Fault, args []string, need func(string) error, _ string) ([]string, error) {
	if err := need("an offset such as +5ms or -5ms"); err != nil {
		return args, err
	}
	d, err := time.ParseDuration(strings.TrimPrefix(args[0], "+"))
	if err != nil || d == 0 {
		return args, fmt.Errorf("offset %q: want a duration such as +5ms or -5ms", args[0])
	}
	if d > MaxSkew || d < -MaxSkew {
		// Added to a wall clock in ns since 1970, an offset near the
		// range of int64 wraps it: a run "lasting -2.09ms".
		return args, fmt.Errorf("offset %q: at most %v either way", args[0], MaxSkew)
	}
	f.Skew = d
	return args[1:], nil
}

func printSkew(f *Fault, field func(string)) {
	sign := "+"
	if f.Skew < 0 {
		sign = ""
	}
	field(sign + f.Skew.String())
}

func checkSkew(f *Fault, _ int) error {
	if f.Skew > MaxSkew || f.Skew < -MaxSkew {
		return fmt.Errorf("skew %v: at most %v either way", f.Skew, MaxSkew)
	}
	return nil
}

func rateField(f *Fault, args []string, need func(string) error, _ string) ([]string, error) {
	if err := need("a probability such as 20% or 0.2"); err != nil {
		return args, err
	}
	r, err := ParseRate(args[0])
	if err != nil {
		return args, fmt.Errorf("rate %q: %w", args[0], err)
	}
	f.Rate = r
	return args[1:], nil
}

func printRate(f *Fault, field func(string)) { field(rateString(f.Rate)) }

func delayField(f *Fault, args []string, need func(string) error, _ string) ([]string, error) {
	if err := need("a delay such as 20ms, 10ms-50ms or exp=20ms"); err != nil {
		return args, err
	}
	d, err := ParseDist(args[0])
	if err != nil {
		return args, fmt.Errorf("delay %q: want 20ms, 10ms-50ms or exp=20ms", args[0])
	}
	f.Dist = d
	return args[1:], nil
}

func printDist(f *Fault, field func(string)) { field(f.Dist.String()) }

func jitterField(f *Fault, args []string, _ func(string) error, _ string) ([]string, error) {
	f.Dist = defaultJitter
	if len(args) > 0 && (!strings.Contains(args[0], "=") || strings.HasPrefix(args[0], "exp=")) {
		d, err := ParseDist(args[0])
		if err != nil {
			return args, fmt.Errorf("jitter %q: want 5ms, 0ms-10ms or exp=5ms", args[0])
		}
		f.Dist, args = d, args[1:]
	}
	return args, nil
}

func printJitter(f *Fault, field func(string)) {
	if f.Dist != defaultJitter {
		field(f.Dist.String())
	}
}

func groupsField(f *Fault, args []string, need func(string) error, _ string) ([]string, error) {
	if err := need("a group of processes such as 0+1"); err != nil {
		return args, err
	}
	for len(args) > 0 && !strings.Contains(args[0], "=") {
		g, err := parseSet(args[0])
		if err != nil {
			return args, err
		}
		f.Groups, args = append(f.Groups, g), args[1:]
	}
	return args, nil
}

func printGroups(f *Fault, field func(string)) {
	for _, g := range f.Groups {
		field(setString(g))
	}
}

// checkGroups: a partition's groups are processes of the run, none in two
// groups, and do not hold every process in one.
func checkGroups(f *Fault, n int) error {
	seen := map[int]bool{}
	for _, g := range f.Groups {
		if err := procSet(g, n); err != nil {
			return err
		}
		for _, p := range g {
			if seen[p] {
				return fmt.Errorf("P%d is in two groups", p)
			}
			seen[p] = true
		}
	}
	if len(f.Groups) == 1 && len(f.Groups[0]) == n {
		return fmt.Errorf("group %s holds every process: nothing is cut off", setString(f.Groups[0]))
	}
	return nil
}

// How much later a message may arrive (faultKind.late): by the largest
// delay or jitter a kind adds (an exponential one counted as 4 means), or
// for a kind that loses messages, by three retransmissions (one datagram
// lost three times running).
func lateByDist(f *Fault) time.Duration { return max(f.Dist.Max, 4*f.Dist.Mean) }
func lateByLoss(*Fault) time.Duration   { return 7 * link.InitialRTO }

// parseLink reads the LINK fields of a kind whose form is l.
func (f *Fault) parseLink(args []string, l linkForm, form string) ([]string, error) {
	typed := l == linkTyped
	for ; len(args) > 0; args = args[1:] {
		k, v, ok := strings.Cut(args[0], "=")
		switch {
		case ok && v == "" && (k == "from" || k == "to" || k == "type"):
			return args, fmt.Errorf("%q: want a value after %s=", args[0], k)
		case ok && k == "from" && f.From == nil:
			set, err := parseSet(v)
			if err != nil {
				return args, fmt.Errorf("from: %w", err)
			}
			f.From = set
		case ok && k == "to" && f.To == nil:
			set, err := parseSet(v)
			if err != nil {
				return args, fmt.Errorf("to: %w", err)
			}
			f.To = set
		case ok && k == "type" && f.Type == "" && typed:
			f.Type = v
		case ok && (k == "from" || k == "to" || k == "type" && typed):
			return args, fmt.Errorf("%q: %s given twice", args[0], k)
		default:
			want := "from=SET, to=SET or type=NAME"
			if !typed {
				want = "from=SET or to=SET"
			}
			return args, fmt.Errorf("%q: want %s: %s", args[0], want, form)
		}
	}
	if l == linkCut && (f.From == nil || f.To == nil) {
		return args, fmt.Errorf("want both from=SET and to=SET: %s", form)
	}
	return args, nil
}

// parseWhen reads what follows the "@" of f, whose kind's form is w.
func (f *Fault) parseWhen(w whenForm, when string, has bool, form string) error {
	switch w {
	case whenCrash:
		if !has {
			return fmt.Errorf("no time: %s", form)
		}
		if rest, ok := strings.CutPrefix(when, "enter"); ok {
			k, err := parseCount(rest, when, "enter#3")
			f.Trigger = Trigger{Event: "enter", Count: k}
			return err
		}
		if rest, ok := strings.CutPrefix(when, "send:"); ok {
			typ, _, _ := strings.Cut(rest, "#")
			if typ == "" {
				return fmt.Errorf("%q: want send:TYPE#K, e.g. send:grant#1", when)
			}
			k, err := parseCount(strings.TrimPrefix(rest, typ), when, "send:grant#1")
			f.Trigger = Trigger{Event: "send", Type: typ, Count: k}
			return err
		}
	case whenRecover:
		if !has {
			return fmt.Errorf("no time: %s", form)
		}
		if rest, ok := strings.CutPrefix(when, "+"); ok {
			d, err := parseTime(rest)
			if err != nil {
				return fmt.Errorf("delay %q: want a duration after the crash, e.g. +50ms", rest)
			}
			f.At, f.AfterCrash = d, true
			return nil
		}
	case whenTime:
		if !has {
			return fmt.Errorf("no time: %s", form)
		}
	case whenOptional, whenWindow:
		if !has {
			return nil
		}
		if w == whenWindow {
			return f.parseWindow(when)
		}
	case whenPause:
		if !has {
			return fmt.Errorf("no window: %s", form)
		}
		if err := f.parseWindow(when); err != nil {
			return err
		}
		if f.End == 0 {
			return fmt.Errorf("window %q: a pause needs an end, e.g. 600ms-1s or 600ms+400ms", when)
		}
		return nil
	}
	d, err := parseTime(when)
	f.At = d
	return err
}

// parseWindow reads FROM, FROM-TO or FROM+LENGTH into At and End.
func (f *Fault) parseWindow(w string) error {
	i := strings.IndexAny(w, "-+")
	if i < 0 {
		d, err := parseTime(w)
		f.At = d
		return err
	}
	from, err := parseTime(w[:i])
	if err != nil {
		return fmt.Errorf("window %q: %w", w, err)
	}
	second, err := time.ParseDuration(w[i+1:])
	if err != nil || second < 0 {
		return fmt.Errorf("window %q: want FROM-TO or FROM+LENGTH, e.g. 1s-2s or 1s+500ms", w)
	}
	to := second
	if w[i] == '+' {
		to = from + second
	}
	if to <= from {
		return fmt.Errorf("window %q: its end must come after its start", w)
	}
	f.At, f.End = from, to
	return nil
}

func parseCount(rest, when, example string) (int, error) {
	if rest == "" {
		return 1, nil
	}
	k, err := strconv.Atoi(strings.TrimPrefix(rest, "#"))
	if !strings.HasPrefix(rest, "#") || err != nil || k < 1 {
		return 0, fmt.Errorf("%q: want a count from 1 after #, e.g. %s", when, example)
	}
	return k, nil
}

func parseTime(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("time %q: want a duration since the start, e.g. 500ms", s)
	}
	return d, nil
}

func parseWho(s string) (int, error) {
	for _, r := range roleNames {
		if s == r.name {
			return r.proc, nil
		}
	}
	p, err := parseProc(s)
	if err != nil {
		return 0, fmt.Errorf("process %q: want a number such as 2 or P2, or leader, coordinator, token or cs", s)
	}
	return p, nil
}

func parseProc(s string) (int, error) {
	p, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(s, "P"), "p"))
	if err != nil || p < 0 || strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("process %q: want a number such as 2 or P2", s)
	}
	return p, nil
}

// parseSet reads 0+1+2 into a sorted set without repeats.
func parseSet(s string) ([]int, error) {
	var set []int
	for _, part := range strings.Split(s, "+") {
		p, err := parseProc(part)
		if err != nil {
			return nil, fmt.Errorf("set %q: %w (a set is 0+1+2)", s, err)
		}
		if slices.Contains(set, p) {
			return nil, fmt.Errorf("set %q: P%d named twice", s, p)
		}
		set = append(set, p)
	}
	slices.Sort(set)
	return set, nil
}

// ParseRate reads a probability above 0 and at most 1, as 20% or 0.2;
// its error says what is wanted, for the caller to name the field.
func ParseRate(s string) (float64, error) {
	var r float64
	var err error
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		r, err = strconv.ParseFloat(pct, 64)
		r /= 100
	} else {
		r, err = strconv.ParseFloat(s, 64)
	}
	if err != nil || !(r > 0 && r <= 1) {
		return 0, errors.New("want a probability above 0 and at most 1, such as 20% or 0.2")
	}
	return r, nil
}

func kindForm(k FaultKind) string {
	for _, fk := range faultKinds {
		if fk.kind == k {
			return "want " + fk.form + ", e.g. " + fk.example
		}
	}
	return ""
}

func knownFaultKinds() string {
	names := make([]string, len(faultKinds))
	for i, k := range faultKinds {
		names[i] = string(k.kind)
	}
	return strings.Join(names, ", ")
}

// validate checks f alone against a group of n processes and the
// algorithm's roles and message types (spec nil: any algorithm).
func (f *Fault) validate(n int, spec *algo.Spec, roles algo.Parts) error {
	fk := kindOf(f.Kind)
	if fk == nil {
		return fmt.Errorf("unknown fault %q (known: %s)", f.Kind, knownFaultKinds())
	}
	if fk.who {
		if err := f.validateWho(n, spec, roles); err != nil {
			return err
		}
	}
	if fk.check != nil {
		if err := fk.check(f, n); err != nil {
			return err
		}
	}
	if f.Trigger.Event != "" {
		if f.Proc < 0 {
			return fmt.Errorf("a crash at the %s's %s names the process whose events count (e.g. crash:2@%s)", roleName(f.Proc), f.Trigger.Event, strings.TrimPrefix(f.String(), "crash:"+roleName(f.Proc)+"@"))
		}
		if f.Trigger.Event == "enter" && spec != nil && spec.Kind != algo.MutualExclusion {
			return fmt.Errorf("%s has no critical section to enter", spec.Name)
		}
	}
	if typ := f.Type + f.Trigger.Type; typ != "" && spec != nil && !slices.Contains(spec.MsgTypes, typ) {
		return fmt.Errorf("%s sends no %q messages (it sends: %s)", spec.Name, typ, strings.Join(spec.MsgTypes, ", "))
	}
	if err := procSet(f.From, n); err != nil {
		return fmt.Errorf("from: %w", err)
	}
	if err := procSet(f.To, n); err != nil {
		return fmt.Errorf("to: %w", err)
	}
	if f.At < 0 || f.End < 0 {
		return fmt.Errorf("time %v: must not be negative", f.At)
	}
	if f.End != 0 && f.End <= f.At {
		return fmt.Errorf("window %v-%v: its end must come after its start", f.At, f.End)
	}
	if (f.Rate != 0 || f.Kind == FaultLoss || f.Kind == FaultDuplicate) && !(f.Rate > 0 && f.Rate <= 1) {
		return fmt.Errorf("rate %v: want a probability above 0 and at most 1", f.Rate)
	}
	if f.Dist.Max > MaxDuration || f.Dist.Mean > MaxDuration {
		return fmt.Errorf("delay %v: at most %v", f.Dist, MaxDuration)
	}
	return nil
}

// validateWho checks the process or part a kind with a WHO names.
func (f *Fault) validateWho(n int, spec *algo.Spec, roles algo.Parts) error {
	switch {
	case f.Proc >= 0:
		return procSet([]int{f.Proc}, n)
	case f.Kind.Target() == TargetClock:
		return fmt.Errorf("a %s sets one process's clock: name the process (e.g. %s)", f.Kind, kindOf(f.Kind).example)
	case f.Kind == FaultRecover && !f.AfterCrash:
		return fmt.Errorf("a recover of the %s needs a time after its crash (recover:%s@+50ms): which process it is is known when the crash happens", roleName(f.Proc), roleName(f.Proc))
	}
	at := ""
	if i := strings.IndexByte(f.String(), '@'); i >= 0 {
		at = f.String()[i:]
	}
	return roleExists(f.Kind, f.Proc, at, spec, roles)
}

// procSet checks that every process of s is one of n.
func procSet(s []int, n int) error {
	for _, p := range s {
		if p < 0 || p >= n {
			return fmt.Errorf("process %d does not exist (there are %d: 0..%d)", p, n, n-1)
		}
	}
	return nil
}

// roleExists says why the algorithm has no process playing part p.
// at is the rest of the fault as written (its time or window, "@600ms"),
// so that the suggestion is a fault that parses.
func roleExists(kind FaultKind, p int, at string, spec *algo.Spec, roles algo.Parts) error {
	if spec == nil {
		return nil
	}
	var ok bool
	switch p {
	case Leader:
		ok = roles.Leader
	case Coordinator:
		ok = roles.Leader || roles.Coordinator != algo.NoProc
	case TokenHolder:
		ok = roles.Token != ""
	case InCS:
		ok = spec.Kind == algo.MutualExclusion
	default:
		return fmt.Errorf("process %d: want a process id or a part", p)
	}
	if ok {
		return nil
	}
	what := map[int]string{Leader: "elects no leader", Coordinator: "has no single coordinator", TokenHolder: "has no token", InCS: "has no critical section"}[p]
	return fmt.Errorf("%s %s in this configuration: name a process instead (e.g. %s:2%s)", spec.Name, what, kind, at)
}

// faultsDelay bounds, roughly, how much later than usual the network
// faults of a schedule make a message arrive: the most any of them does
// (faultKind.late).
func faultsDelay(faults []Fault) time.Duration {
	var d time.Duration
	for i := range faults {
		if fk := kindOf(faults[i].Kind); fk != nil && fk.late != nil {
			d = max(d, fk.late(&faults[i]))
		}
	}
	return d
}

// validateFaults checks a schedule as a whole, refusing what can never
// apply: a recover with no crash before it that could have brought its
// process down, a heal with nothing to heal.
func validateFaults(faults []Fault) error {
	for i, f := range faults {
		switch f.Kind {
		case FaultRecover:
			if crashBefore(faults, i) < 0 {
				if f.AfterCrash {
					return &PlanError{Field: "fault", Value: f.String(), Err: fmt.Errorf("no crash:%s before it to count from", roleName(f.Proc))}
				}
				return &PlanError{Field: "fault", Value: f.String(), Err: fmt.Errorf("no crash before it could bring P%d down: nothing to recover", f.Proc)}
			}
		case FaultHeal:
			healable := false
			for _, g := range faults {
				healable = healable || g.severs() && g.At <= f.At && (g.End == 0 || g.End > f.At)
			}
			if !healable {
				return &PlanError{Field: "fault", Value: f.String(), Err: errors.New("no partition, isolation or cut is in force then: nothing to heal")}
			}
		}
	}
	return nil
}

// crashBefore returns the index of the crash the recover faults[i] follows,
// or -1. A relative recover follows the nearest crash before it in the
// list with the same Proc; a recover at a time, any crash that may bring
// its process down by then (one aimed at it or at a part it may play, at
// or before that time, or triggered by its events).
func crashBefore(faults []Fault, i int) int {
	r := faults[i]
	for j := i - 1; j >= 0; j-- {
		c := faults[j]
		if c.Kind == FaultCrash && c.Proc == r.Proc && r.AfterCrash {
			return j
		}
	}
	if r.AfterCrash {
		return -1
	}
	for j, c := range faults {
		if c.Kind != FaultCrash || (c.Proc >= 0 && c.Proc != r.Proc) {
			continue
		}
		if c.Trigger.Event != "" || c.At < r.At || c.At == r.At && j < i {
			return j
		}
	}
	return -1
}

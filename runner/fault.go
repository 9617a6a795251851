package runner

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FaultKind is what a fault does.
type FaultKind string

// Fault kinds. A new kind is a constant here and a line in faultKinds, and
// its effect in each driver: a case of sim.inject (sim.go) and a method of
// the launcher called from launcher.inject (launch.go).
const (
	FaultCrash   FaultKind = "crash"   // the process stops (under dmx run: SIGKILL)
	FaultRecover FaultKind = "recover" // a crashed process restarts with fresh state (plus what it persisted)
)

// faultKinds are the kinds ParseFaults knows, in the order its errors list
// them, and whether a fault of the kind may aim at the leader.
var faultKinds = []struct {
	kind     FaultKind
	atLeader bool
}{
	{FaultCrash, true},
	{FaultRecover, false},
}

// Leader is the Proc of a fault aimed at whichever process leads when the
// fault fires (the leader most recently decided by any process).
const Leader = -1

// Fault is one scheduled fault. Faults are text so that a schedule can be
// printed, stored with the run and replayed (after pebble's errorfs):
//
//	crash:2@500ms       crash P2 500ms after the start
//	recover:P2@900ms    restart P2 at 900ms
//	crash:leader@1s     crash whoever leads at 1s
type Fault struct {
	Kind FaultKind
	Proc int // or Leader
	At   time.Duration
}

func (f Fault) String() string {
	p := strconv.Itoa(f.Proc)
	if f.Proc == Leader {
		p = "leader"
	}
	return fmt.Sprintf("%s:%s@%v", f.Kind, p, f.At)
}

// ParseFaults reads a fault specification: one or more faults separated by
// commas or spaces. Whether their processes exist is for Plan.Validate,
// which knows the group size.
func ParseFaults(spec string) ([]Fault, error) {
	var out []Fault
	for _, item := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		f, err := parseFault(item)
		if err != nil {
			return nil, fmt.Errorf("fault %q: %w", item, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func parseFault(s string) (Fault, error) {
	kind, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Fault{}, fmt.Errorf("want KIND:PROCESS@TIME, e.g. crash:2@500ms")
	}
	f := Fault{Kind: FaultKind(kind)}
	if !f.Kind.known() {
		return Fault{}, fmt.Errorf("unknown fault %q (known: %s)", kind, knownFaultKinds())
	}
	who, at, ok := strings.Cut(rest, "@")
	if !ok {
		return Fault{}, fmt.Errorf("no time: want %s:PROCESS@TIME, e.g. %s:2@500ms", kind, kind)
	}
	if who == "leader" {
		f.Proc = Leader
	} else {
		p, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(who, "P"), "p"))
		if err != nil || p < 0 {
			return Fault{}, fmt.Errorf("process %q: want a number such as 2 or P2, or leader", who)
		}
		f.Proc = p
	}
	d, err := time.ParseDuration(at)
	if err != nil || d < 0 {
		return Fault{}, fmt.Errorf("time %q: want a duration since the start, e.g. 500ms", at)
	}
	f.At = d
	return f, f.validate(-1)
}

// validate checks f against a group of n processes (n < 0: any group).
func (f Fault) validate(n int) error {
	if !f.Kind.known() {
		return fmt.Errorf("unknown fault %q (known: %s)", f.Kind, knownFaultKinds())
	}
	switch {
	case f.Proc == Leader:
		var can []string
		ok := false
		for _, k := range faultKinds {
			if k.atLeader {
				can = append(can, string(k.kind))
				ok = ok || k.kind == f.Kind
			}
		}
		if !ok {
			return fmt.Errorf("a %s cannot aim at the leader (only %s can)", f.Kind, strings.Join(can, ", "))
		}
	case f.Proc < 0:
		return fmt.Errorf("process %d: want a process id or leader", f.Proc)
	case n >= 0 && f.Proc >= n:
		return fmt.Errorf("process %d does not exist (there are %d: 0..%d)", f.Proc, n, n-1)
	}
	if f.At < 0 {
		return fmt.Errorf("time %v: must not be negative", f.At)
	}
	return nil
}

func (k FaultKind) known() bool {
	for _, fk := range faultKinds {
		if fk.kind == k {
			return true
		}
	}
	return false
}

func knownFaultKinds() string {
	names := make([]string, len(faultKinds))
	for i, k := range faultKinds {
		names[i] = string(k.kind)
	}
	return strings.Join(names, ", ")
}

package runner

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FaultKind is what a fault does.
type FaultKind string

// Fault kinds.
const (
	FaultCrash   FaultKind = "crash"   // the process stops (under dmx run: SIGKILL)
	FaultRecover FaultKind = "recover" // a crashed process restarts with fresh state (plus what it persisted)
)

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
// commas or spaces. n is the number of processes, to check ids.
func ParseFaults(spec string, n int) ([]Fault, error) {
	var out []Fault
	for _, item := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		f, err := parseFault(item, n)
		if err != nil {
			return nil, fmt.Errorf("--faults %q: %w", item, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func parseFault(s string, n int) (Fault, error) {
	kind, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Fault{}, fmt.Errorf("want KIND:PROCESS@TIME, e.g. crash:2@500ms")
	}
	var f Fault
	switch FaultKind(kind) {
	case FaultCrash, FaultRecover:
		f.Kind = FaultKind(kind)
	default:
		return Fault{}, fmt.Errorf("unknown fault %q (known: crash, recover)", kind)
	}
	who, at, ok := strings.Cut(rest, "@")
	if !ok {
		return Fault{}, fmt.Errorf("no time: want %s:PROCESS@TIME, e.g. %s:2@500ms", kind, kind)
	}
	switch {
	case who == "leader":
		if f.Kind != FaultCrash {
			return Fault{}, fmt.Errorf("only a crash can aim at the leader")
		}
		f.Proc = Leader
	default:
		p, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(who, "P"), "p"))
		if err != nil {
			return Fault{}, fmt.Errorf("process %q: want a number such as 2 or P2, or leader", who)
		}
		if p < 0 || p >= n {
			return Fault{}, fmt.Errorf("process %d does not exist (there are %d: 0..%d)", p, n, n-1)
		}
		f.Proc = p
	}
	d, err := time.ParseDuration(at)
	if err != nil || d < 0 {
		return Fault{}, fmt.Errorf("time %q: want a duration since the start, e.g. 500ms", at)
	}
	f.At = d
	return f, nil
}

package algotest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner/algo"
)

// Request gives node id a Request for the critical section (the workload
// asks), as a mutual-exclusion machine that embeds an election gets it.
func (b *ElectionBench) Request(id int) error { return b.workload(id, algo.Request) }

// Release gives node id a Release (the workload leaves the critical
// section).
func (b *ElectionBench) Release(id int) error { return b.workload(id, algo.Release) }

func (b *ElectionBench) workload(id int, k algo.InputKind) error {
	if err := b.check(id); err != nil {
		return err
	}
	if !b.up[id] {
		return fmt.Errorf("P%d is down", id)
	}
	b.step(id, algo.Input{Kind: k, Resource: "cs"}, 0)
	return nil
}

// Beat fires the heartbeat timer of every live node that has one armed, in
// id order (each at its due time), and then delivers the heartbeats in
// flight: one round of seed 004's "send beat every T" by everyone.
func (b *ElectionBench) Beat(timer, msgType string) {
	for id := range b.ms {
		if b.up[id] {
			if _, ok := b.timers[id][timer]; ok {
				_ = b.Fire(id, timer)
			}
		}
	}
	b.Deliver(func(_, _ int, m algo.Msg) bool { return m.Type == msgType }, -1)
}

// RunFailoverScripts runs every dir/*.txt interaction script against
// spec's machines on an ElectionBench, as RunElectionScripts does (same
// file format and commands, same -rewrite flag), for mutual-exclusion
// algorithms that embed an election and a failure detector. Commands
// beside the election scripts' ones:
//
//	request id           the workload asks id for the critical section
//	release id           the workload leaves it
//	beat                 every live node sends its heartbeats (fd-beat fires at its due
//	                     time) and they are delivered
//	hide-heartbeats      from now on, leave out of the output the heartbeats sent,
//	                     delivered and lost, and fd-beat timers (what they cause is shown)
func RunFailoverScripts(t *testing.T, spec algo.Spec, dir string) {
	t.Helper()
	runScriptDir(t, dir, func() func(string) []string {
		return (&failoverScript{electionScript: electionScript{spec: spec}}).exec
	})
}

type failoverScript struct {
	electionScript
	hide bool
}

func (s *failoverScript) exec(cmd string) []string {
	var out []string
	var err error
	fields := strings.Fields(cmd)
	switch fields[0] {
	case "request", "release", "beat", "hide-heartbeats":
		err = s.own(fields)
		if s.b != nil {
			out = s.b.Output()
		}
	default:
		out, err = s.run(cmd)
		if s.b != nil {
			out = append(out, s.b.Output()...)
		}
		if fields[0] == "new" {
			s.hide = false
		}
	}
	if s.hide {
		out = hideHeartbeats(out)
		if fields[0] == "beat" && len(out) == 0 {
			out = []string{"(heartbeats only)"}
		}
	}
	if err != nil {
		out = append(out, "error: "+err.Error())
	}
	return out
}

func (s *failoverScript) own(fields []string) error {
	if s.b == nil {
		return fmt.Errorf("no machines: the script must begin with new")
	}
	switch fields[0] {
	case "request", "release":
		if len(fields) != 2 {
			return fmt.Errorf("%s: want one node id", fields[0])
		}
		id, err := strconv.Atoi(fields[1])
		if err != nil {
			return fmt.Errorf("%s: node %q", fields[0], fields[1])
		}
		if fields[0] == "request" {
			return s.b.Request(id)
		}
		return s.b.Release(id)
	case "beat":
		s.b.Beat("fd-beat", "heartbeat")
	case "hide-heartbeats":
		s.hide = true
	}
	return nil
}

var (
	hbNoise  = regexp.MustCompile(`^  (send \d+->\d+ heartbeat|set-timer fd-beat .*)$`)
	hbLost   = regexp.MustCompile(`^lost \d+->\d+ heartbeat `)
	hbHeader = regexp.MustCompile(`^P\d+ (deliver \d+->\d+ heartbeat|timer fd-beat) @\d+$`)
)

// hideHeartbeats leaves out the heartbeat lines of a script's output, and
// the headers of heartbeat inputs that caused nothing else.
func hideHeartbeats(lines []string) []string {
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if hbLost.MatchString(l) || hbNoise.MatchString(l) {
			continue
		}
		if hbHeader.MatchString(l) {
			var kept []string
			j := i + 1
			for ; j < len(lines) && strings.HasPrefix(lines[j], "  "); j++ {
				if !hbNoise.MatchString(lines[j]) {
					kept = append(kept, lines[j])
				}
			}
			if len(kept) > 0 {
				out = append(out, l)
				out = append(out, kept...)
			}
			i = j - 1
			continue
		}
		out = append(out, l)
	}
	return out
}

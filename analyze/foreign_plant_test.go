package analyze

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/foreign"
	"github.com/dmxlab/dmx/trace/format/shiviz"
)

// Planted violations in foreign shapes (issue 29). The generator writes a
// ShiViz log, as another program instrumented with GoVector would: hosts
// with names of their own, numbered by first appearance; several
// executions in one file; hosts that join late; a lock served by a
// coordinator; a Raft-like election with terms carried by messages and
// step-downs; crashes; no wall times (so that crash-ended sections and
// reigns are judged by happens-before alone). One execution of a file has
// a planted violation, the others are clean; some files are imported as
// excerpts (--cut). The log goes through the real importer
// (shiviz.Parse, foreign.Build) and the checks a foreign trace gets
// (General). Every planted violation must be found, in its execution and
// only there, by its check; the clean executions must have no finding;
// a request left waiting at the end of an excerpt must be unknown, not
// violated.

// flog writes the events of one execution of a ShiViz log.
type flog struct {
	b     strings.Builder
	names []string
	clock []map[string]uint64
	rng   *rand.Rand
	sent  map[int]map[string]uint64 // message -> the sender's clock at its send
	nmsg  int
	down  []bool
}

func newFlog(rng *rand.Rand, names []string) *flog {
	l := &flog{names: names, rng: rng, sent: map[int]map[string]uint64{}, down: make([]bool, len(names))}
	for range names {
		l.clock = append(l.clock, map[string]uint64{})
	}
	return l
}

// event writes an event of host h with text.
func (l *flog) event(h int, text string) {
	c := l.clock[h]
	c[l.names[h]]++
	var parts []string
	for _, k := range sortedKeys(c) {
		parts = append(parts, fmt.Sprintf("%q:%d", k, c[k]))
	}
	fmt.Fprintf(&l.b, "%s {%s}\n%s\n", l.names[h], strings.Join(parts, ", "), text)
}

// send writes a send from h and returns the message, for recv.
func (l *flog) send(h int, text string) int {
	l.event(h, text)
	l.nmsg++
	l.sent[l.nmsg] = maps.Clone(l.clock[h])
	return l.nmsg
}

// recv writes the receive of message m at h: its clock merges the send's.
func (l *flog) recv(h, m int, text string) {
	for k, v := range l.sent[m] {
		l.clock[h][k] = max(l.clock[h][k], v)
	}
	l.event(h, text)
}

// fplant is a violation planted in one execution: what it does, and the
// check that must find it (with a substring of the finding).
type fplant struct {
	name  string
	check string
	says  string
	// excerptUnknown: planted only in excerpts, where it must be unknown
	// (a request still waiting when the log was cut).
	excerptUnknown bool
}

var fplants = []fplant{
	{name: "two holders granted at once", check: "mutex-causal", says: "critical sections on"},
	{name: "crash inside a section, the next one heard from", check: "mutex-causal", says: "both were inside at once"},
	{name: "leader hears the next term and crashes", check: "split-brain", says: "in fact:"},
	{name: "two leaders of one term", check: "agreement", says: "has two leaders"},
	{name: "request never granted", check: "liveness", says: "was never granted"},
	{name: "two waiting for each other", check: "deadlock", says: "deadlock on"},
	{name: "request waiting when the excerpt ends", check: "liveness", excerptUnknown: true},
}

// fworld scripts one execution: a coordinator granting a lock, clients,
// an election with terms, late joiners.
type fworld struct {
	l      *flog
	rng    *rand.Rand
	coord  int
	n      int
	joined []bool
	term   int
	leader int
}

// join has host h join (late: when it first acts); the leader, if any,
// tells it who leads.
func (w *fworld) join(h int) {
	if w.joined[h] {
		return
	}
	w.joined[h] = true
	w.l.event(h, "Initialization Complete")
	if w.leader >= 0 && w.leader != h && !w.l.down[w.leader] {
		m := w.l.send(w.leader, fmt.Sprintf("send append term %d", w.term))
		w.l.recv(h, m, fmt.Sprintf("recv append term %d", w.term))
		w.l.event(h, fmt.Sprintf("leader %s term %d", w.l.names[w.leader], w.term))
	}
}

// section has client c ask the coordinator, be granted, and release.
func (w *fworld) section(c int) {
	w.join(c)
	w.l.event(c, "want lock printer")
	m := w.l.send(c, "send request")
	w.l.recv(w.coord, m, "recv request")
	g := w.l.send(w.coord, "send grant")
	w.l.recv(c, g, "recv grant")
	w.l.event(c, "got lock printer")
	w.l.event(c, "released lock printer")
	r := w.l.send(c, "send release")
	w.l.recv(w.coord, r, "recv release")
}

// elect has candidate c win the next term, as Raft does: it asks every
// live host for its vote; the old leader steps down on hearing the higher
// term, before it votes; c leads once it has the votes, and tells them.
func (w *fworld) elect(c int) {
	w.join(c)
	w.term++
	old := w.leader
	w.l.event(c, fmt.Sprintf("campaign term %d", w.term))
	var voters []int
	for h := range w.n {
		if h != c && w.joined[h] && !w.l.down[h] {
			voters = append(voters, h)
		}
	}
	for _, h := range voters {
		m := w.l.send(c, fmt.Sprintf("send vote term %d", w.term))
		w.l.recv(h, m, fmt.Sprintf("recv vote term %d", w.term))
		if h == old {
			w.l.event(h, fmt.Sprintf("follower term %d", w.term))
		}
		w.l.recv(c, w.l.send(h, fmt.Sprintf("send granted term %d", w.term)), fmt.Sprintf("recv granted term %d", w.term))
	}
	if c == old {
		w.l.event(c, fmt.Sprintf("follower term %d", w.term))
	}
	w.l.event(c, fmt.Sprintf("leader %s term %d", w.l.names[c], w.term))
	w.leader = c
	for _, h := range voters {
		m := w.l.send(c, fmt.Sprintf("send append term %d", w.term))
		w.l.recv(h, m, fmt.Sprintf("recv append term %d", w.term))
		w.l.event(h, fmt.Sprintf("leader %s term %d", w.l.names[c], w.term))
	}
}

// step does something clean: a section, an election, a late join, chatter.
func (w *fworld) step() {
	client := func() int {
		for {
			if c := 1 + w.rng.IntN(w.n-1); !w.l.down[c] {
				return c
			}
		}
	}
	switch x := w.rng.IntN(10); {
	case x < 5:
		w.section(client())
	case x < 6:
		c := client()
		if c != w.leader && !w.l.down[c] {
			w.elect(c)
		}
	case x < 8:
		w.join(client())
	default:
		a, b := client(), client()
		if a != b {
			w.join(a)
			w.join(b)
			w.l.recv(b, w.l.send(a, "send app"), "recv app")
		}
	}
}

// plant makes violation p happen now.
func (w *fworld) plant(p fplant) {
	c1, c2 := 1, 2
	w.join(c1)
	w.join(c2)
	switch p.name {
	case "two holders granted at once":
		for _, c := range []int{c1, c2} {
			w.l.event(c, "want lock printer")
			w.l.recv(w.coord, w.l.send(c, "send request"), "recv request")
		}
		g1, g2 := w.l.send(w.coord, "send grant"), w.l.send(w.coord, "send grant")
		w.l.recv(c1, g1, "recv grant")
		w.l.event(c1, "got lock printer")
		w.l.recv(c2, g2, "recv grant")
		w.l.event(c2, "got lock printer")
		w.l.event(c1, "released lock printer")
		w.l.event(c2, "released lock printer")
	case "crash inside a section, the next one heard from":
		w.l.event(c1, "want lock printer")
		w.l.recv(w.coord, w.l.send(c1, "send request"), "recv request")
		w.l.recv(c1, w.l.send(w.coord, "send grant"), "recv grant")
		w.l.event(c1, "got lock printer")
		// c1 tells c2 it may go (a buggy hand-over), c2 enters, c2 tells
		// c1, which crashes without leaving.
		w.l.recv(c2, w.l.send(c1, "send handover"), "recv handover")
		w.l.event(c2, "got lock printer")
		w.l.recv(c1, w.l.send(c2, "send thanks"), "recv thanks")
		w.l.event(c1, "crashed")
		w.l.down[c1] = true
		w.l.event(c2, "released lock printer")
	case "leader hears the next term and crashes":
		if w.leader != c1 {
			w.elect(c1)
		}
		// c2 wins the next term without c1 hearing the election; c2's
		// follower (the coordinator) writes to c1, which crashes still
		// leading.
		w.term++
		w.l.event(c2, fmt.Sprintf("campaign term %d", w.term))
		w.l.event(c2, fmt.Sprintf("leader %s term %d", w.l.names[c2], w.term))
		w.l.recv(w.coord, w.l.send(c2, fmt.Sprintf("send append term %d", w.term)), fmt.Sprintf("recv append term %d", w.term))
		w.l.event(w.coord, fmt.Sprintf("leader %s term %d", w.l.names[c2], w.term))
		w.l.recv(c1, w.l.send(w.coord, "send status"), "recv status")
		w.l.event(c1, "crashed")
		w.l.down[c1] = true
		w.leader = c2
	case "two leaders of one term":
		w.term++
		w.l.event(c1, fmt.Sprintf("leader %s term %d", w.l.names[c1], w.term))
		w.l.event(c2, fmt.Sprintf("leader %s term %d", w.l.names[c2], w.term))
	case "request never granted":
		w.l.event(c1, "want lock printer")
		w.l.recv(w.coord, w.l.send(c1, "send request"), "recv request")
		// The coordinator forgets it; the others go on for a while.
		for range 3 {
			a := 3 + w.rng.IntN(w.n-3)
			w.join(a)
			w.l.recv(w.coord, w.l.send(a, "send app"), "recv app")
		}
	case "two waiting for each other":
		w.l.event(c1, fmt.Sprintf("waiting for %s on printer", w.l.names[c2]))
		w.l.event(c2, fmt.Sprintf("waiting for %s on printer", w.l.names[c1]))
	case "request waiting when the excerpt ends":
		w.l.event(c1, "want lock printer")
		w.l.recv(w.coord, w.l.send(c1, "send request"), "recv request")
	}
}

// fRules are the rules the generated logs are imported with.
var fRules = []string{
	`cs_request=^want lock (?<resource>\w+)`,
	`cs_enter=^got lock (?<resource>\w+)`,
	`cs_exit=^released lock (?<resource>\w+)`,
	`leader=^leader (?<leader>\S+) term (?<term>\d+)`,
	`step_down=^follower term (?<term>\d+)`,
	`election_start=^campaign term (?<term>\d+)`,
	`crash=^crashed`,
	`wait=^waiting for (?<waiting_for>\S+) on (?<resource>\w+)`,
	`send=^send (?<type>\w+)(?: term (?<term>\d+))?$`,
	`receive=^recv (?<type>\w+)(?: term (?<term>\d+))?$`,
}

// foreignLog generates a log of several executions, one with plant p
// (nil: none), and says which.
func foreignLog(seed uint64, p *fplant) (text string, planted int, execs int) {
	rng := rand.New(rand.NewPCG(seed, 0xf02e))
	execs = 2 + rng.IntN(3)
	planted = rng.IntN(execs)
	var b strings.Builder
	b.WriteString(shiviz.ExportRegex + "\n" + shiviz.ExportSeparator + "\n")
	for e := range execs {
		fmt.Fprintf(&b, "=== execution %d ===\n", e+1)
		n := 4 + rng.IntN(6)
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("%s%d", []string{"node", "srv", "n", "replica"}[rng.IntN(4)], rng.IntN(90)+10+i*100)
		}
		w := &fworld{l: newFlog(rng, names), rng: rng, n: n, joined: make([]bool, n), leader: -1}
		w.join(0) // the coordinator joins first; the others late, when they first act
		w.elect(0)
		steps := 10 + rng.IntN(30)
		at := rng.IntN(steps)
		for s := range steps {
			if p != nil && e == planted && s == at {
				w.plant(*p)
			}
			w.step()
		}
		if p != nil && e == planted && (at >= steps || p.excerptUnknown) {
			w.plant(*p)
		}
		b.WriteString(w.l.b.String())
	}
	return b.String(), planted, execs
}

func TestForeignPlantedViolations(t *testing.T) {
	var rules []foreign.Rule
	for _, r := range fRules {
		rule, err := foreign.ParseRule(r, "test")
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, rule)
	}
	seeds := uint64(max(plantSeeds()/2, 1)) // -plants N: N/2 files per plant
	planted, found, clean, falseAlarms, unknownAtCut := 0, 0, 0, 0, 0
	for i := range fplants {
		p := &fplants[i]
		for seed := uint64(1); seed <= seeds; seed++ {
			text, at, execs := foreignLog(seed*31+uint64(i), p)
			cut := p.excerptUnknown || seed%3 == 0 // every third file is an excerpt
			var ps foreign.Problems
			lg, err := shiviz.Parse("gen.log", []byte(text), foreign.ParseOptions{}, &ps)
			if err != nil || ps.Len() > 0 {
				t.Fatalf("%s, seed %d: the generated log does not parse: %v %v\n%s", p.name, seed, err, ps.Err(), text)
			}
			runs := foreign.Build(lg, foreign.Options{Rules: rules, Cut: cut}, &ps)
			if ps.Len() > 0 || len(runs) != execs {
				t.Fatalf("%s, seed %d: import: %v (%d runs of %d executions)\n%s", p.name, seed, ps.Err(), len(runs), execs, text)
			}
			for e, r := range runs {
				run := r.Run
				run.ID = int64(e + 1)
				res, err := Evaluate(run, &trace.SliceReader{Events: r.Events}, General())
				if err != nil {
					t.Fatalf("%s, seed %d, execution %d: %v", p.name, seed, e+1, err)
				}
				for _, x := range res {
					if e == at && x.Check == p.check {
						// In an excerpt, what did not happen yet may
						// happen after the cut: liveness and deadlock
						// are unknown there; safety stays violated.
						progress := p.check == "liveness" || p.check == "deadlock"
						switch {
						case p.excerptUnknown || cut && progress:
							planted++
							if x.Verdict == Unknown {
								found++
								unknownAtCut++
							} else {
								t.Errorf("%s, seed %d: %s %s at the end of an excerpt, want unknown: %v %s", p.name, seed, x.Check, x.Verdict, x.Findings, x.Note)
							}
						case x.Verdict == Violated && strings.Contains(x.Findings[0].Message, p.says):
							planted++
							found++
							if procToken.MatchString(x.Findings[0].Message) {
								t.Errorf("%s, seed %d: the finding names processes by number, not by the log's hosts: %s", p.name, seed, x.Findings[0].Message)
							}
						default:
							planted++
							t.Errorf("%s, seed %d (cut %v): %s %s, want violated saying %q: %v %s\n%s", p.name, seed, cut, x.Check, x.Verdict, p.says, x.Findings, x.Note, text)
						}
						continue
					}
					if x.Verdict == Violated && (e != at || !slices.Contains(alsoFinds[p.name], x.Check)) {
						falseAlarms++
						t.Errorf("%s, seed %d, execution %d (planted in %d): false alarm: %s: %v", p.name, seed, e+1, at+1, x.Check, x.Findings)
					}
				}
				if e != at {
					clean++
				}
				if cut && Summarize(res) == OK {
					t.Errorf("%s, seed %d: an excerpt's run is ok: %+v", p.name, seed, res)
				}
			}
		}
	}
	t.Logf("foreign shapes: %d violations planted, %d found (%d of them unknown at the end of an excerpt, as they must be); %d clean executions, %d false alarms",
		planted, found, unknownAtCut, clean, falseAlarms)
	if found != planted {
		t.Errorf("%d of %d planted violations found", found, planted)
	}
}

// alsoFinds are the other checks a plant breaks too, besides its own.
var alsoFinds = map[string][]string{
	"two holders granted at once":                     {"mutex-causal"},
	"crash inside a section, the next one heard from": {"mutex-causal"},
	"leader hears the next term and crashes":          {"split-brain", "agreement", "termination"},
	"two leaders of one term":                         {"agreement", "split-brain", "validity"},
	"request never granted":                           {"liveness"},
	"two waiting for each other":                      {"deadlock", "liveness"},
}

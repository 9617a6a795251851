package algotest

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of algotest scripts (testdata/*.txt) with the actual output")

// RunScripts runs every dir/*.txt interaction script against spec's machines,
// one subtest per file, and compares each command's output with the text
// recorded under it. With go test -rewrite the files are rewritten with the
// actual output instead (review the diff before committing it).
//
// A script is a sequence of blocks separated by blank lines; lines starting
// with # are comments (cite the seed rule a block exercises there). A block
// is one command line, a line "----", and the expected output:
//
//	# Reference: seed 003 [RA1], [RA2]: multicast (T_Pi, i) to the others.
//	request 1 clock=5
//	----
//	P1 request @5
//	  send 1->0 request stamp=5 id=1
//	  send 1->2 request stamp=5 id=1
//	  wait [0 2]
//
// Commands (ids are node ids; k=v arguments are optional unless shown):
//
//	new n=N [k=v...]       build N machines; other k=v are the algorithm's parameters
//	start [id...]          give Start to these nodes (default: all, in id order)
//	request id [clock=T]   the workload asks id for the critical section
//	release id [clock=T]   the workload leaves it
//	timer id name          fire id's timer name
//	recover id             give Recover to id
//	deliver [from=i] [to=j] [type=t] [n=k]
//	                       deliver the pending messages that match (all, or
//	                       the first k), in the order they were sent
//	inject from to type [stamp=S] [id=I] [term=T] [vals=a,b,...] [clock=C]
//	                       deliver a crafted message that was never sent
//	stabilize              deliver pending messages in send order until none is left
//	pending                list the messages sent and not yet delivered
//	state                  each node's state, for machines that are fmt.Stringers
//	stats                  messages sent since new, by type
//	advance D              advance Input.Now by the duration D (e.g. 5ms)
//
// Each input prints a header "P<id> <input> @<clock>" and then, indented, the
// machine's outputs (see FormatOutput). The bench keeps each node's Lamport
// clock as the runtime does: +1 per input (max with a delivered message's
// clock first), +1 per output. clock=T makes the input's clock exactly T, so
// that a script can set up equal or ordered request timestamps.
func RunScripts(t *testing.T, spec algo.Spec, dir string) {
	t.Helper()
	runScriptDir(t, dir, func() func(string) []string { return (&scriptState{spec: spec}).exec })
}

// runScriptDir runs every dir/*.txt script, one subtest per file, each with
// a fresh command interpreter from newExec.
func runScriptDir(t *testing.T, dir string, newExec func() func(cmd string) []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scripts in %s", dir)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			runScript(t, f, newExec())
		})
	}
}

type block struct {
	pre  []string // comment and blank lines before the command
	cmd  string
	line int
	want []string
}

func parseScript(text string) ([]block, []string, error) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var blocks []block
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			pre = append(pre, l)
			continue
		}
		b := block{pre: pre, cmd: l, line: i + 1}
		pre = nil
		if i+1 >= len(lines) || lines[i+1] != "----" {
			return nil, nil, fmt.Errorf("line %d: command %q is not followed by ----", i+1, l)
		}
		i += 2
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			b.want = append(b.want, lines[i])
		}
		i-- // the blank line (or EOF) belongs to what follows
		blocks = append(blocks, b)
	}
	return blocks, pre, nil
}

// runScript runs the script at path, giving each command to exec, and
// compares (or, with -rewrite, replaces) the output recorded under it.
func runScript(t *testing.T, path string, exec func(cmd string) []string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks, trailer, err := parseScript(string(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out strings.Builder
	for _, b := range blocks {
		got := exec(b.cmd)
		if *rewrite {
			for _, l := range b.pre {
				out.WriteString(l + "\n")
			}
			out.WriteString(b.cmd + "\n----\n")
			for _, l := range got {
				out.WriteString(l + "\n")
			}
			continue
		}
		if !slices.Equal(got, b.want) {
			t.Errorf("%s:%d: %s\n--- want\n%s\n--- got\n%s", path, b.line, b.cmd,
				strings.Join(b.want, "\n"), strings.Join(got, "\n"))
		}
	}
	if *rewrite {
		for _, l := range trailer {
			out.WriteString(l + "\n")
		}
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type pendingMsg struct {
	from, to int
	msg      algo.Msg
	clock    uint64
}

type scriptState struct {
	spec    algo.Spec
	ms      []algo.Machine
	clocks  []uint64
	pending []pendingMsg
	sent    map[string]int
	now     int64
	out     []string
}

func (s *scriptState) printf(format string, args ...any) {
	s.out = append(s.out, fmt.Sprintf(format, args...))
}

// exec runs one command and returns its output lines.
func (s *scriptState) exec(cmd string) []string {
	s.out = nil
	if err := s.run(cmd); err != nil {
		s.printf("error: %v", err)
	}
	return s.out
}

func parseArgs(fields []string) (pos []string, kv map[string]string) {
	kv = map[string]string{}
	for _, f := range fields {
		if k, v, ok := strings.Cut(f, "="); ok {
			kv[k] = v
		} else {
			pos = append(pos, f)
		}
	}
	return pos, kv
}

func (s *scriptState) node(arg string) (int, error) {
	id, err := strconv.Atoi(arg)
	if err != nil || id < 0 || id >= len(s.ms) {
		return 0, fmt.Errorf("node %q: want an id in 0..%d", arg, len(s.ms)-1)
	}
	return id, nil
}

func (s *scriptState) run(cmd string) error {
	fields := strings.Fields(cmd)
	verb := fields[0]
	pos, kv := parseArgs(fields[1:])
	if verb != "new" && s.ms == nil {
		return fmt.Errorf("no machines: the script must begin with new")
	}
	clockArg := func() (uint64, bool, error) {
		v, ok := kv["clock"]
		if !ok {
			return 0, false, nil
		}
		c, err := strconv.ParseUint(v, 10, 64)
		return c, true, err
	}
	switch verb {
	case "new":
		n, err := strconv.Atoi(kv["n"])
		if err != nil {
			return fmt.Errorf("new: want n=N")
		}
		delete(kv, "n")
		if len(kv) == 0 {
			kv = nil
		}
		s.ms, s.clocks, s.pending, s.now, s.sent = nil, make([]uint64, n), nil, 0, map[string]int{}
		for id := 0; id < n; id++ {
			m, err := s.spec.New(algo.Config{ID: id, N: n, Resource: "cs", Params: kv,
				Rand: rand.New(rand.NewPCG(1, uint64(id)+1))})
			if err != nil {
				s.ms = nil
				return err
			}
			s.ms = append(s.ms, m)
		}
		s.printf("ok")
	case "start":
		ids := pos
		if len(ids) == 0 {
			for i := range s.ms {
				ids = append(ids, strconv.Itoa(i))
			}
		}
		for _, a := range ids {
			id, err := s.node(a)
			if err != nil {
				return err
			}
			s.step(id, algo.Input{Kind: algo.Start}, 0, false)
		}
	case "request", "release", "recover":
		if len(pos) != 1 {
			return fmt.Errorf("%s: want one node id", verb)
		}
		id, err := s.node(pos[0])
		if err != nil {
			return err
		}
		c, set, err := clockArg()
		if err != nil {
			return err
		}
		kind := map[string]algo.InputKind{"request": algo.Request, "release": algo.Release, "recover": algo.Recover}[verb]
		in := algo.Input{Kind: kind, Clock: c}
		if kind != algo.Recover {
			in.Resource = "cs"
		}
		s.step(id, in, 0, set)
	case "timer":
		if len(pos) != 2 {
			return fmt.Errorf("timer: want an id and a timer name")
		}
		id, err := s.node(pos[0])
		if err != nil {
			return err
		}
		s.step(id, algo.Input{Kind: algo.Timer, TimerName: pos[1]}, 0, false)
	case "deliver":
		var match []pendingMsg
		var rest []pendingMsg
		limit := -1
		if v, ok := kv["n"]; ok {
			var err error
			if limit, err = strconv.Atoi(v); err != nil {
				return fmt.Errorf("deliver: n=%q", v)
			}
		}
		for _, p := range s.pending {
			ok := limit != 0 &&
				(kv["from"] == "" || kv["from"] == strconv.Itoa(p.from)) &&
				(kv["to"] == "" || kv["to"] == strconv.Itoa(p.to)) &&
				(kv["type"] == "" || kv["type"] == p.msg.Type)
			if ok {
				match = append(match, p)
				limit--
			} else {
				rest = append(rest, p)
			}
		}
		if len(match) == 0 {
			s.printf("no pending message matches")
			return nil
		}
		s.pending = rest
		for _, p := range match {
			s.deliver(p)
		}
	case "inject":
		if len(pos) != 3 {
			return fmt.Errorf("inject: want from, to and type")
		}
		from, err := s.node(pos[0])
		if err != nil {
			return err
		}
		to, err := s.node(pos[1])
		if err != nil {
			return err
		}
		m := algo.Msg{Type: pos[2], Resource: "cs"}
		for k, v := range kv {
			switch k {
			case "stamp", "term", "clock":
				u, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return fmt.Errorf("inject: %s=%q", k, v)
				}
				if k == "stamp" {
					m.Stamp = u
				} else if k == "term" {
					m.Term = u
				}
			case "id":
				if m.ID, err = strconv.Atoi(v); err != nil {
					return fmt.Errorf("inject: id=%q", v)
				}
			case "vals":
				for _, x := range strings.Split(v, ",") {
					u, err := strconv.ParseUint(x, 10, 64)
					if err != nil {
						return fmt.Errorf("inject: vals=%q", v)
					}
					m.Vals = append(m.Vals, u)
				}
			default:
				return fmt.Errorf("inject: unknown argument %s", k)
			}
		}
		c, _, _ := clockArg()
		s.deliver(pendingMsg{from: from, to: to, msg: m, clock: c})
	case "stabilize":
		for i := 0; len(s.pending) > 0; i++ {
			if i > 10000 {
				return fmt.Errorf("stabilize: still messages pending after 10000 deliveries")
			}
			p := s.pending[0]
			s.pending = s.pending[1:]
			s.deliver(p)
		}
	case "pending":
		if len(s.pending) == 0 {
			s.printf("none")
		}
		for _, p := range s.pending {
			s.printf("%d->%d %s", p.from, p.to, FormatMsg(p.msg))
		}
	case "state":
		for id, m := range s.ms {
			if st, ok := m.(fmt.Stringer); ok {
				s.printf("P%d %s", id, st.String())
			}
		}
	case "stats":
		types := slices.Sorted(maps.Keys(s.sent))
		total := 0
		var parts []string
		for _, k := range types {
			parts = append(parts, fmt.Sprintf("%s=%d", k, s.sent[k]))
			total += s.sent[k]
		}
		s.printf("sent %d: %s", total, strings.Join(parts, " "))
	case "advance":
		if len(pos) != 1 {
			return fmt.Errorf("advance: want a duration")
		}
		d, err := time.ParseDuration(pos[0])
		if err != nil {
			return err
		}
		s.now += int64(d)
		s.printf("now %v", time.Duration(s.now))
	default:
		return fmt.Errorf("unknown command %q", verb)
	}
	return nil
}

func (s *scriptState) deliver(p pendingMsg) {
	s.step(p.to, algo.Input{Kind: algo.Receive, From: p.from, Msg: p.msg}, p.clock, false)
}

// step gives in to node id. Unless fixed is set, Input.Clock is computed as
// the runtime does; with fixed, in.Clock is used as given.
func (s *scriptState) step(id int, in algo.Input, msgClock uint64, fixed bool) {
	if !fixed {
		in.Clock = max(s.clocks[id], msgClock) + 1
	}
	s.clocks[id] = in.Clock
	in.Now = s.now
	s.printf("P%d %s", id, describeInput(id, in))
	outs := s.ms[id].Step(in)
	for _, o := range outs {
		s.clocks[id]++
		s.printf("  %s", FormatOutput(id, o))
		if o.Kind == algo.Send {
			if o.To < 0 || o.To >= len(s.ms) {
				s.printf("  error: send to node %d, outside 0..%d", o.To, len(s.ms)-1)
				continue
			}
			m := o.Msg
			m.Resource = "cs"
			m.Vals = slices.Clone(m.Vals)
			s.sent[m.Type]++
			s.pending = append(s.pending, pendingMsg{from: id, to: o.To, msg: m, clock: s.clocks[id]})
		}
	}
}

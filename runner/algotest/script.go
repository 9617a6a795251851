package algotest

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
)

// rewrite is the test binary's -update flag, which refreshes every golden
// file: here the expected output of the scripts (testdata/*.txt).
var rewrite = UpdateFlag("rewrite the golden files (the scripts' testdata/*.txt: their expected output) with this build's output")

// UpdateFlag returns a test binary's -update flag (go test -update
// refreshes every golden file), defining it with doc unless a package
// initialized before did: algotest defines it for the tests that import
// it, and their package's own golden files go by the same flag.
func UpdateFlag(doc string) func() bool {
	f := flag.Lookup("update")
	if f == nil {
		flag.Bool("update", false, doc)
		f = flag.Lookup("update")
	}
	return func() bool { return f.Value.String() == "true" }
}

// RunScripts runs every dir/*.txt interaction script against spec's
// machines on a Bench, one subtest per file, and compares each command's
// output with the text recorded under it. With go test -update the files
// are rewritten with the actual output instead (review the diff before
// committing it).
//
// A script is a sequence of blocks separated by blank lines; lines starting
// with # are comments (cite the seed rule a block exercises there). A block
// is one command line, a line "----", and the expected output:
//
//	# Reference: seed 003 [RA1], [RA2]: multicast (T_Pi, i) to the others.
//	request P1 cs clock=5
//	----
//	P1 request @5
//	  send 1->0 request stamp=5 id=1
//	  send 1->2 request stamp=5 id=1
//	  wait [0 2]
//
// The commands are in Commands: the inputs are the steps of a
// runner.World, in the words of a scenario's schedule and of dmx
// explore's counterexamples ("deliver P0>P2", "timer P1 cs backoff"),
// so that a schedule explore found can be replayed line by line in a
// script. Each input prints a header "P<id> <input> @<clock>" and then,
// indented, the machine's outputs (see FormatOutput); the clock is the
// node's Lamport clock as the runtime keeps it (+1 per recorded event: the
// input's, and each output but timers').
func RunScripts(t *testing.T, spec algo.Spec, dir string) {
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
			runScript(t, f, &script{spec: spec})
		})
	}
}

// Command is one command of the scripts' language.
type Command struct {
	Usage string // the command line, e.g. "timer P1 cs backoff"
	Doc   string
	// parse reads the arguments and returns what the command does; the
	// interpreter runs it only if the arguments were all read and good.
	parse func(a *args) func(b *Bench) error
}

// Commands are the scripts' commands by name (beside "new n=N [k=v...]",
// which builds N nodes, not started, with the algorithm's parameters k=v).
// The inputs are the steps of a runner.World, written as scenarios'
// schedules and explore's counterexamples write them (runner.ParseStep):
// processes are P0, P1..., a channel is P0>P2, a resource "-" is none (an
// election's or a multicast's timers); k=v arguments are optional unless
// shown.
var Commands = map[string]Command{
	"start": {"start [P<i>...]", "start these nodes (default: all, in id order)", func(a *args) func(*Bench) error {
		var ids []int
		for i := range a.pos {
			ids = append(ids, a.proc(i))
		}
		return func(b *Bench) error { return b.Start(ids...) }
	}},
	"request": stepCmd("request P<i> RESOURCE [clock=T]", "the workload asks P<i> for the critical section (clock=T: at Lamport clock T; a multicast algorithm multicasts)"),
	"release": stepCmd("release P<i> RESOURCE [clock=T]", "the workload leaves it"),
	"timer":   stepCmd("timer P<i> RESOURCE NAME", "fire P<i>'s timer NAME at its due time (the clock moves there)"),
	"crash":   stepCmd("crash P<i>", "crash P<i>"),
	"recover": stepCmd("recover P<i>", "restart P<i>: a fresh machine gets Recover with what P<i> persisted"),
	"deliver": stepCmd("deliver P<i>>P<j> [#K]", "the oldest message in flight from P<i> to P<j> arrives (#K: the one K places after it); lost if P<j> is down"),
	"inject-timer": {"inject-timer P<i> RESOURCE NAME", "fire P<i>'s timer NAME now although it is not set (a timer the machine does not expect)", func(a *args) func(*Bench) error {
		s := a.step("timer", -1)
		return func(b *Bench) error {
			return b.done(b.w.InjectTimer(s.Proc, runner.TimerRef{Resource: s.Resource, Name: s.Timer}))
		}
	}},
	"inject": {"inject P<i>>P<j> TYPE [stamp=S] [id=I] [term=T] [vals=a,b,...] [clock=C]", "P<j> gets a crafted message that was never sent", injectCmd},
	"stabilize": {"stabilize", "deliver the messages in flight in send order until none is left", func(a *args) func(*Bench) error {
		return (*Bench).Stabilize
	}},
	"advance": {"advance D", "move the clock forward by the duration D (e.g. 5ms)", func(a *args) func(*Bench) error {
		d := a.duration(0)
		return func(b *Bench) error {
			err := b.w.Advance(d)
			b.printf("now %v", b.w.Now())
			return err
		}
	}},
	"beat": {"beat", "every live node sends its heartbeats (fd-beat fires at its due time) and they are delivered", func(a *args) func(*Bench) error {
		return (*Bench).Beat
	}},
	"hide-heartbeats": {"hide-heartbeats", "from now on, leave the heartbeats sent, delivered and lost, and fd-beat timers, out of the output (what they cause is shown)", func(a *args) func(*Bench) error {
		return func(b *Bench) error { b.hide = true; return nil }
	}},
	"pending": {"pending", "the messages in flight, in send order, each with the step that delivers it", func(a *args) func(*Bench) error {
		return func(b *Bench) error {
			if len(b.flight) == 0 {
				b.printf("none")
			}
			for _, m := range b.flight {
				e, i := b.inFlight(m)
				s := runner.Step{Kind: runner.StepDeliver, Proc: m.to, From: m.from, Index: i}
				b.printf("%v: %s", s, FormatMsg(e.Msg))
			}
			return nil
		}
	}},
	"timers": {"timers", "each live node's armed timers and when they are due", func(a *args) func(*Bench) error {
		return func(b *Bench) error {
			b.each(func(id int) string {
				var parts []string
				ts := b.timers(id)
				for _, name := range slices.Sorted(maps.Keys(ts)) {
					parts = append(parts, fmt.Sprintf("%s@%v", name, ts[name]))
				}
				if len(parts) == 0 {
					return "none"
				}
				return strings.Join(parts, " ")
			})
			return nil
		}
	}},
	"state": {"state", "each node's machine's state, for machines that are fmt.Stringers", func(a *args) func(*Bench) error {
		return func(b *Bench) error {
			b.each(func(id int) string {
				if st, ok := b.machines[id].(fmt.Stringer); ok {
					return st.String()
				}
				return ""
			})
			return nil
		}
	}},
	"leaders": {"leaders", "each node's belief: the leader it last decided", func(a *args) func(*Bench) error {
		return func(b *Bench) error {
			var parts []string
			for id, l := range b.Leaders() {
				switch {
				case b.w.Node(id).Crashed():
					parts = append(parts, fmt.Sprintf("P%d:down", id))
				case l < 0:
					parts = append(parts, fmt.Sprintf("P%d->?", id))
				default:
					parts = append(parts, fmt.Sprintf("P%d->%d", id, l))
				}
			}
			b.printf("%s", strings.Join(parts, " "))
			return nil
		}
	}},
	"stats": {"stats", "messages sent since new, by type", func(a *args) func(*Bench) error {
		return func(b *Bench) error {
			total := 0
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(b.sent)) {
				parts = append(parts, fmt.Sprintf("%s=%d", k, b.sent[k]))
				total += b.sent[k]
			}
			b.printf("sent %d: %s", total, strings.Join(parts, " "))
			return nil
		}
	}},
}

// stepCmd is the command of a step of the World: its words are read by
// runner.ParseStep; a request or a release may add clock=T.
func stepCmd(usage, doc string) Command {
	return Command{usage, doc, func(a *args) func(*Bench) error {
		s := a.step(a.verb, -1)
		var clock uint64
		if s.Kind == runner.StepRequest || s.Kind == runner.StepRelease {
			clock = a.uint("clock")
		}
		return func(b *Bench) error { return b.at(s, clock) }
	}}
}

// each prints a line per node: "P<id> down", or "P<id> " and what line
// returns (nothing if it returns "").
func (b *Bench) each(line func(id int) string) {
	for id := range b.machines {
		if b.w.Node(id).Crashed() {
			b.printf("P%d down", id)
		} else if l := line(id); l != "" {
			b.printf("P%d %s", id, l)
		}
	}
}

func injectCmd(a *args) func(*Bench) error {
	ch := a.step("deliver", 1) // the channel P<i>>P<j>, as a delivery names it
	from, to := ch.From, ch.Proc
	m := algo.Msg{Type: a.word(1), Stamp: a.uint("stamp"), Term: a.uint("term"), ID: int(a.uint("id"))}
	if v := a.opt("vals"); v != "" {
		for _, x := range strings.Split(v, ",") {
			u, err := strconv.ParseUint(x, 10, 64)
			if err != nil {
				a.fail("vals=%q: want numbers separated by commas", v)
			}
			m.Vals = append(m.Vals, u)
		}
	}
	clock := a.uint("clock")
	return func(b *Bench) error { return b.inject(from, to, m, clock) }
}

// args are a command's arguments: positional ones and k=v ones. Reading
// one that is missing or malformed sets err (the first such), which the
// interpreter reports; so does an argument no reader asked for.
type args struct {
	verb string
	pos  []string
	kv   map[string]string
	used map[string]bool
	npos int // positional arguments read
	err  error
}

func parseArgs(fields []string) *args {
	a := &args{verb: fields[0], kv: map[string]string{}, used: map[string]bool{}}
	for _, f := range fields[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			a.kv[k] = v
		} else {
			a.pos = append(a.pos, f)
		}
	}
	return a
}

func (a *args) fail(format string, v ...any) {
	if a.err == nil {
		a.err = fmt.Errorf("%s: "+format, append([]any{a.verb}, v...)...)
	}
}

// word is positional argument i.
func (a *args) word(i int) string {
	a.npos = max(a.npos, i+1)
	if i >= len(a.pos) {
		a.fail("missing argument %d", i+1)
		return ""
	}
	return a.pos[i]
}

// proc is positional argument i as a process, P<i>.
func (a *args) proc(i int) int {
	w := a.word(i)
	p, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(w, "P"), "p"))
	if err != nil && w != "" {
		a.fail("process %q: want a process such as P1", w)
	}
	return p
}

// step reads the first k positional arguments (all if k < 0) as the
// rest of a step of the given kind, in runner.ParseStep's words.
func (a *args) step(kind string, k int) runner.Step {
	if k < 0 || k > len(a.pos) {
		k = len(a.pos)
	}
	a.npos = max(a.npos, k)
	s, err := runner.ParseStep(strings.Join(append([]string{kind}, a.pos[:k]...), " "))
	if err != nil && a.err == nil {
		a.err = err
	}
	return s
}

// duration is positional argument i as a duration.
func (a *args) duration(i int) time.Duration {
	w := a.word(i)
	d, err := time.ParseDuration(w)
	if err != nil && w != "" {
		a.fail("%q: want a duration such as 5ms", w)
	}
	return d
}

// opt is argument k=, "" if it is not given.
func (a *args) opt(k string) string {
	a.used[k] = true
	return a.kv[k]
}

// uint is argument k= as a number, 0 if it is not given.
func (a *args) uint(k string) uint64 {
	v := a.opt(k)
	if v == "" {
		return 0
	}
	u, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		a.fail("%s=%q: want a number", k, v)
	}
	return u
}

// unused reports an argument no reader asked for.
func (a *args) unused() error {
	if a.err != nil {
		return a.err
	}
	if len(a.pos) > a.npos {
		return fmt.Errorf("%s: unexpected argument %q", a.verb, a.pos[a.npos])
	}
	for _, k := range slices.Sorted(maps.Keys(a.kv)) {
		if !a.used[k] {
			return fmt.Errorf("%s: unknown argument %s=", a.verb, k)
		}
	}
	return nil
}

// script is the interpreter of one script: the bench its "new" built.
type script struct {
	spec algo.Spec
	b    *Bench
}

// exec runs one command line and returns its output lines.
func (s *script) exec(line string) []string {
	fields := strings.Fields(line)
	a := parseArgs(fields)
	var out []string
	err := s.run(a)
	if s.b != nil {
		out = s.b.Output()
		if s.b.hide {
			out = hideHeartbeats(out)
			if a.verb == "beat" && len(out) == 0 {
				out = []string{"(heartbeats only)"}
			}
		}
	}
	if err != nil {
		out = append(out, "error: "+err.Error())
	}
	return out
}

func (s *script) run(a *args) error {
	if a.verb == "new" {
		n, err := strconv.Atoi(a.kv["n"])
		if err != nil {
			return fmt.Errorf("new: want n=N")
		}
		delete(a.kv, "n")
		params := a.kv
		if len(params) == 0 {
			params = nil
		}
		s.b = nil
		if s.b, err = newBench(s.spec, n, params); err != nil {
			return err
		}
		s.b.printf("ok")
		return nil
	}
	c, ok := Commands[a.verb]
	switch {
	case !ok:
		return fmt.Errorf("unknown command %q (known: new, %s)", a.verb, strings.Join(slices.Sorted(maps.Keys(Commands)), ", "))
	case s.b == nil:
		return fmt.Errorf("no nodes: the script must begin with new")
	}
	do := c.parse(a)
	if err := a.unused(); err != nil {
		return fmt.Errorf("%w (usage: %s)", err, c.Usage)
	}
	return do(s.b)
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

// runScript runs the script at path with s and compares (or, with
// -update, replaces) the output recorded under each command.
func runScript(t *testing.T, path string, s *script) {
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
		got := s.exec(b.cmd)
		if rewrite() {
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
	if rewrite() {
		for _, l := range trailer {
			out.WriteString(l + "\n")
		}
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

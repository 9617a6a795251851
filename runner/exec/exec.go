package exec

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
)

// Version is the version of the node protocol this package speaks.
const Version = 1

// The parameters dmx reads itself; every other --param reaches the
// program in its init line.
const (
	ParamExec     = "exec"     // the command, run through /bin/sh -c
	ParamKind     = "kind"     // mutual-exclusion (the default) or election
	ParamTimeout  = "timeout"  // how long the program may take to answer one input (default DefaultTimeout)
	ParamValidity = "validity" // the rule check validity holds its leaders to (highest-id or participant)
)

// DefaultTimeout is how long a program may take to answer one input with
// done before it counts as hung. Generous: a loaded machine may not run
// it for a while, and an interpreter starts slowly.
const DefaultTimeout = 10 * time.Second

// params documents the parameters for dmx list and the help.
var params = []algo.Param{
	{Name: ParamExec, Doc: "the program's command line, run through /bin/sh -c once per node (--exec sets it)"},
	{Name: ParamKind, Default: string(algo.MutualExclusion), Doc: "what the program does: mutual-exclusion (the workload's requests and releases reach it) or election (no workload; the run lasts --duration)"},
	{Name: ParamTimeout, Default: DefaultTimeout.String(), Doc: "how long the program may take to answer one input line with done; past it the program is killed and counts as hung"},
	{Name: ParamValidity, Default: "participant", Doc: "the rule check validity holds the program's leaders to: participant or highest-id"},
}

// Options say where a program's stderr goes and how it is run; they are
// not part of a run's description (its parameters are).
type Options struct {
	// Stderr receives each line the program writes on stderr, as it is
	// recorded (nil: discarded).
	Stderr io.Writer
	// Prefix prefixes those lines with "P3: " (the simulator, where every
	// node writes to the one terminal; under dmx run the runner prefixes
	// each node process's stderr).
	Prefix bool
	// OwnGroup runs each program in a process group of its own, which a
	// crash kills (the simulator). Without it the program stays in the
	// group of the process that runs it: a node process of dmx run, whose
	// group the runner kills, stops and continues.
	OwnGroup bool
}

// Kinds returns the kinds of program dmx runs.
func Kinds() []algo.Kind { return []algo.Kind{algo.MutualExclusion, algo.Election} }

// KindOf returns the kind the parameters declare (ParamKind), or an
// error naming the value.
func KindOf(params map[string]string) (algo.Kind, error) {
	switch k := params[ParamKind]; k {
	case "", string(algo.MutualExclusion), "mutex":
		return algo.MutualExclusion, nil
	case string(algo.Election):
		return algo.Election, nil
	default:
		return "", fmt.Errorf("parameter %s=%q: want %s or %s", ParamKind, k, algo.MutualExclusion, algo.Election)
	}
}

// Spec returns the algorithm of a foreign program named name (what the
// trace's runs row and start events call it) of the given kind: its
// machines run the command of the parameter ParamExec, one program per
// node (and resource), and speak the node protocol with it.
func Spec(name string, kind algo.Kind, opt Options) *algo.Spec {
	return &algo.Spec{
		Name:    name,
		Kind:    kind,
		Summary: fmt.Sprintf("a program of your own speaking the node protocol (version %d)", Version),
		Seeds:   []string{},
		Params:  params,
		Doc:     algo.PackageDoc(docGo),
		New: func(c algo.Config) (algo.Machine, error) {
			return newMachine(name, kind, c, opt)
		},
	}
}

// IsProgram reports whether params describe a foreign program's run
// (they name its command).
func IsProgram(params map[string]string) bool { return params[ParamExec] != "" }

// Name returns the default name of a program: its command's first word,
// without its directory ("python3", "ricart").
func Name(cmdline string) string {
	f := strings.Fields(cmdline)
	if len(f) == 0 {
		return "program"
	}
	w := f[0]
	if i := strings.LastIndexByte(w, '/'); i >= 0 && i < len(w)-1 {
		w = w[i+1:]
	}
	return w
}

// state is where a mutual-exclusion program stands with its resource, as
// its inputs and outputs say: enter and exit are checked against it.
type state uint8

const (
	idle state = iota
	requested
	held
)

// machine runs one program for one node (and resource).
type machine struct {
	name     string
	kind     algo.Kind
	id, n    int
	resource string
	cmdline  string
	timeout  time.Duration
	params   map[string]string // what the program's init gets
	seed     uint64
	opt      Options
	validate bool // built only to validate the parameters: never started

	p        *program
	startErr error // starting the program failed: said at Start
	dead     bool  // the program died or was stopped: no more input reaches it
	state    state // mutual exclusion: idle, requested, held
	leave    bool  // handling a release: an exit answers it
	inLine   int   // input lines written to this incarnation
	outNo    int   // output lines read from it
	input    []byte
	outs     []algo.Output
	notes    []algo.Output
}

func newMachine(name string, kind algo.Kind, c algo.Config, opt Options) (*machine, error) {
	if c.N < 1 {
		return nil, fmt.Errorf("group size %d: need at least 1 node", c.N)
	}
	cmdline := strings.TrimSpace(c.Params[ParamExec])
	if cmdline == "" {
		return nil, fmt.Errorf("no program: parameter %s (--exec) names none", ParamExec)
	}
	k, err := KindOf(c.Params)
	if err != nil {
		return nil, err
	}
	if k != kind {
		return nil, fmt.Errorf("parameter %s=%s, but the program was set up as %s", ParamKind, k, kind)
	}
	timeout := DefaultTimeout
	if v, ok := c.Params[ParamTimeout]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("parameter %s=%q: want a duration above 0, such as 10s", ParamTimeout, v)
		}
		timeout = d
	}
	if v, ok := c.Params[ParamValidity]; ok && v != "participant" && v != "highest-id" {
		return nil, fmt.Errorf("parameter %s=%q: want participant or highest-id", ParamValidity, v)
	}
	m := &machine{name: name, kind: kind, id: c.ID, n: c.N, resource: c.Resource, cmdline: cmdline,
		timeout: timeout, opt: opt, params: map[string]string{}}
	for k, v := range c.Params {
		switch k {
		case ParamExec, ParamKind, ParamTimeout, ParamValidity:
		default:
			m.params[k] = v
		}
	}
	if c.Rand == nil {
		m.validate = true
		return m, nil
	}
	// A seed for the program's own draws: from the node's stream, so that
	// the run's seed gives the same (a restart another); 53 bits, which
	// every JSON reader takes whole.
	m.seed = c.Rand.Uint64() >> 11
	// The program starts now, its init comes with Start (or Recover): the
	// nodes of a run are built before any starts, so their programs boot
	// side by side (an interpreter takes a while), not one after the other.
	m.p, m.startErr = start(cmdline, opt.OwnGroup, os.Environ())
	return m, nil
}

// Close implements algo.Closer: a crash kills the program; a stop lets it
// go (its stdin closed, then a little time to exit).
func (m *machine) Close(crash bool) {
	if m.p != nil {
		m.p.close(crash)
		m.p = nil
	}
	m.dead = true
}

// Step implements algo.Machine: it writes the input's line to the program
// and turns the lines it answers with into outputs.
func (m *machine) Step(in algo.Input) []algo.Output {
	if m.validate {
		return nil
	}
	m.outs, m.notes = nil, nil
	switch in.Kind {
	case algo.Start, algo.Recover:
		if m.inLine > 0 || m.p == nil && m.startErr == nil {
			// Started once already (a machine is started once; a
			// recovery builds a new one): start the program afresh.
			if m.p != nil {
				m.p.close(true)
			}
			m.p, m.startErr = start(m.cmdline, m.opt.OwnGroup, os.Environ())
		}
		m.state, m.leave, m.inLine, m.outNo, m.dead = idle, false, 0, 0, false
		if m.startErr != nil {
			m.fail("P%d: %v", m.id, m.startErr)
			return m.halt("its program could not be started")
		}
		m.input = appendInit(m.input[:0], m, in.Kind == algo.Recover, in.Clock)
	case algo.Request:
		m.input = appendRequest(m.input[:0], "request", in.Resource, in.Clock)
		if m.kind == algo.MutualExclusion {
			m.state = requested
		}
	case algo.Release:
		m.input = appendRequest(m.input[:0], "release", in.Resource, in.Clock)
		if m.state == held {
			m.state, m.leave = idle, true
		}
	case algo.Receive:
		m.input = appendMessage(m.input[:0], in.From, in.Msg, in.Clock)
	case algo.Timer:
		m.input = appendTimer(m.input[:0], in.TimerName, in.Clock)
	default:
		return nil
	}
	if m.dead || m.p == nil {
		return nil
	}
	m.exchange()
	m.leave = false
	return append(m.notes, m.outs...)
}

// exchange feeds the input line to the program and takes its answer.
func (m *machine) exchange() {
	p := m.p
	// What it wrote since its last answer: stdout no input asked for is
	// a finding; stderr is kept like any.
	p.pending()
	for {
		i := strings.IndexByte(string(p.out), '\n')
		if i < 0 {
			break
		}
		m.outNo++
		m.fail("P%d: output line %d %s: written when no input waited for an answer (before input line %d; ignored)",
			m.id, m.outNo, quote(p.out[:i]), m.inLine+1)
		p.out = p.out[i+1:]
	}
	m.inLine++
	line := append(m.input, '\n')
	done := false
	err := p.exchange(line, time.Now().Add(m.timeout), func(l []byte) (bool, error) {
		m.outNo++
		d := m.output(l)
		done = d
		return d, nil
	}, func(l []byte) error {
		m.note(l)
		return nil
	})
	switch e := err.(type) {
	case nil:
	case *errFlood:
		m.fail("P%d: answering input line %d %s, its program wrote %s: a flood; it was killed", m.id, m.inLine, quote(m.input), e.what)
		p.kill()
		m.halt("its program flooded its output")
		return
	default:
		if err == errTimeout {
			m.fail("P%d: its program did not answer input line %d %s with done within %v; it was killed (a program must write done after each input and flush its output: python3 -u, or print(..., flush=True))",
				m.id, m.inLine, quote(m.input), m.timeout)
			p.kill()
			m.halt("its program hung")
			return
		}
		m.fail("P%d: %v", m.id, err)
		p.kill()
		m.halt("its program could not be read")
		return
	}
	if done {
		return
	}
	// Its output ended before done: the program died (or closed its
	// stdout). Its last words (a traceback) are on stderr.
	p.finishErr(200 * time.Millisecond)
	for len(p.errb) > 0 {
		i := strings.IndexByte(string(p.errb), '\n')
		if i < 0 {
			i = len(p.errb)
		}
		m.note(p.errb[:i])
		if i < len(p.errb) {
			i++
		}
		p.errb = p.errb[i:]
	}
	if !p.wait(time.Second) {
		p.kill()
	}
	m.fail("P%d: its program ended (%s) before it answered input line %d %s with done", m.id, p.status, m.inLine, quote(m.input))
	m.halt("its program ended: " + p.status)
}

// State implements algo.Inspector (dmx replay --step): what dmx knows of
// the program, whose own state is its own.
func (m *machine) State() any {
	st := struct {
		Program string `json:"program"`
		Running bool   `json:"running"`
		Inputs  int    `json:"input_lines"`
		Outputs int    `json:"output_lines"`
		CS      string `json:"cs,omitempty"`
	}{Program: m.cmdline, Running: m.p != nil && !m.dead, Inputs: m.inLine, Outputs: m.outNo}
	if m.kind == algo.MutualExclusion {
		st.CS = [...]string{"idle", "requested", "held"}[m.state]
	}
	return st
}

// fail adds a failure the run survives (algo.Fail).
func (m *machine) fail(format string, args ...any) {
	m.outs = append(m.outs, algo.Output{Kind: algo.Fail, Text: fmt.Sprintf(format, args...)})
}

// halt ends the program's part: the node goes down (algo.Halt).
func (m *machine) halt(why string) []algo.Output {
	if m.p != nil {
		m.p.close(true)
		m.p = nil
	}
	m.dead = true
	m.outs = append(m.outs, algo.Output{Kind: algo.Halt, Text: why})
	return m.outs
}

// note keeps a stderr line: a note event, and a line on Options.Stderr.
func (m *machine) note(l []byte) {
	text := string(l)
	if len(text) > maxNote {
		text = text[:maxNote] + fmt.Sprintf("... (%d bytes cut)", len(text)-maxNote)
	}
	m.notes = append(m.notes, algo.Output{Kind: algo.Note, Text: "stderr: " + text})
	// Every machine of a run writes from the one goroutine of its
	// driver: no lock.
	if w := m.opt.Stderr; w != nil {
		if m.opt.Prefix {
			fmt.Fprintf(w, "P%d: %s\n", m.id, text)
		} else {
			fmt.Fprintf(w, "%s\n", text)
		}
	}
}

// quote shows a line in a finding: cut to 200 bytes.
func quote(b []byte) string {
	const max = 200
	s := strings.TrimRight(string(b), "\n")
	if len(s) > max {
		return s[:max] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

// docGo is this package's doc.go: the program's Spec.Doc.
//
//go:embed doc.go
var docGo string

// NodeArgs are the arguments a node process of dmx run gets for a run of
// a program of the user's own (udp.LaunchHooks.NodeArgs): its name and
// kind. The command itself reaches the node with the run's parameters.
func NodeArgs(spec *algo.Spec) []string {
	return []string{"--program", spec.Name, "--kind", string(spec.Kind)}
}

// NodeLookup returns the lookup of a node process whose command line args
// NodeArgs wrote (none: lookup itself): lookup's algorithms, and the
// program they name, whose stderr goes to stderr (the runner prefixes
// each node process's stderr with its node).
func NodeLookup(args []string, stderr io.Writer, lookup func(string) *algo.Spec) (func(string) *algo.Spec, error) {
	var name, kind string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--program" && i+1 < len(args):
			name, i = args[i+1], i+1
		case args[i] == "--kind" && i+1 < len(args):
			kind, i = args[i+1], i+1
		default:
			return nil, fmt.Errorf("unknown argument %q (a node takes --program NAME --kind KIND)", args[i])
		}
	}
	if name == "" {
		return lookup, nil
	}
	k, err := KindOf(map[string]string{ParamKind: kind})
	if err != nil {
		return nil, err
	}
	spec := Spec(name, k, Options{Stderr: stderr})
	return func(n string) *algo.Spec {
		if n == name {
			return spec
		}
		return lookup(n)
	}, nil
}

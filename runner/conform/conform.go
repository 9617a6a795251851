package conform

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

// Difference is the first input of a process after which the program's
// outputs and the reference machine's differ.
type Difference struct {
	Proc  int
	Input trace.Event // the input event (its clocks, detail and wall time as recorded)
	// Want is what dmx's machine outputs for the input, Got what the
	// program recorded, each a sorted list of outputs in the form
	// "send reply{stamp:5,id:1} to P0", "enter cs", "leader P3".
	Want, Got []string
	// Outputs are the program's events that answered the input (their
	// references), the first of them the one that differs if any.
	Outputs []trace.Ref
	// Rule names the seed's rule that decides what the reference does
	// with the input, e.g. "[RH1]".
	Rule string
}

// Result is a program's conformance over one run.
type Result struct {
	Algorithm string       // the reference: one of dmx's algorithms
	Inputs    int          // inputs compared, over every process
	Per       []int        // inputs compared per process
	Diffs     []Difference // each process's first difference, earliest first (by wall time)
	// Cut says a process's comparison ended before its last event: it
	// crashed for good or its program died.
	Notes []string
}

// Conforms reports whether the program did what the reference does at
// every input compared.
func (r *Result) Conforms() bool { return len(r.Diffs) == 0 }

// Reference are dmx's parameters that are not the reference algorithm's
// (a program's run keeps exec, kind, timeout and validity among its
// parameters): Check passes the reference only those its Spec declares.
//
// Check compares, process by process, what the program of run did with
// each of its recorded inputs with what spec's machine does with the same
// input: its start, every delivery (the message's type and its body's
// fields stamp, id, term and vals, as the sender sent them), timer,
// request, release, crash and recovery, each with the Lamport clock the
// trace records for it as Input.Clock. Compared are the messages sent
// (receiver, type and fields, in any order), critical sections entered
// and leaders decided; waits, timers set, notes and election starts are
// the program's own business. The reference's parameters are those of
// the run that spec declares (e.g. central's coordinator).
func Check(run trace.Run, events []trace.Event, spec *algo.Spec) (*Result, error) {
	params := map[string]string{}
	var rp struct {
		Algorithm map[string]string `json:"algorithm"`
		Resources []string          `json:"resources"`
	}
	if len(run.Params) > 0 {
		if err := json.Unmarshal(run.Params, &rp); err != nil {
			return nil, fmt.Errorf("run %d: params: %w", run.ID, err)
		}
	}
	for k, v := range rp.Algorithm {
		if slices.ContainsFunc(spec.Params, func(p algo.Param) bool { return p.Name == k }) {
			params[k] = v
		}
	}
	if _, err := spec.New(algo.Config{ID: 0, N: max(run.Nodes, 1), Resource: runner.DefaultResource, Params: params}); err != nil {
		return nil, fmt.Errorf("%s with the run's parameters: %w", spec.Name, err)
	}
	res := &Result{Algorithm: spec.Name, Per: make([]int, run.Nodes)}
	byProc := make([][]trace.Event, run.Nodes)
	for _, ev := range events {
		if ev.Proc < 0 || ev.Proc >= run.Nodes {
			return nil, fmt.Errorf("%v: no process %d in a run of %d", &ev, ev.Proc, run.Nodes)
		}
		byProc[ev.Proc] = append(byProc[ev.Proc], ev)
	}
	for p, evs := range byProc {
		sort.Slice(evs, func(i, j int) bool { return evs[i].Seq < evs[j].Seq })
		c := &checker{spec: spec, params: params, run: run, id: p, res: res}
		if err := c.process(evs); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(res.Diffs, func(i, j int) bool { return res.Diffs[i].Input.Wall < res.Diffs[j].Input.Wall })
	return res, nil
}

// checker compares one process.
type checker struct {
	spec     *algo.Spec
	params   map[string]string
	run      trace.Run
	id       int
	res      *Result
	machines map[string]algo.Machine
	inc      int
	origin   int64 // the run's origin of Input.Now (a real run's start event says it)
}

// input is an input event with the outputs the program recorded after it.
type input struct {
	ev   trace.Event
	outs []trace.Event
}

func (c *checker) process(evs []trace.Event) error {
	var steps []*input
	for _, ev := range evs {
		if isInput(&ev) || len(steps) == 0 {
			steps = append(steps, &input{ev: ev})
			continue
		}
		st := steps[len(steps)-1]
		st.outs = append(st.outs, ev)
	}
	for _, st := range steps {
		done, err := c.step(st)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
	return nil
}

// isInput reports whether ev is an input of its process (what the runtime
// records before it hands something to the machines).
func isInput(ev *trace.Event) bool {
	switch ev.Kind {
	case trace.KindStart, trace.KindReceive, trace.KindTimeout, trace.KindCSRequest, trace.KindCSExit,
		trace.KindCrash, trace.KindRecover, trace.KindStop:
		return true
	}
	return false
}

// build makes the process's machines afresh (a start or a recovery), one
// for each of resources (the default resource when there are none).
func (c *checker) build(resources []string) error {
	c.machines = map[string]algo.Machine{}
	if len(resources) == 0 {
		resources = []string{runner.DefaultResource}
	}
	if c.spec.Kind != algo.MutualExclusion {
		resources = []string{""}
	}
	for i, r := range resources {
		m, err := c.spec.New(algo.Config{ID: c.id, N: c.run.Nodes, Resource: r, Params: c.params,
			Rand: rand.New(rand.NewPCG(c.run.Seed, uint64(c.id)<<8+uint64(i)+uint64(c.inc)<<32))})
		if err != nil {
			return fmt.Errorf("%s: %w", c.spec.Name, err)
		}
		c.machines[r] = m
	}
	return nil
}

// step feeds one input to the reference and compares; done says the
// process's comparison is over (a difference, its stop, or a death it
// does not come back from).
func (c *checker) step(st *input) (done bool, err error) {
	ev := &st.ev
	in := algo.Input{Clock: ev.Lamport, Now: ev.Wall - c.origin}
	var targets []string
	switch ev.Kind {
	case trace.KindStart, trace.KindRecover:
		// A start makes the process's machines for the resources it
		// names; a recovery makes a new incarnation's for those it had.
		var rs []string
		if ev.Kind == trace.KindStart {
			d, err := ev.Start()
			if err != nil {
				return true, err
			}
			c.origin = d.Origin
			in.Now = ev.Wall - c.origin
			rs, in.Kind = d.Resources, algo.Start
		} else {
			c.inc++
			rs, in.Kind = slices.Sorted(maps.Keys(c.machines)), algo.Recover
		}
		if err := c.build(rs); err != nil {
			return true, err
		}
		targets = c.resources()
	case trace.KindCrash, trace.KindStop:
		c.res.Per[c.id]++
		c.res.Inputs++
		if ev.Kind == trace.KindStop {
			return true, nil
		}
		return false, nil // down until it recovers
	case trace.KindReceive:
		m, err := message(ev)
		if err != nil {
			return true, err
		}
		in.Kind, in.From, in.Msg = algo.Receive, ev.Peer, m
		targets = []string{ev.Resource}
	case trace.KindTimeout:
		d, err := ev.Timeout()
		if err != nil {
			return true, err
		}
		in.Kind, in.TimerName = algo.Timer, d.Timer
		targets = []string{ev.Resource}
	case trace.KindCSRequest:
		in.Kind, in.Resource = algo.Request, ev.Resource
		targets = []string{ev.Resource}
	case trace.KindCSExit:
		in.Kind, in.Resource = algo.Release, ev.Resource
		targets = []string{ev.Resource}
	default:
		// Events before the start (none in a trace dmx recorded).
		return false, nil
	}
	if c.machines == nil {
		return true, fmt.Errorf("%v: an input before the process started", ev)
	}
	want := c.expected(&in, targets)
	got, refs := c.recorded(st.outs)
	c.res.Per[c.id]++
	c.res.Inputs++
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(want, got) {
		c.res.Diffs = append(c.res.Diffs, Difference{Proc: c.id, Input: *ev, Want: orEmpty(want), Got: orEmpty(got), Outputs: refs,
			Rule: RuleOf(c.spec, in)})
		return true, nil
	}
	// A program that died (its crash recorded among its outputs) is
	// compared no further: it sends nothing more.
	for _, o := range st.outs {
		if o.Kind == trace.KindCrash {
			c.res.Notes = append(c.res.Notes, fmt.Sprintf("P%d: compared up to %v, where its program died", c.id, o.Ref()))
			return true, nil
		}
	}
	return false, nil
}

// expected steps the machines of targets with in (its resource filled in
// as the rule that decides a difference reads it) and returns what they
// output, as text to compare with what the program did.
func (c *checker) expected(in *algo.Input, targets []string) []string {
	var want []string
	for _, r := range targets {
		m := c.machines[r]
		if m == nil {
			continue
		}
		in.Resource = cmpOr(in.Resource, r)
		if in.Kind == algo.Receive {
			in.Msg.Resource = r
		}
		for _, o := range m.Step(*in) {
			if s := outputText(o, r); s != "" {
				want = append(want, s)
			}
		}
	}
	return want
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (c *checker) resources() []string {
	rs := make([]string, 0, len(c.machines))
	for r := range c.machines {
		rs = append(rs, r)
	}
	sort.Strings(rs)
	return rs
}

// recorded is what the program's outputs say, as outputText says the
// reference's, with their events.
func (c *checker) recorded(outs []trace.Event) ([]string, []trace.Ref) {
	var got []string
	var refs []trace.Ref
	for i := range outs {
		ev := &outs[i]
		var s string
		switch ev.Kind {
		case trace.KindSend:
			m, err := message(ev)
			if err != nil {
				s = fmt.Sprintf("send %s{?} to P%d", ev.MsgType, ev.Peer)
			} else {
				s = sendText(m, ev.Peer)
			}
		case trace.KindCSEnter:
			s = "enter " + ev.Resource
		case trace.KindLeader:
			d, _ := ev.Leader()
			s = fmt.Sprintf("leader P%d", d.Leader)
		}
		if s != "" {
			got = append(got, s)
			refs = append(refs, ev.Ref())
		}
	}
	return got, refs
}

// message reads a send's or a receive's message: a program's body's
// fields (stamp, id, term, vals) where it has a body, else the detail's.
func message(ev *trace.Event) (algo.Msg, error) {
	m, err := ev.Message()
	if err != nil {
		return algo.Msg{}, err
	}
	if m.Body == "" {
		return algo.Msg(m), nil
	}
	var b struct {
		Stamp uint64   `json:"stamp"`
		ID    int      `json:"id"`
		Term  uint64   `json:"term"`
		Vals  []uint64 `json:"vals"`
	}
	if err := json.Unmarshal([]byte(m.Body), &b); err != nil {
		return algo.Msg{}, fmt.Errorf("%v: body %s: the fields stamp, id and term must be whole numbers of 0 or more, vals an array of them: %v", ev, m.Body, err)
	}
	return algo.Msg{Type: m.Type, Resource: m.Resource, Stamp: b.Stamp, ID: b.ID, Term: b.Term, Vals: b.Vals}, nil
}

// outputText says a reference output as recorded would: "" for what is
// not compared.
func outputText(o algo.Output, r string) string {
	switch o.Kind {
	case algo.Send:
		return sendText(o.Msg, o.To)
	case algo.Enter:
		return "enter " + r
	case algo.Leader:
		return fmt.Sprintf("leader P%d", o.Leader)
	}
	return ""
}

// sendText is "send request{stamp:4,id:2} to P1": the fields that are set.
func sendText(m algo.Msg, to int) string {
	var f []string
	if m.Stamp != 0 {
		f = append(f, fmt.Sprintf("stamp:%d", m.Stamp))
	}
	if m.ID != 0 {
		f = append(f, fmt.Sprintf("id:%d", m.ID))
	}
	if m.Term != 0 {
		f = append(f, fmt.Sprintf("term:%d", m.Term))
	}
	if len(m.Vals) > 0 {
		f = append(f, fmt.Sprintf("vals:%v", m.Vals))
	}
	return fmt.Sprintf("send %s{%s} to P%d", m.Type, strings.Join(f, ","), to)
}

package algotest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
)

// ElectionBench drives election machines by hand, one input at a time, for
// interaction scripts (RunElectionScripts) and for tests that count the
// messages of an exactly staged election. Nothing happens unless asked:
// messages wait in a pending list until delivered, and a timer fires only
// when a test fires it, at its due time (the bench's clock moves forward to
// it). Crashes are as in RunElection: a crashed node gets no input, messages
// to it are lost when their turn comes, and on recovery a fresh machine from
// spec.New gets Recover with the last value the node Persisted.
//
// Every method appends what happened to the bench's output, in the format
// of RunScripts: "P<id> <input> @<clock>" and the outputs indented under it
// (FormatOutput).
type ElectionBench struct {
	spec    algo.Spec
	params  map[string]string
	ms      []algo.Machine
	clocks  []uint64
	up      []bool
	beliefs []int
	stored  []algo.Msg
	timers  []map[string]int64 // armed timers: name -> due time
	pending []pendingMsg
	sent    map[string]int
	now     int64
	out     []string
}

// NewElectionBench builds n machines of spec with params.
func NewElectionBench(spec algo.Spec, n int, params map[string]string) (*ElectionBench, error) {
	b := &ElectionBench{spec: spec, params: params, clocks: make([]uint64, n), up: make([]bool, n),
		beliefs: make([]int, n), stored: make([]algo.Msg, n), timers: make([]map[string]int64, n),
		sent: map[string]int{}}
	for id := 0; id < n; id++ {
		m, err := b.build(id)
		if err != nil {
			return nil, err
		}
		b.ms = append(b.ms, m)
		b.up[id], b.beliefs[id], b.timers[id] = true, -1, map[string]int64{}
	}
	return b, nil
}

func (b *ElectionBench) build(id int) (algo.Machine, error) {
	return b.spec.New(algo.Config{ID: id, N: len(b.clocks), Resource: "election", Params: b.params,
		Rand: rand.New(rand.NewPCG(1, uint64(id)+1))})
}

func (b *ElectionBench) printf(format string, args ...any) {
	b.out = append(b.out, fmt.Sprintf(format, args...))
}

// Output returns what happened since the last call, and forgets it.
func (b *ElectionBench) Output() []string {
	o := b.out
	b.out = nil
	return o
}

// N is the group size.
func (b *ElectionBench) N() int { return len(b.ms) }

// Now is the bench's clock, in ns.
func (b *ElectionBench) Now() int64 { return b.now }

// Sent returns the messages sent so far, by type.
func (b *ElectionBench) Sent() map[string]int { return maps.Clone(b.sent) }

// Leaders returns each node's belief: the leader of its last Leader output,
// -1 for none or when the node is down.
func (b *ElectionBench) Leaders() []int {
	l := slices.Clone(b.beliefs)
	for i := range l {
		if !b.up[i] {
			l[i] = -1
		}
	}
	return l
}

// Pending is the number of messages sent and not yet delivered.
func (b *ElectionBench) Pending() int { return len(b.pending) }

// Machine returns node id's current machine.
func (b *ElectionBench) Machine(id int) algo.Machine { return b.ms[id] }

func (b *ElectionBench) check(id int) error {
	if id < 0 || id >= len(b.ms) {
		return fmt.Errorf("node %d: want an id in 0..%d", id, len(b.ms)-1)
	}
	return nil
}

// Start gives Start to ids (all, in id order, if none are given).
func (b *ElectionBench) Start(ids ...int) error {
	if len(ids) == 0 {
		for i := range b.ms {
			ids = append(ids, i)
		}
	}
	for _, id := range ids {
		if err := b.check(id); err != nil {
			return err
		}
		b.step(id, algo.Input{Kind: algo.Start}, 0)
	}
	return nil
}

// Fire fires node id's timer name at its due time, moving the clock there
// if it is later than now. Firing a timer that is not armed is an error.
func (b *ElectionBench) Fire(id int, name string) error {
	if err := b.check(id); err != nil {
		return err
	}
	if !b.up[id] {
		return fmt.Errorf("P%d is down", id)
	}
	due, ok := b.timers[id][name]
	if !ok {
		return fmt.Errorf("P%d has no timer %s armed", id, name)
	}
	delete(b.timers[id], name)
	b.now = max(b.now, due)
	b.step(id, algo.Input{Kind: algo.Timer, TimerName: name}, 0)
	return nil
}

// Advance moves the clock forward by d ns.
func (b *ElectionBench) Advance(d int64) { b.now += d }

// Crash crashes node id: it gets no more input, its timers die, and the
// messages to it are lost when their turn comes.
func (b *ElectionBench) Crash(id int) error {
	if err := b.check(id); err != nil {
		return err
	}
	if !b.up[id] {
		return fmt.Errorf("P%d is already down", id)
	}
	b.up[id] = false
	clear(b.timers[id])
	b.printf("P%d crash", id)
	return nil
}

// Recover restarts node id with a fresh machine and gives it Recover with
// the last value it persisted.
func (b *ElectionBench) Recover(id int) error {
	if err := b.check(id); err != nil {
		return err
	}
	if b.up[id] {
		return fmt.Errorf("P%d is up", id)
	}
	m, err := b.build(id)
	if err != nil {
		return err
	}
	b.ms[id], b.up[id], b.beliefs[id] = m, true, -1
	b.step(id, algo.Input{Kind: algo.Recover, Msg: b.stored[id]}, 0)
	return nil
}

// Deliver delivers, in send order, the pending messages for which match
// returns true (all if match is nil), at most limit of them (limit < 0: no
// limit). It returns how many it took.
func (b *ElectionBench) Deliver(match func(from, to int, m algo.Msg) bool, limit int) int {
	var take, rest []pendingMsg
	for _, p := range b.pending {
		if limit != 0 && (match == nil || match(p.from, p.to, p.msg)) {
			take = append(take, p)
			limit--
		} else {
			rest = append(rest, p)
		}
	}
	b.pending = rest
	for _, p := range take {
		b.deliver(p)
	}
	return len(take)
}

// Inject delivers a crafted message that was never sent.
func (b *ElectionBench) Inject(from, to int, m algo.Msg) error {
	if err := b.check(from); err != nil {
		return err
	}
	if err := b.check(to); err != nil {
		return err
	}
	m.Resource = "election"
	b.deliver(pendingMsg{from: from, to: to, msg: m})
	return nil
}

// Stabilize delivers the pending messages in send order, and those their
// deliveries send, until none is left (an error after 100000 deliveries:
// something circulates for ever).
func (b *ElectionBench) Stabilize() error {
	for i := 0; len(b.pending) > 0; i++ {
		if i >= 100000 {
			return fmt.Errorf("stabilize: still messages pending after %d deliveries", i)
		}
		p := b.pending[0]
		b.pending = b.pending[1:]
		b.deliver(p)
	}
	return nil
}

func (b *ElectionBench) deliver(p pendingMsg) {
	if !b.up[p.to] {
		b.printf("lost %d->%d %s (P%d is down)", p.from, p.to, FormatMsg(p.msg), p.to)
		return
	}
	b.step(p.to, algo.Input{Kind: algo.Receive, From: p.from, Msg: p.msg}, p.clock)
}

func (b *ElectionBench) step(id int, in algo.Input, msgClock uint64) {
	in.Clock = max(b.clocks[id], msgClock) + 1
	b.clocks[id] = in.Clock
	in.Now = b.now
	b.printf("P%d %s", id, describeInput(id, in))
	in.Msg.Vals = slices.Clone(in.Msg.Vals)
	outs := b.ms[id].Step(in)
	for _, o := range outs {
		b.clocks[id]++
		b.printf("  %s", FormatOutput(id, o))
		switch o.Kind {
		case algo.Send:
			if o.To < 0 || o.To >= len(b.ms) || o.To == id {
				b.printf("  error: send to node %d: not another node of 0..%d", o.To, len(b.ms)-1)
				continue
			}
			m := o.Msg
			m.Resource = "election"
			m.Vals = slices.Clone(m.Vals)
			b.sent[m.Type]++
			b.pending = append(b.pending, pendingMsg{from: id, to: o.To, msg: m, clock: b.clocks[id]})
		case algo.SetTimer:
			b.timers[id][o.TimerName] = b.now + o.After
		case algo.CancelTimer:
			delete(b.timers[id], o.TimerName)
		case algo.Leader:
			b.beliefs[id] = max(o.Leader, -1)
		case algo.Persist:
			v := o.Msg
			v.Vals = slices.Clone(v.Vals)
			b.stored[id] = v
		}
	}
}

// RunElectionScripts runs every dir/*.txt interaction script against
// spec's machines on an ElectionBench, as RunScripts does (same file format,
// same -rewrite flag). The commands:
//
//	new n=N [k=v...]       build N machines; other k=v are the algorithm's parameters
//	start [id...]          give Start to these nodes (default: all, in id order)
//	timer id name          fire id's timer name at its due time
//	crash id               crash id
//	recover id             restart id: a fresh machine gets Recover with what id persisted
//	deliver [from=i] [to=j] [type=t] [n=k]
//	                       deliver the pending messages that match, in send order
//	inject from to type [id=I] [term=T] [stamp=S] [vals=a,b,...]
//	                       deliver a crafted message that was never sent
//	stabilize              deliver pending messages in send order until none is left
//	advance D              move the clock forward by the duration D
//	pending                the messages sent and not yet delivered
//	timers                 each live node's armed timers and when they are due
//	leaders                each node's belief (the leader it last decided)
//	state                  each machine's state, for fmt.Stringers
//	stats                  messages sent since new, by type
func RunElectionScripts(t *testing.T, spec algo.Spec, dir string) {
	t.Helper()
	runScriptDir(t, dir, func() func(string) []string { return (&electionScript{spec: spec}).exec })
}

type electionScript struct {
	spec algo.Spec
	b    *ElectionBench
}

func (s *electionScript) exec(cmd string) []string {
	out, err := s.run(cmd)
	if s.b != nil {
		out = append(out, s.b.Output()...)
	}
	if err != nil {
		out = append(out, "error: "+err.Error())
	}
	return out
}

func (s *electionScript) run(cmd string) ([]string, error) {
	fields := strings.Fields(cmd)
	verb := fields[0]
	pos, kv := parseArgs(fields[1:])
	if verb != "new" && s.b == nil {
		return nil, fmt.Errorf("no machines: the script must begin with new")
	}
	ids := func(want int) ([]int, error) {
		if want >= 0 && len(pos) != want {
			return nil, fmt.Errorf("%s: want %d node ids", verb, want)
		}
		var r []int
		for _, a := range pos {
			id, err := strconv.Atoi(a)
			if err != nil {
				return nil, fmt.Errorf("%s: node %q", verb, a)
			}
			r = append(r, id)
		}
		return r, nil
	}
	switch verb {
	case "new":
		n, err := strconv.Atoi(kv["n"])
		if err != nil {
			return nil, fmt.Errorf("new: want n=N")
		}
		delete(kv, "n")
		if len(kv) == 0 {
			kv = nil
		}
		s.b = nil
		b, err := NewElectionBench(s.spec, n, kv)
		if err != nil {
			return nil, err
		}
		s.b = b
		return []string{"ok"}, nil
	case "start":
		r, err := ids(-1)
		if err != nil {
			return nil, err
		}
		return nil, s.b.Start(r...)
	case "crash", "recover":
		r, err := ids(1)
		if err != nil {
			return nil, err
		}
		if verb == "crash" {
			return nil, s.b.Crash(r[0])
		}
		return nil, s.b.Recover(r[0])
	case "timer":
		if len(pos) != 2 {
			return nil, fmt.Errorf("timer: want an id and a timer name")
		}
		id, err := strconv.Atoi(pos[0])
		if err != nil {
			return nil, fmt.Errorf("timer: node %q", pos[0])
		}
		if err := s.b.check(id); err != nil {
			return nil, err
		}
		return nil, s.b.Fire(id, pos[1])
	case "deliver":
		limit := -1
		if v, ok := kv["n"]; ok {
			var err error
			if limit, err = strconv.Atoi(v); err != nil {
				return nil, fmt.Errorf("deliver: n=%q", v)
			}
		}
		k := s.b.Deliver(func(from, to int, m algo.Msg) bool {
			return (kv["from"] == "" || kv["from"] == strconv.Itoa(from)) &&
				(kv["to"] == "" || kv["to"] == strconv.Itoa(to)) &&
				(kv["type"] == "" || kv["type"] == m.Type)
		}, limit)
		if k == 0 {
			return []string{"no pending message matches"}, nil
		}
		return nil, nil
	case "inject":
		if len(pos) != 3 {
			return nil, fmt.Errorf("inject: want from, to and type")
		}
		from, err1 := strconv.Atoi(pos[0])
		to, err2 := strconv.Atoi(pos[1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("inject: want node ids")
		}
		m := algo.Msg{Type: pos[2]}
		for k, v := range kv {
			switch k {
			case "stamp", "term":
				u, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("inject: %s=%q", k, v)
				}
				if k == "stamp" {
					m.Stamp = u
				} else {
					m.Term = u
				}
			case "id":
				var err error
				if m.ID, err = strconv.Atoi(v); err != nil {
					return nil, fmt.Errorf("inject: id=%q", v)
				}
			case "vals":
				for _, x := range strings.Split(v, ",") {
					u, err := strconv.ParseUint(x, 10, 64)
					if err != nil {
						return nil, fmt.Errorf("inject: vals=%q", v)
					}
					m.Vals = append(m.Vals, u)
				}
			default:
				return nil, fmt.Errorf("inject: unknown argument %s", k)
			}
		}
		return nil, s.b.Inject(from, to, m)
	case "stabilize":
		return nil, s.b.Stabilize()
	case "advance":
		if len(pos) != 1 {
			return nil, fmt.Errorf("advance: want a duration")
		}
		d, err := time.ParseDuration(pos[0])
		if err != nil {
			return nil, err
		}
		s.b.Advance(int64(d))
		return []string{fmt.Sprintf("now %v", time.Duration(s.b.now))}, nil
	case "pending":
		if len(s.b.pending) == 0 {
			return []string{"none"}, nil
		}
		var out []string
		for _, p := range s.b.pending {
			out = append(out, fmt.Sprintf("%d->%d %s", p.from, p.to, FormatMsg(p.msg)))
		}
		return out, nil
	case "timers":
		var out []string
		for id, ts := range s.b.timers {
			if !s.b.up[id] {
				out = append(out, fmt.Sprintf("P%d down", id))
				continue
			}
			var parts []string
			for _, name := range slices.Sorted(maps.Keys(ts)) {
				parts = append(parts, fmt.Sprintf("%s@%v", name, time.Duration(ts[name])))
			}
			out = append(out, fmt.Sprintf("P%d %s", id, strings.Join(parts, " ")))
		}
		return out, nil
	case "leaders":
		var parts []string
		for id, l := range s.b.Leaders() {
			switch {
			case !s.b.up[id]:
				parts = append(parts, fmt.Sprintf("P%d:down", id))
			case l < 0:
				parts = append(parts, fmt.Sprintf("P%d->?", id))
			default:
				parts = append(parts, fmt.Sprintf("P%d->%d", id, l))
			}
		}
		return []string{strings.Join(parts, " ")}, nil
	case "state":
		var out []string
		for id, m := range s.b.ms {
			if !s.b.up[id] {
				out = append(out, fmt.Sprintf("P%d down", id))
				continue
			}
			if st, ok := m.(fmt.Stringer); ok {
				out = append(out, fmt.Sprintf("P%d %s", id, st.String()))
			}
		}
		return out, nil
	case "stats":
		types := slices.Sorted(maps.Keys(s.b.sent))
		total := 0
		var parts []string
		for _, k := range types {
			parts = append(parts, fmt.Sprintf("%s=%d", k, s.b.sent[k]))
			total += s.b.sent[k]
		}
		return []string{fmt.Sprintf("sent %d: %s", total, strings.Join(parts, " "))}, nil
	}
	return nil, fmt.Errorf("unknown command %q", verb)
}

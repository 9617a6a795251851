package foreign_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/foreign"
	"github.com/dmxlab/dmx/trace/format/shiviz"
)

// build parses log (GoVector's two-line form, as a bare ShiViz log) and
// builds its one run.
func build(t *testing.T, log string, opt foreign.Options) (foreign.Run, *foreign.Problems) {
	t.Helper()
	var ps foreign.Problems
	lg, err := shiviz.Parse("t.log", []byte(log), foreign.ParseOptions{Regex: shiviz.ExportRegex}, &ps)
	if err != nil {
		t.Fatal(err)
	}
	runs := foreign.Build(lg, opt, &ps)
	if len(runs) != 1 {
		t.Fatalf("%d runs; problems: %v", len(runs), ps.Err())
	}
	return runs[0], &ps
}

// messages describes a run's messages as "a#2>b#2", sorted; a message
// nobody received is "a#2>".
func messages(r foreign.Run) string {
	name := func(p int, seq int64) string { return fmt.Sprintf("%s#%d", r.Run.Names[p], seq) }
	sends, recvs := map[int64]string{}, map[int64][]string{}
	for _, ev := range r.Events {
		l, _ := ev.Links()
		if ev.Kind == trace.KindSend {
			sends[ev.Msg] = name(ev.Proc, ev.Seq)
		}
		if ev.Kind == trace.KindReceive {
			recvs[ev.Msg] = append(recvs[ev.Msg], name(ev.Proc, ev.Seq))
		}
		for _, k := range l.Sent {
			sends[k.Msg] = name(ev.Proc, ev.Seq)
		}
		for _, k := range l.Recv {
			recvs[k.Msg] = append(recvs[k.Msg], name(ev.Proc, ev.Seq))
		}
	}
	var out []string
	for id, s := range sends {
		if len(recvs[id]) == 0 {
			out = append(out, s+">")
		}
		for _, rv := range recvs[id] {
			out = append(out, s+">"+rv)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// kinds describes a run's events as "a#2:send", in the run's order.
func kinds(r foreign.Run) string {
	var out []string
	for _, ev := range r.Events {
		out = append(out, fmt.Sprintf("%s#%d:%s", r.Run.Names[ev.Proc], ev.Seq, ev.Kind))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// TestBuildMessages: the messages rebuilt from the clocks, in the cases
// where the rule of the package documentation decides.
func TestBuildMessages(t *testing.T) {
	for _, tc := range []struct {
		name, log, msgs, kinds string
	}{
		{"several sends, no receive between: the last one was merged", `
a {"a":1}
x
a {"a":2}
send 1
a {"a":3}
send 2
b {"b":1}
x
b {"b":2, "a":3}
recv`, "a#3>b#2", "a#1:internal a#2:internal a#3:send b#1:internal b#2:receive"},
		{"one send merged by two hosts: a message to each", `
a {"a":1}
broadcast
b {"a":1, "b":1}
recv
c {"c":1, "a":1}
recv`, "a#1>b#1 a#1>c#1", "a#1:send b#1:receive c#1:receive"},
		{"one event merged two clocks: two messages", `
a {"a":1}
x
b {"b":1}
y
c {"c":1, "a":1, "b":1}
merge`, "a#1>c#1 b#1>c#1", "a#1:send b#1:send c#1:receive"},
		{"what came along is not merged directly", `
a {"a":1}
x
b {"a":1, "b":1}
recv from a
b {"a":1, "b":2}
send
c {"c":1, "a":1, "b":2}
recv from b`, "a#1>b#1 b#2>c#1", "a#1:send b#1:receive b#2:send c#1:receive"},
		{"a receive merged by another host is also a send", `
a {"a":1}
x
b {"a":1, "b":1}
recv and forward
c {"c":1, "b":1, "a":1}
recv`, "a#1>b#1 b#1>c#1", "a#1:send b#1:receive c#1:receive"},
		{"events out of order in the log are ordered by their clock", `
b {"b":2, "a":1}
second
a {"a":1}
x
b {"b":1}
first`, "a#1>b#2", "a#1:send b#1:internal b#2:receive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ps := build(t, strings.TrimSpace(tc.log), foreign.Options{})
			if ps.Len() > 0 {
				t.Fatal(ps.Err())
			}
			if got := messages(r); got != tc.msgs {
				t.Errorf("messages %q, want %q", got, tc.msgs)
			}
			if got := kinds(r); got != tc.kinds {
				t.Errorf("kinds %q, want %q", got, tc.kinds)
			}
			// Lamport clocks follow happens-before.
			lam := map[string]uint64{}
			for _, ev := range r.Events {
				lam[fmt.Sprintf("%s#%d", r.Run.Names[ev.Proc], ev.Seq)] = ev.Lamport
			}
			for _, m := range strings.Fields(tc.msgs) {
				s, rv, _ := strings.Cut(m, ">")
				if rv != "" && lam[s] >= lam[rv] {
					t.Errorf("Lamport %s=%d, %s=%d", s, lam[s], rv, lam[rv])
				}
			}
		})
	}
}

// TestBuildRules: rules give kinds and what their groups capture, and
// message ids pair what clocks cannot show.
func TestBuildRules(t *testing.T) {
	rules, err := foreign.ParseRules("r", []byte(`
cs_request=^want (?<resource>\w+)
cs_enter=^got (?<resource>\w+)
cs_exit=^put (?<resource>\w+)
wait=^waiting for (?<waiting_for>.*)
election_start=^elect (?<term>\d+)
leader=^leader (?<leader>\S+) term (?<term>\d+)
send=^send (?<type>\w+) id=(?<msg>\d+)
receive=^recv (?<type>\w+) id=(?<msg>\d+)
`))
	if err != nil {
		t.Fatal(err)
	}
	log := `
a {"a":1}
want printer
a {"a":2}
send grant id=7
a {"a":3}
send grant id=8
b {"b":1}
waiting for a
b {"b":2, "a":3}
recv grant id=8
b {"b":3, "a":3}
recv grant id=7
b {"b":4, "a":3}
got printer
b {"b":5, "a":3}
put printer
b {"b":6, "a":3}
elect 4
b {"b":7, "a":3}
leader a term 4
b {"b":8, "a":3}
send grant id=9`
	r, ps := build(t, strings.TrimSpace(log), foreign.Options{Rules: rules})
	if ps.Len() > 0 {
		t.Fatal(ps.Err())
	}
	// b#3 received a#2's grant, which its clock could not show (b knew a#3
	// already): the id pairs them. b#8's grant reached nobody.
	if got, want := messages(r), "a#2>b#3 a#3>b#2 b#8>"; got != want {
		t.Errorf("messages %q, want %q", got, want)
	}
	if got, want := kinds(r), "a#1:cs_request a#2:send a#3:send b#1:wait b#2:receive b#3:receive b#4:cs_enter b#5:cs_exit b#6:election_start b#7:leader b#8:send"; got != want {
		t.Errorf("kinds %q,\nwant %q", got, want)
	}
	for _, ev := range r.Events {
		switch ev.Kind {
		case trace.KindLeader:
			if d, err := ev.Leader(); err != nil || d.Leader != 0 || d.Term != 4 {
				t.Errorf("leader %+v, %v", d, err)
			}
		case trace.KindElectionStart:
			if d, err := ev.ElectionStart(); err != nil || d.Term != 4 {
				t.Errorf("election_start %+v, %v", d, err)
			}
		case trace.KindWait:
			if d, err := ev.Wait(); err != nil || fmt.Sprint(d.WaitingFor) != "[0]" || ev.Resource != "cs" {
				t.Errorf("wait %+v on %q, %v", d, ev.Resource, err)
			}
		case trace.KindCSEnter:
			if ev.Resource != "printer" {
				t.Errorf("cs_enter on %q", ev.Resource)
			}
		case trace.KindSend, trace.KindReceive:
			if ev.MsgType != "grant" {
				t.Errorf("%v: type %q", ev.Ref(), ev.MsgType)
			}
		}
		if o, _ := ev.Origin(); !strings.HasPrefix(o.Src, "t.log:") || o.Text == "" {
			t.Errorf("%v: origin %+v", ev.Ref(), o)
		}
	}
}

// TestBuildProblems: each broken rule is a problem naming the line; under
// Lenient the run keeps what it can.
func TestBuildProblems(t *testing.T) {
	for _, tc := range []struct {
		name, log, want, reason string
		kept                    int
	}{
		{"own entry not starting at 1", "a {\"a\":2}\nx", "t.log:1: host \"a\"'s first event has its own clock entry at 2", foreign.ReasonClockStart, 1},
		{"own entry jumping", "a {\"a\":1}\nx\na {\"a\":3}\ny", "t.log:3: host \"a\"'s own clock entry jumps from 1 (t.log:1) to 3", foreign.ReasonClockJump, 2},
		{"own entry going back", "a {\"a\":1}\nx\na {\"a\":2}\ny\na {\"a\":2}\nz", "t.log:5: host \"a\"'s own clock entry is 2, as at t.log:3", foreign.ReasonClockBackwards, 2},
		{"other entry going back", "b {\"b\":1}\nx\nb {\"b\":2}\ny\na {\"a\":1, \"b\":2}\nr\na {\"a\":2, \"b\":1}\ns", "t.log:7: host \"a\"'s clock entry for \"b\" goes back from 2 to 1", foreign.ReasonClockBackwards, 4},
		{"unknown host", "a {\"a\":1, \"zz\":4}\nx", "t.log:1: the clock names host \"zz\", which logged no event", foreign.ReasonUnknownHost, 1},
		{"unmatched receive", "b {\"b\":1}\nx\na {\"a\":1, \"b\":5}\nr", "t.log:3: the clock shows event 5 of host \"b\", which the log of \"b\" does not have (it has 1 event)", foreign.ReasonUnmatchedRecv, 2},
		{"not dominating", "c {\"c\":1}\nx\nb {\"b\":1, \"c\":1}\ny\na {\"a\":1, \"b\":1}\nr", "t.log:5: the clock does not dominate that of the event it merged", foreign.ReasonNotDominating, 3},
		{"causal cycle", "a {\"a\":1, \"b\":1}\nx\nb {\"b\":1, \"a\":1}\ny", "a causal cycle", foreign.ReasonCycle, 2},
		{"no own entry", "a {\"b\":1}\nx", "t.log:1: the clock {\"b\":1} of host \"a\" has no entry for \"a\" itself", foreign.ReasonNoOwnEntry, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ps foreign.Problems
			lg, err := shiviz.Parse("t.log", []byte(tc.log), foreign.ParseOptions{Regex: shiviz.ExportRegex}, &ps)
			if err != nil {
				t.Fatal(err)
			}
			runs := foreign.Build(lg, foreign.Options{Lenient: true}, &ps)
			err = ps.Err()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("problems %v, want %q", err, tc.want)
			}
			if ps.List()[0].Reason != tc.reason {
				t.Errorf("reason %q, want %q", ps.List()[0].Reason, tc.reason)
			}
			kept := 0
			for _, r := range runs {
				kept += len(r.Events)
				if r.Run.Complete {
					t.Errorf("a run with problems is complete")
				}
			}
			if kept != tc.kept {
				t.Errorf("%d events kept, want %d", kept, tc.kept)
			}
		})
	}
}

// TestBuildMessageNames: dmx's rules pair a send and a receive whichever
// way each names the message, "(P0's message 1)" as exports write it
// since issue 28, or msg=1 as they wrote it before; a problem quotes the
// log's own name of the message, not its id.
func TestBuildMessageNames(t *testing.T) {
	// P1 receives P0's second message first: its clock cannot show the
	// first one, which only the names pair.
	log := `
P0 {"P0":1}
send request to P1 (P0's message 1) on cs
P0 {"P0":2}
send request to P1 msg=2 on cs
P1 {"P1":1, "P0":2}
receive request from P0 (P0's message 2) on cs
P1 {"P1":2, "P0":2}
receive request from P0 msg=1 on cs
P1 {"P1":3, "P0":2}
receive request from P0 (P0's message 9) on cs`
	r, ps := build(t, strings.TrimSpace(log), foreign.Options{Rules: foreign.DMXRules(), Lenient: true})
	if got, want := messages(r), "P0#1>P1#2 P0#2>P1#1"; got != want {
		t.Errorf("messages %q, want %q", got, want)
	}
	if err := ps.Err(); err == nil || !strings.Contains(err.Error(), `receive of message "P0's message 9", which no event sends`) {
		t.Errorf("problems %v, want one quoting P0's message 9", err)
	}
}

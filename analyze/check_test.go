package analyze

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace"
)

// raRun is a Ricart-Agrawala run of 3 processes where P0 and P1 ask for the
// critical section at the same time: P0 has the lower timestamp, so P1
// replies at once [RA2] and P0 defers its reply to P1 until it leaves [RA3].
func raRun(b *builder) {
	b.Request(0, "cs")
	r0 := b.Multicast(0, "request", 1, 2)
	b.Request(1, "cs")
	r1 := b.Multicast(1, "request", 0, 2)
	b.Recv(2, r0[1])
	ok20 := b.Send(2, 0, "ok")
	b.Recv(2, r1[1])
	ok21 := b.Send(2, 1, "ok")
	b.Recv(1, r0[0])
	ok10 := b.Send(1, 0, "ok") // P0's request is older: reply at once
	b.Recv(0, r1[0])           // P1's request is newer: defer
	b.Recv(0, ok20)
	b.Recv(0, ok10)
	b.Enter(0, "cs")
	b.Exit(0, "cs")
	ok01 := b.Send(0, 1, "ok") // the deferred reply
	b.Recv(1, ok21)
	b.Recv(1, ok01)
	b.Enter(1, "cs")
	b.Exit(1, "cs")
}

// skewedSections: P1's clock is 5ms behind P0's, so the token P0 passes on
// when it leaves reaches P1 "before" P0 left, and their sections overlap
// in wall time only.
func skewedSections(b *builder) { tokenToSkewed(b, 8, 11) }

// tokenToSkewed: P0 holds cs from 10ms to 12ms, then passes the token to
// P1, whose clock stamps the token's arrival recvAt and its own exit
// exitAt (its entry follows the arrival by a step).
func tokenToSkewed(b *builder, recvAt, exitAt int64) {
	b.At(10).Enter(0, "cs")
	b.At(12).Exit(0, "cs")
	m := b.Send(0, 1, "token")
	b.At(recvAt).Recv(1, m)
	b.Enter(1, "cs")
	b.At(exitAt).Exit(1, "cs")
}

// overlapInWallTime: P0 and P1 are in cs at once, for 1ms of wall time,
// with no message between them.
func overlapInWallTime(b *builder) {
	b.At(10).Enter(0, "cs")
	b.At(11).Enter(1, "cs")
	b.At(12).Exit(0, "cs")
	b.At(13).Exit(1, "cs")
}

// apartInWallTime: P0's section and then, 10ms later, P1's, with no
// message between them.
func apartInWallTime(b *builder) {
	b.At(10).Enter(0, "cs")
	b.Exit(0, "cs")
	b.At(20).Enter(1, "cs")
	b.Exit(1, "cs")
}

// want is the verdicts a test expects; checks not named must be ok.
type want map[string]Verdict

func TestChecks(t *testing.T) {
	tests := []struct {
		name       string
		n          int
		build      func(b *builder)
		incomplete bool
		nodes0     bool                                 // run without Nodes: size clocks dynamically
		reorder    func(ev []trace.Event) []trace.Event // reader order
		want       want
		finding    map[string]string // check -> substring of its first finding
		events     map[string][]trace.Ref
	}{
		{name: "ricart-agrawala ok", n: 3, build: raRun},
		{name: "ricart-agrawala without node count", n: 3, build: raRun, nodes0: true},
		{
			name: "receive read before its send", n: 3, build: raRun,
			reorder: func(ev []trace.Event) []trace.Event {
				// Read all of P1, then P2, then P0: P1's receives of
				// P0's and P2's messages come before those sends.
				slices.SortStableFunc(ev, func(a, b trace.Event) int { return (a.Proc+2)%3 - (b.Proc+2)%3 })
				return ev
			},
		},
		{
			name: "receive read before its send, reversed process order", n: 3, build: raRun,
			reorder: func(ev []trace.Event) []trace.Event {
				slices.SortStableFunc(ev, func(a, b trace.Event) int { return b.Proc - a.Proc })
				return ev
			},
		},
		{
			name: "overlap in wall time", n: 2, build: overlapInWallTime,
			want: want{"mutex-causal": Violated, "mutex-realtime": Violated},
			finding: map[string]string{
				"mutex-causal":   "concurrent critical sections on cs: P0 [P0#1..P0#2] and P1 [P1#1..P1#2]: neither entry happened before the other",
				"mutex-realtime": "critical sections on cs overlap in wall time for 1ms: P0 [P0#1..P0#2] from +0s to +2ms and P1 [P1#1..P1#2] from +1ms to +3ms",
			},
			events: map[string][]trace.Ref{"mutex-causal": {ref(0, 1), ref(0, 2), ref(1, 1), ref(1, 2)}},
		},
		{
			name: "concurrent but apart in wall time", n: 2, build: apartInWallTime,
			want:    want{"mutex-causal": Violated},
			finding: map[string]string{"mutex-causal": "concurrent critical sections on cs"},
		},
		{
			name: "entered knowing the other was inside", n: 2,
			build: func(b *builder) {
				b.Enter(0, "cs")
				m := b.Send(0, 1, "hello")
				b.Recv(1, m)
				b.Enter(1, "cs")
				b.Exit(0, "cs")
				b.Exit(1, "cs")
			},
			want: want{"mutex-causal": Violated, "mutex-realtime": Violated},
			finding: map[string]string{
				"mutex-causal": "overlapping critical sections on cs: P0 [P0#1..P0#3] and P1 [P1#2..P1#3]: P1 entered knowing that P0 had entered, but not that it had left",
			},
		},
		{
			name: "entered after the exit was known, but not the last one", n: 3,
			build: func(b *builder) {
				b.Enter(0, "cs")
				b.Exit(0, "cs")
				m := b.Send(0, 1, "token")
				b.Recv(1, m)
				b.Enter(1, "cs")
				b.Exit(1, "cs")
				m = b.Send(0, 2, "token") // P2 knows of P0's exit, not of P1's
				b.Recv(2, m)
				b.Enter(2, "cs")
				b.Exit(2, "cs")
			},
			want:    want{"mutex-causal": Violated},
			finding: map[string]string{"mutex-causal": "P1 [P1#2..P1#3] and P2 [P2#2..P2#3]"},
		},
		{
			name: "same process enters twice", n: 1,
			build:   func(b *builder) { enterBothThenLeave(b, 0, "cs", 0, "cs") },
			want:    want{"mutex-causal": Violated},
			finding: map[string]string{"mutex-causal": "P0 entered again before leaving"},
		},
		{
			name: "different resources do not exclude", n: 2,
			build: func(b *builder) { enterBothThenLeave(b, 0, "a", 1, "b") },
		},
		{
			name: "never exits: open until the end", n: 2,
			build: func(b *builder) {
				b.At(10).Enter(0, "cs")
				b.At(20).Enter(1, "cs")
				b.Exit(1, "cs")
			},
			want: want{"mutex-causal": Violated, "mutex-realtime": Violated},
			finding: map[string]string{
				"mutex-causal":   "P0 [P0#1..no exit]",
				"mutex-realtime": "P0 [P0#1..no exit] from +0s to +11ms",
			},
		},
		{
			name: "crash ends the critical section", n: 2,
			build: func(b *builder) {
				b.Enter(0, "cs")
				b.Crash(0)
				m := b.Send(0, 1, "suspect") // the failure detector's news, as a message
				b.Recv(1, m)
				b.Enter(1, "cs")
				b.Exit(1, "cs")
			},
		},
		{
			name: "request never granted", n: 2,
			build: func(b *builder) {
				b.Request(0, "cs")
				b.Enter(0, "cs")
				b.Exit(0, "cs")
				b.Internal(1)
				b.Request(1, "cs")
				b.Internal(1)
			},
			want:    want{"liveness": Violated},
			finding: map[string]string{"liveness": "P1#2 cs_request(cs) was never granted: P1 did not enter cs before the run ended (waited 1ms)"},
			events:  map[string][]trace.Ref{"liveness": {ref(1, 2)}},
		},
		{
			name: "request pending in an incomplete run", n: 2, incomplete: true,
			build: func(b *builder) {
				b.Request(1, "cs")
				b.Internal(1)
			},
			want: want{"liveness": Unknown},
		},
		{
			name: "crash after request", n: 2,
			build: func(b *builder) {
				b.Request(1, "cs")
				b.Crash(1)
			},
		},
		{
			name: "crash before request does not excuse it", n: 2,
			build: func(b *builder) {
				b.Crash(1)
				b.Request(1, "cs")
			},
			want: want{"liveness": Violated},
		},
		{
			name: "wrong recorded vector clock", n: 2,
			build: func(b *builder) {
				m := b.Send(0, 1, "x")
				r := b.Recv(1, m)
				b.Internal(1)
				b.Event(r).VC = trace.VC{0, 1}
			},
			want:    want{"clocks": Violated},
			finding: map[string]string{"clocks": "P1#1 receive(x from P0): recorded vector clock [0,1], but happens-before gives [1,1]"},
			events:  map[string][]trace.Ref{"clocks": {ref(1, 1)}},
		},
		{
			name: "recorded Lamport clock too small", n: 2,
			build: func(b *builder) {
				b.Internal(0)
				m := b.Send(0, 1, "x")
				r := b.Recv(1, m)
				b.Event(r).Lamport = 2
			},
			want:    want{"clocks": Violated},
			finding: map[string]string{"clocks": "P1#1 receive(x from P0): recorded Lamport clock 2, not greater than 2 of P0#2, which happened before it"},
		},
		{
			name: "receive names the wrong sender", n: 3,
			build: func(b *builder) {
				m := b.Send(0, 1, "x")
				r := b.Recv(1, m)
				b.Event(r).Peer = 2
			},
			want:    want{"clocks": Violated},
			finding: map[string]string{"clocks": "says P0's message 1 comes from P2, but P0#1 sent it"},
		},
		{
			name: "clocks not recorded", n: 2,
			build: func(b *builder) {
				m := b.Send(0, 1, "x")
				b.Recv(1, m)
				for i := range b.events {
					b.events[i].VC, b.events[i].Lamport = nil, 0
				}
			},
		},
		{
			name: "duplicated delivery", n: 2,
			build: func(b *builder) {
				m := b.Send(0, 1, "x")
				b.Recv(1, m)
				b.Recv(1, m)
			},
		},
		{
			name: "no wall times", n: 2,
			build: func(b *builder) {
				b.Enter(0, "cs")
				b.Exit(0, "cs")
				for i := range b.events {
					b.events[i].Wall = 0
				}
			},
			want: want{"mutex-realtime": Skipped, "clock-skew": Skipped},
		},
		{
			name: "causally ordered sections that overlap in wall time", n: 2,
			build: skewedSections,
			want:  want{"clock-skew": Violated},
			finding: map[string]string{
				"clock-skew": "critical sections on cs overlap in wall time but not in fact: P0 [P0#1..P0#2] exited at +4ms, which happened before P1 entered at P1#2 at +1ms: the wall clock of P1 is behind P0's by at least 3ms",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder(tt.n)
			tt.build(b)
			run := b.Run(!tt.incomplete)
			if tt.nodes0 {
				run.Nodes = 0
			}
			r := b.Reader()
			if tt.reorder != nil {
				r.Events = tt.reorder(r.Events)
			}
			results, err := Evaluate(run, r, All)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			for _, res := range results {
				w, ok := tt.want[res.Check]
				if !ok {
					w = OK
					if res.Verdict == NotApplicable {
						w = NotApplicable // a check of what the run has none of
					}
				}
				if tt.incomplete && w == OK {
					w = Unknown // no check says ok of an incomplete run
				}
				if res.Verdict != w || res.Err != nil {
					t.Errorf("%s: verdict %s (err %v), want %s; note %q; findings %v", res.Check, res.Verdict, res.Err, w, res.Note, res.Findings)
					continue
				}
				if (len(res.Findings) > 0) != (w == Violated) {
					t.Errorf("%s: verdict %s with findings %v", res.Check, res.Verdict, res.Findings)
				}
				if sub, ok := tt.finding[res.Check]; ok && len(res.Findings) > 0 && !strings.Contains(res.Findings[0].Message, sub) {
					t.Errorf("%s: finding\n\t%s\nwant it to contain\n\t%s", res.Check, res.Findings[0].Message, sub)
				}
				if refs, ok := tt.events[res.Check]; ok && len(res.Findings) > 0 && !slices.Equal(res.Findings[0].Events, refs) {
					t.Errorf("%s: finding names %v, want %v", res.Check, res.Findings[0].Events, refs)
				}
				for _, f := range res.Findings {
					if f.Check != res.Check || len(f.Events) == 0 {
						t.Errorf("%s: finding %+v must carry its check's name and events", res.Check, f)
					}
				}
			}
		})
	}
}

func TestBrokenTraces(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		build func(b *builder)
		edit  func(ev []trace.Event) []trace.Event
		want  string // the error, exactly
		ref   trace.Ref
	}{
		{
			name: "sequence gap", n: 3,
			build: func(b *builder) {
				for range 3 {
					b.Internal(2)
				}
			},
			edit: func(ev []trace.Event) []trace.Event { return slices.Delete(ev, 1, 2) },
			want: "broken trace: P2#3 internal follows P2#1: a process's events are numbered 1, 2, 3... without gaps",
			ref:  trace.Ref{Proc: 2, Seq: 3},
		},
		{
			name: "sequence repeat", n: 1,
			build: func(b *builder) { b.Internal(0); b.Internal(0) },
			edit:  func(ev []trace.Event) []trace.Event { ev[1].Seq = 1; return ev },
			want:  "broken trace: P0#1 internal follows P0#1: a process's events are numbered 1, 2, 3... without gaps",
		},
		{
			name: "first event not 1", n: 2,
			build: func(b *builder) { b.Internal(1); b.Internal(1) },
			edit:  func(ev []trace.Event) []trace.Event { return ev[1:] },
			want:  "broken trace: P1#2 internal is the first event of P1: sequence numbers start at 1",
		},
		{
			name: "receive without send", n: 2,
			build: func(b *builder) {
				m := b.Send(0, 1, "x")
				b.Recv(1, m)
				b.Internal(1)
			},
			edit: func(ev []trace.Event) []trace.Event { return ev[1:] }, // the send is gone
			want: "broken trace: P1#1 receive(x from P0) receives P0's message 1, which was never sent",
			ref:  trace.Ref{Proc: 1, Seq: 1},
		},
		{
			name: "causal cycle", n: 2,
			build: func(b *builder) {
				m := b.Send(0, 1, "x")
				b.Recv(1, m)
				n := b.Send(1, 0, "y")
				b.Recv(0, n)
			},
			// P0 receives y before it sends x: swap P0's events.
			edit: func(ev []trace.Event) []trace.Event {
				ev[0], ev[3] = ev[3], ev[0]
				ev[0].Seq, ev[3].Seq = 1, 2
				return ev
			},
			want: "broken trace: P0#1 receive(y from P1) waits for P1's message 1, sent at P1#2, which cannot happen before it (causal cycle)\n" +
				"broken trace: P1#1 receive(x from P0) waits for P0's message 1, sent at P0#2, which cannot happen before it (causal cycle)",
		},
		{
			name: "message sent twice", n: 2,
			build: func(b *builder) {
				b.Send(0, 1, "x")
				b.Send(0, 1, "x")
			},
			edit: func(ev []trace.Event) []trace.Event { ev[1].Msg = ev[0].Msg; return ev },
			want: "broken trace: P0#2 send(x to P1) sends P0's message 1, already sent by P0#1",
		},
		{
			name: "receive without message id", n: 2,
			build: func(b *builder) {
				m := b.Send(0, 1, "x")
				b.Recv(1, m)
			},
			edit: func(ev []trace.Event) []trace.Event { ev[1].Msg = 0; return ev },
			want: "broken trace: P1#1 receive(x from P0) has no message id",
		},
		{
			name: "process out of range", n: 2,
			build: func(b *builder) { b.Internal(1) },
			edit:  func(ev []trace.Event) []trace.Event { ev[0].Proc = 2; return ev },
			want:  "broken trace: P2#1 internal names process 2, out of range (run has 2 processes)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder(tt.n)
			tt.build(b)
			r := b.Reader()
			r.Events = tt.edit(r.Events)
			results, err := Evaluate(b.Run(true), r, All)
			if err == nil {
				t.Fatalf("Run: no error, results %v", results)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n\t%v\nwant\n\t%v", err, tt.want)
			}
			var be *BrokenError
			if !errors.As(err, &be) {
				t.Errorf("error %T is not a *BrokenError", err)
			} else if tt.ref != (trace.Ref{}) && be.Event != tt.ref {
				t.Errorf("error names %v, want %v", be.Event, tt.ref)
			}
		})
	}
}

type failingReader struct{ n int }

func (r *failingReader) Next() (*trace.Event, error) {
	if r.n == 0 {
		return nil, errors.New("disk on fire")
	}
	r.n--
	return &trace.Event{Proc: 0, Seq: int64(1 - r.n), Kind: trace.KindInternal}, nil
}

func TestReadError(t *testing.T) {
	_, err := Evaluate(trace.Run{Nodes: 1}, &failingReader{n: 1}, All)
	if err == nil || err.Error() != "read trace: disk on fire" {
		t.Errorf("error %v, want read trace: disk on fire", err)
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		verdicts []Verdict
		err      bool
		want     Verdict
	}{
		{nil, false, NotApplicable},
		{[]Verdict{NotApplicable, Skipped}, false, NotApplicable},
		{[]Verdict{NotApplicable, OK}, false, OK},
		{[]Verdict{OK, OK}, false, OK},
		{[]Verdict{OK, Unknown}, false, Unknown},
		{[]Verdict{Unknown, Violated, OK}, false, Violated},
		{[]Verdict{OK}, true, Unknown},
	}
	for _, tt := range tests {
		var rs []Result
		for _, v := range tt.verdicts {
			rs = append(rs, Result{Verdict: v})
		}
		if tt.err {
			rs[0].Err = errors.New("x")
		}
		if got := Summarize(rs); got != tt.want {
			t.Errorf("Summarize(%v, err %v) = %s, want %s", tt.verdicts, tt.err, got, tt.want)
		}
	}
}

func TestJSON(t *testing.T) {
	b := newBuilder(2)
	apartInWallTime(b)
	results := runChecks(t, b, []*Check{MutexCausal, Liveness})
	got, err := json.Marshal(JSON(b.Run(true), results))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"run":1,"check":"mutex-causal","verdict":"violated","findings":[{"message":"concurrent critical sections on cs: P0 [P0#1..P0#2] and P1 [P1#1..P1#2]: neither entry happened before the other","events":["P0#1","P0#2","P1#1","P1#2"]}],"note":"2 critical sections on 1 resource"},` +
		`{"run":1,"check":"liveness","verdict":"not applicable","findings":[],"note":"no cs_request events"}]`
	if string(got) != want {
		t.Errorf("JSON:\n%s\nwant\n%s", got, want)
	}
	// A Result marshaled directly has the same shape, without the run.
	got, err = json.Marshal(results[1:])
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"check":"liveness","verdict":"not applicable","findings":[],"note":"no cs_request events"}]`; string(got) != want {
		t.Errorf("json.Marshal(results):\n%s\nwant\n%s", got, want)
	}
}

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range All {
		if c.Name == "" || c.Doc == "" || c.New == nil {
			t.Errorf("check %+v lacks a name, doc or constructor", c)
		}
		if seen[c.Name] {
			t.Errorf("check %s registered twice", c.Name)
		}
		seen[c.Name] = true
		if Lookup(c.Name) != c {
			t.Errorf("Lookup(%q) did not find it", c.Name)
		}
	}
	if Lookup("no-such-check") != nil {
		t.Error("Lookup of an unknown name found something")
	}
}

func TestFindingsCapped(t *testing.T) {
	b := newBuilder(2)
	for range MaxFindings + 5 {
		concurrentSections(b)
	}
	r := runOne(t, b, true, MutexCausal)
	if r.Verdict != Violated || len(r.Findings) != MaxFindings || !strings.HasPrefix(r.Note, "") || !strings.Contains(r.Note, "more findings not shown") {
		t.Errorf("verdict %s, %d findings, note %q", r.Verdict, len(r.Findings), r.Note)
	}
}

func ref(p int, seq int64) trace.Ref { return trace.Ref{Proc: p, Seq: seq} }

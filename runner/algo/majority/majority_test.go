package majority

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algotest"
)

// TestScripts runs the interaction scripts in testdata; each block cites the
// note it exercises. Rewrite with go test -update.
func TestScripts(t *testing.T) {
	algotest.RunScripts(t, Spec, "testdata")
}

// TestQuorum: m is the smallest number of coordinators above half.
// Reference: seed 002 point 2: "m (> n/2)".
func TestQuorum(t *testing.T) {
	for k, want := range map[int]int{1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 8: 5, 9: 5} {
		m := Quorum(k)
		if m != want || 2*m <= k || 2*(m-1) > k {
			t.Errorf("Quorum(%d) = %d, want %d", k, m, want)
		}
	}
}

func build(t *testing.T, id, n int, p map[string]string) *Machine {
	t.Helper()
	return algotest.Build[*Machine](t, Spec, algo.Config{ID: id, N: n, Params: p, Rand: rand.New(rand.NewPCG(1, uint64(id)))})
}

func deliver(m *Machine, from int, typ string, stamp uint64) []algo.Output {
	return m.Step(algo.Input{Kind: algo.Receive, From: from, Msg: algo.Msg{Type: typ, Stamp: stamp, ID: from}})
}

// answers returns the grants and denies among outs, as "grant->j@T".
func answers(outs []algo.Output) []string {
	var s []string
	for _, o := range outs {
		if o.Kind == algo.Send && (o.Msg.Type == MsgGrant || o.Msg.Type == MsgDeny) {
			s = append(s, fmt.Sprintf("%s->%d@%d", o.Msg.Type, o.To, o.Msg.Stamp))
		}
	}
	return s
}

// TestVoteInTimestampOrder drives coordinator P0 (which never requests) of
// N = 5 through each case of its voting rule.
// Reference: seed 002 point 3 (GRANT or DENY, one vote at a time) and "the
// coordinators vote in timestamp order" (see the package doc).
func TestVoteInTimestampOrder(t *testing.T) {
	type msg struct {
		from int
		typ  string
		t    uint64
	}
	for _, tc := range []struct {
		name  string
		setup []msg
		in    msg
		want  string // the answers to in
	}{
		{"free: grant", nil, msg{1, MsgRequest, 5}, "[grant->1@5]"},
		{"voted, later request: deny", []msg{{1, MsgRequest, 5}}, msg{2, MsgRequest, 9}, "[deny->2@9]"},
		{"voted, tie, larger id: deny", []msg{{1, MsgRequest, 5}}, msg{2, MsgRequest, 5}, "[deny->2@5]"},
		{"voted, earlier request: held back", []msg{{2, MsgRequest, 9}}, msg{1, MsgRequest, 5}, "[]"},
		{"voted, tie, smaller id: held back", []msg{{2, MsgRequest, 5}}, msg{1, MsgRequest, 5}, "[]"},
		{"release: earliest held back gets the vote, the rest are denied",
			[]msg{{4, MsgRequest, 9}, {3, MsgRequest, 7}, {1, MsgRequest, 5}, {2, MsgRequest, 6}},
			msg{4, MsgRelease, 9}, "[grant->1@5 deny->2@6 deny->3@7]"},
		{"release of the only vote: nobody waits", []msg{{1, MsgRequest, 5}}, msg{1, MsgRelease, 5}, "[]"},
		{"release by a process without the vote: nothing", []msg{{1, MsgRequest, 5}}, msg{2, MsgRelease, 3}, "[]"},
		{"request overtaken by its release: ignored", []msg{{1, MsgRelease, 5}}, msg{1, MsgRequest, 5}, "[]"},
		{"a new request ends the requester's old one", []msg{{1, MsgRequest, 5}, {2, MsgRequest, 3}}, msg{1, MsgRequest, 8}, "[grant->2@3 deny->1@8]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := build(t, 0, 5, map[string]string{"forget": "true"})
			for _, s := range tc.setup {
				deliver(m, s.from, s.typ, s.t)
			}
			got := fmt.Sprint(answers(deliver(m, tc.in.from, tc.in.typ, tc.in.t)))
			if got != tc.want {
				t.Fatalf("answers %s, want %s (state %v)", got, tc.want, m)
			}
		})
	}
}

// TestGiveUpAfterTooManyDenies: a requester gives up as soon as more than
// k-m coordinators deny, not before, and enters as soon as m grant.
// Reference: seed 002 points 2 and 5.
func TestGiveUpAfterTooManyDenies(t *testing.T) {
	for _, k := range []int{2, 3, 4, 5, 8, 9} {
		n := k + 1
		id := k // not a coordinator: every answer is a message
		m := build(t, id, n, map[string]string{"coordinators": fmt.Sprint(k)})
		m.Step(algo.Input{Kind: algo.Request, Clock: 4})
		for c := 0; c < k; c++ {
			outs := deliver(m, c, MsgDeny, 4)
			gaveUp := m.state == backingOff
			if want := c+1 > k-Quorum(k); gaveUp != want {
				t.Fatalf("k=%d: after %d denies backing off = %v, want %v", k, c+1, gaveUp, want)
			}
			if gaveUp {
				// The release goes to every coordinator, then the timer.
				rel := 0
				for _, o := range outs {
					if o.Kind == algo.Send && o.Msg.Type == MsgRelease && o.Msg.Stamp == 4 {
						rel++
					}
				}
				if rel != k {
					t.Fatalf("k=%d: gave up with %d releases, want %d: %v", k, rel, k, outs)
				}
				break
			}
		}
		m = build(t, id, n, map[string]string{"coordinators": fmt.Sprint(k)})
		m.Step(algo.Input{Kind: algo.Request, Clock: 4})
		for c := 0; c < Quorum(k); c++ {
			deliver(m, c, MsgGrant, 4)
		}
		if m.state != held {
			t.Fatalf("k=%d: %d grants, state %v, want HELD", k, Quorum(k), m.state)
		}
	}
}

// TestBackoffDrawn: the back-off is drawn from the configured range with
// the seeded source, and a fixed back-off is exactly that.
// Reference: seed 002 point 5 ("backs off and retries").
func TestBackoffDrawn(t *testing.T) {
	for _, tc := range []struct {
		p      string
		lo, hi int64
	}{
		{"1ms-10ms", 1_000_000, 10_000_000},
		{"3ms", 3_000_000, 3_000_000},
		{"0-200", 0, 200},
	} {
		seen := map[int64]bool{}
		for i := 0; i < 50; i++ {
			m := build(t, 2, 3, map[string]string{"backoff": tc.p})
			m.rnd = rand.New(rand.NewPCG(uint64(i), 9))
			m.Step(algo.Input{Kind: algo.Request, Clock: 4})
			deliver(m, 0, MsgDeny, 4)
			outs := deliver(m, 1, MsgDeny, 4)
			var d int64 = -1
			for _, o := range outs {
				if o.Kind == algo.SetTimer && o.TimerName == TimerBackoff {
					d = o.After
				}
			}
			if d < tc.lo || d > tc.hi {
				t.Fatalf("backoff=%s: drew %d, want in [%d, %d]", tc.p, d, tc.lo, tc.hi)
			}
			seen[d] = true
		}
		if tc.lo != tc.hi && len(seen) < 10 {
			t.Errorf("backoff=%s: only %d distinct draws in 50", tc.p, len(seen))
		}
	}
}

// TestRecover: with forget=false the coordinator persists its vote before
// the grant leaves and a fresh machine restores it on Recover, so it does
// not vote twice; with forget=true it persists nothing and votes again.
// Reference: seed 002 point 4.
func TestRecover(t *testing.T) {
	for _, forget := range []bool{false, true} {
		p := map[string]string{"forget": fmt.Sprint(forget)}
		c := build(t, 0, 3, p)
		outs := deliver(c, 1, MsgRequest, 5)
		var stored algo.Msg
		persisted := false
		for i, o := range outs {
			if o.Kind == algo.Persist {
				stored, persisted = o.Msg, true
				if i+1 >= len(outs) || outs[i+1].Msg.Type != MsgGrant {
					t.Fatalf("forget=%v: the persist is not right before the grant: %v", forget, outs)
				}
			}
		}
		if persisted == forget {
			t.Fatalf("forget=%v: persisted=%v (%v)", forget, persisted, outs)
		}
		// The crash: a fresh machine, Recover with what was persisted.
		c = build(t, 0, 3, p)
		c.Step(algo.Input{Kind: algo.Recover, Msg: stored})
		got := fmt.Sprint(answers(deliver(c, 2, MsgRequest, 8)))
		want := "[deny->2@8]"
		if forget {
			want = "[grant->2@8]" // it votes again: P1 and P2 both hold its vote
		}
		if got != want {
			t.Fatalf("forget=%v: after recovery P2's request got %s, want %s", forget, got, want)
		}
		if !forget {
			// P1's release frees the restored vote.
			if got := fmt.Sprint(answers(deliver(c, 2, MsgRequest, 9))); got != "[deny->2@9]" {
				t.Fatalf("second request: %s", got)
			}
			deliver(c, 1, MsgRelease, 5)
			if c.voted {
				t.Fatalf("the restored vote was not freed by its holder's release: %v", c)
			}
		}
	}
}

// countCheck: every attempt sends one request and one release to each
// coordinator other than the requester, and each request gets at most one
// answer (a request withdrawn by its release gets none).
func countCheck(r *algotest.Result) error {
	if r.Sent[MsgRequest] != r.Sent[MsgRelease] {
		return fmt.Errorf("sent %v: want as many releases as requests", r.Sent)
	}
	if a := r.Sent[MsgGrant] + r.Sent[MsgDeny]; a > r.Sent[MsgRequest] {
		return fmt.Errorf("sent %v: %d answers to %d requests", r.Sent, a, r.Sent[MsgRequest])
	}
	return nil
}

// TestSweep runs the algorithm (forget=false, no crash) for many seeds and
// group sizes, under random delays that reorder messages and under high
// contention (everyone asks again at once): mutual exclusion, every request
// entered, and the message counts above. The default random back-off
// (1ms-10ms, against delays of 0.1ms-5ms) is enough for every run to
// finish; see TestLivelock for settings where it is not.
func TestSweep(t *testing.T) {
	ns := []int{1, 2, 3, 5, 8, 9}
	algotest.Sweep(t, Spec, ns, 300, algotest.Options{Think: 1}, countCheck)
	algotest.Sweep(t, Spec, ns, 50, algotest.Options{FIFO: true}, countCheck)
	algotest.Sweep(t, Spec, []int{5, 9}, 100, algotest.Options{Think: 1, Params: map[string]string{"coordinators": "3"}}, countCheck)
}

// TestUncontendedCost: one requester at a time costs exactly 3k' messages
// per entry, k' the coordinators other than itself, on FIFO channels
// (without them a release may overtake its request, which then gets no
// answer: one message fewer).
func TestUncontendedCost(t *testing.T) {
	for _, tc := range []struct{ n, k int }{{1, 1}, {2, 2}, {3, 3}, {5, 5}, {8, 8}, {9, 9}, {5, 3}, {9, 1}} {
		p := map[string]string{"coordinators": fmt.Sprint(tc.k)}
		for r := 0; r < tc.n; r++ {
			count := algotest.CountCheck(func(id, _ int) int {
				if id < tc.k {
					return 3 * (tc.k - 1)
				}
				return 3 * tc.k
			})
			algotest.Sweep(t, Spec, []int{tc.n}, 10, algotest.Options{Requesters: []int{r}, Params: p, FIFO: true}, count)
		}
	}
}

// TestForgetBreaksSafety: with forget=true a coordinator that crashes and
// restarts votes again, and two processes end up in the CS at once.
// Reference: seed 002 point 4. Seed 146, N = 3: P1 crashes at 5ms, having
// granted P2, and restarts at 6ms with no vote; it then gives its vote to
// P0, which enters with P0's and P1's votes while P2 is in the CS with
// P1's (forgotten) vote and its own. The same run with forget=false keeps
// mutual exclusion and finishes.
func TestForgetBreaksSafety(t *testing.T) {
	const seed = 146
	crash := algotest.Crash{Proc: 1, At: 5 * time.Millisecond, RecoverAfter: time.Millisecond}
	opt := algotest.Options{N: 3, Seed: seed, Hold: 20 * time.Millisecond, Params: map[string]string{"forget": "true"},
		Crashes: []algotest.Crash{crash}}
	algotest.Expect(t, Spec, opt, analyze.MutexRealtime)
	opt.Params = nil
	if _, err := algotest.Run(Spec, opt); err != nil {
		t.Fatalf("seed %d, forget=false, %+v: %v", seed, crash, err)
	}
}

// TestForgetFalseKeepsSafety: whatever the crash time, a coordinator that
// keeps its vote never lets two processes in. Crashes lose messages, so
// runs may get stuck (seed 002 summary point 4); they must not break mutual
// exclusion.
func TestForgetFalseKeepsSafety(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		for _, at := range []time.Duration{2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond} {
			crash := algotest.Crash{Proc: int(seed % 3), At: at, RecoverAfter: time.Millisecond}
			_, err := algotest.Run(Spec, algotest.Options{N: 3, Seed: seed, Hold: 20 * time.Millisecond, Limit: time.Second,
				Crashes: []algotest.Crash{crash}})
			var f *algotest.Failure
			if errors.As(err, &f) && !f.Violates(analyze.MutexCausal) && f.Violates(analyze.Liveness) {
				continue
			}
			if err != nil {
				t.Fatalf("seed: %d, %+v: %v", seed, crash, err)
			}
		}
	}
}

// TestLivelock shows the risk of seed 002 points 5 and 6: with equal
// message delays (1ms) and a fixed back-off, attempts collide again and
// again, each denied by votes given to the others' attempts, and some
// processes never enter. Seed 2, N = 4, backoff=500us: P0 makes 3 of its
// 5 entries and the other three are still at 0 after a second, having
// retried thousands of times (not a deadlock: timers keep firing). The same seed with the
// default random back-off finishes.
func TestLivelock(t *testing.T) {
	const seed = 2
	opt := algotest.Options{N: 4, Seed: seed, Think: 1, Hold: 1, Entries: 5, MinDelay: time.Millisecond, MaxDelay: time.Millisecond,
		Limit: time.Second, Params: map[string]string{"backoff": "500us"}}
	res, err := algotest.Run(Spec, opt)
	var f *algotest.Failure
	if !errors.As(err, &f) || !f.Violates(analyze.Liveness) || f.Stuck {
		t.Fatalf("seed %d: got %v, want a liveness failure with timers still firing", seed, err)
	}
	starved := 0
	for _, e := range res.Entered {
		if e == 0 {
			starved++
		}
	}
	if starved < 2 || res.Sent[MsgRequest] < 1000 {
		t.Fatalf("seed %d: entries %v after %d requests; want processes starving while retrying", seed, res.Entered, res.Sent[MsgRequest])
	}
	t.Logf("seed %d: entries %v after %d requests", seed, res.Entered, res.Sent[MsgRequest])
	opt.Params = nil
	if _, err := algotest.Run(Spec, opt); err != nil {
		t.Fatalf("seed %d with a random back-off: %v", seed, err)
	}
}

func TestNewValidates(t *testing.T) {
	algotest.CheckParams(t, Spec, 4, []map[string]string{
		nil,
		{"coordinators": "1"}, {"coordinators": "4"},
		{"forget": "true"}, {"forget": "false"},
		{"backoff": "2ms"}, {"backoff": "0-2ms"}, {"backoff": "1000-5000"},
	}, []map[string]string{
		{"coordinators": "0"}, {"coordinators": "5"}, {"coordinators": "all"},
		{"forget": "yes"},
		{"backoff": "0"}, {"backoff": "5ms-1ms"}, {"backoff": "soon"},
		{"quorum": "3"},
	})
}

package ratoken

import (
	"fmt"
	"testing"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/algotest"
)

// TestScripts runs the interaction scripts in testdata; each block cites the
// rule it exercises. Rewrite with go test -update.
func TestScripts(t *testing.T) {
	algotest.RunScripts(t, Spec, "testdata")
}

// costCheck checks the cost seed 001 gives: an entry costs N messages, N-1
// requests and one token, or none when the process already has the token.
// So requests come in groups of N-1, there is one token per group, and no
// more than N messages per entry.
func costCheck(r *algotest.Result) error {
	n := len(r.Entered)
	entries := 0
	for _, e := range r.Entered {
		entries += e
	}
	req, tok := r.Sent[MsgRequest], r.Sent[MsgToken]
	if n == 1 {
		if r.Messages != 0 {
			return fmt.Errorf("N = 1 sent %v", r.Sent)
		}
		return nil
	}
	if req%(n-1) != 0 || tok != req/(n-1) || r.Messages > n*entries {
		return fmt.Errorf("sent %v for %d entries at N = %d: want N-1 requests and 1 token per entry that asked", r.Sent, entries, n)
	}
	return nil
}

// TestSweep runs the algorithm for many seeds and group sizes, with and
// without FIFO channels, checking mutual exclusion (one token), that every
// request is served, and the cost.
func TestSweep(t *testing.T) {
	algotest.SweepCases(t, Spec, []int{1, 2, 3, 5, 8}, 300, []algotest.Case{
		{Name: "any-order"},
		{Name: "fifo", Opt: algotest.Options{FIFO: true}},
		{Name: "initial-2", Opt: algotest.Options{Params: map[string]string{"initial": "2"}}, Sizes: []int{3, 5, 8}},
		{Name: "contended", Opt: algotest.Options{Think: 1, Entries: 5}},
	}, costCheck)
}

// TestNoMessagesWhileHolding is seed 001's "0 if it holds the token": a
// lone requester keeps the token between its entries.
func TestNoMessagesWhileHolding(t *testing.T) {
	res, err := algotest.Run(Spec, algotest.Options{N: 5, Seed: 3, Entries: 10, Requesters: []int{3}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Entered[3] != 10 || res.Messages != 5 {
		t.Fatalf("entries %v, messages %v: want 10 entries for 5 messages (one request round and one token)", res.Entered, res.Sent)
	}
}

func TestNewValidates(t *testing.T) {
	algotest.CheckConfigs(t, Spec, []algo.Config{
		{ID: 0, N: 1},
		{ID: 0, N: 3, Params: map[string]string{"initial": "2"}},
	}, []algo.Config{
		{ID: 0, N: 3, Params: map[string]string{"initial": "3"}},
		{ID: 0, N: 3, Params: map[string]string{"holder": "1"}},
	})
}

// TestRecoveredInitialHolder: a restart is not the system's initialization.
// Reference: seed 001 [RI1] gives P_x the token when everything starts; a
// process that comes back after a crash has NO-TOKEN, even P_x, or there
// would be two tokens. It gets the token again by asking ([RA1]).
func TestRecoveredInitialHolder(t *testing.T) {
	m := algotest.Build[*Machine](t, Spec, algo.Config{ID: 0, N: 3})
	m.Step(algo.Input{Kind: algo.Start})
	if m.state != tokenPresent {
		t.Fatalf("P0 starts in %v, want TOKEN-PRESENT ([RI1])", m.state)
	}
	// P0 crashes; the runtime builds a fresh machine and steps it with Recover.
	m = algotest.Build[*Machine](t, Spec, algo.Config{ID: 0, N: 3})
	m.Step(algo.Input{Kind: algo.Recover})
	if m.state != noToken || m.token != nil {
		t.Fatalf("recovered P0 is %v with token %v, want NO-TOKEN and none", m.state, m.token)
	}
	out := m.Step(algo.Input{Kind: algo.Request, Clock: 5})
	sends := 0
	for _, o := range out {
		if o.Kind == algo.Enter {
			t.Fatal("recovered P0 entered without the token")
		}
		if o.Kind == algo.Send && o.Msg.Type == MsgRequest {
			sends++
		}
	}
	if sends != 2 {
		t.Fatalf("outputs %v: want [RA1]'s request to the other 2", out)
	}
}

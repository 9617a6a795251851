package runner

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/trace"
)

const ms = time.Millisecond

// TestParseFaults: every kind reads into the fault it says, prints in
// canonical form, and the canonical form reads back to the same fault.
func TestParseFaults(t *testing.T) {
	for _, c := range []struct {
		spec, canon string
		want        Fault
	}{
		{"crash:2@500ms", "", Fault{Kind: FaultCrash, Proc: 2, At: 500 * ms}},
		{"crash:P2@500ms", "crash:2@500ms", Fault{Kind: FaultCrash, Proc: 2, At: 500 * ms}},
		{"crash:leader@1s", "crash:leader@1s", Fault{Kind: FaultCrash, Proc: Leader, At: time.Second}},
		{"crash:coordinator@0s", "", Fault{Kind: FaultCrash, Proc: Coordinator}},
		{"crash:token@300ms", "", Fault{Kind: FaultCrash, Proc: TokenHolder, At: 300 * ms}},
		{"crash:cs@0s", "", Fault{Kind: FaultCrash, Proc: InCS}},
		{"crash:2@enter#3", "", Fault{Kind: FaultCrash, Proc: 2, Trigger: Trigger{Event: "enter", Count: 3}}},
		{"crash:2@enter", "crash:2@enter#1", Fault{Kind: FaultCrash, Proc: 2, Trigger: Trigger{Event: "enter", Count: 1}}},
		{"crash:0@send:grant#1", "", Fault{Kind: FaultCrash, Proc: 0, Trigger: Trigger{Event: "send", Type: "grant", Count: 1}}},
		{"recover:2@900ms", "", Fault{Kind: FaultRecover, Proc: 2, At: 900 * ms}},
		{"restart:2:amnesia@1s", "recover:2:amnesia@1s", Fault{Kind: FaultRecover, Proc: 2, At: time.Second, Amnesia: true}},
		{"recover:leader@+50ms", "", Fault{Kind: FaultRecover, Proc: Leader, At: 50 * ms, AfterCrash: true}},
		{"pause:4@600ms-1s", "", Fault{Kind: FaultPause, Proc: 4, At: 600 * ms, End: time.Second}},
		{"pause:leader@600ms+400ms", "pause:leader@600ms-1s", Fault{Kind: FaultPause, Proc: Leader, At: 600 * ms, End: time.Second}},
		{"skew:1:+5ms", "", Fault{Kind: FaultSkew, Proc: 1, Skew: 5 * ms}},
		{"skew:1:5ms@1s", "skew:1:+5ms@1s", Fault{Kind: FaultSkew, Proc: 1, Skew: 5 * ms, At: time.Second}},
		{"skew:P3:-2ms", "skew:3:-2ms", Fault{Kind: FaultSkew, Proc: 3, Skew: -2 * ms}},
		{"loss:20%", "", Fault{Kind: FaultLoss, Rate: 0.2}},
		{"loss:0.5:from=1:to=2+0:type=request@1s-2s", "loss:50%:from=1:to=0+2:type=request@1s-2s",
			Fault{Kind: FaultLoss, Rate: 0.5, From: []int{1}, To: []int{0, 2}, Type: "request", At: time.Second, End: 2 * time.Second}},
		{"loss:100%:type=token@1s", "", Fault{Kind: FaultLoss, Rate: 1, Type: "token", At: time.Second}},
		{"delay:20ms", "", Fault{Kind: FaultDelay, Dist: Fixed(20 * ms)}},
		{"delay:10ms-50ms:to=3", "", Fault{Kind: FaultDelay, Dist: Dist{Min: 10 * ms, Max: 50 * ms}, To: []int{3}}},
		{"delay:exp=20ms@1s+1s", "delay:exp=20ms@1s-2s", Fault{Kind: FaultDelay, Dist: Dist{Mean: 20 * ms}, At: time.Second, End: 2 * time.Second}},
		{"reorder", "", Fault{Kind: FaultReorder, Dist: defaultJitter}},
		{"jitter:0s-10ms:from=1", "reorder:0s-10ms:from=1", Fault{Kind: FaultReorder, Dist: Dist{Max: 10 * ms}, From: []int{1}}},
		{"reorder:to=2", "", Fault{Kind: FaultReorder, Dist: defaultJitter, To: []int{2}}},
		{"duplicate:10%", "", Fault{Kind: FaultDuplicate, Rate: 0.1}},
		{"partition:0+1:2+3+4@1s-2s", "", Fault{Kind: FaultPartition, Groups: [][]int{{0, 1}, {2, 3, 4}}, At: time.Second, End: 2 * time.Second}},
		{"partition:1+0@500ms", "partition:0+1@500ms", Fault{Kind: FaultPartition, Groups: [][]int{{0, 1}}, At: 500 * ms}},
		{"isolate:leader@600ms-1.5s", "", Fault{Kind: FaultIsolate, Proc: Leader, At: 600 * ms, End: 1500 * ms}},
		{"cut:from=4:to=0+1@500ms-1s", "", Fault{Kind: FaultCut, From: []int{4}, To: []int{0, 1}, At: 500 * ms, End: time.Second}},
		{"heal@2s", "", Fault{Kind: FaultHeal, At: 2 * time.Second}},
	} {
		got, err := ParseFaults(c.spec)
		if err != nil {
			t.Errorf("%s: %v", c.spec, err)
			continue
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0], c.want) {
			t.Errorf("%s: got %+v\n want %+v", c.spec, got, c.want)
			continue
		}
		canon := c.canon
		if canon == "" {
			canon = c.spec
		}
		if s := got[0].String(); s != canon {
			t.Errorf("%s prints as %s, want %s", c.spec, s, canon)
		}
		back, err := ParseFaults(got[0].String())
		if err != nil || len(back) != 1 || !reflect.DeepEqual(back[0], got[0]) {
			t.Errorf("%s does not round-trip: %+v %v", got[0], back, err)
		}
	}
	all, err := ParseFaults("crash:2@500ms, recover:P2@1s crash:leader@2s;loss:1%")
	if err != nil || len(all) != 4 {
		t.Fatalf("a list: %v %v", all, err)
	}
}

// TestParseFaultErrors: an error names the fault, the token that is wrong
// and what was expected there.
func TestParseFaultErrors(t *testing.T) {
	for spec, msg := range map[string]string{
		"crash":                         `fault "crash": want a process after "crash:"`,
		"explode:1@1s":                  `unknown fault "explode" (known: crash, recover, pause, skew, loss, delay, reorder, duplicate, partition, isolate, cut, heal)`,
		"crash:1":                       "no time: want crash:WHO@TIME",
		"crash:x@1s":                    `process "x": want a number such as 2 or P2, or leader, coordinator, token or cs`,
		"crash:-2@1s":                   `process "-2"`,
		"crash:1@soon":                  `time "soon": want a duration since the start, e.g. 500ms`,
		"crash:1@enter#0":               `"enter#0": want a count from 1 after #, e.g. enter#3`,
		"crash:1@send:#2":               `"send:#2": want send:TYPE#K`,
		"crash:1@send:grant#x":          `"send:grant#x": want a count from 1`,
		"recover:2:forgetful@1s":        `"forgetful": want amnesia or nothing after the process`,
		"recover:2@+soon":               `delay "soon": want a duration after the crash, e.g. +50ms`,
		"pause:2@1s":                    `window "1s": a pause needs an end, e.g. 600ms-1s or 600ms+400ms`,
		"pause:2@2s-1s":                 `window "2s-1s": its end must come after its start`,
		"pause:2":                       "no window: want pause:WHO@FROM-TO",
		"skew:1":                        "want an offset such as +5ms or -5ms",
		"skew:1:0s":                     `offset "0s": want a duration such as +5ms or -5ms`,
		"skew:1:+9223372036854775807ns": `offset "+9223372036854775807ns": at most 24h0m0s either way`, // issue 22: wrapped wall_ns
		"skew:1:-24h1ns":                `offset "-24h1ns": at most 24h0m0s either way`,
		"loss":                          `want a probability such as 20% or 0.2 after "loss:"`,
		"loss:2O%":                      `rate "2O%": want a probability above 0 and at most 1, such as 20% or 0.2`,
		"loss:150%":                     `rate "150%"`,
		"loss:0":                        `rate "0"`,
		"loss:10%:form=1":               `"form=1": want from=SET, to=SET or type=NAME: want loss:RATE[LINK][@WINDOW]`,
		"loss:10%:from=1:from=2":        `"from=2": from given twice`,
		"loss:10%:to=1+x":               `to: set "1+x": process "x": want a number such as 2 or P2 (a set is 0+1+2)`,
		"loss:10%:to=1+1":               `set "1+1": P1 named twice`,
		"delay:soon":                    `delay "soon": want 20ms, 10ms-50ms or exp=20ms`,
		"delay:exp=0s":                  `delay "exp=0s"`,
		"reorder:x-y":                   `jitter "x-y"`,
		"partition":                     "want a group of processes such as 0+1",
		"partition:0+1@1s-x":            `window "1s-x": want FROM-TO or FROM+LENGTH`,
		"cut:from=1":                    "want both from=SET and to=SET",
		"cut:from=1:to=2:type=ok":       `"type=ok": want from=SET or to=SET`,
		"heal":                          "no time: want heal@TIME",
		"heal:2@1s":                     `"2": unexpected`,
		"isolate:2:3@1s":                `"3": unexpected`,
		"crash:2@500ms:now":             `time "500ms:now"`,
		"partition:0+1:x@1s":            `set "x"`,
		"loss:10%:type=@1s":             `"type=": want a value after type=`,
		"duplicate:10%:to=1:to=1+2":     "to given twice",
	} {
		_, err := ParseFaults(spec)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: err %v, want %q", spec, err, msg)
		}
	}
}

// TestFaultValidate: a fault must fit the run: its processes exist, the
// part it aims at is one the algorithm has, the message type one it sends.
func TestFaultValidate(t *testing.T) {
	central := &algo.Spec{Name: "central", Kind: algo.MutualExclusion, MsgTypes: []string{"request", "grant", "release"},
		Parts: func(map[string]string) algo.Parts { return algo.Parts{Coordinator: 0, TokenHolder: algo.NoProc} }}
	ricart := &algo.Spec{Name: "ricart-agrawala", Kind: algo.MutualExclusion, MsgTypes: []string{"request", "reply"}}
	bully := &algo.Spec{Name: "bully", Kind: algo.Election, MsgTypes: []string{"election"}, Parts: algo.ElectionParts}
	for _, c := range []struct {
		spec string
		algo *algo.Spec
		want string
	}{
		{"crash:2@0s", ricart, ""},
		{"crash:3@0s", ricart, "process 3 does not exist (there are 3: 0..2)"},
		{"crash:leader@1s", bully, ""},
		{"crash:leader@1s", ricart, "ricart-agrawala elects no leader in this configuration: name a process instead (e.g. crash:2@1s)"},
		{"isolate:token@1s-2s", bully, "bully has no token in this configuration: name a process instead (e.g. isolate:2@1s-2s)"},
		{"pause:coordinator@1s-2s", central, ""},
		{"pause:coordinator@1s-2s", ricart, "ricart-agrawala has no single coordinator"},
		{"crash:token@1s", central, "central has no token"},
		{"crash:cs@1s", central, ""},
		{"crash:cs@1s", bully, "bully has no critical section"},
		{"crash:1@enter#2", bully, "bully has no critical section to enter"},
		{"crash:1@send:grant#1", central, ""},
		{"crash:1@send:grunt#1", central, `central sends no "grunt" messages (it sends: request, grant, release)`},
		{"loss:10%:type=reply", central, `central sends no "reply" messages`},
		{"loss:10%:from=0:to=5", central, "to: process 5 does not exist"},
		{"partition:0+1:1+2", central, "P1 is in two groups"},
		{"partition:0+1+2", central, "group 0+1+2 holds every process: nothing is cut off"},
		{"skew:leader:+1ms", bully, "name the process"},
		{"recover:leader@1s", bully, "a recover of the leader needs a time after its crash (recover:leader@+50ms)"},
	} {
		fs, err := ParseFaults(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		err = fs[0].validate(3, c.algo, c.algo.PartsOf(nil))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s on %s: %v, want %q", c.spec, c.algo.Name, err, c.want)
		}
		// A fault the message suggests instead is one dmx takes (it once
		// suggested crash:2, which has no time and is refused).
		if _, eg, ok := strings.Cut(fmt.Sprint(err), "(e.g. "); ok {
			eg, _, _ = strings.Cut(eg, ")")
			if fs, err := ParseFaults(eg); err != nil {
				t.Errorf("%s on %s suggests %s: %v", c.spec, c.algo.Name, eg, err)
			} else if err := fs[0].validate(3, c.algo, c.algo.PartsOf(nil)); err != nil {
				t.Errorf("%s on %s suggests %s: %v", c.spec, c.algo.Name, eg, err)
			}
		}
	}
	// A skew that did not come through the parser (a scenario's plan, a
	// trace's faults) is bounded too.
	huge := Fault{Kind: FaultSkew, Proc: 1, Skew: time.Duration(math.MaxInt64)}
	if err := huge.validate(3, ricart, ricart.PartsOf(nil)); err == nil || !strings.Contains(err.Error(), "at most 24h0m0s either way") {
		t.Errorf("skew of %v: %v", huge.Skew, err)
	}
}

// TestValidateFaults: a schedule is refused when a part of it can never
// apply: a recover with no crash before it, a heal with nothing to heal.
func TestValidateFaults(t *testing.T) {
	for spec, want := range map[string]string{
		"crash:1@1s,recover:1@2s":                 "",
		"recover:1@2s,crash:1@1s":                 "",
		"crash:1@1s,recover:1@1s":                 "",
		"recover:1@1s,crash:1@1s":                 "fault recover:1@1s: no crash before it could bring P1 down: nothing to recover",
		"recover:1@2s":                            "no crash before it could bring P1 down",
		"crash:2@1s,recover:1@2s":                 "no crash before it could bring P1 down",
		"crash:leader@1s,recover:1@2s":            "",
		"crash:1@enter#2,recover:1@100ms":         "",
		"crash:leader@1s,recover:leader@+50ms":    "",
		"recover:leader@+50ms,crash:leader@1s":    "no crash:leader before it to count from",
		"crash:2@1s,recover:leader@+1s":           "no crash:leader before it to count from",
		"partition:0+1@1s-2s,heal@1500ms":         "",
		"partition:0+1@1s,heal@3s":                "",
		"partition:0+1@1s-2s,heal@2s":             "fault heal@2s: no partition, isolation or cut is in force then: nothing to heal",
		"heal@1s":                                 "nothing to heal",
		"loss:10%,heal@1s":                        "nothing to heal",
		"isolate:2@500ms,cut:from=1:to=2,heal@1s": "",
	} {
		fs, err := ParseFaults(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		err = validateFaults(fs)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
}

// TestFaultHelp: the help names every kind with an example that parses.
func TestFaultHelp(t *testing.T) {
	h := FaultHelp()
	for _, k := range faultKinds {
		if !strings.Contains(h, k.form) || !strings.Contains(h, "e.g. "+k.example) {
			t.Errorf("help lacks %s", k.kind)
		}
		fs, err := ParseFaults(k.example)
		if err != nil || len(fs) != 1 || fs[0].Kind != k.kind {
			t.Errorf("%s's example %s: %v %v", k.kind, k.example, fs, err)
		}
	}
}

// FuzzParseFaults: the parser never panics, and a fault it reads prints in
// a canonical form that reads back to the same fault and prints the same.
func FuzzParseFaults(f *testing.F) {
	for _, k := range faultKinds {
		f.Add(k.example)
	}
	f.Add("crash:2@send:grant#3,loss:0.5:from=1+2:to=0:type=x@1s+2s")
	f.Add("partition:0+1:2@1s-")
	f.Fuzz(func(t *testing.T, spec string) {
		fs, err := ParseFaults(spec)
		if err != nil {
			return
		}
		for _, f := range fs {
			back, err := ParseFaults(f.String())
			if err != nil || len(back) != 1 || !reflect.DeepEqual(back[0], f) || back[0].String() != f.String() {
				t.Fatalf("%q: %+v prints as %q, which reads back as %+v, %v", spec, f, f.String(), back, err)
			}
		}
	})
}

// TestLeaderIsFollowed: a fault aimed at the leader aims at the live
// process that live processes most recently decided leads. Over real
// processes a process that lagged (off the CPU on a loaded machine) can
// read its old leader's coordinator message after that leader was killed
// and the others elected another: its decision is the most recent, but
// names a dead process, and the leader is the one the others follow.
func TestLeaderIsFollowed(t *testing.T) {
	w := newRoleWatch(4, algo.Parts{Leader: true})
	seq := map[int]int64{}
	ev := func(p int, k trace.Kind, peer int) {
		seq[p]++
		w.observe(&trace.Event{Proc: p, Seq: seq[p], Kind: k, Peer: peer})
	}
	for p := range 4 {
		ev(p, trace.KindStart, trace.NoPeer)
	}
	leader := func(want int) {
		t.Helper()
		got, ok := w.holder(Leader)
		if !ok {
			got = -1
		}
		if got != want {
			t.Fatalf("leader P%d, want P%d", got, want)
		}
	}
	leader(-1)
	for _, p := range []int{3, 1, 2} {
		ev(p, trace.KindLeader, 3)
	}
	leader(3)
	ev(3, trace.KindCrash, trace.NoPeer)
	leader(-1) // everyone follows a dead leader
	ev(2, trace.KindLeader, 2)
	ev(1, trace.KindLeader, 2)
	leader(2)
	ev(0, trace.KindLeader, 3) // P0 lagged: P3's old coordinator message
	leader(2)
	ev(2, trace.KindCrash, trace.NoPeer)
	leader(-1) // P1 follows the dead P2, P0 the dead P3
	ev(3, trace.KindRecover, trace.NoPeer)
	leader(-1) // P3 is back, but nobody has decided it leads since
	ev(3, trace.KindLeader, 3)
	leader(3)
}

// TestFaultTargets: every kind of the table says what it acts on, and the
// injector and the drivers go by it: process and clock faults are the
// ones a run waits for, network faults (but heal) are judged per message.
func TestFaultTargets(t *testing.T) {
	want := map[FaultKind]Target{
		FaultCrash: TargetProcess, FaultRecover: TargetProcess, FaultPause: TargetProcess,
		FaultSkew: TargetClock,
		FaultLoss: TargetNetwork, FaultDelay: TargetNetwork, FaultReorder: TargetNetwork, FaultDuplicate: TargetNetwork,
		FaultPartition: TargetNetwork, FaultIsolate: TargetNetwork, FaultCut: TargetNetwork, FaultHeal: TargetNetwork,
	}
	if len(faultKinds) != len(want) {
		t.Fatalf("%d kinds in the table, want %d", len(faultKinds), len(want))
	}
	for _, k := range faultKinds {
		f := Fault{Kind: k.kind}
		if got := k.kind.Target(); got != want[k.kind] {
			t.Errorf("%s: target %q, want %q", k.kind, got, want[k.kind])
		}
		if f.process() != (want[k.kind] != TargetNetwork) {
			t.Errorf("%s: process() = %v", k.kind, f.process())
		}
		if f.Network() != (want[k.kind] == TargetNetwork && k.kind != FaultHeal) {
			t.Errorf("%s: Network() = %v", k.kind, f.Network())
		}
		if err := SimApplies(&f); err != nil {
			t.Errorf("the simulator refuses %s: %v", k.kind, err)
		}
	}
	if FaultKind("flood").Target() != "" {
		t.Error("an unknown kind has a target")
	}
}

// TestCheckFaults: a driver that cannot carry out a fault (here one that,
// like a kernel's packet filter, cannot tell a message's type) refuses
// the plan before it starts, naming the fault and why.
func TestCheckFaults(t *testing.T) {
	faults, err := ParseFaults("crash:1@10ms,loss:20%:type=request@1s")
	if err != nil {
		t.Fatal(err)
	}
	p := Plan{Faults: faults}
	kernel := func(f *Fault) error {
		if f.Type != "" {
			return fmt.Errorf("the kernel cannot tell a message's type")
		}
		return nil
	}
	err = p.CheckFaults(kernel)
	var pe *PlanError
	if !errors.As(err, &pe) || pe.Field != "fault" || pe.Value != "loss:20%:type=request@1s" {
		t.Fatalf("CheckFaults: %v, want a PlanError on the typed loss", err)
	}
	if want := "fault loss:20%:type=request@1s: the kernel cannot tell a message's type"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if err := p.CheckFaults(SimApplies); err != nil {
		t.Errorf("the simulator: %v", err)
	}
}

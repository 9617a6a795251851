package runner_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/udp"
	"github.com/dmxlab/dmx/trace"
)

func entries(n int) *int { return &n }

// planCases are plans of both drivers that exercise every part runs.params
// records.
func planCases() map[string]runner.Plan {
	cases := map[string]runner.Plan{}
	sim := runner.NewPlan(runner.DriverSim)
	sim.Spec, sim.Seed = registry.Lookup("central"), 42
	cases["sim defaults"] = sim

	p := sim
	p.Spec, p.N, p.Seed = registry.Lookup("maekawa"), 4, 7
	p.Params = map[string]string{"variant": "inquire"}
	p.Workload.Resources = []string{"printer", "scanner"}
	p.Workload.Nested, p.Workload.Order = true, runner.OrderReverseOdd
	p.Workload.Contention = runner.ContentionHigh
	p.Workload.Procs = map[int]runner.ProcWorkload{1: {Entries: entries(0)}, 3: {Think: "1ms", Resources: []string{"scanner", "printer"}}}
	p.Faults = []runner.Fault{{Kind: runner.FaultCrash, Proc: 2, At: 20 * time.Millisecond}, {Kind: runner.FaultRecover, Proc: 2, At: 60 * time.Millisecond}}
	p.Sim.Delay, p.Sim.Reorder = runner.Dist{Min: time.Millisecond, Max: 3 * time.Millisecond}, true
	cases["sim everything"] = p

	p = sim
	p.Workload.Contention = runner.ContentionNone
	p.Workload.Hold = runner.Fixed(time.Millisecond)
	cases["sim no contention"] = p

	udpPlan := runner.NewPlan(runner.DriverUDP)
	udpPlan.Spec, udpPlan.Seed = registry.Lookup("ricart-agrawala"), 9
	cases["udp defaults"] = udpPlan

	p = udpPlan
	p.Spec, p.N = registry.Lookup("bully"), 3
	p.Params = map[string]string{"initiators": "all"}
	p.UDP.BasePort = 40000
	p.Faults = []runner.Fault{{Kind: runner.FaultCrash, Proc: runner.Leader, At: time.Second}}
	cases["udp election"] = p

	// A length that is not the default: an election's trace depends on
	// it, so the row holds it (and the line that runs the run again).
	p = sim
	p.Spec, p.Duration = registry.Lookup("chang-roberts"), 700*time.Millisecond
	cases["sim election for 700ms"] = p
	p = udpPlan
	p.Duration = 5 * time.Second
	cases["udp cut short"] = p

	// Every kind of fault, raw channels: runs.faults holds the canonical
	// text, which reads back to the same faults.
	p = sim
	p.Spec = registry.Lookup("token-ring")
	p.Params = map[string]string{"regenerate": "true"}
	p.Channels = runner.ChannelsRaw
	all, err := runner.ParseFaults("crash:token@10ms,recover:token:amnesia@+5ms,crash:1@enter#2,crash:2@send:token#3,recover:2@1s," +
		"pause:leader@1s-2s,skew:3:-4ms@5ms,loss:20%:from=1:to=0+2:type=token@1s-2s,delay:exp=3ms,reorder:0s-1ms:to=4,duplicate:5%," +
		"partition:0+1:2@3s-4s,isolate:leader@5s,cut:from=4:to=0@6s-7s,heal@5500ms")
	if err != nil {
		panic(err)
	}
	p.Faults = all
	cases["sim every fault"] = p
	return cases
}

// oldRunParams is how dmx encoded runs.params before runner.Plan existed
// (cmd/dmx's runFlags.runRow): the encoding must not change, since the
// checksums of recorded traces cover it.
func oldRunParams(p runner.Plan) []byte {
	wl := p.Workload
	m := map[string]any{"procs": wl.Procs, "entries": wl.Entries, "resources": wl.Resources, "think": wl.Think.String(), "hold": wl.Hold.String(), "contention": wl.Contention.String()}
	if wl.Nested {
		m["nested"], m["order"] = true, wl.Order
	}
	if len(p.Params) > 0 {
		m["algorithm"] = p.Params
	}
	if p.Channels == runner.ChannelsRaw {
		m["channels"] = "raw" // new with raw channels; absent for reliable ones, as before
	}
	if p.Duration != (runner.Plan{Spec: p.Spec, Driver: p.Driver}).WithDefaults().Duration {
		m["duration"] = p.Duration.String() // new with durations recorded; absent for the default, as before
	}
	if p.Driver == runner.DriverSim {
		m["delay"] = p.Sim.Delay.String()
		m["reorder"] = p.Sim.Reorder
	} else {
		m["port"] = p.UDP.BasePort
	}
	b, _ := json.Marshal(m)
	return b
}

// TestPlanRunRow: a plan's runs row is what dmx has always recorded, and
// reads back into the same plan (with the defaults of what runs.params
// does not hold), for both drivers.
func TestPlanRunRow(t *testing.T) {
	for name, p := range planCases() {
		t.Run(name, func(t *testing.T) {
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			row := p.RunRow()
			// The algorithm parameters recorded are those in effect: a real
			// run's defaults too.
			if want := oldRunParams(p.WithDefaults()); string(row.Params) != string(want) {
				t.Fatalf("runs.params changed:\n got %s\nwant %s", row.Params, want)
			}
			if row.Algorithm != p.Spec.Name || row.Nodes != p.N || row.Seed != p.Seed || row.Mode != string(p.Driver) {
				t.Fatalf("row %+v does not say the plan's algorithm, nodes, seed and driver", row)
			}
			back, err := runner.PlanFromRun(row, registry.Lookup)
			if err != nil {
				t.Fatal(err)
			}
			want := p.WithDefaults()
			if !reflect.DeepEqual(back, want) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", back, want)
			}
			if again := back.RunRow(); string(again.Params) != string(row.Params) || string(again.Faults) != string(row.Faults) {
				t.Fatalf("row of the plan read back differs:\n%s %s\n%s %s", again.Params, again.Faults, row.Params, row.Faults)
			}
		})
	}
}

func TestPlanFromRunErrors(t *testing.T) {
	good := planCases()["sim defaults"].RunRow()
	for _, c := range []struct {
		name string
		edit func(*trace.Run)
		want string
	}{
		{"imported", func(r *trace.Run) { r.Mode = "import" }, `mode "import"`},
		{"unknown algorithm", func(r *trace.Run) { r.Algorithm = "paxos" }, `unknown algorithm "paxos"`},
		{"bad params", func(r *trace.Run) { r.Params = []byte("{") }, "params"},
		{"bad think", func(r *trace.Run) { r.Params = []byte(`{"think": "soon"}`) }, "think"},
		{"bad contention", func(r *trace.Run) { r.Params = []byte(`{"think": "1ms", "hold": "1ms", "contention": "some"}`) }, "contention"},
		{"bad fault", func(r *trace.Run) { r.Faults = []byte(`["explode:1@1s"]`) }, "unknown fault"},
		{"bad duration", func(r *trace.Run) {
			r.Params = []byte(`{"think": "1ms", "hold": "1ms", "contention": "high", "duration": "-1s"}`)
		}, `duration "-1s"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			row := good
			c.edit(&row)
			if _, err := runner.PlanFromRun(row, registry.Lookup); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

// TestPlanValidate: every check a run needs is made before it starts, and
// its error names the part of the plan in the library's terms.
func TestPlanValidate(t *testing.T) {
	base := runner.NewPlan(runner.DriverSim)
	base.Spec, base.Seed = registry.Lookup("ricart-agrawala"), 1
	udpPlan := runner.NewPlan(runner.DriverUDP)
	udpPlan.Spec, udpPlan.Seed = registry.Lookup("central"), 1
	for _, c := range []struct {
		name string
		edit func(*runner.Plan)
		from runner.Plan
		want string
	}{
		{"no algorithm", func(p *runner.Plan) { p.Spec = nil }, base, "no algorithm"},
		{"driver", func(p *runner.Plan) { p.Driver = "tcp" }, base, `driver "tcp": want sim or udp`},
		{"no nodes", func(p *runner.Plan) { p.N = 0 }, base, "nodes 0: need at least 1"},
		{"too many nodes", func(p *runner.Plan) { p.N = 1001 }, base, "nodes 1001: at most 1000"},
		{"duration", func(p *runner.Plan) { p.Duration = -time.Second }, base, "duration -1s: must not be negative"},
		{"limit", func(p *runner.Plan) { p.Sim.Limit = -time.Second }, base, "limit -1s: must not be negative"},
		{"stall", func(p *runner.Plan) { p.UDP.Stall = -time.Second }, udpPlan, "stall -1s: must not be negative"},
		{"delay", func(p *runner.Plan) { p.Sim.Delay = runner.Fixed(1000 * time.Hour) }, base, "delay 1000h0m0s: at most 24h0m0s"},
		{"entries", func(p *runner.Plan) { p.Workload.Entries = -1 }, base, "entries -1: must be 0 or more"},
		{"think", func(p *runner.Plan) { p.Workload.Think = runner.Fixed(1000 * time.Hour) }, base, "think 1000h0m0s: at most"},
		{"resources", func(p *runner.Plan) { p.Workload.Resources = []string{"a", "a"} }, base, `resources: "a" named twice`},
		{"order", func(p *runner.Plan) { p.Workload.Order = "sideways" }, base, `order "sideways": want same, reverse-odd or random`},
		{"contention", func(p *runner.Plan) { p.Workload.Contention = 9 }, base, "contention 9: want random, none or high"},
		{"procs", func(p *runner.Plan) { p.Workload.Procs = map[int]runner.ProcWorkload{7: {}} }, base, "procs P7: not a process of this run (0..4)"},
		{"proc entries", func(p *runner.Plan) { p.Workload.Procs = map[int]runner.ProcWorkload{1: {Entries: entries(-2)}} }, base, "procs P1: entries -2"},
		{"no parameters", func(p *runner.Plan) { p.Params = map[string]string{"timout": "1"} }, base, "parameter timout: ricart-agrawala takes no parameters"},
		{"unknown parameter", func(p *runner.Plan) { p.Params = map[string]string{"coordinater": "1"} }, udpPlan, "parameter coordinater: central has no such parameter (it has: coordinator, failover"},
		{"parameter value", func(p *runner.Plan) { p.Params = map[string]string{"failover": "paxos"} }, udpPlan, "central: "},
		{"fault process", func(p *runner.Plan) { p.Faults = []runner.Fault{{Kind: runner.FaultCrash, Proc: 5}} }, base, "fault crash:5@0s: process 5 does not exist (there are 5: 0..4)"},
		{"recover at leader", func(p *runner.Plan) { p.Faults = []runner.Fault{{Kind: runner.FaultRecover, Proc: runner.Leader}} }, base, "a recover of the leader needs a time after its crash"},
		{"crash of a leader the algorithm has not", func(p *runner.Plan) { p.Faults = []runner.Fault{{Kind: runner.FaultCrash, Proc: runner.Leader}} }, base, "fault crash:leader@0s: ricart-agrawala elects no leader in this configuration"},
		{"recover with no crash", func(p *runner.Plan) { p.Faults = []runner.Fault{{Kind: runner.FaultRecover, Proc: 2, At: time.Second}} }, base, "fault recover:2@1s: no crash before it could bring P2 down"},
		{"order without nested", func(p *runner.Plan) { p.Workload.Order = runner.OrderReverseOdd }, base, "order reverse-odd: the lock order of nested entries"},
		{"channels", func(p *runner.Plan) { p.Channels = "lossy" }, base, "channels lossy: want reliable or raw"},
		{"port", func(p *runner.Plan) { p.UDP.BasePort = 65534 }, udpPlan, "base port 65534: nodes would listen on ports 65534..65538, outside 1..65535"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.from.Validate(); err != nil {
				t.Fatalf("the unedited plan: %v", err)
			}
			p := c.from
			c.edit(&p)
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
			if p.Driver != runner.DriverSim && p.Driver != runner.DriverUDP {
				return
			}
			// The drivers refuse it the same way, before starting anything.
			var serr error
			if p.Driver == runner.DriverUDP {
				_, serr = udp.Launch(t.Context(), p, &runner.Collector{}, udp.LaunchHooks{})
			} else {
				_, serr = runner.Simulate(p, &runner.Collector{}, nil)
			}
			if serr == nil || serr.Error() != err.Error() {
				t.Fatalf("driver: %v, want %v", serr, err)
			}
		})
	}
}

// TestPlanDefaults: the defaults of each driver, side by side.
func TestPlanDefaults(t *testing.T) {
	election := registry.Lookup("bully")
	mutex := registry.Lookup("central")
	for _, c := range []struct {
		name string
		p    runner.Plan
		want func(runner.Plan) bool
	}{
		{"sim election lasts 2s", runner.Plan{Driver: runner.DriverSim, Spec: election}, func(p runner.Plan) bool { return p.Duration == 2*time.Second }},
		{"udp election lasts 2s", runner.Plan{Driver: runner.DriverUDP, Spec: election}, func(p runner.Plan) bool { return p.Duration == 2*time.Second }},
		{"sim mutex has no duration", runner.Plan{Driver: runner.DriverSim, Spec: mutex}, func(p runner.Plan) bool { return p.Duration == 0 }},
		{"udp mutex is cut short at 2m", runner.Plan{Driver: runner.DriverUDP, Spec: mutex}, func(p runner.Plan) bool { return p.Duration == 2*time.Minute }},
		{"sim limit 10m", runner.Plan{Spec: mutex}, func(p runner.Plan) bool { return p.Driver == runner.DriverSim && p.Sim.Limit == 10*time.Minute }},
		// ricart-agrawala, 5 x 90,000 entries, is expected to take about 31
		// simulated minutes: a fixed 10 minutes cut it short.
		{"sim limit grows with the run", runner.Plan{Spec: registry.Lookup("ricart-agrawala"), N: 5, Workload: bigWorkload()},
			func(p runner.Plan) bool { return p.Sim.Limit >= 3*time.Hour }},
		{"a sim limit given stays", runner.Plan{Spec: mutex, N: 5, Workload: bigWorkload(), Sim: runner.SimOptions{Limit: time.Minute}},
			func(p runner.Plan) bool { return p.Sim.Limit == time.Minute }},
		{"sim linger 4 delays", runner.Plan{Spec: mutex, Sim: runner.SimOptions{Delay: runner.Fixed(3 * time.Millisecond)}}, func(p runner.Plan) bool { return p.Sim.Linger == 12*time.Millisecond }},
		{"sim linger at least 1ms", runner.Plan{Spec: mutex}, func(p runner.Plan) bool { return p.Sim.Linger == time.Millisecond }},
		{"udp stall 5s, linger 200ms", runner.Plan{Driver: runner.DriverUDP, Spec: mutex}, func(p runner.Plan) bool {
			return p.UDP.Stall == 5*time.Second && p.UDP.Linger == 200*time.Millisecond
		}},
		{"sim slot", runner.Plan{Spec: mutex, Sim: runner.SimOptions{Delay: runner.Fixed(2 * time.Millisecond)}, Workload: runner.Workload{Contention: runner.ContentionNone, Hold: runner.Fixed(time.Millisecond)}},
			func(p runner.Plan) bool { return p.Workload.Slot == 14*time.Millisecond }},
		{"udp slot", runner.Plan{Driver: runner.DriverUDP, Spec: mutex, Workload: runner.Workload{Contention: runner.ContentionNone, Hold: runner.Fixed(time.Millisecond)}},
			func(p runner.Plan) bool { return p.Workload.Slot == 21*time.Millisecond }},
		{"a slot given stays", runner.Plan{Spec: mutex, Workload: runner.Workload{Contention: runner.ContentionNone, Slot: time.Second}},
			func(p runner.Plan) bool { return p.Workload.Slot == time.Second }},
	} {
		if got := c.p.WithDefaults(); !c.want(got) {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
}

// bigWorkload is the default workload with 90,000 entries a process.
func bigWorkload() runner.Workload {
	w := runner.NewPlan(runner.DriverSim).Workload
	w.Entries = 90000
	return w
}

// TestPlanDefaultParams: real processes start from roomier time-outs than
// the simulator (which keeps the algorithms' own), where the algorithm in
// the variant chosen has the parameter; what the plan sets wins; the run's
// row records them and the rerun line does not repeat them.
func TestPlanDefaultParams(t *testing.T) {
	for _, c := range []struct {
		driver runner.Driver
		algo   string
		params map[string]string
		want   map[string]string
	}{
		{runner.DriverSim, "bully", nil, nil},
		{runner.DriverUDP, "bully", nil, map[string]string{"fd-period": "50ms", "fd-allowance": "200ms", "fd-stall": "discount", "timeout": "250ms"}},
		{runner.DriverUDP, "bully", map[string]string{"timeout": "1s"}, map[string]string{"fd-period": "50ms", "fd-allowance": "200ms", "fd-stall": "discount", "timeout": "1s"}},
		{runner.DriverUDP, "chang-roberts", nil, map[string]string{"fd-period": "50ms", "fd-allowance": "200ms", "fd-stall": "discount", "timeout": "600ms"}},
		{runner.DriverUDP, "lease", nil, map[string]string{"lease": "500ms"}},
		{runner.DriverUDP, "central", nil, nil},
		{runner.DriverUDP, "central", map[string]string{"failover": "ring"}, map[string]string{"failover": "ring", "fd-period": "50ms", "fd-allowance": "200ms", "fd-stall": "discount", "timeout": "600ms"}},
		{runner.DriverUDP, "token-ring", map[string]string{"regenerate": "true"},
			map[string]string{"regenerate": "true", "fd-period": "50ms", "fd-allowance": "200ms", "fd-stall": "discount", "timeout": "600ms", "token-timeout": "1s"}},
		{runner.DriverUDP, "ricart-agrawala", nil, nil},
	} {
		p := runner.NewPlan(c.driver)
		p.Spec, p.Seed, p.Params = registry.Lookup(c.algo), 1, c.params
		name := fmt.Sprintf("%s %s %v", c.driver.Command(), c.algo, c.params)
		if err := p.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := p.WithDefaults()
		if len(got.Params) != len(c.want) || (len(c.want) > 0 && !reflect.DeepEqual(got.Params, c.want)) {
			t.Errorf("%s: params %v, want %v", name, got.Params, c.want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%s: the defaults do not apply: %v", name, err)
		}
		var rp struct{ Algorithm map[string]string }
		if err := json.Unmarshal(p.RunRow().Params, &rp); err != nil || len(rp.Algorithm) != len(c.want) || (len(c.want) > 0 && !reflect.DeepEqual(rp.Algorithm, c.want)) {
			t.Errorf("%s: runs.params records %v (%v), want %v", name, rp.Algorithm, err, c.want)
		}
		args, err := got.Args()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range args {
			for k, v := range got.Params {
				if a == k+"="+v && c.params[k] != v {
					t.Errorf("%s: the rerun line %q repeats the default %s", name, args, a)
				}
			}
		}
	}
}

// TestPlanArgs: the command line that reruns a plan names what differs
// from the defaults (or from its scenario file), and always the seed.
func TestPlanArgs(t *testing.T) {
	cases := planCases()
	for _, c := range []struct {
		name string
		p    runner.Plan
		want string
	}{
		{"sim defaults", cases["sim defaults"], "sim central --seed 42"},
		{"udp election", cases["udp election"], "run bully --seed 9 -n 3 --param initiators=all --faults crash:leader@1s --port 40000"},
		{"sim no contention", cases["sim no contention"], "sim central --seed 42 --hold 1ms --contention none"},
		{"sim every fault", cases["sim every fault"], "sim token-ring --seed 42 --param regenerate=true --faults crash:token@10ms,recover:token:amnesia@+5ms,crash:1@enter#2,crash:2@send:token#3,recover:2@1s," +
			"pause:leader@1s-2s,skew:3:-4ms@5ms,loss:20%:from=1:to=0+2:type=token@1s-2s,delay:exp=3ms,reorder:0s-1ms:to=4,duplicate:5%," +
			"partition:0+1:2@3s-4s,isolate:leader@5s,cut:from=4:to=0@6s-7s,heal@5.5s --channels raw"},
		{"scenario", func() runner.Plan {
			p := runner.NewPlan(runner.DriverSim)
			p.Spec = registry.Lookup("central")
			sc := &runner.Scenario{Path: "x.json", Nodes: 3, Entries: entries(2), Nested: true, Procs: map[string]runner.ProcWorkload{"1": {Entries: entries(0)}}}
			if err := sc.Apply(&p, nil); err != nil {
				t.Fatal(err)
			}
			p.Seed, p.Workload.Entries, p.Workload.Nested = 3, 10, false // as if --seed 3 --entries 10 --nested=false were given
			return p
		}(), "sim central --scenario x.json --seed 3 --entries 10 --nested=false"},
	} {
		args, err := c.p.Args()
		if err != nil || strings.Join(args, " ") != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, strings.Join(args, " "), err, c.want)
		}
	}
	// A limit left to default is not said (the rerun computes the same
	// from the run's size); one given is, even where it equals the
	// default of a smaller run.
	big := runner.NewPlan(runner.DriverSim)
	big.Spec, big.Seed, big.Workload.Entries = registry.Lookup("ricart-agrawala"), 1, 90000
	if args, err := big.Args(); err != nil || strings.Join(args, " ") != "sim ricart-agrawala --seed 1 --entries 90000" {
		t.Errorf("default limit of a large run: %q, %v", args, err)
	}
	big.Sim.Limit = 10 * time.Minute
	if args, err := big.Args(); err != nil || strings.Join(args, " ") != "sim ricart-agrawala --seed 1 --entries 90000 --limit 10m0s" {
		t.Errorf("a limit given: %q, %v", args, err)
	}
	// What no flag says.
	p := cases["sim everything"]
	if _, err := p.Args(); err == nil || !strings.Contains(err.Error(), "per-process workloads") {
		t.Errorf("per-process workloads without a scenario: %v", err)
	}
	p = cases["sim defaults"]
	p.Sim.Linger = time.Hour
	if _, err := p.Args(); err == nil || !strings.Contains(err.Error(), "linger") {
		t.Errorf("a linger of its own: %v", err)
	}
}

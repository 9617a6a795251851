package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/bench"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/netns"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/udp"
	"github.com/dmxlab/dmx/trace/plural"
)

// hopsPerSection is, for the algorithms dmx bench measures, how many
// message hops one critical section takes under high contention with no
// think and no hold time: the floor's hop time times it is the shortest a
// critical section can be.
var hopsPerSection = map[string]int{
	"central":         2, // release to the coordinator, grant to the next
	"ricart-agrawala": 1, // the leaver's deferred OK lets the next one in
	"token-ring":      1, // the token goes on to the next, who wants it
}

func newBenchCmd() *cobra.Command {
	var rounds, nodes, entries, laps int
	var profile string
	var noTrace, keep bool
	var netFlag runner.Net
	cmd := &cobra.Command{
		Use:   "bench [ALGO...]",
		Short: "Critical sections per second of dmx run against a ring of processes passing a token (for developers)",
		Long:  benchLong(),
		Example: `  dmx bench                         # central and ricart-agrawala, 5 rounds
  dmx bench central --rounds 9
  sudo dmx bench --net netns        # each run over loopback and over network namespaces, paired`,
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"central", "ricart-agrawala"}
			}
			for _, a := range args {
				if _, ok := hopsPerSection[a]; !ok || registry.Lookup(a) == nil {
					return &exitError{exitUsage, fmt.Errorf("bench %s: measures only central, ricart-agrawala and token-ring", a)}
				}
			}
			if err := checkNet(netFlag); err != nil {
				return &exitError{exitUsage, err}
			}
			exe, err := os.Executable()
			if err != nil {
				return &exitError{exitUsage, err}
			}
			dir, err := os.MkdirTemp("", "dmx-bench-")
			if err != nil {
				return &exitError{exitUsage, err}
			}
			if keep {
				fmt.Fprintf(cmd.ErrOrStderr(), "dmx bench: the runs' traces stay in %s\n", dir)
			} else {
				defer os.RemoveAll(dir)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Minute)
			defer cancel()
			out := cmd.OutOrStdout()
			stop, err := profileBench(profile)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer stop()
			ringCmd := func() *exec.Cmd { return exec.Command(exe, "bench", "ring-node") }
			ratios := map[string][]float64{}
			costs := map[string][]float64{} // --net netns: CS/s over namespaces / over loopback, per round
			notes := netNotes(cmd.ErrOrStderr())
			var hops []time.Duration
			for r := 1; r <= rounds; r++ {
				hop, err := bench.Ring(ctx, ringCmd, nodes, laps/10, laps)
				if err != nil {
					return &exitError{exitUsage, err}
				}
				hops = append(hops, hop)
				fmt.Fprintf(out, "round %d: ring hop %v\n", r, hop.Round(100*time.Nanosecond))
				for _, a := range args {
					ratio, cost, err := benchRound(ctx, out, notes, a, r, netFlag, nodes, entries, dir, noTrace, hop)
					if err != nil {
						return &exitError{exitUsage, err}
					}
					ratios[a] = append(ratios[a], ratio)
					if cost > 0 {
						costs[a] = append(costs[a], cost)
					}
				}
			}
			printMedians(out, hops, args, ratios, costs)
			return nil
		},
	}
	cmd.Flags().IntVar(&rounds, "rounds", 5, "rounds, each a ring measure and a run of each algorithm")
	cmd.Flags().IntVarP(&nodes, "nodes", "n", 5, "processes in the ring and in each run")
	cmd.Flags().IntVar(&entries, "entries", 200, "critical-section entries per process in each run")
	cmd.Flags().StringVar(&profile, "profile", "", "write CPU profiles into this directory: runner.pprof (bench itself: runner and trace writer) and node-PID.pprof for each node process (the ring's are not)")
	cmd.Flags().BoolVar(&noTrace, "no-trace", false, "take the runs' events as dmx run does but write no trace: what the runs reach without the trace writer")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the runs' traces (one file a run, in a temporary directory it names), to look at a round's timeline with dmx sql")
	cmd.Flags().Var(&netFlag, "net", "netns (root): run each algorithm over loopback and over network namespaces in turn, and give the ratio of their CS/s")
	cmd.Flags().IntVar(&laps, "laps", 2000, "laps of the token round the ring, measured (a tenth more to warm up)")
	cmd.AddCommand(newRingNodeCmd())
	return cmd
}

// benchRound runs algorithm a for round r over loopback and, with --net
// netns, over namespaces too, paired in turn (A B, then B A in even rounds,
// so that a drift of the machine's load favours neither). It returns
// loopback's CS/s against the ring's bound and, with netns, the ratio of
// the two CS/s (0 without).
func benchRound(ctx context.Context, out, notes io.Writer, a string, r int, netFlag runner.Net, nodes, entries int, dir string, noTrace bool, hop time.Duration) (ratio, cost float64, err error) {
	nets := []runner.Net{runner.NetLoopback}
	if netFlag == runner.NetNS {
		nets = append(nets, runner.NetNS)
		if r%2 == 0 {
			nets[0], nets[1] = nets[1], nets[0]
		}
	}
	cs := map[runner.Net]float64{}
	for _, n := range nets {
		p := benchPlan(a, nodes, entries, uint64(r), n)
		s, err := bench.RunSections(ctx, p, udp.LaunchHooks{Stderr: notes}, dir, noTrace)
		if err != nil {
			return 0, 0, err
		}
		cs[n] = s.PerSecond()
		bound := 1 / (float64(hopsPerSection[a]) * hop.Seconds())
		if n == runner.NetNS {
			printSections(out, a+" netns", a, s, s.PerSecond()/bound)
		} else {
			ratio = s.PerSecond() / bound
			printSections(out, a, a, s, ratio)
		}
	}
	if len(nets) == 2 && cs[runner.NetLoopback] > 0 {
		cost = cs[runner.NetNS] / cs[runner.NetLoopback]
	}
	return ratio, cost, nil
}

// newRingNodeCmd is one process of bench's ring.
func newRingNodeCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "ring-node",
		Short:  "One process of bench's ring (started by dmx bench; not for direct use)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := bench.RingNode(cmd.InOrStdin(), cmd.OutOrStdout()); err != nil {
				return &exitError{exitUsage, err}
			}
			return nil
		},
	}
}

// benchLong is the long help of dmx bench: what it does, in full.
func benchLong() string {
	return `bench measures what recording costs a real run. Each round measures the
floor, a token passed round a ring of N OS processes over loopback UDP
(nothing recorded), then runs each algorithm as dmx run does (N processes,
contention high, no think or hold time, recorded into a trace in a
temporary directory through a spool, as dmx run records) and gives its
critical sections per second as a
share of what the floor's hop allows: 1/(2 hops) for central, 1/(1 hop)
for ricart-agrawala and token-ring. Rounds pair the two measures, so that
the ratio holds on a busy machine; the last line gives their medians.
Each run's line ends with the runner's CPU per event during the run (the
trace's low-priority converter included) and what the trace took to
settle once the nodes had stopped: its CPU per event and its wall time.

With --net netns (root), each round runs each algorithm twice, over
loopback and with every node in a network namespace of its own on a
bridge (as dmx run --net netns), in turn (loopback first in odd rounds,
namespaces first in even ones), and the last line adds the median of
their ratio: what the namespaces, veth pairs and bridge cost a run.`
}

// benchPlan is the run of algorithm a that a round of dmx bench measures:
// n processes under high contention, neither thinking nor holding, over
// the network net.
func benchPlan(a string, n, entries int, seed uint64, net runner.Net) runner.Plan {
	p := runner.NewPlan(runner.DriverUDP)
	p.Spec, p.N, p.Seed = registry.Lookup(a), n, seed
	p.Workload.Entries, p.Workload.Contention = entries, runner.ContentionHigh
	p.Workload.Think, p.Workload.Hold = runner.Fixed(0), runner.Fixed(0)
	p.UDP.Net = net
	return p
}

// checkNet says why --net cannot be had here (network namespaces need
// privileges), nil if it can.
func checkNet(net runner.Net) error {
	if net == runner.NetNS {
		return netns.Check()
	}
	return nil
}

// profileBench starts dmx bench --profile's CPU profiles, if dir is set:
// the runner's, and the nodes', which inherit the variable and profile
// themselves. stop ends the runner's.
func profileBench(dir string) (stop func(), err error) {
	if dir == "" {
		return func() {}, nil
	}
	if err := os.Setenv(udp.ProfileEnv, dir); err != nil {
		return nil, err
	}
	return udp.StartCPUProfile(filepath.Join(dir, "runner.pprof"))
}

// printSections prints one run of algorithm a (named name: "central
// netns" over network namespaces) of a round of dmx bench.
func printSections(out io.Writer, name, a string, s bench.Sections, ratio float64) {
	fmt.Fprintf(out, "  %-16s %6.0f CS/s = %5.1f%% of 1/(%s); %d events, %.1f datagrams a CS (%d retransmitted), CPU per event: nodes %v (%v with their start-up), runner %v (+%v after the run, in %v)\n",
		name, s.PerSecond(), 100*ratio, plural.Count(hopsPerSection[a], "hop"), s.Events,
		float64(s.Datagrams)/float64(max(s.Sections, 1)), s.Retransmits,
		perEvent(s.NodeRunCPU, s.Events), perEvent(s.NodeCPU, s.Events), perEvent(s.RunnerCPU, s.Events),
		perEvent(s.AfterCPU, s.Events), s.After.Round(time.Millisecond))
}

// printMedians prints the medians of dmx bench's rounds: the ring's hop,
// each algorithm's share of the floor it sets, and with --net netns the
// ratio of its CS/s over namespaces to its CS/s over loopback (costs).
func printMedians(out io.Writer, hops []time.Duration, args []string, ratios, costs map[string][]float64) {
	sort.Slice(hops, func(i, j int) bool { return hops[i] < hops[j] })
	fmt.Fprintf(out, "median of %d rounds: ring hop %v", len(hops), hops[len(hops)/2].Round(100*time.Nanosecond))
	for _, a := range args {
		x := ratios[a]
		sort.Float64s(x)
		fmt.Fprintf(out, "; %s %.1f%%", a, 100*x[len(x)/2])
	}
	for _, a := range args {
		if x := costs[a]; len(x) > 0 {
			sort.Float64s(x)
			fmt.Fprintf(out, "; %s over netns %.2f of loopback's CS/s", a, x[len(x)/2])
		}
	}
	fmt.Fprintln(out)
}

// perEvent is d per event, rounded for print.
func perEvent(d time.Duration, events int64) time.Duration {
	if events == 0 {
		return 0
	}
	return (d / time.Duration(events)).Round(10 * time.Nanosecond)
}

// netNotes passes on what a run over network namespaces says at its
// start of where the nodes are ("net: ...") only the first time: every
// run of the rounds would repeat it.
func netNotes(w io.Writer) io.Writer { return &onceNet{w: w} }

type onceNet struct {
	w    io.Writer
	said bool
}

func (o *onceNet) Write(b []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if strings.HasPrefix(line, "net: ") {
			if o.said {
				continue
			}
			o.said = true
		}
		if _, err := io.WriteString(o.w, line); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

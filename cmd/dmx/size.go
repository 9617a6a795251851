package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/dmxlab/dmx/cmd/dmx/early"
	"github.com/dmxlab/dmx/runner"
)

// Thresholds on the estimated size of a run's trace (runner.Plan.Estimate).
// Above largeRun the header says what to expect; above veryLargeRun the run
// does not start unless the user agrees: --yes, or "y" at the question,
// which is only asked on a terminal. A script without --yes gets exit code
// 2 and the reason, not a disk filling for an hour: `dmx sim
// ricart-agrawala -n 1000 --entries 1` wrote 13.9 GB before it was stopped.
var (
	largeRun     int64 = 100e6
	veryLargeRun int64 = 1e9
)

// expect says how large a run estimated at est will be ("about 5.0M
// events and a 26 GB trace"), or "" for a run below largeRun.
func expect(p runner.Plan, est runner.Size) string {
	if est.Bytes < largeRun {
		return ""
	}
	what := fmt.Sprintf("about %s events and a %s trace", humanCount(est.Events), humanBytes(est.Bytes))
	if p.N >= 100 {
		what += fmt.Sprintf(" (each event's vector clock holds %d numbers)", p.N)
	}
	return what
}

// interactive reports whether a question can be asked on out and answered
// on in: both are a terminal.
var interactive = func(in io.Reader, out io.Writer) bool { return isTerminal(in) && isTerminal(out) }

// sizeOK decides whether the run of p, estimated at est, starts: a very
// large one only with yes, or if the user says so at a terminal. name is
// the command ("sim ricart-agrawala").
func sizeOK(in io.Reader, stderr io.Writer, name string, p runner.Plan, est runner.Size, yes bool) error {
	if est.Bytes < veryLargeRun || yes {
		return nil
	}
	what := expect(p, est)
	smaller := "fewer nodes (-n) or entries (--entries)"
	if p.Spec.Kind == "election" {
		smaller = "fewer nodes (-n) or a shorter --duration"
	}
	if interactive(in, stderr) {
		// At the question Ctrl-C simply quits: the signals' default
		// actions are back (package early).
		early.Take()
		fmt.Fprintf(stderr, "dmx %s: a very large run: %s.\nRecord it? [y/N] ", name, what)
		answer, _ := bufio.NewReader(in).ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
			return nil
		}
		return fmt.Errorf("%s: not started (--yes records it without asking; or make it smaller: %s)", name, smaller)
	}
	return fmt.Errorf("%s: a very large run: %s; not started: give --yes to record it anyway, or make it smaller: %s", name, what, smaller)
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/conform"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// dmx check --conform ALGO TRACE...: each run's program compared, input by
// input, with dmx's machine of ALGO (runner/conform).

// conformReport is one run's conformance as --format json writes it.
type conformReport struct {
	File      string           `json:"file"`
	Run       int64            `json:"run"`
	Program   string           `json:"program"`
	Algorithm string           `json:"algorithm"`
	Conforms  bool             `json:"conforms"`
	Inputs    int              `json:"inputs"`
	PerProc   []int            `json:"per_process"`
	Diffs     []conformDiffOut `json:"differences"`
	Notes     []string         `json:"notes,omitempty"`
}

type conformDiffOut struct {
	Proc    int      `json:"proc"`
	Input   string   `json:"input"` // e.g. "P1#14"
	Event   string   `json:"event"` // e.g. "P1#14 receive(request from P0)"
	Want    []string `json:"reference"`
	Got     []string `json:"program"`
	Outputs []string `json:"outputs"`
	Rule    string   `json:"rule"`
}

// checkConform compares every run of the traces at paths (or run --run)
// with dmx's algorithm name and prints the result; it returns the exit
// code: 0 every run conforms, 1 one does not.
func checkConform(out io.Writer, name string, paths []string, open openFlags, format string) (int, error) {
	spec := registry.Lookup(name)
	if spec == nil {
		return exitUsage, fmt.Errorf("--conform %q: not one of dmx's algorithms (%s)", name, strings.Join(registry.Names(), ", "))
	}
	if format != "table" && format != "json" {
		return exitUsage, fmt.Errorf("--format %q: with --conform, want table or json", format)
	}
	code := exitOK
	var reps []conformReport
	for _, path := range paths {
		st, runs, err := open.runs(path)
		if err != nil {
			return exitUsage, err
		}
		for _, run := range runs {
			res, err := conformRun(st, run, spec)
			if err != nil {
				st.Close()
				return exitUsage, fmt.Errorf("%s: run %d: %w", path, run.ID, err)
			}
			if !res.Conforms() {
				code = exitViolated
			}
			rep := conformReport{File: path, Run: run.ID, Program: run.Algorithm, Algorithm: spec.Name, Conforms: res.Conforms(),
				Inputs: res.Inputs, PerProc: res.Per, Diffs: []conformDiffOut{}, Notes: res.Notes}
			for _, d := range res.Diffs {
				o := conformDiffOut{Proc: d.Proc, Input: d.Input.Ref().String(), Event: inputText(&d.Input), Want: d.Want, Got: d.Got, Rule: d.Rule, Outputs: []string{}}
				for _, r := range d.Outputs {
					o.Outputs = append(o.Outputs, r.String())
				}
				rep.Diffs = append(rep.Diffs, o)
			}
			reps = append(reps, rep)
			if format == "table" {
				writeConform(out, rep, res, run)
			}
		}
		st.Close()
	}
	if format == "json" {
		b, err := json.MarshalIndent(map[string]any{"conform": reps}, "", "  ")
		if err != nil {
			return exitUsage, err
		}
		fmt.Fprintf(out, "%s\n", b)
	}
	return code, nil
}

func conformRun(st *trace.Store, run trace.Run, spec *algo.Spec) (*conform.Result, error) {
	r, err := st.Events(run.ID)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var evs []trace.Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		c := *ev
		c.VC = ev.VC.Clone()
		c.Detail = append([]byte(nil), ev.Detail...)
		evs = append(evs, c)
	}
	return conform.Check(run, evs, spec)
}

// writeConform prints one run's conformance as text.
func writeConform(w io.Writer, rep conformReport, res *conform.Result, run trace.Run) {
	per := make([]string, len(rep.PerProc))
	for i, k := range rep.PerProc {
		per[i] = fmt.Sprintf("P%d %d", i, k)
	}
	fmt.Fprintf(w, "%s run %d (%s, %d processes) against dmx's %s: ", rep.File, rep.Run, rep.Program, run.Nodes, rep.Algorithm)
	if rep.Conforms {
		fmt.Fprintf(w, "conforms: %d inputs compared (%s)\n", rep.Inputs, strings.Join(per, ", "))
	} else {
		fmt.Fprintf(w, "differs (%d inputs compared: %s)\n", rep.Inputs, strings.Join(per, ", "))
	}
	var t0 int64 = -1
	if run.Started != 0 {
		t0 = run.Started
	}
	for i, d := range res.Diffs {
		what := "first difference"
		if i > 0 {
			what = "then, at another process"
		}
		at := ""
		if d.Input.Wall != 0 && run.Mode == "sim" {
			at = " at +" + time.Duration(d.Input.Wall).String()
		} else if t0 > 0 && d.Input.Wall > t0 {
			at = " at +" + time.Duration(d.Input.Wall-t0).Round(time.Microsecond).String()
		}
		fmt.Fprintf(w, "  %s: P%d, handling %s%s\n", what, d.Proc, inputText(&d.Input), at)
		fmt.Fprintf(w, "    dmx's %s: %s\n", rep.Algorithm, listOrNothing(d.Want))
		fmt.Fprintf(w, "    the program:  %s\n", listOrNothing(d.Got))
		fmt.Fprintf(w, "    rule: %s\n", d.Rule)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if rep.Conforms {
		fmt.Fprintln(w, "verdict: conforms")
	} else {
		fmt.Fprintln(w, "verdict: differs")
	}
}

func listOrNothing(xs []string) string {
	if len(xs) == 0 {
		return "nothing"
	}
	return strings.Join(xs, "; ")
}

// inputText names an input event: "P1#14 receive(request from P0)",
// "P2#3 cs_request(cs)".
func inputText(ev *trace.Event) string {
	switch ev.Kind {
	case trace.KindReceive:
		return fmt.Sprintf("%v receive(%s from P%d)", ev.Ref(), ev.MsgType, ev.Peer)
	case trace.KindTimeout:
		if d, err := ev.Timeout(); err == nil {
			return fmt.Sprintf("%v timeout(%s)", ev.Ref(), d.Timer)
		}
	}
	return ev.String()
}

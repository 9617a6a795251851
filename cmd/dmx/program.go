package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/exec"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
)

// A program of the user's own (--exec CMD) is an algorithm whose spec
// runner/exec builds: named by --name, its command and kind in its
// parameters (exec.ParamExec, exec.ParamKind), which the trace's runs row
// keeps, so that replay, render and check find it again.

// programSpec returns the spec of the program that params run, named
// name, or an error if params do not describe one the way dmx can run.
func programSpec(name string, params map[string]string, opt exec.Options) (*algo.Spec, error) {
	kind, err := exec.KindOf(params)
	if err != nil {
		return nil, err
	}
	return exec.Spec(name, kind, opt), nil
}

// specOf returns the algorithm of a recorded run: one of dmx's, or the
// program it ran (its stderr discarded: replay and render re-execute it
// quietly). nil if neither.
func specOf(run trace.Run) *algo.Spec {
	if s := registry.Lookup(run.Algorithm); s != nil {
		return s
	}
	params := runParams(run)
	if !exec.IsProgram(params) {
		return nil
	}
	s, err := programSpec(run.Algorithm, params, exec.Options{OwnGroup: true})
	if err != nil {
		return nil
	}
	return s
}

// lookupFor returns a lookup (by name) that finds run's algorithm, a
// program included.
func lookupFor(run trace.Run) func(string) *algo.Spec {
	s := specOf(run)
	return func(name string) *algo.Spec {
		if s != nil && s.Name == name {
			return s
		}
		return registry.Lookup(name)
	}
}

// runParams returns the algorithm parameters a runs row recorded.
func runParams(run trace.Run) map[string]string {
	var p struct {
		Algorithm map[string]string `json:"algorithm"`
	}
	json.Unmarshal(run.Params, &p)
	return p.Algorithm
}

// setupProgram makes p run the program of --exec (or of a scenario file's
// "exec" parameter, whose "algorithm" names it), named --name (default:
// the command's first word).
func (f *runFlags) setupProgram(cmd *cobra.Command, p *runner.Plan, args []string, scenarioName string) error {
	if len(args) > 0 {
		return fmt.Errorf("--exec runs a program of your own in place of an algorithm: name no algorithm (%s)", args[0])
	}
	command := f.exec
	if command == "" {
		command = p.Params[exec.ParamExec]
	}
	if strings.TrimSpace(command) == "" {
		return fmt.Errorf("--exec: no command")
	}
	name := f.name
	if name == "" {
		name = scenarioName
	}
	if name == "" {
		name = exec.Name(command)
	}
	if registry.Lookup(name) != nil {
		return fmt.Errorf("--name %s: that is one of dmx's algorithms; name your program otherwise (--name)", name)
	}
	if p.Params == nil {
		p.Params = map[string]string{}
	}
	p.Params[exec.ParamExec] = command
	opt := exec.Options{Stderr: cmd.ErrOrStderr(), Prefix: true, OwnGroup: true}
	spec, err := programSpec(name, p.Params, opt)
	if err != nil {
		return &runner.PlanError{Field: "parameter", Value: exec.ParamKind, Err: err}
	}
	p.Spec = spec
	return nil
}

// nodeArgs are the hidden dmx node's flags as exec.NodeLookup reads them.
func nodeArgs(program, kind string) []string {
	if program == "" {
		return nil
	}
	return []string{"--program", program, "--kind", kind}
}

// programArgs turns the arguments that rerun a plan (runner.Plan.Args)
// into those of a program's run: --exec CMD --name NAME in place of the
// algorithm and of --param exec=CMD.
func programArgs(p runner.Plan, args []string) []string {
	if len(args) < 2 || !exec.IsProgram(p.Params) {
		return args
	}
	out := []string{args[0], "--exec", p.Params[exec.ParamExec]}
	if p.Spec.Name != exec.Name(p.Params[exec.ParamExec]) {
		out = append(out, "--name", p.Spec.Name)
	}
	rest := args[2:]
	for i := 0; i < len(rest); i++ {
		if rest[i] == "--param" && i+1 < len(rest) && strings.HasPrefix(rest[i+1], exec.ParamExec+"=") {
			i++
			continue
		}
		out = append(out, rest[i])
	}
	return slices.Clip(out)
}

package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/runner/algo"
	"github.com/dmxlab/dmx/runner/conform"
	"github.com/dmxlab/dmx/runner/exec"
	"github.com/dmxlab/dmx/runner/registry"
)

func newListCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list [ALGO]",
		Short: "List the algorithms; with a name, show one in full",
		Long: `list prints the algorithms dmx runs, one line each: name, kind, the
course notes (seeds) it follows and what it does.

The last line gives the version of the node protocol, which a program of
your own speaks under dmx run --exec and dmx sim --exec (docs/protocol.md).

list ALGO shows one algorithm in full: the seeds it follows, its message
types, the checks dmx check runs on its traces, its costs (the seeds'
figures, which dmx stats puts beside a run), every parameter (--param) with
its default and meaning, its variants, example commands, and its package
documentation, which quotes the seeds' rules by name ([RA1], [RH1], ...).

--format json gives everything, for one algorithm or all; csv one row each.`,
		Example: `  dmx list
  dmx list ricart-agrawala
  dmx list maekawa --format json`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return registry.Names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, render.ListFormats...); err != nil {
				return &exitError{exitUsage, err}
			}
			if len(args) == 0 {
				if err := render.List(cmd.OutOrStdout(), format, registry.All()); err != nil || format != "table" {
					return err
				}
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "Your own program: dmx run --exec CMD (or sim, explore) speaks the node protocol, version %d (docs/protocol.md).\n", exec.Version)
				return err
			}
			spec := registry.Lookup(args[0])
			if spec == nil {
				return &exitError{exitUsage, fmt.Errorf("unknown algorithm %q; the algorithms are: %s", args[0], strings.Join(registry.Names(), ", "))}
			}
			if err := render.Algorithm(cmd.OutOrStdout(), format, spec); err != nil || format != "table" {
				return err
			}
			return vocabulary(cmd.OutOrStdout(), spec)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: table, json or csv")
	return cmd
}

// vocabulary prints the message bodies a program of the user's own sends
// to be compared with spec's machine (dmx check --conform), as a small
// simulated run of it shows them (conform.Vocabulary).
func vocabulary(w io.Writer, spec *algo.Spec) error {
	v, err := conform.Vocabulary(spec)
	if err != nil {
		return fmt.Errorf("%s's vocabulary: %w", spec.Name, err)
	}
	fmt.Fprintf(w, "\nNode protocol vocabulary (version %d): the message bodies a program of your own\nsends to be compared with this machine (dmx check --conform %s TRACE):\n", exec.Version, spec.Name)
	for _, t := range conform.Types(v) {
		b := fmt.Sprintf(`{"type":%q`, t)
		for _, f := range v[t] {
			switch f {
			case "vals":
				b += `,"vals":[N,...]`
			default:
				b += fmt.Sprintf(`,%q:N`, f)
			}
		}
		fmt.Fprintf(w, "  %s}\n", b)
	}
	_, err = fmt.Fprintln(w, `"stamp" is the Lamport clock dmx hands the input where the notes use the local clock.`)
	return err
}

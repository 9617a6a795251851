package main

import (
	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/runner/algo/registry"
)

func newListCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the algorithms, their message types, properties and parameters",
		Example: "  dmx list\n  dmx list --format json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, render.ListFormats...); err != nil {
				return &exitError{exitUsage, err}
			}
			return render.List(cmd.OutOrStdout(), format, registry.All())
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: table, json or csv")
	return cmd
}

package main

import (
	"strings"

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
			if err := checkFormat(format, "table", "json", "csv"); err != nil {
				return &exitError{exitUsage, err}
			}
			type param struct {
				Name    string `json:"name"`
				Default string `json:"default"`
				Doc     string `json:"doc"`
			}
			type entry struct {
				Name       string   `json:"name"`
				Kind       string   `json:"kind"`
				Summary    string   `json:"summary"`
				Seeds      []string `json:"seeds"`
				Messages   []string `json:"message_types"`
				Properties []string `json:"properties"`
				Complexity string   `json:"complexity"`
				Params     []param  `json:"params"`
			}
			var es []entry
			var rows [][]string
			for _, s := range registry.All() {
				e := entry{Name: s.Name, Kind: string(s.Kind), Summary: s.Summary, Seeds: s.Seeds, Messages: s.MsgTypes,
					Properties: s.Properties, Complexity: s.Complexity, Params: []param{}}
				var ps []string
				for _, p := range s.Params {
					e.Params = append(e.Params, param{p.Name, p.Default, p.Doc})
					ps = append(ps, p.Name+"="+p.Default)
				}
				es = append(es, e)
				rows = append(rows, []string{s.Name, string(s.Kind), strings.Join(s.MsgTypes, ","), strings.Join(s.Properties, ","), s.Complexity, strings.Join(ps, " ")})
			}
			header := []string{"algorithm", "kind", "messages", "properties", "complexity (seeds)", "params"}
			switch format {
			case "json":
				return render.JSON(cmd.OutOrStdout(), es)
			case "csv":
				return render.CSV(cmd.OutOrStdout(), header, rows)
			}
			return render.Table(cmd.OutOrStdout(), header, rows)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: table, json or csv")
	return cmd
}

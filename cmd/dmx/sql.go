package main

import (
	"database/sql"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/render/plural"
	"github.com/dmxlab/dmx/trace"
)

func newSQLCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "sql TRACE QUERY",
		Short: "Run an SQL query over a trace and print the rows",
		Long: `sql opens the trace read-only and runs QUERY (SQLite dialect) over its
tables and views: runs, procs, events, messages, cs_intervals, elections.
The README documents the schema with example queries.`,
		Example: `  dmx sql run.db "SELECT type, count(*) AS n FROM messages GROUP BY type"
  dmx sql run.db "SELECT proc, avg(wait_ns)/1e6 AS wait_ms FROM cs_intervals GROUP BY proc" --format csv`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, render.RowsFormats...); err != nil {
				return &exitError{exitUsage, err}
			}
			st, err := trace.Open(args[0])
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer st.Close()
			header, rows, err := query(st.DB(), args[1])
			if err != nil {
				return &exitError{exitUsage, fmt.Errorf("%s: query: %w", args[0], err)}
			}
			if err := render.Rows(cmd.OutOrStdout(), format, header, rows); err != nil {
				return err
			}
			if format == "table" {
				fmt.Fprintf(cmd.ErrOrStderr(), "(%s)\n", plural.Count(len(rows), "row"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: table, csv or json")
	return cmd
}

// query runs q and returns its column names and rows, each value as the
// driver hands it over (nil for NULL).
func query(db *sql.DB, q string) ([]string, [][]any, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		out = append(out, vals)
	}
	return cols, out, rows.Err()
}

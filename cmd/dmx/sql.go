package main

import (
	"database/sql"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/render"
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
			if err := checkFormat(format, "table", "csv", "json"); err != nil {
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
			out := cmd.OutOrStdout()
			switch format {
			case "csv":
				strs := make([][]string, len(rows))
				for i, r := range rows {
					strs[i] = make([]string, len(r))
					for j, v := range r {
						if v != nil {
							strs[i][j] = cell(v)
						}
					}
				}
				return render.CSV(out, header, strs)
			case "json":
				keys := jsonKeys(header)
				objs := make([]map[string]any, len(rows))
				for i, r := range rows {
					objs[i] = map[string]any{}
					for j, v := range r {
						if b, ok := v.([]byte); ok {
							v = string(b)
						}
						objs[i][keys[j]] = v
					}
				}
				return render.JSON(out, objs)
			}
			strs := make([][]string, len(rows))
			for i, r := range rows {
				strs[i] = make([]string, len(r))
				for j, v := range r {
					strs[i][j] = "NULL"
					if v != nil {
						strs[i][j] = cell(v)
					}
				}
			}
			if err := render.Table(out, header, strs); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "(%d rows)\n", len(rows))
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: table, csv or json")
	return cmd
}

// jsonKeys names the columns as JSON object keys: a name that an earlier
// column already has (SELECT a.proc, b.proc ...) gets a suffix _2, _3, ...,
// so that no value is lost.
func jsonKeys(header []string) []string {
	used := map[string]bool{}
	for _, h := range header {
		used[h] = true
	}
	seen := map[string]bool{}
	keys := make([]string, len(header))
	for i, h := range header {
		k := h
		for n := 2; seen[k]; n++ {
			if k = h + "_" + strconv.Itoa(n); used[k] {
				k = h // taken by another column: try the next suffix
			}
		}
		seen[k] = true
		keys[i] = k
	}
	return keys
}

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

func cell(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

// defaultSQLTimeout bounds a query typed at a terminal: long enough for
// any sensible query over a big trace, short enough that a runaway one
// (a recursive CTE without end, a cross join) gives the prompt back.
const defaultSQLTimeout = time.Minute

func newSQLCmd() *cobra.Command {
	var format string
	var limit int64
	var timeout time.Duration
	var maxValue int
	var open openFlags
	cmd := &cobra.Command{
		Use:   "sql TRACE QUERY",
		Short: "Run an SQL query over a trace and print the rows",
		Long: `sql opens the trace read-only and runs QUERY (SQLite dialect) over its
tables and views: runs, procs, events, messages, cs_intervals, elections.
The README documents the schema with example queries.

Nothing can be written through it: statements that would change the trace
or write another file (INSERT, UPDATE, DELETE, CREATE, DROP, ATTACH,
VACUUM INTO, PRAGMAs that set a value...) are refused.

Rows are printed as they are read: csv and json stream, a table is printed
in pages of ` + fmt.Sprint(render.TablePage) + ` rows (fewer if they are long). --limit stops after so many rows, --timeout
stops a query that runs too long, --max-value one that reads or makes a
value too big to hold (exit 2).`,
		Example: `  dmx sql run.db "SELECT type, count(*) AS n FROM messages GROUP BY type"
  dmx sql run.db "SELECT proc, avg(wait_ns)/1e6 AS wait_ms FROM cs_intervals GROUP BY proc" --format csv
  dmx sql run.db "SELECT * FROM events" --limit 20
  dmx sql big.db "SELECT * FROM events" --format csv --timeout 0 > events.csv`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, render.RowsFormats...); err != nil {
				return &exitError{exitUsage, err}
			}
			if limit < 0 {
				return &exitError{exitUsage, fmt.Errorf("--limit %d: want 0 (no limit) or more", limit)}
			}
			if timeout < 0 {
				return &exitError{exitUsage, fmt.Errorf("--timeout %v: want 0 (none) or more", timeout)}
			}
			st, err := open.open(args[0])
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer st.Close()
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			if maxValue < 1 {
				return &exitError{exitUsage, fmt.Errorf("--max-value %d: want 1 or more bytes", maxValue)}
			}
			rows, err := st.QueryWith(ctx, args[1], trace.QueryOptions{MaxValue: maxValue})
			if err != nil {
				return &exitError{exitUsage, sqlError(err, ctx, timeout)}
			}
			defer rows.Close()
			cut := false // --limit left rows out
			next := func() ([]any, error) {
				r, err := rows.Next()
				if err == nil && limit > 0 && rows.Count() > limit {
					cut = true
					return nil, io.EOF
				}
				return r, err
			}
			n, err := render.Rows(cmd.OutOrStdout(), format, rows.Columns(), next)
			if err != nil {
				return &exitError{exitUsage, sqlError(err, ctx, timeout)}
			}
			stderr := cmd.ErrOrStderr()
			switch {
			case cut:
				fmt.Fprintf(stderr, "(%s shown; --limit %d reached, more rows not shown)\n", plural.Count(int(n), "row"), limit)
			case format == "table":
				fmt.Fprintf(stderr, "(%s)\n", plural.Count(int(n), "row"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: table, csv or json")
	cmd.Flags().Int64Var(&limit, "limit", 0, "print at most this many rows (0: all)")
	cmd.Flags().DurationVar(&timeout, "timeout", defaultSQLTimeout, "stop the query after this long (0: no limit)")
	cmd.Flags().IntVar(&maxValue, "max-value", trace.DefaultMaxValue, "stop the query at a value (read or made) of more than this many bytes; a table shows the first "+fmt.Sprint(render.TableCellBytes)+" of each")
	open.register(cmd)
	return cmd
}

// sqlError is the message for a query that failed: the time-out names the
// flag that set it.
func sqlError(err error, ctx context.Context, timeout time.Duration) error {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("query stopped: --timeout %v reached (--timeout 0 for no limit)", timeout)
	}
	return err
}

package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/render/plural"
	"github.com/dmxlab/dmx/render/viewer"
	"github.com/dmxlab/dmx/trace"
)

func newServeCmd() *cobra.Command {
	var addr string
	var open openFlags
	cmd := &cobra.Command{
		Use:   "serve TRACE...",
		Short: "Explore runs in the browser: an interactive space-time viewer",
		Long: `serve opens the traces read-only and serves a page that draws their runs'
space-time diagrams, window by window, so that runs of millions of events
stay fast: drag to pan, wheel to zoom, along Lamport time or wall time;
an overview strip of the whole run with its activity, critical sections
and findings; a click on an event gives its details, vector clock, causal
past and future; the findings of dmx check, a click away each; a SQL box
whose result rows light up in the diagram; and a second run below the
first, with the first event where each process's history differs marked.

It listens on 127.0.0.1 (a free port unless --addr says which) and prints
the URL to open. It answers only requests addressed to that address or to
localhost. Ctrl-C stops it.`,
		Example: `  dmx serve run.db
  dmx serve fifo.db reorder.db          # compare two runs: pick the second in "compare with"
  dmx serve run.db --addr 127.0.0.1:8080`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var stores []*trace.Store
			defer func() {
				for _, st := range stores {
					st.Close()
				}
			}()
			runs := 0
			for _, path := range args {
				st, err := open.open(path)
				if err != nil {
					return &exitError{exitUsage, err}
				}
				stores = append(stores, st)
				rs, err := st.Runs()
				if err != nil {
					return &exitError{exitUsage, err}
				}
				runs += len(rs)
			}
			srv, err := viewer.New(stores, viewer.Options{
				Check: func(st *trace.Store, run trace.Run) ([]analyze.Result, error) { return evaluate(st, run, nil) },
				Roles: roles,
				Log:   cmd.ErrOrStderr(),
			})
			if err != nil {
				return &exitError{exitUsage, err}
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return &exitError{exitUsage, fmt.Errorf("listen on %s: %w", addr, err)}
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			go func() {
				<-ctx.Done()
				ln.Close()
			}()
			srv.Warm()
			fmt.Fprintf(cmd.OutOrStdout(), "dmx serve: http://%s/ (%s; Ctrl-C to stop)\n", ln.Addr(), plural.Count(runs, "run"))
			if err := srv.Serve(ln); err != nil && ctx.Err() == nil {
				return &exitError{exitUsage, err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on (port 0: a free one)")
	open.register(cmd)
	return cmd
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dmxlab/dmx/render/htmlreport"
	"net"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/cmd/dmx/early"
	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/render/viewer"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/runner/replay"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
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
past and future, and the algorithm's state in its process right after it
(replayed as dmx replay does, that process only, and what the event
changed); the findings of dmx check, a click away each; a SQL box
whose result rows light up in the diagram; and a second run below the
first, with the first event where each process's history differs marked.

It listens on 127.0.0.1 (a free port unless --addr says which) and prints
the URL to open. It listens on a loopback address only (--addr 0.0.0.0 is
refused: whoever reaches it could read the traces), answers only requests
addressed to a loopback address or to localhost, and bounds each
connection in time (10s for the headers, 30s for a whole request, 2m
idle). Ctrl-C stops it.`,
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
					if !strings.HasPrefix(err.Error(), path+": ") {
						err = fmt.Errorf("%s: %w", path, err)
					}
					return &exitError{exitUsage, err}
				}
				runs += len(rs)
			}
			states := newServeStates()
			defer states.Close()
			srv, err := viewer.New(stores, viewer.Options{
				Check:    func(st *trace.Store, run trace.Run) ([]analyze.Result, error) { return evaluate(st, run, nil) },
				Roles:    registry.Roles,
				MsgTypes: msgTypes,
				State:    states.after,
				Log:      cmd.ErrOrStderr(),
				Sweep:    func() (*htmlreport.Sweep, error) { return serveSweep(stores) },
			})
			if err != nil {
				return &exitError{exitUsage, err}
			}
			if err := viewer.Loopback(addr); err != nil {
				return &exitError{exitUsage, fmt.Errorf("--addr: %w", err)}
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return &exitError{exitUsage, fmt.Errorf("listen on %s: %w", addr, err)}
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, early.Signals...)
			defer stop()
			early.Take()
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
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on, a loopback one (port 0: a free one)")
	open.register(cmd)
	return cmd
}

// serveStates answers dmx serve's questions about the algorithm's state
// after an event: one replay.States per run asked about, which keeps each
// process's replay where the last question left it.
type serveStates struct {
	mu   sync.Mutex
	runs map[serveRun]*replay.States
}

type serveRun struct {
	st  *trace.Store
	run int64
}

func newServeStates() *serveStates { return &serveStates{runs: map[serveRun]*replay.States{}} }

// after is viewer.Options.State.
func (s *serveStates) after(st *trace.Store, run trace.Run, at trace.Ref) (json.RawMessage, error) {
	s.mu.Lock()
	k := serveRun{st, run.ID}
	rs := s.runs[k]
	if rs == nil {
		rs = replay.NewStates(st, run, registry.Lookup)
		s.runs[k] = rs
	}
	s.mu.Unlock()
	start := time.Now()
	a, err := rs.After(at)
	if err != nil {
		return nil, stateError(run, at, err)
	}
	return render.ReplayState(a, time.Since(start))
}

// Close ends the replays (before the traces close).
func (s *serveStates) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range s.runs {
		rs.Close()
	}
}

// stateError says why the state after at cannot be shown, in words for
// the page: the run is not one dmx recorded, it was cut short before at,
// or this dmx does not reproduce it (another version recorded it).
func stateError(run trace.Run, at trace.Ref, err error) error {
	var (
		bad *replay.BadTraceError
		cut *replay.CutError
		div *replay.Divergence
	)
	switch {
	case run.Mode == "import":
		return fmt.Errorf("no algorithm state for this run: it was imported from another tool's log, and dmx can only replay runs it recorded itself (dmx run, dmx sim), whose state machines it has")
	case errors.As(err, &cut):
		return fmt.Errorf("no algorithm state after %v: %s; P%d's replay cannot go past it, its state is known up to P%d#%d",
			at, cut.Reason, at.Proc, at.Proc, cut.At.Seq-1)
	case errors.As(err, &div):
		if v := toolVersion(); run.ToolVersion != "" && run.ToolVersion != v {
			return fmt.Errorf("no algorithm state after %v: this run was recorded by dmx %s, and this dmx (%s) does not replay it the same way (%v); open the trace with dmx %s to see the state",
				at, run.ToolVersion, v, div, run.ToolVersion)
		}
		return fmt.Errorf("no algorithm state after %v: this dmx does not reproduce the recorded run (%v): the trace was changed after it was recorded, or dmx has a bug; dmx replay names the divergence", at, div)
	case errors.As(err, &bad):
		return fmt.Errorf("no algorithm state for this run: it cannot be replayed: %v", bad)
	}
	return fmt.Errorf("replay of P%d up to %v: %w", at.Proc, at, err)
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/spf13/cobra"
)

// exitGuard is how a command that an interrupt ends at once (every one
// but the recordings, the search and the viewer: takeInterrupts) leaves
// nothing half-made behind it. An interrupt that comes while the command
// writes a trace it cannot leave half-written (hold) is kept until that
// write is done; files the command made and would leave half-written
// (onInterrupt) are removed before it exits. A second interrupt ends it
// at once, after the removals.
//
// Before, an interrupt ended dmx merge in the middle of its copy: the new
// trace stayed with its -wal and -shm and no run in it, or the file
// merge makes the schema in (.NAME.dmx-new-*) with its journal; dmx
// export left a truncated file (found by the adversarial pass of issue
// 22).
type exitGuard struct {
	name   string
	stderr io.Writer

	mu       sync.Mutex
	holds    int
	what     string // what the hold in progress finishes
	pending  bool   // an interrupt came during a hold
	cleanups []func()
}

type guardKey struct{}

// guardOf is the guard of the command cmd runs under, or nil (a recording,
// or a command run without takeInterrupts): its methods then do nothing
// but run what they are given.
func guardOf(cmd *cobra.Command) *exitGuard {
	if ctx := cmd.Context(); ctx != nil {
		g, _ := ctx.Value(guardKey{}).(*exitGuard)
		return g
	}
	return nil
}

// withGuard puts g in cmd's context.
func withGuard(cmd *cobra.Command, g *exitGuard) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	cmd.SetContext(context.WithValue(ctx, guardKey{}, g))
}

// interrupted handles one interrupt s: the first during a hold is kept,
// any other ends dmx (exit 3) after the cleanups.
func (g *exitGuard) interrupted(s os.Signal) {
	g.mu.Lock()
	if g.holds > 0 && !g.pending {
		g.pending = true
		fmt.Fprintf(g.stderr, "\ndmx: %s: interrupted (%v): finishing %s first (interrupt again to stop at once)\n", g.name, s, g.what)
		g.mu.Unlock()
		return
	}
	if g.pending {
		fmt.Fprintf(g.stderr, "dmx: %s: interrupted again (%v): stopped at once, %s not finished\n", g.name, s, g.what)
	} else {
		fmt.Fprintf(g.stderr, "\ndmx: %s: interrupted (%v)\n", g.name, s)
	}
	g.exitLocked()
}

// exitLocked runs the cleanups, latest first, and ends dmx with exit 3.
// g.mu is held, so that no hold begins or ends meanwhile.
func (g *exitGuard) exitLocked() {
	for i := len(g.cleanups) - 1; i >= 0; i-- {
		g.cleanups[i]()
	}
	partFiles.Range(func(k, _ any) bool {
		os.Remove(k.(string))
		return true
	})
	os.Exit(exitInconclusive)
}

// hold runs f, which finishes what (a trace being written), with the
// interrupts kept until it returns; one kept then ends dmx.
func (g *exitGuard) hold(what string, f func() error) error {
	if g == nil {
		return f()
	}
	g.mu.Lock()
	g.holds++
	if g.holds == 1 {
		g.what = what
	}
	g.mu.Unlock()
	err := f()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holds--
	if g.holds == 0 && g.pending {
		fmt.Fprintf(g.stderr, "dmx: %s: %s finished; stopped as interrupted\n", g.name, what)
		g.exitLocked()
	}
	return err
}

// onInterrupt registers f to run if an interrupt ends dmx from now on.
func (g *exitGuard) onInterrupt(f func()) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cleanups = append(g.cleanups, f)
}

// removeOnInterrupt removes paths if an interrupt ends dmx from now on:
// files the command makes and would leave half-made.
func (g *exitGuard) removeOnInterrupt(paths ...string) {
	g.onInterrupt(func() {
		for _, p := range paths {
			os.Remove(p)
		}
	})
}

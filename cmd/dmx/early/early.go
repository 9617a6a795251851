// Package early catches the signals that interrupt dmx (SIGINT, SIGTERM,
// SIGHUP) from its first instant, so that one that comes before dmx has
// set up its own handling is an interruption (exit 3), not death by the
// signal (exit 130, 143, 129).
//
// Go initializes the packages a program imports before main runs, one at
// a time: go-graphviz compiles its WebAssembly module in its
// initialization, which took 418 ms on a loaded machine, and a signal then
// killed dmx. Go initializes packages in the order of their import paths
// among those whose imports are ready; this one imports only what is
// initialized among the first (os/signal), and its path sorts before
// go-graphviz's, so it starts catching before that compilation begins.
// dmx imports it for that effect; the command then Takes the catch over.
package early

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Signals are the signals caught.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

var (
	ch    = make(chan os.Signal, 1)
	mu    sync.Mutex
	taken bool
)

func init() { signal.Notify(ch, Signals...) }

// Take ends the catch and returns the first signal caught, nil if none
// came. A caller that handles the signals itself registers its own
// handling (signal.Notify) before it calls Take, so that none is missed;
// for the others, each signal's default action is back once Take returns.
// Only the first call can return a signal.
func Take() os.Signal {
	mu.Lock()
	defer mu.Unlock()
	if taken {
		return nil
	}
	taken = true
	signal.Stop(ch)
	select {
	case s := <-ch:
		return s
	default:
		return nil
	}
}

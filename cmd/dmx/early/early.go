// Package early catches the signals that interrupt dmx (SIGINT, SIGTERM,
// SIGHUP) from its first instant, so that one that comes before dmx has
// set up its own handling is an interruption (exit 3), not death by the
// signal (exit 130, 143, 129), nor ignored.
//
// Go initializes the packages a program imports before main runs, one at
// a time: go-graphviz compiles its WebAssembly module in its
// initialization, which took 418 ms on a loaded machine, and a signal then
// killed dmx. Go initializes packages in the order of their import paths
// among those whose imports are ready; this one imports only what is
// initialized among the first (os/signal), and its path sorts before
// go-graphviz's, so it starts catching before that compilation begins.
// dmx imports it for that effect; each command then Takes the catch over.
// A signal that comes before that ends dmx at once with exit 3: nothing
// has been made yet that needs it to stop otherwise (a command that makes
// files takes the catch over before it makes them).
package early

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Signals are the signals caught.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// ExitCode is the exit code of a signal caught before Take: dmx's
// "inconclusive".
const ExitCode = 3

var (
	ch      = make(chan os.Signal, 1)
	takeReq = make(chan chan struct{})
	mu      sync.Mutex
	taken   bool
)

func init() {
	signal.Notify(ch, Signals...)
	go watch()
}

// watch ends dmx at the first signal caught before Take returned, and
// serves Take. A signal caught as Take is called came before the caller
// was ready, or as it got ready, and is dealt with alike (left to the
// caller, whose handling may have begun a moment later, it was lost: a
// dmx render that finished with exit 0 after a SIGHUP, found by the
// adversarial pass). One goroutine does both, so that Take cannot return
// while a signal it caught is still to end dmx: Take returned, the caller
// went on to make its trace, and the exit came in the middle of it,
// leaving the file the trace's schema is made in (.NAME.dmx-new-*) and
// its journal (TestSignalFromTheFirstMoment, once on an idle machine).
func watch() {
	select {
	case s := <-ch:
		interrupted(s) // Take, if called, waits until dmx has ended
	case done := <-takeReq:
		// signal.Stop guarantees that none comes after it; one caught
		// before it is still in ch.
		signal.Stop(ch)
		select {
		case s := <-ch:
			interrupted(s)
		default:
		}
		close(done)
	}
}

func interrupted(s os.Signal) {
	fmt.Fprintf(os.Stderr, "dmx: interrupted (%v) before it began\n", s)
	os.Exit(ExitCode)
}

// Take ends the catch. A caller that handles the signals itself registers
// its own handling (signal.Notify) before it calls Take, so that none is
// missed; for the others, each signal's default action is back once Take
// returns. A signal caught before then ends dmx before Take returns.
func Take() {
	mu.Lock()
	defer mu.Unlock()
	if taken {
		return
	}
	taken = true
	done := make(chan struct{})
	takeReq <- done
	<-done
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/dmxlab/dmx/cmd/dmx/early"
)

// interrupts are the signals that end a recording: Ctrl-C (SIGINT), SIGTERM
// (a supervisor, kill) and SIGHUP (the terminal closed), all alike. The
// first stops the run and keeps what was recorded, then the trace is
// checked as usual; the second stops at once: nodes are killed, the run is
// ended as interrupted, the trace is closed whole and not checked. A third
// gets the signal's default action, for a dmx that would not stop.
type interrupts struct {
	ch     chan os.Signal
	ctx    context.Context // cancelled by the first
	cancel context.CancelCauseFunc
	hurry  chan struct{} // closed by the second
	quit   chan struct{}
	say    io.Writer // where the first says what happens next
	first  string    // what it says
}

var interruptSignals = early.Signals

// catchInterrupts starts handling the interrupts; the first one says so on
// stderr. Call stop when done.
func catchInterrupts(stderr io.Writer) *interrupts {
	return catchInterruptsSaying(stderr, "stopping the run and keeping what it recorded (interrupt again to stop at once, unchecked)")
}

// catchInterruptsSaying is catchInterrupts for a command that is not a
// recording: the first interrupt says first, what happens next.
func catchInterruptsSaying(stderr io.Writer, first string) *interrupts {
	it := &interrupts{ch: make(chan os.Signal, 3), hurry: make(chan struct{}), quit: make(chan struct{}), say: stderr, first: first}
	it.ctx, it.cancel = context.WithCancelCause(context.Background())
	signal.Notify(it.ch, interruptSignals...)
	// Until now a signal ended dmx with exit 3 (package early): nothing
	// was made yet.
	early.Take()
	go it.loop()
	return it
}

func (it *interrupts) loop() {
	for n := 1; ; n++ {
		select {
		case <-it.ch:
		case <-it.quit:
			return
		}
		switch n {
		case 1:
			it.cancel(nil) // the cause is context.Canceled: the run is "interrupted"
			fmt.Fprintln(it.say, "\ndmx: interrupted: "+it.first)
		case 2:
			close(it.hurry)
			signal.Reset(interruptSignals...)
			return
		}
	}
}

// interrupted reports whether the first interrupt came.
func (it *interrupts) interrupted() bool { return it.ctx.Err() != nil }

// hurried reports whether the second interrupt came.
func (it *interrupts) hurried() bool {
	select {
	case <-it.hurry:
		return true
	default:
		return false
	}
}

// stop stops handling the interrupts.
func (it *interrupts) stop() {
	signal.Stop(it.ch)
	select {
	case <-it.quit:
	default:
		close(it.quit)
	}
	it.cancel(nil)
}

package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/netns"
	"github.com/dmxlab/dmx/runner/udp"
	"github.com/dmxlab/dmx/trace"
)

// Sections is what a run of a mutual-exclusion algorithm achieved.
type Sections struct {
	Sections int           // critical sections done (cs_exit events)
	Span     time.Duration // from the first cs_request to the last cs_exit
	Events   int64         // events recorded
	Status   string        // how the run ended
	// RunnerCPU is the CPU time of this process (the runner and its trace
	// writer) during the run; NodeCPU that of the node processes.
	RunnerCPU, NodeCPU time.Duration
	// After is the wall time the trace took to settle once the nodes had
	// stopped (the spool's conversion of what it had not done during the
	// run), AfterCPU this process's CPU time in it.
	After, AfterCPU time.Duration
	// NodeRunCPU is the part of NodeCPU from the run's start on (the
	// nodes' start-up left out).
	NodeRunCPU time.Duration
	// Datagrams is how many datagrams the nodes wrote, Retransmits how
	// many of them were sent again.
	Datagrams, Retransmits int64
}

// PerSecond is the critical sections a second.
func (s Sections) PerSecond() float64 {
	if s.Span <= 0 {
		return 0
	}
	return float64(s.Sections) / s.Span.Seconds()
}

// RunSections carries out p (over the network its UDP.Net names), recording into a new trace in
// dir as dmx run does, and measures its critical sections. With noTrace
// the runner takes every event as dmx run does but does not write it:
// what is left of the run's cost without the trace writer.
func RunSections(ctx context.Context, p runner.Plan, hooks udp.LaunchHooks, dir string, noTrace bool) (Sections, error) {
	if noTrace {
		c := &counter{}
		return c.measure(ctx, p, hooks)
	}
	path := filepath.Join(dir, fmt.Sprintf("bench-%s-%d.db", p.Spec.Name, time.Now().UnixNano()))
	st, err := trace.Create(path)
	if err != nil {
		return Sections{}, err
	}
	defer st.Close()
	run, err := st.BeginRun(p.RunRow())
	if err != nil {
		return Sections{}, err
	}
	sp, err := st.NewSpool(run)
	if err != nil {
		return Sections{}, err
	}
	c := &counter{w: sp}
	out, err := c.measure(ctx, p, hooks)
	if err != nil {
		return out, err
	}
	return out, st.EndRun(run, time.Now().UnixNano(), true, out.Status)
}

// measure carries out p with Launch, the events going through c.
func (c *counter) measure(ctx context.Context, p runner.Plan, hooks udp.LaunchHooks) (Sections, error) {
	cpu0 := udp.ProcessCPU()
	res, err := netns.LaunchPlan(ctx, p, c, hooks)
	cpu1, end := udp.ProcessCPU(), time.Now()
	if c.w != nil {
		if cerr := c.w.Close(); err == nil {
			err = cerr
		}
	}
	out := Sections{Sections: c.exits, Events: res.Events, Status: res.Status,
		RunnerCPU: cpu1 - cpu0, AfterCPU: udp.ProcessCPU() - cpu1, After: time.Since(end),
		NodeCPU: res.NodeCPU, NodeRunCPU: res.NodeRunCPU,
		Datagrams: res.Transport.Sent, Retransmits: res.Transport.Retransmits}
	if c.exits > 0 {
		out.Span = time.Duration(c.lastExit - c.firstRequest)
	}
	if err == nil && !res.Complete {
		err = fmt.Errorf("%s: run did not complete: %s", p.Spec.Name, res.Status)
	}
	return out, err
}

// counter records events into a trace writer (none: it drops them) and
// notes the span of the critical sections.
type counter struct {
	w                      *trace.Spool // nil: not recorded
	exits                  int
	firstRequest, lastExit int64
}

func (c *counter) Record(ev *trace.Event) error {
	switch ev.Kind {
	case trace.KindCSRequest:
		if c.firstRequest == 0 || ev.Wall < c.firstRequest {
			c.firstRequest = ev.Wall
		}
	case trace.KindCSExit:
		c.exits++
		c.lastExit = max(c.lastExit, ev.Wall)
	}
	if c.w == nil {
		return nil
	}
	return c.w.Add(ev)
}

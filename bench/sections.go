package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"github.com/dmxlab/dmx/runner"
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

// RunSections carries out p with Launch, recording into a new trace in
// dir as dmx run does, and measures its critical sections.
func RunSections(ctx context.Context, p runner.Plan, hooks runner.LaunchHooks, dir string) (Sections, error) {
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
	w := st.NewWriter(run)
	c := &counter{w: w}
	cpu0 := selfCPU()
	res, err := runner.Launch(ctx, p, c, hooks)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	out := Sections{Sections: c.exits, Events: res.Events, Status: res.Status,
		RunnerCPU: selfCPU() - cpu0, NodeCPU: res.NodeCPU,
		Datagrams: res.Transport.Sent, Retransmits: res.Transport.Retransmits}
	if c.exits > 0 {
		out.Span = time.Duration(c.lastExit - c.firstRequest)
	}
	if err != nil {
		return out, err
	}
	if !res.Complete {
		return out, fmt.Errorf("%s: run did not complete: %s", p.Spec.Name, res.Status)
	}
	return out, st.EndRun(run, time.Now().UnixNano(), true, res.Status)
}

// counter records events into a trace writer and notes the span of the
// critical sections.
type counter struct {
	w                      *trace.Writer
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
	return c.w.Add(ev)
}

// selfCPU is the CPU time (user and system) this process used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/trace"
)

// keepEnv names a directory where a failed test of real processes leaves
// its trace, for dmx check, stats and render: such a failure depends on the
// machine's timing and may not come again.
const keepEnv = "DMX_TEST_TRACES"

// excused names the tests whose run broke a property that rests on time
// (checkReal logs it): their traces are kept too.
var excused sync.Map

// keepOnFailure arranges for the events c collects for plan p to be
// written to $DMX_TEST_TRACES/<test>-<time>.db if the test fails or its
// run broke a property that rests on time.
func keepOnFailure(t *testing.T, p runner.Plan, c *syncCollector) {
	t.Helper()
	dir := os.Getenv(keepEnv)
	if dir == "" {
		return
	}
	t.Cleanup(func() {
		if _, ok := excused.Load(t.Name()); !ok && !t.Failed() {
			return
		}
		name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
		path := filepath.Join(dir, fmt.Sprintf("%s-%s.db", name, time.Now().Format("150405.000")))
		c.mu.Lock()
		defer c.mu.Unlock()
		if err := writeTrace(path, p, c.Events); err != nil {
			t.Logf("keep the trace: %v", err)
			return
		}
		t.Logf("trace kept in %s", path)
	})
}

func writeTrace(path string, p runner.Plan, evs []trace.Event) error {
	row := p.RunRow()
	row.Complete, row.Status = true, "kept by a failed test"
	if len(evs) > 0 {
		row.Started, row.Ended = evs[0].Wall, evs[len(evs)-1].Wall
	} else {
		row.Ended = row.Started
	}
	_, err := trace.WriteRun(path, row, evs)
	return err
}

package exec

import (
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner/algo"
)

// FuzzOutput: any line a program writes is an output, done, or a finding
// that names it; never a panic, and never an output the runtime would
// refuse (a send to a node outside the run, a body that is not the line's
// own object).
func FuzzOutput(f *testing.F) {
	for _, s := range []string{
		`{"type":"done"}`, `{"type":"send","to":1,"body":{"type":"request","stamp":4,"id":2}}`,
		`{"type":"enter","resource":"cs"}`, `{"type":"exit"}`, `{"type":"leader","leader":2,"term":1}`,
		`{"type":"waiting","for":[0,1]}`, `{"type":"timer","name":"t","after_ms":1.5}`, `{"type":"cancel","name":"t"}`,
		`{"type":"note","text":"x"}`, `{"type":"election","term":3}`, `hello`, `{"type":1}`, `{"type":"send","to":-1,"body":{}}`,
		`{"type":"send","to":1,"body":{"type":"x"} }`, `{"type":"timer","name":"t","after_ms":1e300}`, `[]`, `{}`, ``,
	} {
		f.Add(s, 1)
	}
	f.Fuzz(func(t *testing.T, line string, state int) {
		m := &machine{id: 0, n: 3, kind: algo.MutualExclusion, resource: "cs", state: state_(state)}
		m.leave = state%2 == 0
		done := m.output([]byte(line))
		if done && strings.TrimSpace(line) != `{"type":"done"}` && !strings.Contains(line, `"done"`) {
			t.Errorf("%q taken for done", line)
		}
		for _, o := range m.outs {
			switch o.Kind {
			case algo.Send:
				if o.To < 0 || o.To >= m.n || o.Msg.Type == "" || !strings.HasPrefix(o.Msg.Body, "{") {
					t.Errorf("%q gave the send %+v", line, o)
				}
			case algo.Fail:
				if !strings.Contains(o.Text, "P0: output line") {
					t.Errorf("%q: a finding that does not name the node and the line: %s", line, o.Text)
				}
			case algo.SetTimer:
				if o.After < 0 {
					t.Errorf("%q: a timer %d ns before now", line, o.After)
				}
			case algo.Leader:
				if o.Leader < -1 || o.Leader >= m.n {
					t.Errorf("%q: leader %d", line, o.Leader)
				}
			}
		}
	})
}

func state_(i int) state {
	if i < 0 {
		i = -i
	}
	return state(i % 3)
}

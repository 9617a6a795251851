package replay_test

import (
	"os"
	"testing"

	"github.com/dmxlab/dmx/runner/algo/registry"
	"github.com/dmxlab/dmx/runner/replay"
	"github.com/dmxlab/dmx/trace"
)

func TestZZProf(t *testing.T) {
	p := os.Getenv("ZZ")
	if p == "" {
		t.Skip()
	}
	st, err := trace.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, _ := st.Run(1)
	s := replay.NewStates(st, run, registry.Lookup)
	defer s.Close()
	if _, err := s.After(trace.Ref{Proc: 3, Seq: 60000}); err != nil {
		t.Fatal(err)
	}
}

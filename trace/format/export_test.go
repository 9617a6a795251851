package format

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/internal/golden"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/foreign"
)

// small is a run of three processes with a critical section, an election,
// a crash, a wait and an imported pair of events linked beyond msg: every
// kind of line the exporters write.
func small() (trace.Run, []trace.Event) {
	req, grant, link := trace.MsgID(0, 1), trace.MsgID(1, 1), trace.MsgID(2, 1)
	ev := func(p int, seq int64, kind trace.Kind, wall int64, set func(*trace.Event)) trace.Event {
		e := trace.Event{Proc: p, Seq: seq, Kind: kind, Wall: wall, Peer: trace.NoPeer}
		if set != nil {
			set(&e)
		}
		return e
	}
	evs := []trace.Event{
		ev(0, 1, trace.KindCSRequest, 1000, func(e *trace.Event) { e.Resource = "cs" }),
		ev(0, 2, trace.KindSend, 1100, func(e *trace.Event) {
			e.Msg, e.Peer, e.MsgType, e.Resource = req, 1, "request", "cs"
			e.Detail = trace.EncodeDetail(trace.Message{Stamp: 1, ID: 0})
		}),
		ev(1, 1, trace.KindReceive, 1500, func(e *trace.Event) { e.Msg, e.Peer, e.MsgType, e.Resource = req, 0, "request", "cs" }),
		ev(1, 2, trace.KindSend, 1600, func(e *trace.Event) { e.Msg, e.Peer, e.MsgType, e.Resource = grant, 0, "grant", "cs" }),
		ev(0, 3, trace.KindReceive, 2000, func(e *trace.Event) { e.Msg, e.Peer, e.MsgType, e.Resource = grant, 1, "grant", "cs" }),
		ev(0, 4, trace.KindCSEnter, 2100, func(e *trace.Event) { e.Resource = "cs" }),
		ev(2, 1, trace.KindElectionStart, 2200, func(e *trace.Event) { e.Detail = trace.EncodeDetail(trace.ElectionStart{Term: 1}) }),
		ev(2, 2, trace.KindLeader, 2300, func(e *trace.Event) { e.Detail = trace.EncodeDetail(trace.Leader{Leader: 2, Term: 1}) }),
		ev(0, 5, trace.KindCSExit, 3000, func(e *trace.Event) { e.Resource = "cs" }),
		ev(1, 3, trace.KindCrash, 3100, func(e *trace.Event) { e.Detail = trace.EncodeDetail(trace.Crash{Reason: "killed by SIGKILL"}) }),
		ev(2, 3, trace.KindWait, 3200, func(e *trace.Event) {
			e.Resource = "cs"
			e.Detail = trace.EncodeDetail(trace.Wait{WaitingFor: []int{0, 1}})
		}),
		ev(2, 4, trace.KindInternal, 3300, func(e *trace.Event) {
			e.Detail = trace.EncodeImported(nil, trace.Origin{Src: "x.log:7", Text: "broadcast \"hello\""}, trace.Links{Sent: []trace.Link{{Msg: link, Peer: 0}}})
		}),
		ev(0, 6, trace.KindCSRequest, 3400, func(e *trace.Event) {
			e.Resource = "cs"
			e.Detail = trace.EncodeImported(nil, trace.Origin{Src: "x.log:9", Text: "want again"}, trace.Links{Recv: []trace.Link{{Msg: link, Peer: 2}}})
		}),
	}
	return trace.Run{ID: 1, Algorithm: "central", Nodes: 3, Mode: "sim", Complete: true}, evs
}

// TestExportGolden: what each exporter writes of the small run, against
// testdata/export/FORMAT.golden (go test -update rewrites them).
func TestExportGolden(t *testing.T) {
	x, err := analyze.ExportRun(small())
	if err != nil {
		t.Fatal(err)
	}
	for _, exp := range Exporters {
		t.Run(exp.Name, func(t *testing.T) {
			var got bytes.Buffer
			opt := foreign.ExportOptions{Timestamps: true}
			if exp.File != nil {
				if err := exp.File(&got, []foreign.Exported{x}, opt); err != nil {
					t.Fatal(err)
				}
			} else {
				dir := t.TempDir()
				if err := exp.Dir(dir, []foreign.Exported{x}, opt); err != nil {
					t.Fatal(err)
				}
				files, _ := filepath.Glob(filepath.Join(dir, "*"))
				sort.Strings(files)
				for _, f := range files {
					data, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(&got, "== %s ==\n%s", filepath.Base(f), data)
				}
			}
			golden.Check(t, filepath.Join("testdata", "export", exp.Name+".golden"), got.Bytes())
		})
	}
}

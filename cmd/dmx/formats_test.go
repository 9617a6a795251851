package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner/algo/registry"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/foreign"
	"github.com/dmxlab/dmx/trace/format/govector"
)

// run is one run of a trace as the round trips compare it: per named
// process, its events; the messages as (send, receive) pairs of events.
type run struct {
	events   map[string][]trace.Event // by process name, in seq order
	messages map[[2]string]bool       // "P0#3" -> "P1#4"
	names    []string
}

func loadRun(t *testing.T, path string) run {
	t.Helper()
	st, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs()
	if err != nil || len(runs) != 1 {
		t.Fatalf("%s: runs %v, %v", path, runs, err)
	}
	evs, err := st.AllEvents(runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	// The clocks as happens-before gives them, whatever was recorded.
	x, err := foreign.Prepare(runs[0], evs)
	if err != nil {
		t.Fatal(err)
	}
	r := run{events: map[string][]trace.Event{}, messages: map[[2]string]bool{}, names: x.Hosts}
	ref := func(i int) string {
		ev := &x.Events[i]
		return fmt.Sprintf("%s#%d", x.Hosts[ev.Proc], ev.Seq)
	}
	for _, ev := range x.Events {
		e := ev.Event
		// Clocks by name: the imported run may number its processes
		// otherwise.
		r.events[x.Hosts[e.Proc]] = append(r.events[x.Hosts[e.Proc]], e)
	}
	for _, evs := range r.events {
		slices.SortFunc(evs, func(a, b trace.Event) int { return int(a.Seq - b.Seq) })
	}
	for _, m := range x.Messages {
		if m.Send < 0 {
			continue
		}
		for _, rv := range m.Recvs {
			r.messages[[2]string{ref(m.Send), ref(rv)}] = true
		}
		if len(m.Recvs) == 0 {
			r.messages[[2]string{ref(m.Send), ""}] = true
		}
	}
	return r
}

// clockByName is a vector clock keyed by process name.
func clockByName(vc trace.VC, names []string) map[string]uint64 {
	out := map[string]uint64{}
	for p, v := range vc {
		if v > 0 {
			out[names[p]] = v
		}
	}
	return out
}

// importedKind is the kind an event of dmx's own has after a round trip
// with the --dmx rules: the rules give back all but these.
func importedKind(k trace.Kind) trace.Kind {
	switch k {
	case trace.KindStart, trace.KindStop, trace.KindTimeout, trace.KindDeliver, trace.KindSuspect,
		trace.KindTrust, trace.KindInternal, trace.KindDrop:
		return trace.KindInternal
	}
	return k
}

// compareRuns checks that b, imported from an export of a, has a's events
// (by process, kind, resource, leader and term with exact, else the kinds the
// clocks give), a's happens-before (every vector clock), and a's messages
// (exact: all of them, paired by id; otherwise those the clocks show).
func compareRuns(t *testing.T, a, b run, exact bool) {
	t.Helper()
	if len(a.events) != len(b.events) {
		t.Fatalf("%d processes, want %d", len(b.events), len(a.events))
	}
	for name, evs := range a.events {
		got := b.events[name]
		if len(got) != len(evs) {
			t.Fatalf("%s: %d events, want %d", name, len(got), len(evs))
		}
		for i := range evs {
			want, have := &evs[i], &got[i]
			wvc, hvc := clockByName(want.VC, a.names), clockByName(have.VC, b.names)
			if fmt.Sprint(wvc) != fmt.Sprint(hvc) {
				t.Fatalf("%s#%d %s: clock %v, want %v", name, want.Seq, have.Kind, hvc, wvc)
			}
			if !exact {
				continue
			}
			if k := importedKind(want.Kind); have.Kind != k {
				t.Fatalf("%s#%d: kind %s, want %s (was %s)", name, want.Seq, have.Kind, k, want.Kind)
			}
			if have.Kind != trace.KindInternal && have.Resource != want.Resource {
				t.Errorf("%s#%d %s: resource %q, want %q", name, want.Seq, have.Kind, have.Resource, want.Resource)
			}
			if have.Kind == trace.KindSend || have.Kind == trace.KindReceive {
				if have.MsgType != want.MsgType {
					t.Errorf("%s#%d %s: message type %q, want %q", name, want.Seq, have.Kind, have.MsgType, want.MsgType)
				}
			}
			switch have.Kind {
			case trace.KindLeader:
				wl, _ := want.Leader()
				hl, _ := have.Leader()
				if a.names[wl.Leader] != b.names[hl.Leader] || wl.Term != hl.Term {
					t.Errorf("%s#%d: leader %+v, want %+v", name, want.Seq, hl, wl)
				}
			case trace.KindElectionStart:
				wd, _ := want.ElectionStart()
				hd, _ := have.ElectionStart()
				if wd != hd {
					t.Errorf("%s#%d: %+v, want %+v", name, want.Seq, hd, wd)
				}
			case trace.KindWait:
				ww, _ := want.Wait()
				hw, _ := have.Wait()
				var wn, hn []string
				for _, p := range ww.WaitingFor {
					wn = append(wn, a.names[p])
				}
				for _, p := range hw.WaitingFor {
					hn = append(hn, b.names[p])
				}
				if fmt.Sprint(wn) != fmt.Sprint(hn) {
					t.Errorf("%s#%d: waits for %v, want %v", name, want.Seq, hn, wn)
				}
			}
		}
	}
	for m := range b.messages {
		if !a.messages[m] {
			t.Errorf("message %v was not in the trace", m)
		}
	}
	if exact {
		for m := range a.messages {
			if !b.messages[m] {
				t.Errorf("message %v is lost", m)
			}
		}
	}
	t.Logf("%d of %d messages rebuilt", len(b.messages), len(a.messages))
}

// TestRoundTrips: a simulated run of every algorithm, exported to ShiViz
// and to GoVector and imported back, keeps its events, its messages and
// its happens-before: exactly with the --dmx rules, and as far as clocks
// show without them (every message rebuilt is one of the run's).
func TestRoundTrips(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, algo := range registry.Names() {
		t.Run(algo, func(t *testing.T) {
			dir := t.TempDir()
			orig := filepath.Join(dir, "orig.db")
			args := []string{"sim", algo, "--seed", "3", "-n", "4", "--entries", "3", "-o", orig, "--no-check"}
			if algo == "central" {
				args = append(args, "--faults", "crash:2@20ms,recover:2@60ms") // crash and recover events too
			}
			if code, _, errs := dmx(t, args...); code != 0 {
				t.Fatalf("sim: exit %d: %s", code, errs)
			}
			a := loadRun(t, orig)
			log := filepath.Join(dir, "run.log")
			if code, _, errs := dmx(t, "export", "shiviz", orig, "-o", log); code != 0 {
				t.Fatalf("export shiviz: exit %d: %s", code, errs)
			}
			logs := filepath.Join(dir, "logs")
			if code, _, errs := dmx(t, "export", "govector", orig, "-o", logs); code != 0 {
				t.Fatalf("export govector: exit %d: %s", code, errs)
			}
			var files []string
			for _, f := range govector.FileNames(a.names) {
				files = append(files, filepath.Join(logs, f))
			}
			for _, tc := range []struct {
				name  string
				args  []string
				exact bool
			}{
				{"shiviz", []string{"import", "shiviz", log}, false},
				{"shiviz --dmx", []string{"import", "shiviz", log, "--dmx"}, true},
				{"govector", append([]string{"import", "govector"}, files...), false},
				{"govector --dmx", append(append([]string{"import", "govector"}, files...), "--dmx"), true},
			} {
				t.Run(tc.name, func(t *testing.T) {
					back := filepath.Join(t.TempDir(), "back.db")
					if code, out, errs := dmx(t, append(tc.args, "-o", back)...); code != 0 {
						t.Fatalf("%v: exit %d: %s%s", tc.args, code, out, errs)
					}
					compareRuns(t, a, loadRun(t, back), tc.exact)
					if code, out, errs := dmx(t, "check", "--checks", "clocks", back); code != 0 {
						t.Errorf("check clocks of the imported run: exit %d\n%s%s", code, out, errs)
					}
				})
			}
		})
	}
}

// TestExportPerfetto: the Chrome trace-event JSON of a run has a track per
// process, a slice per critical section, a flow per message and an instant
// per crash.
func TestExportPerfetto(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "run.db")
	if code, _, errs := dmx(t, "sim", "central", "-n", "3", "--entries", "2", "--seed", "4", "--faults", "crash:1@30ms,recover:1@80ms", "-o", db, "--no-check"); code != 0 {
		t.Fatalf("sim: exit %d: %s", code, errs)
	}
	out := filepath.Join(dir, "run.json")
	if code, _, errs := dmx(t, "export", "perfetto", db, "-o", out); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		TraceEvents []struct {
			Name    string         `json:"name"`
			Ph      string         `json:"ph"`
			Pid     int            `json:"pid"`
			BindID  int64          `json:"bind_id"`
			FlowIn  bool           `json:"flow_in"`
			FlowOut bool           `json:"flow_out"`
			Args    map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	count := map[string]int{}
	flows := map[int64][2]int{}
	for _, e := range f.TraceEvents {
		switch {
		case e.Ph == "M" && e.Name == "process_name":
			count["tracks"]++
		case e.Ph == "b" && strings.HasPrefix(e.Name, "holds "):
			count["sections"]++
		case e.Ph == "i" && e.Name == "crash":
			count["crashes"]++
		}
		if e.BindID != 0 {
			c := flows[e.BindID]
			if e.FlowOut {
				c[0]++
			}
			if e.FlowIn {
				c[1]++
			}
			flows[e.BindID] = c
		}
	}
	q := func(sql string) string {
		_, out, _ := dmx(t, "sql", db, sql, "--format", "csv")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}
	if want := q("SELECT nodes FROM runs"); fmt.Sprint(count["tracks"]) != want {
		t.Errorf("%d tracks, want %s", count["tracks"], want)
	}
	if want := q("SELECT count(*) FROM events WHERE kind = 'cs_enter'"); fmt.Sprint(count["sections"]) != want {
		t.Errorf("%d sections, want %s", count["sections"], want)
	}
	if count["crashes"] != 1 {
		t.Errorf("%d crashes, want 1", count["crashes"])
	}
	if want := q("SELECT count(*) FROM messages WHERE recv_event IS NOT NULL AND send_event IS NOT NULL"); fmt.Sprint(len(flows)) != want {
		t.Errorf("%d flows, want %s", len(flows), want)
	}
	for id, c := range flows {
		if c != [2]int{1, 1} {
			t.Errorf("flow %d has %d starts and %d ends", id, c[0], c[1])
		}
	}
}

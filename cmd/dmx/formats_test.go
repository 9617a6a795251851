package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/runner/algotest"
	"github.com/dmxlab/dmx/runner/registry"
	"github.com/dmxlab/dmx/trace"
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
	st, one := openOneRun(t, path)
	defer st.Close()
	evs, err := st.AllEvents(one.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The clocks as happens-before gives them, whatever was recorded.
	x, err := analyze.ExportRun(one, evs)
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
		e.VC = ev.VCOf(len(x.Hosts))
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
// and to GoVector and imported back, keeps its events, its messages (each
// one, with its type) and its happens-before: the import sees that the log
// is dmx's and applies the --dmx rules by itself (issue 29: without them
// a message nobody received was lost, and every type became "msg").
// The log names each message as a reader would, "P1's message 1", not by
// its id, 4294967297 (issue 28), and a log of an export before, which
// wrote msg=4294967297, still reads back.
func TestRoundTrips(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	// Every algorithm with DMX_LONG=1; by default one of each kind, the
	// crash and recovery of central's run included.
	some := map[string]bool{"central": true, "ricart-agrawala": true, "tomcast": true, "bully": true}
	for _, algo := range registry.Names() {
		if !some[algo] && !algotest.Long() {
			continue
		}
		t.Run(algo, func(t *testing.T) {
			dir := t.TempDir()
			orig := filepath.Join(dir, "orig.db")
			args := []string{"sim", algo, "--seed", "3", "-n", "4", "--entries", "3", "-o", orig, "--no-check"}
			if algo == "central" {
				args = append(args, "--faults", "crash:2@20ms,recover:2@60ms") // crash and recover events too
			}
			dmxOK(t, args...)
			a := loadRun(t, orig)
			log := filepath.Join(dir, "run.log")
			dmxOK(t, "export", "shiviz", orig, "-o", log)
			text := readFile(t, log)
			if raw := regexp.MustCompile(`msg=\d|\d{9,}`).Find(text); raw != nil {
				t.Errorf("the ShiViz log shows a message by its id: %q", raw)
			}
			if !strings.Contains(string(text), " (P1's message 1)") {
				t.Errorf("the ShiViz log names no message as P1's message 1:\n%.2000s", text)
			}
			// The log as an export before this one wrote it.
			oldLog := filepath.Join(dir, "old.log")
			named := regexp.MustCompile(`\((?:P(\d+)'s message (\d+)|message (\d+))\)`)
			old := named.ReplaceAllFunc(text, func(b []byte) []byte {
				m := named.FindSubmatch(b)
				if m[3] != nil {
					return append([]byte("msg="), m[3]...)
				}
				p, _ := strconv.Atoi(string(m[1]))
				k, _ := strconv.ParseInt(string(m[2]), 10, 64)
				return []byte("msg=" + strconv.FormatInt(trace.MsgID(p, k), 10))
			})
			if err := os.WriteFile(oldLog, old, 0o644); err != nil {
				t.Fatal(err)
			}
			logs := filepath.Join(dir, "logs")
			dmxOK(t, "export", "govector", orig, "-o", logs)
			var files []string
			for _, f := range govector.FileNames(a.names) {
				files = append(files, filepath.Join(logs, f))
			}
			for _, tc := range []struct {
				name  string
				args  []string
				exact bool
			}{
				{"shiviz", []string{"import", "shiviz", log}, true},
				{"shiviz --dmx", []string{"import", "shiviz", log, "--dmx"}, true},
				{"shiviz with msg=ID", []string{"import", "shiviz", oldLog}, true},
				{"govector", append([]string{"import", "govector"}, files...), true},
				{"govector --dmx", append(append([]string{"import", "govector"}, files...), "--dmx"), true},
			} {
				t.Run(tc.name, func(t *testing.T) {
					back := filepath.Join(t.TempDir(), "back.db")
					code, out, errs := dmx(t, append(tc.args, "-o", back)...)
					if code != 0 {
						t.Fatalf("%v: exit %d: %s%s", tc.args, code, out, errs)
					}
					if said := strings.Contains(errs, "the log is one dmx export wrote"); said == slices.Contains(tc.args, "--dmx") {
						t.Errorf("%v: the import says the log is dmx's: %v\n%s", tc.args, said, errs)
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
	dmxOK(t, "sim", "central", "-n", "3", "--entries", "2", "--seed", "4", "--faults", "crash:1@30ms,recover:1@80ms", "-o", db, "--no-check")
	out := filepath.Join(dir, "run.json")
	dmxOK(t, "export", "perfetto", db, "-o", out)
	data := readFile(t, out)
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

// writeFiles writes name -> contents into dir and returns the paths, in
// the order of names.
func writeFiles(t *testing.T, dir string, names []string, files map[string]string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte(files[n]), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// lockRules read the lock logs of the tests below.
var lockRules = []string{
	"--rule", `cs_request=^want lock (?<resource>\w+)`,
	"--rule", `cs_enter=^got lock (?<resource>\w+)`,
	"--rule", `cs_exit=^released lock (?<resource>\w+)`,
}

// TestImportedLockViolations: a lock log with two processes inside at once
// (GoVector's timestamps show it), or with two sections no message orders,
// is found by dmx check, and the finding names the log's own lines.
func TestImportedLockViolations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"inside at once", map[string]string{
			"a-Log.txt": "1000 a {\"a\":1}\nInitialization Complete\n2000 a {\"a\":2}\nINFO want lock printer\n3000 a {\"a\":3}\nINFO got lock printer\n9000 a {\"a\":4}\nINFO released lock printer\n",
			"b-Log.txt": "1500 b {\"b\":1}\nInitialization Complete\n2500 b {\"b\":2}\nINFO want lock printer\n4000 b {\"b\":3}\nINFO got lock printer\n5000 b {\"b\":4}\nINFO released lock printer\n",
		}, []string{
			"mutex-realtime: critical sections on printer overlap in wall time",
			"(in the log: a#3 at ", "a-Log.txt:6, a#4 at ", "a-Log.txt:8, b#3 at ", "b-Log.txt:6, b#4 at ", "b-Log.txt:8)",
		}},
		// a's section ends before b's begins in wall time, but no message
		// tells b that a left: b's grant came before a's release.
		{"no message orders them", map[string]string{
			"a-Log.txt": "1000 a {\"a\":1}\nInitialization Complete\n2000 a {\"a\":2}\nINFO want lock printer\n3000 a {\"a\":3}\nINFO got lock printer\n4000 a {\"a\":4}\nINFO released lock printer\n",
			"b-Log.txt": "1500 b {\"b\":1}\nInitialization Complete\n2500 b {\"b\":2, \"a\":2}\nINFO want lock printer\n5000 b {\"b\":3, \"a\":2}\nINFO got lock printer\n6000 b {\"b\":4, \"a\":2}\nINFO released lock printer\n",
		}, []string{
			"mutex-causal: concurrent critical sections on printer: a [a#3..a#4] and b [b#3..b#4]",
			"a-Log.txt:6", "b-Log.txt:6",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := writeFiles(t, dir, []string{"a-Log.txt", "b-Log.txt"}, tc.files)
			db := filepath.Join(dir, "lock.db")
			args := append(append([]string{"import", "govector"}, files...), "-o", db)
			if code, out, errs := dmx(t, append(args, lockRules...)...); code != 0 {
				t.Fatalf("import: exit %d\n%s%s", code, out, errs)
			}
			code, out, errs := dmx(t, "check", db)
			if code != exitViolated {
				t.Errorf("check: exit %d, want %d\n%s%s", code, exitViolated, out, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("check output lacks %q:\n%s", w, out)
				}
			}
			code, out, _ = dmx(t, "check", "--format", "json", db)
			if code != exitViolated || !strings.Contains(out, `"sources": [`) {
				t.Errorf("check --format json: exit %d, no sources:\n%s", code, out)
			}
		})
	}
}

// TestImportBadInput: each kind of bad input is an error naming the file
// and line, exit 2; with --lenient, a trace of what could be read and a
// count of what was skipped and why.
func TestImportBadInput(t *testing.T) {
	const gv = `(?<host>\S*) (?<clock>{.*})\n(?<event>.*)`
	for _, tc := range []struct {
		name    string
		format  string
		log     string
		args    []string
		want    string // in the error
		lenient string // in the warning under --lenient; "" if the input cannot be read at all
		events  int    // imported under --lenient
	}{
		{"truncated last event (govector)", "govector", "a {\"a\":1}\nInitialization Complete\na {\"a\":2}\nINFO send\na {\"a\":3}\n", nil,
			"bad.log:5: the log ends after the clock line of an event, without its message", "truncated event (1)", 2},
		{"truncated last event (shiviz)", "shiviz", "a {\"a\":1}\nInitialization Complete\na {\"a\":2}\nINFO send\na {\"a\":3, \"b", []string{"--regex", gv},
			"bad.log:5: the log ends with text the regex does not match", "truncated event (1)", 2},
		{"unknown host in a clock", "govector", "a {\"a\":1}\nx\na {\"a\":2, \"zz\":1}\ny\n", nil,
			`bad.log:3: the clock names host "zz", which logged no event`, "unknown host in a clock (1)", 2},
		{"clock going backwards", "govector", "a {\"a\":1}\nx\na {\"a\":2}\ny\na {\"a\":1}\nz\n", nil,
			`bad.log:5: host "a"'s own clock entry is 1, as at bad.log:1`, "clock going backwards (1)", 2},
		{"unmatched receive", "govector", "b {\"b\":1}\nx\na {\"a\":1, \"b\":3}\nrecv\n", nil,
			`bad.log:3: the clock shows event 3 of host "b", which the log of "b" does not have`, "unmatched receive (1)", 2},
		{"regex without the required groups", "shiviz", "a {\"a\":1}\nx\n", []string{"--regex", `(?<host>\S*) (?<clock>{.*})`},
			`bad.log: the parser regex "(?<host>\\S*) (?<clock>{.*})" has no (?<event>...) group`, "", 0},
		{"regex with a lookahead", "shiviz", "(?<host>\\S*)(?=x) (?<clock>{.*})\n\na {\"a\":1}\n", nil,
			"bad.log:1: parser regex: regex \"(?<host>\\\\S*)(?=x) (?<clock>{.*})\": uses a lookahead", "", 0},
		{"separator on line 2 matching nothing", "shiviz", "(?<host>\\S*) (?<clock>{.*})\\n(?<event>.*)\n^=== (?<trace>.*) ===$\na {\"a\":1}\nx\n", nil,
			`bad.log:2: the separator "^=== (?<trace>.*) ===$" matches nothing in the log`, "separator matching nothing (1)", 1},
		{"separator matching nothing", "shiviz", "a {\"a\":1}\nx\n", []string{"--regex", gv, "--separator", `^=== (?<trace>.*) ===$`},
			`bad.log: the separator "^=== (?<trace>.*) ===$" matches nothing in the log`, "separator matching nothing (1)", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			log := writeFiles(t, dir, []string{"bad.log"}, map[string]string{"bad.log": tc.log})[0]
			db := filepath.Join(dir, "t.db")
			args := append([]string{"import", tc.format, log, "-o", db}, tc.args...)
			code, out, errs := dmx(t, args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d\n%s%s", code, exitUsage, out, errs)
			}
			if want := strings.ReplaceAll(tc.want, "bad.log", log); !strings.Contains(errs, want) {
				t.Errorf("stderr lacks %q:\n%s", want, errs)
			}
			if _, err := os.Stat(db); err == nil {
				t.Errorf("a failed import wrote %s", db)
			}
			code, out, errs = dmx(t, append(args, "--lenient")...)
			if tc.lenient == "" {
				if code != exitUsage {
					t.Errorf("--lenient: exit %d, want %d", code, exitUsage)
				}
				return
			}
			if code != 0 {
				t.Fatalf("--lenient: exit %d\n%s%s", code, out, errs)
			}
			if !strings.Contains(errs, "skipped 1 problem (--lenient): "+tc.lenient) {
				t.Errorf("--lenient: stderr lacks %q:\n%s", tc.lenient, errs)
			}
			if !strings.Contains(out, fmt.Sprintf("run 1: %s,", counted(tc.events, "event"))) {
				t.Errorf("--lenient: want %d events imported:\n%s", tc.events, out)
			}
			if code, out, errs := dmx(t, "check", db); code == exitUsage {
				t.Errorf("check of the lenient import: exit %d\n%s%s", code, out, errs)
			}
		})
	}
}

// TestImportUsage: the import and export commands' usage errors, and
// their help with a rule for a lock and for an election.
func TestImportUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "csv", "x.log", "-o", "t.db"}, `no format "csv" (formats: govector, shiviz)`},
		{[]string{"import", "shiviz", "x.log"}, "-o TRACE is required"},
		{[]string{"import", "shiviz", "x.log", "-o", "t.db", "--separator", "x"}, "--separator goes with --regex"},
		{[]string{"import", "shiviz", "x.log", "-o", "t.db", "--rule", "enter=x"}, `no kind "enter"`},
		{[]string{"import", "shiviz", "/nonexistent/x.log", "-o", "t.db"}, "no such file"},
		{[]string{"export", "svg", "t.db"}, `no format "svg" (formats: shiviz, govector, perfetto, mermaid, parquet)`},
		{[]string{"export", "govector", "t.db"}, "-o DIR is required"},
		{[]string{"export", "shiviz", "/nonexistent/t.db"}, "no such trace file"},
	} {
		code, out, errs := dmx(t, tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("dmx %v: exit %d, stderr %q; want exit 2 and %q\n%s", tc.args, code, errs, tc.want, out)
		}
	}
	_, out, _ := dmx(t, "import", "--help")
	for _, want := range []string{"cs_enter=^got lock", "leader=^(?<leader>", "election_start=", "--lenient", "--dmx"} {
		if !strings.Contains(out, want) {
			t.Errorf("import --help lacks %q", want)
		}
	}
}

// TestLogExamples: the logs of examples/logs import as the README says,
// and dmx check finds what they show, naming the logs' lines.
func TestLogExamples(t *testing.T) {
	dir := t.TempDir()
	lock, election := filepath.Join(dir, "lock.db"), filepath.Join(dir, "election.db")
	for _, args := range [][]string{
		{"import", "govector", "../../examples/logs/a-Log.txt", "../../examples/logs/b-Log.txt", "--rules", "../../examples/logs/lock.rules", "-o", lock},
		{"import", "shiviz", "../../examples/logs/election.log", "--rules", "../../examples/logs/election.rules", "-o", election},
	} {
		if code, out, errs := dmx(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	for _, tc := range []struct {
		db   string
		want []string
	}{
		{lock, []string{"mutex-causal: concurrent critical sections on printer", "mutex-realtime: critical sections on printer overlap",
			"a#3 at ../../examples/logs/a-Log.txt:6", "b#3 at ../../examples/logs/b-Log.txt:6"}},
		{election, []string{"agreement: term 1 has two leaders", "at ../../examples/logs/election.log:18"}},
	} {
		code, out, _ := dmx(t, "check", tc.db)
		if code != exitViolated {
			t.Errorf("check %s: exit %d, want %d\n%s", tc.db, code, exitViolated, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("check %s lacks %q:\n%s", tc.db, w, out)
			}
		}
	}
	// A round trip through GoVector with timestamps keeps the wall times:
	// every check runs, and the run is as good as before.
	ra, back, logs := filepath.Join(dir, "ra.db"), filepath.Join(dir, "back.db"), filepath.Join(dir, "logs")
	dmxOK(t, "sim", "ricart-agrawala", "--seed", "42", "-n", "3", "--entries", "2", "-o", ra, "--no-check")
	dmxOK(t, "export", "govector", ra, "-o", logs, "--timestamps")
	files := []string{filepath.Join(logs, "P0-Log.txt"), filepath.Join(logs, "P1-Log.txt"), filepath.Join(logs, "P2-Log.txt")}
	if code, out, errs := dmx(t, append(append([]string{"import", "govector"}, files...), "--dmx", "-o", back)...); code != 0 || !strings.Contains(out, "run 1: 90 events, 3 processes, 24 messages") {
		t.Fatalf("import: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := dmx(t, "check", back); code != 0 || !strings.Contains(out, "verdict: ok") {
		t.Errorf("check of the round trip: exit %d\n%s", code, out)
	}
}

// TestExportMermaid: dmx export mermaid writes a small run as a fenced
// sequence diagram, and refuses a run Mermaid cannot draw legibly, saying
// how to draw a window instead.
func TestExportMermaid(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.db")
	dmxOK(t, "sim", "ricart-agrawala", "-n", "3", "--entries", "2", "--seed", "3", "-o", small, "--no-diagram", "--no-check")
	code, out, errs := dmx(t, "export", "mermaid", small)
	if code != 0 {
		t.Fatalf("export mermaid: exit %d: %s", code, errs)
	}
	for _, want := range []string{"```mermaid\nsequenceDiagram\n", "participant P2", "P2->>P0: request", "Note right of P2: enter cs"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	big := filepath.Join(dir, "big.db")
	dmxOK(t, "sim", "ricart-agrawala", "-n", "5", "--seed", "3", "-o", big, "--no-diagram", "--no-check")
	code, _, errs = dmx(t, "export", "mermaid", big)
	if code != 2 || !strings.Contains(errs, "dmx render") {
		t.Fatalf("export mermaid of a big run: exit %d, want 2 with advice to render a window:\n%s", code, errs)
	}
}

// manyProcsTrace writes a run of n processes, each with one send that is
// never received and no recorded clocks, into dir/name.
func manyProcsTrace(t *testing.T, dir, name string, n int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	evs := make([]trace.Event, n)
	for p := range evs {
		evs[p] = trace.Event{Proc: p, Seq: 1, Kind: trace.KindSend, Msg: trace.MsgID(p, 1), MsgType: "m", Peer: (p + 1) % n, Lamport: 1, Wall: int64(p)}
	}
	if _, err := trace.WriteRun(path, trace.Run{Algorithm: "many", Nodes: n, Mode: "import", NoSeed: true, Ended: int64(n), Complete: true, Status: "done"}, evs); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExportManyProcesses: exports keep each event's clock as its non-zero
// entries, so that memory and files grow with the events, not with the
// processes squared (issue 22: 16,384 processes with a message each made
// dmx export perfetto take 4.4 GB and write 544 MB, shiviz 2.2 GB; 32,768,
// 8.5 GB). Each export is a process of its own whose peak memory is
// measured above what dmx takes to start.
func TestExportManyProcesses(t *testing.T) {
	dir := t.TempDir()
	path := manyProcsTrace(t, dir, "many.db", 16384)
	_, _, base := bounded(t, time.Minute, "sql", path, "SELECT 1")
	for _, f := range []string{"perfetto", "shiviz", "govector"} {
		out := filepath.Join(dir, "out."+f)
		code, msg, mb := bounded(t, 2*time.Minute, "export", f, path, "-o", out)
		if code != 0 {
			t.Fatalf("export %s: exit %d\n%s", f, code, msg)
		}
		if mb > base+200 {
			t.Errorf("export %s of 16,384 processes: %d MB resident (dmx alone: %d MB)", f, mb, base)
		}
		if fi, err := os.Stat(out); err != nil || !fi.IsDir() && fi.Size() > 32<<20 {
			t.Errorf("export %s: a file of %d MB (%v)", f, fi.Size()>>20, err)
		}
		t.Logf("export %s: %d MB resident (dmx alone: %d MB)", f, mb, base)
	}
}

// TestExportParquetCommand: dmx export parquet writes the files of
// several traces and says what it wrote; what it cannot do is refused.
func TestExportParquetCommand(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	dmx(t, "sweep", "ricart-agrawala", "-n", "3", "--entries", "2", "--seeds", "1..3", "-o", a)
	dmx(t, "sim", "bully", "--seed", "2", "--no-diagram", "-o", b)
	out := filepath.Join(dir, "pq")
	code, stdout, errs := dmx(t, "export", "parquet", a, b, "-o", out)
	if code != 0 || !strings.Contains(stdout, "4 runs") {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	for _, f := range []string{"runs.parquet", "verdicts.parquet", "events/run=4/events.parquet", "messages/run=1/messages.parquet"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "parquet", a}, "-o DIR is required"},
		{[]string{"export", "parquet", a, "-o", out}, "is not empty"},
		{[]string{"export", "parquet", a, b, "--run", "1", "-o", filepath.Join(dir, "x")}, "name one trace"},
		{[]string{"export", "shiviz", a, b}, "one trace at a time"},
	} {
		if code, _, errs := dmx(t, c.args...); code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("dmx %v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, errs)
		}
	}
}

// duckDB returns a function that runs a query in DuckDB (through node
// and @duckdb/node-api in the node_modules that DMX_DUCKDB names, which
// .ci/run installs) and returns its rows, or skips the test when DuckDB
// is not at hand (fails under CI=true, where it must be).
func duckDB(t *testing.T) func(query string) []map[string]any {
	t.Helper()
	mods := os.Getenv("DMX_DUCKDB")
	node, err := exec.LookPath("node")
	if mods == "" || err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("DuckDB is not at hand (DMX_DUCKDB=%q, node: %v): .ci/run installs it", mods, err)
		}
		t.Skip("DuckDB is not at hand: set DMX_DUCKDB to a node_modules directory holding @duckdb/node-api (npm install @duckdb/node-api)")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "duckdb.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	return func(query string) []map[string]any {
		t.Helper()
		cmd := exec.Command(node, script, query)
		cmd.Env = append(os.Environ(), "NODE_PATH="+mods)
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("duckdb: %v\n%s\n%s", err, query, stderr)
		}
		var rows []map[string]any
		if err := json.Unmarshal(out, &rows); err != nil {
			t.Fatalf("duckdb: %v: %s", err, out)
		}
		return rows
	}
}

// TestParquetDuckDB: a second reader, DuckDB, reads the export with the
// trace's rows (every event of a run, as SQLite holds it), the counts of
// every table, and runs each query docs/sweep.md shows.
func TestParquetDuckDB(t *testing.T) {
	duck := duckDB(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	dmx(t, "sweep", "ricart-agrawala", "-n", "3", "--entries", "3", "--faults", "random", "--seeds", "1..12", "-o", a)
	dmx(t, "sweep", "bully", "--nemesis", "pause:who=leader", "--seeds", "1..3", "-o", b)
	out := filepath.Join(dir, "warehouse")
	if code, stdout, errs := dmx(t, "export", "parquet", a, b, "-o", out); code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, stdout, errs)
	}
	events := "read_parquet('" + out + "/events/*/*.parquet', hive_partitioning = true)"
	var sqlEvents, sqlMessages, sqlRuns, noFaults int64
	for _, p := range []string{a, b} {
		st, err := trace.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var e, m, r, n int64
		st.DB().QueryRow(`SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM messages), (SELECT count(*) FROM runs), (SELECT count(*) FROM runs WHERE faults = '[]')`).Scan(&e, &m, &r, &n)
		sqlEvents, sqlMessages, sqlRuns, noFaults = sqlEvents+e, sqlMessages+m, sqlRuns+r, noFaults+n
		st.Close()
	}
	got := duck(fmt.Sprintf(`SELECT (SELECT count(*) FROM %s) AS events,
		(SELECT count(*) FROM read_parquet('%s/messages/*/*.parquet', hive_partitioning = true)) AS messages,
		(SELECT count(*) FROM read_parquet('%s/runs.parquet')) AS runs`, events, out, out))
	if fmt.Sprintf("%v %v %v", got[0]["events"], got[0]["messages"], got[0]["runs"]) != fmt.Sprintf("%d %d %d", sqlEvents, sqlMessages, sqlRuns) {
		t.Errorf("DuckDB counts %v; the traces hold %d events, %d messages, %d runs", got, sqlEvents, sqlMessages, sqlRuns)
	}
	// Run 13 is b's first: every event as SQLite holds it.
	cols := `concat_ws('|', id, proc, seq, kind, lamport, coalesce(vc, 'NULL'), wall_ns, coalesce(msg::VARCHAR, 'NULL'),
		coalesce(msg_type, 'NULL'), coalesce(peer::VARCHAR, 'NULL'), coalesce(resource, 'NULL'), coalesce(detail, 'NULL')) AS row`
	var duckRows []string
	for _, r := range duck(fmt.Sprintf(`SELECT %s FROM %s WHERE run = 13 ORDER BY id`, cols, events)) {
		duckRows = append(duckRows, fmt.Sprint(r["row"]))
	}
	st, err := trace.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.DB().Query(`SELECT ` + strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(cols, "concat_ws('|', ", ""), ") AS row", ""), "::VARCHAR", "") + ` FROM events WHERE run = 1 ORDER BY id`)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	var sqlRows []string
	for rows.Next() {
		v := make([]any, 12)
		p := make([]any, 12)
		for i := range v {
			p[i] = &v[i]
		}
		rows.Scan(p...)
		var f []string
		for _, x := range v {
			if bs, ok := x.([]byte); ok {
				x = string(bs)
			}
			f = append(f, fmt.Sprint(x))
		}
		sqlRows = append(sqlRows, strings.Join(f, "|"))
	}
	rows.Close()
	st.Close()
	if len(sqlRows) == 0 || strings.Join(duckRows, "\n") != strings.Join(sqlRows, "\n") {
		t.Errorf("DuckDB reads run 13's events as\n%s\nSQLite holds\n%s", strings.Join(duckRows[:min(5, len(duckRows))], "\n"), strings.Join(sqlRows[:min(5, len(sqlRows))], "\n"))
	}
	// The documented queries.
	doc := readFile(t, filepath.Join("..", "..", "docs", "sweep.md"))
	queries := regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	if len(queries) < 3 {
		t.Fatalf("docs/sweep.md shows %d SQL queries", len(queries))
	}
	for i, q := range queries {
		res := duck(strings.ReplaceAll(q[1], "'warehouse/", "'"+out+"/"))
		if len(res) == 0 {
			t.Errorf("query %d gives no rows:\n%s", i+1, q[1])
		}
		if i == 0 {
			var none int64
			for _, r := range res {
				if r["kind"] == "none" {
					n, _ := strconv.ParseInt(fmt.Sprint(r["runs"]), 10, 64)
					none += n
				}
			}
			if none != noFaults {
				t.Errorf("query 1 counts %v runs without faults; the traces hold %d", none, noFaults)
			}
		}
	}
}

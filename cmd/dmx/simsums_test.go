package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/runner/algotest"
	"github.com/dmxlab/dmx/runner/registry"
)

var updateSimSums = algotest.UpdateFlag("rewrite the golden files (testdata/simsums.txt: the checksums of this build's simulated traces)")

// simSumCases are simulated runs whose traces must not change unless a
// change means them to: every algorithm with its defaults, with crashes,
// without FIFO channels, nested locks, and every example scenario.
func simSumCases(t *testing.T) map[string][]string {
	cases := map[string][]string{}
	for _, name := range registry.Names() {
		cases[name+"/seed1"] = []string{"sim", name, "--seed", "1"}
		cases[name+"/seed2-n4-high"] = []string{"sim", name, "--seed", "2", "-n", "4", "--contention", "high", "--entries", "4"}
		cases[name+"/crash"] = []string{"sim", name, "--seed", "3", "--entries", "4", "--faults", "crash:1@20ms,recover:1@60ms"}
	}
	cases["lamport/reorder"] = []string{"sim", "lamport", "--seed", "1", "--reorder", "--contention", "high"}
	cases["central/nested"] = []string{"sim", "central", "--seed", "5", "--resources", "a,b", "--nested", "--order", "reverse-odd", "--entries", "3"}
	cases["bully/leader"] = []string{"sim", "bully", "--seed", "7", "--faults", "crash:leader@600ms,crash:leader@1300ms"}
	files, _ := filepath.Glob("../../examples/*.json")
	for _, f := range files {
		cases["example/"+filepath.Base(f)] = []string{"sim", "--scenario", f}
	}
	return cases
}

// simSum is a checksum of every row of a simulated trace but the columns
// that say when and by which build it was recorded.
func simSum(t *testing.T, path string) string {
	h := sha256.New()
	for _, q := range []string{
		"SELECT id, algorithm, nodes, seed, mode, params, faults, complete, status FROM runs ORDER BY id",
		"SELECT id, run, proc, seq, kind, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail FROM events ORDER BY id",
		"SELECT run, id, type, sender, receiver, send_event, recv_event, fate FROM messages ORDER BY run, id",
	} {
		code, out, errs := dmx(t, "sql", path, q, "--format", "csv")
		if code != 0 {
			t.Fatalf("sql %s: exit %d: %s", path, code, errs)
		}
		h.Write([]byte(out))
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16]
}

// TestSimTraceChecksums: the simulated traces of a fixed set of runs are
// the same, row for row, as the checksums in testdata/simsums.txt. A
// refactoring must leave them alone; a change that means to alter traces
// says so and refreshes them with -update.
func TestSimTraceChecksums(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	cases := simSumCases(t)
	names := make([]string, 0, len(cases))
	for k := range cases {
		names = append(names, k)
	}
	sort.Strings(names)
	dir := t.TempDir()
	var got strings.Builder
	for i, name := range names {
		path := filepath.Join(dir, fmt.Sprintf("%d.db", i))
		args := append(append([]string(nil), cases[name]...), "-o", path, "--no-check", "--no-diagram")
		if code, _, errs := dmx(t, args...); code != 0 {
			t.Fatalf("%s: dmx %v: exit %d: %s", name, args, code, errs)
		}
		fmt.Fprintf(&got, "%s %s\n", name, simSum(t, path))
	}
	golden := filepath.Join("testdata", "simsums.txt")
	if updateSimSums() {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (make it with go test ./cmd/dmx -run SimTraceChecksums -update)", err)
	}
	if got.String() != string(want) {
		wl := strings.Split(string(want), "\n")
		gl := strings.Split(got.String(), "\n")
		for i := 0; i < len(wl) || i < len(gl); i++ {
			var a, b string
			if i < len(wl) {
				a = wl[i]
			}
			if i < len(gl) {
				b = gl[i]
			}
			if a != b {
				t.Errorf("trace changed: want %q, got %q", a, b)
			}
		}
	}
}

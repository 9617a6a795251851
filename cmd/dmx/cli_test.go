package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/cmd/dmx/early"
	"github.com/dmxlab/dmx/runner/registry"
)

// TestMain lets the test binary be dmx itself: `dmx run` re-executes its
// own binary as `dmx node`, and under `go test` that binary is this one.
func TestMain(m *testing.M) {
	if os.Getenv("DMX_TEST_MAIN") == "1" {
		if kb, err := strconv.Atoi(os.Getenv("DMX_TEST_FSIZE_KB")); err == nil {
			// A file-size limit (TestWriteFailureLeavesNoHalfFile): writes
			// past it fail with EFBIG, as on a full disk.
			lim := syscall.Rlimit{Cur: uint64(kb) << 10, Max: uint64(kb) << 10}
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
				panic(err)
			}
		}
		os.Exit(Do(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Setenv("DMX_TEST_MAIN", "1") // inherited by the node processes
	early.Take()                    // the test runner is not dmx: Ctrl-C stops it
	code := m.Run()
	removePrograms()
	os.Exit(code)
}

// dmx runs the command line in-process and returns its exit code, stdout
// and stderr.
func dmx(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Do(args, strings.NewReader(""), &out, &errb)
	if strings.Contains(errb.String(), "goroutine ") || strings.Contains(errb.String(), "internal error") {
		t.Fatalf("dmx %v crashed:\n%s", args, errb.String())
	}
	return code, out.String(), errb.String()
}

// readFile returns what the file at path holds; an error fails t.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dmxOK runs dmx as dmx does and fails the test unless it exits 0; it
// returns what dmx wrote to stdout.
func dmxOK(t testing.TB, args ...string) string {
	t.Helper()
	code, out, errs := dmx(t, args...)
	if code != 0 {
		t.Fatalf("dmx %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	return out
}

func TestRunRecordsAndChecks(t *testing.T) {
	for _, algo := range []string{"ricart-agrawala", "central"} {
		t.Run(algo, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run.db")
			code, out, errs := dmx(t, "run", algo, "-n", "3", "--entries", "4", "--seed", "9", "-o", path)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			for _, want := range []string{"mutex-causal", "verdict: ok", "trace: " + path, "dmx check", "dmx sql"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if !strings.Contains(errs, "seed 9") {
				t.Errorf("stderr does not print the seed:\n%s", errs)
			}
			for _, ext := range []string{"-wal", "-shm"} {
				if _, err := os.Stat(path + ext); err == nil {
					t.Errorf("%s%s left beside the trace", path, ext)
				}
			}
			if code, out, errs := dmx(t, "check", path); code != 0 {
				t.Fatalf("check: exit %d\n%s%s", code, out, errs)
			}
			code, out, _ = dmx(t, "sql", path, "SELECT count(*) AS n FROM cs_intervals WHERE exit_event IS NOT NULL", "--format", "csv")
			if code != 0 || out != "n\n12\n" {
				t.Fatalf("sql: exit %d, output %q, want 12 completed critical sections", code, out)
			}
		})
	}
}

// TestSimSameSeedSameTrace: through the CLI, a seed reproduces the trace
// event for event.
func TestSimSameSeedSameTrace(t *testing.T) {
	dir := t.TempDir()
	const q = "SELECT proc, seq, kind, lamport, vc, wall_ns, msg, msg_type, peer, resource, detail FROM events ORDER BY id"
	var dumps []string
	for _, name := range []string{"a.db", "b.db"} {
		p := filepath.Join(dir, name)
		dmxOK(t, "sim", "ricart-agrawala", "--seed", "77", "-n", "5", "-o", p, "--no-diagram")
		code, out, errs := dmx(t, "sql", p, q, "--format", "csv")
		if code != 0 {
			t.Fatalf("sql: %s", errs)
		}
		dumps = append(dumps, out)
	}
	if dumps[0] != dumps[1] {
		t.Fatal("the same seed gave two different traces")
	}
	if strings.Count(dumps[0], "\n") < 100 {
		t.Fatalf("suspiciously small trace:\n%s", dumps[0])
	}
}

// TestContentionFreeMessageCounts runs the README's query: without
// contention, Ricart-Agrawala sends 2(N-1) messages per critical section and
// central 3.
func TestContentionFreeMessageCounts(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		algo, want string
	}{{"ricart-agrawala", "8"}, {"central", "3"}} {
		p := filepath.Join(dir, c.algo+".db")
		dmxOK(t, "sim", c.algo, "-n", "5", "--contention", "none", "--seed", "3", "-o", p, "--no-diagram")
		code, out, errs := dmx(t, "sql", p, messagesPerCS, "--format", "csv")
		if code != 0 {
			t.Fatalf("sql: %s", errs)
		}
		if !strings.Contains(out, ","+c.want+"\n") {
			t.Errorf("%s: messages per CS:\n%s\nwant %s", c.algo, out, c.want)
		}
	}
}

// messagesPerCS is the README's query; for central it counts the clients'
// critical sections (the coordinator's own need no messages).
const messagesPerCS = `SELECT r.algorithm, r.nodes,
  round(1.0 * (SELECT count(*) FROM messages m WHERE m.run = r.id) /
        (SELECT count(*) FROM events e WHERE e.run = r.id AND e.kind = 'cs_enter'
           AND NOT (r.algorithm = 'central' AND e.proc = 0)), 1) AS per_cs
FROM runs r`

func TestList(t *testing.T) {
	code, out, _ := dmx(t, "list")
	if code != 0 || !strings.Contains(out, "ricart-agrawala") || !strings.Contains(out, "central") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := dmx(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "dmx version ") {
		t.Fatalf("--version: exit %d %q", code, out)
	}
}

// TestCheckVerdictExitCodes: the exit code is the verdict, in every output
// format: 1 for a violation (a resource deadlock of nested locks taken in
// opposite orders), 3 for a run cut short with requests pending.
func TestCheckVerdictExitCodes(t *testing.T) {
	dir := t.TempDir()
	dead := filepath.Join(dir, "dead.db")
	if code, out, _ := dmx(t, "sim", "central", "-n", "4", "--seed", "2", "--resources", "printer,scanner", "--nested", "--order", "reverse-odd", "-o", dead); code != 1 {
		t.Fatalf("sim of a deadlock: exit %d, want 1\n%s", code, out)
	}
	short := filepath.Join(dir, "short.db")
	if code, out, _ := dmx(t, "sim", "central", "-n", "3", "--seed", "1", "--limit", "5ms", "--contention", "high", "-o", short); code != 3 {
		t.Fatalf("sim cut short: exit %d, want 3\n%s", code, out)
	}
	for _, format := range []string{"table", "json", "junit"} {
		if code, out, _ := dmx(t, "check", "--format", format, dead); code != 1 {
			t.Errorf("check --format %s of a violation: exit %d\n%s", format, code, out)
		}
		if code, out, _ := dmx(t, "check", "--format", format, short); code != 3 {
			t.Errorf("check --format %s of an incomplete run: exit %d\n%s", format, code, out)
		}
	}
	// Several traces: the worst verdict (render's golden files show the
	// reports themselves).
	if code, out, _ := dmx(t, "check", "--format", "json", dead, short); code != 1 {
		t.Errorf("check of a violation and an incomplete run: exit %d\n%s", code, out)
	}
	// A verdict that cannot be written (stdout closed) is exit 2, and
	// stderr says why.
	for _, format := range []string{"table", "json", "junit"} {
		var errb bytes.Buffer
		code := Do([]string{"check", "--format", format, short}, strings.NewReader(""), failWriter{}, &errb)
		if code != 2 || !strings.Contains(errb.String(), "write the report: closed") {
			t.Errorf("check --format %s into a closed stdout: exit %d, stderr %q", format, code, errb.String())
		}
	}
}

// failWriter is a stdout that is closed.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }

// TestUnknownCheck: a misspelled check is a usage error that names every
// known check, not a run that silently checks nothing.
func TestUnknownCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	dmxOK(t, "sim", "central", "-n", "2", "--entries", "1", "--seed", "1", "-o", path, "--no-check")
	for _, only := range []string{"mutex-casual", "clocks,mutex-casual", "clocks, liveness ,nope"} {
		code, out, errs := dmx(t, "check", "--checks", only, path)
		if code != exitUsage {
			t.Fatalf("--checks %s: exit %d, want %d\n%s%s", only, code, exitUsage, out, errs)
		}
		if !strings.Contains(errs, "no check named") {
			t.Errorf("--checks %s: stderr does not say which check is unknown:\n%s", only, errs)
		}
		for _, name := range analyze.Names() {
			if !strings.Contains(errs, name) {
				t.Errorf("--checks %s: stderr does not name the check %s:\n%s", only, name, errs)
			}
		}
	}
	if code, out, errs := dmx(t, "check", "--checks", "clocks, mutex-causal", path); code != 0 || !strings.Contains(out, "mutex-causal") {
		t.Fatalf("--checks clocks, mutex-causal: exit %d\n%s%s", code, out, errs)
	}
}

// TestChecksRepeated: --checks given twice runs the checks of both, as a
// comma-separated list would.
func TestChecksRepeated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	dmxOK(t, "sim", "central", "-n", "2", "--entries", "1", "--seed", "1", "-o", path, "--no-check")
	code, out, errs := dmx(t, "check", "--checks", "clocks", "--checks", "liveness,mutex-causal", path)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, name := range []string{"clocks", "liveness", "mutex-causal"} {
		if !strings.Contains(out, name) {
			t.Errorf("the report lacks %s:\n%s", name, out)
		}
	}
	if strings.Contains(out, "deadlock") {
		t.Errorf("the report has a check not asked for:\n%s", out)
	}
}

// TestRequire: a trace without wall times is checked without
// mutex-realtime (skipped, exit 0) unless --require asks for it (exit 3).
func TestRequire(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	dmxOK(t, "sim", "central", "-n", "3", "--entries", "2", "--seed", "1", "-o", path, "--no-check")
	craftOn(t, path, "UPDATE events SET wall_ns = 0")
	code, out, errs := dmx(t, "check", path)
	if code != exitOK || !strings.Contains(out, "skipped") {
		t.Fatalf("check: exit %d, want %d with mutex-realtime skipped\n%s%s", code, exitOK, out, errs)
	}
	code, out, errs = dmx(t, "check", "--require", "mutex-realtime", path)
	if code != exitInconclusive || !strings.Contains(out, "required, but skipped") {
		t.Fatalf("check --require mutex-realtime: exit %d, want %d\n%s%s", code, exitInconclusive, out, errs)
	}
	// A required check is run even if the run's algorithm does not claim it.
	code, out, errs = dmx(t, "check", "--checks", "clocks", "--require", "mutex-realtime", path)
	if code != exitInconclusive || !strings.Contains(out, "mutex-realtime") {
		t.Fatalf("check --checks clocks --require mutex-realtime: exit %d, want %d\n%s%s", code, exitInconclusive, out, errs)
	}
	if code, _, errs := dmx(t, "check", "--require", "mutex-real", path); code != exitUsage || !strings.Contains(errs, "--require") {
		t.Fatalf("--require of an unknown check: exit %d\n%s", code, errs)
	}
}

// TestListAlgorithm: dmx list ALGO shows one algorithm in full (it was an
// unknown command), in table and JSON form; an unknown name is a usage
// error naming the algorithms.
func TestListAlgorithm(t *testing.T) {
	for _, name := range registry.Names() {
		code, out, errs := dmx(t, "list", name)
		if code != 0 || !strings.HasPrefix(out, name+" (") || !strings.Contains(out, "parameters") || !strings.Contains(out, "dmx sim "+name) {
			t.Errorf("list %s: exit %d\n%s%s", name, code, out, errs)
		}
		code, out, errs = dmx(t, "list", name, "--format", "json")
		var e struct {
			Name string `json:"name"`
			Doc  string `json:"doc"`
		}
		if err := json.Unmarshal([]byte(out), &e); code != 0 || err != nil || e.Name != name || e.Doc == "" {
			t.Errorf("list %s --format json: exit %d, %v\n%s%s", name, code, err, out, errs)
		}
	}
	code, out, errs := dmx(t, "list", "ricart")
	if code != exitUsage || out != "" || !strings.Contains(errs, `unknown algorithm "ricart"`) || !strings.Contains(errs, "ricart-agrawala") {
		t.Errorf("list ricart: exit %d\n%s%s", code, out, errs)
	}
}

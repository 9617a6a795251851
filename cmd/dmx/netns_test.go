package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmxlab/dmx/runner/netns"
)

// These tests run dmx run --net netns: real network namespaces, made as
// root (CI runs as root), each test's own, named per run.

// needNetns skips a test where network namespaces cannot be made.
func needNetns(t *testing.T) {
	t.Helper()
	if err := netns.Probe(); err != nil {
		t.Skipf("skipped: dmx run --net netns needs root (CI runs as root): %v", err)
	}
}

// netnsRun returns the run id dmx's stderr names ("in namespaces
// dmx-RUN-0..") and the names of its namespaces still in /run/netns.
func netnsRun(t *testing.T, stderr string) (string, []string) {
	t.Helper()
	_, rest, ok := strings.Cut(stderr, "in namespaces dmx-")
	if !ok || len(rest) < 7 {
		t.Fatalf("stderr names no namespaces:\n%s", stderr)
	}
	id := rest[:6]
	ents, err := os.ReadDir("/run/netns")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var left []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "dmx-"+id+"-") {
			left = append(left, e.Name())
		}
	}
	return id, left
}

// verdicts reads dmx's --format json output: check name -> verdict.
func verdicts(t *testing.T, out string) map[string]string {
	t.Helper()
	var res struct {
		Runs []struct {
			Results []struct {
				Check   string `json:"check"`
				Verdict string `json:"verdict"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Runs) != 1 {
		t.Fatalf("json output: %v\n%s", err, out)
	}
	m := map[string]string{}
	for _, c := range res.Runs[0].Results {
		m[c.Check] = c.Verdict
	}
	return m
}

// kernelFaults counts the fault events of spec in the trace at path that
// say the kernel made them, by phase ("start:5,end:5").
func kernelFaults(t *testing.T, path, spec string) string {
	t.Helper()
	code, out, errs := dmx(t, "sql", path, `SELECT json_extract(detail, '$.phase') || ':' || count(*) FROM events
		WHERE kind = 'fault' AND json_extract(detail, '$.by') = 'kernel' AND json_extract(detail, '$.fault') = '`+spec+`'
		GROUP BY json_extract(detail, '$.phase') ORDER BY min(id)`, "--format", "csv")
	if code != exitOK {
		t.Fatalf("sql: exit %d\n%s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.Join(lines[1:], ",")
}

// netnsPartition runs algo on 5 processes in network namespaces (seed 3)
// for d with the partition spec, which nftables makes, into a trace of its
// own; it returns the trace's path, the exit code, the output (--format
// json) and stderr.
func netnsPartition(t *testing.T, algo, spec, d string) (path string, code int, out, errs string) {
	t.Helper()
	needNetns(t)
	path = filepath.Join(t.TempDir(), algo+".db")
	code, out, errs = dmx(t, "run", algo, "--net", "netns", "-n", "5", "--faults", spec, "--duration", d,
		"--seed", "3", "--format", "json", "--no-diagram", "-o", path)
	return path, code, out, errs
}

// TestNetnsPartitionSplitsBully: a partition made by nftables cuts the
// highest-id process off from a minority, which elects its own leader:
// the trace shows the fault made by the kernel at every process, and the
// split-brain check finds two leaders at once.
func TestNetnsPartitionSplitsBully(t *testing.T) {
	const spec = "partition:0+1:2+3+4@400ms-1.8s"
	// The run lasts well past the partition's end (1.8s), so that every
	// process records the end even when a loaded machine delays it.
	path, code, out, errs := netnsPartition(t, "bully", spec, "3s")
	if code != exitViolated {
		t.Fatalf("exit %d, want 1 (split brain)\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if v := verdicts(t, out); v["split-brain"] != "violated" {
		t.Errorf("verdicts %v, want split-brain violated", v)
	}
	if !strings.Contains(errs, "fault "+spec+": by the kernel (nftables") {
		t.Errorf("stderr does not say that the kernel makes the partition:\n%s", errs)
	}
	// On a loaded machine the kernel can take seconds to commit the
	// removal of the rules (nf_tables waits for an RCU grace period):
	// then the run is over before it and dmx says so instead.
	switch got := kernelFaults(t, path, spec); {
	case got == "start:5,end:5":
	case got == "start:5" && strings.Contains(errs, "fault "+spec+": the kernel took"):
		t.Logf("the kernel's removal of the rules came after the run's end: %s", errs)
	default:
		t.Errorf("kernel fault events by phase %v, want a start and an end at each of 5 processes\n%s", got, errs)
	}
	if _, left := netnsRun(t, errs); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestNetnsPartitionStallsLeaseMinority: with the master and one more cut
// off from the majority by nftables, the minority can never win a
// majority: no master of a new term comes from it, and the elections it
// keeps starting never end (termination not ok).
func TestNetnsPartitionStallsLeaseMinority(t *testing.T) {
	const spec = "partition:3+4:0+1+2@500ms"
	path, code, out, errs := netnsPartition(t, "lease", spec, "2500ms")
	if code != exitViolated && code != exitInconclusive {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if v := verdicts(t, out); v["termination"] == "ok" {
		t.Errorf("verdicts %v: termination ok, but the minority cannot elect", v)
	}
	if got := kernelFaults(t, path, spec); got != "start:5" {
		t.Errorf("kernel fault events by phase %v, want a start at each of 5 processes", got)
	}
	// No decision of a term newer than those before the partition names
	// a process of the minority.
	code, rows, errs2 := dmx(t, "sql", path, `SELECT count(*) FROM elections e WHERE kind = 'decide' AND leader IN (3, 4)
		AND term > (SELECT coalesce(max(term), 0) FROM elections WHERE kind = 'decide'
			AND wall_ns < (SELECT min(wall_ns) FROM events WHERE kind = 'fault'))`, "--format", "csv")
	if code != exitOK || strings.TrimSpace(rows) != "count(*)\n0" {
		t.Errorf("minority masters of new terms: exit %d\n%s%s", code, rows, errs2)
	}
}

// TestNetnsNeedsRoot: without the capabilities, dmx run --net netns says
// what it needs and exits 2 before it makes a trace.
func TestNetnsNeedsRoot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	args := []string{"run", "central", "--net", "netns", "-n", "2", "--entries", "1", "-o", path}
	var code int
	var errs string
	if os.Geteuid() != 0 {
		code, _, errs = dmx(t, args...)
	} else {
		// As root: the test binary again, as nobody, from a directory
		// nobody may read.
		dir, err := os.MkdirTemp("", "dmx-nobody-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		exe := filepath.Join(dir, "dmx")
		b, err := os.ReadFile(os.Args[0])
		if err == nil {
			err = os.WriteFile(exe, b, 0o755)
		}
		if err == nil {
			err = os.Chmod(dir, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, append(args[:len(args)-1], filepath.Join(dir, "t.db"))...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err = cmd.Run()
		errs = stderr.String()
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(dir, "t.db")
	}
	if code != exitUsage || !strings.Contains(errs, "--net netns needs root") || !strings.Contains(errs, "CAP_NET_ADMIN") {
		t.Errorf("exit %d, want 2 and what is needed\nstderr:\n%s", code, errs)
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("a trace was made")
	}
}

// TestNetnsInterruptLeavesNothing: Ctrl-C stops a run over network
// namespaces with its trace marked interrupted and its namespaces gone.
func TestNetnsInterruptLeavesNothing(t *testing.T) {
	needNetns(t)
	path := filepath.Join(t.TempDir(), "t.db")
	p := start(t, "run", "token-ring", "--net", "netns", "-n", "3", "--entries", "100000", "--think", "5ms", "--seed", "1", "--no-diagram", "-o", path)
	recordingInto(t, p, path)
	p.cmd.Process.Signal(syscall.SIGINT)
	if code, _ := p.wait(t, 30*time.Second); code != exitInconclusive {
		t.Errorf("exit %d, want 3\nstderr:\n%s", code, p.stderr.String())
	}
	interruptedTrace(t, path)
	if _, left := netnsRun(t, p.stderr.String()); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestNetnsSweepsAfterKill: a runner killed outright (SIGKILL) cannot
// remove its namespaces; its nodes die with it, and the next run removes
// the names it left, and says so.
func TestNetnsSweepsAfterKill(t *testing.T) {
	needNetns(t)
	path := filepath.Join(t.TempDir(), "t.db")
	p := start(t, "run", "token-ring", "--net", "netns", "-n", "3", "--entries", "100000", "--think", "5ms", "--seed", "1", "--no-diagram", "-o", path)
	recordingInto(t, p, path)
	p.cmd.Process.Kill()
	p.wait(t, 30*time.Second)
	id, left := netnsRun(t, p.stderr.String())
	// Another test's run may have swept them already; if not, they are
	// there (the hub and three nodes).
	if len(left) != 0 && len(left) != 4 {
		t.Errorf("after the kill: %v", left)
	}
	code, out, errs := dmx(t, "run", "central", "--net", "netns", "-n", "2", "--entries", "1", "--no-diagram", "-o", filepath.Join(t.TempDir(), "next.db"))
	if code != exitOK {
		t.Fatalf("next run: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("after the kill: %v; the next run said:\n%s", left, errs)
	if len(left) > 0 && !strings.Contains(errs, "removed what an earlier run left") || len(left) > 0 && !strings.Contains(errs, id) {
		t.Errorf("the next run does not say it removed run %s's namespaces:\n%s", id, errs)
	}
	if _, left := netnsRun(t, "in namespaces dmx-"+id+"-0"); len(left) > 0 {
		t.Errorf("still there after the next run: %v", left)
	}
	if _, left := netnsRun(t, errs); len(left) > 0 {
		t.Errorf("the next run left: %v", left)
	}
}

// TestBenchNetns: dmx bench --net netns pairs each run over loopback with
// one over network namespaces and gives the ratio.
func TestBenchNetns(t *testing.T) {
	needNetns(t)
	code, out, errs := dmx(t, "bench", "--net", "netns", "central", "--rounds", "1", "-n", "3", "--entries", "20", "--laps", "50")
	if code != exitOK || !strings.Contains(out, "central netns") || !strings.Contains(out, "central over netns") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}

// TestDocsNetns runs, in order, every command docs/netns.md shows as
// typed ("    $ dmx ..."), in a scratch directory, as root: each must end
// with the exit code its line gives ("# exit 1"), 0 if none.
func TestDocsNetns(t *testing.T) {
	needNetns(t)
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "netns.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		line, ok := strings.CutPrefix(l, "    $ dmx ")
		if !ok {
			continue
		}
		n++
		want := exitOK
		if cmd, code, ok := strings.Cut(line, "# exit "); ok {
			line = strings.TrimSpace(cmd)
			if want, err = strconv.Atoi(strings.TrimSpace(code)); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
		}
		cmd := exec.Command(os.Args[0], shellWords(line)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Errorf("dmx %s: exit %d, want %d\n%s", line, code, want, out)
		}
	}
	if n < 5 {
		t.Errorf("%d commands in docs/netns.md", n)
	}
}

// TestNetnsExec: a program of the user's own (--exec) runs in its node's
// namespace and is told where it is: it can bind a socket of its own on
// its address (which exists nowhere else), and what it says on stderr is
// in the trace.
func TestNetnsExec(t *testing.T) {
	needNetns(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	prog, err := filepath.Abs(filepath.Join("..", "..", "examples", "programs", "central.py"))
	if err != nil {
		t.Fatal(err)
	}
	where := `python3 -c "import os, socket, sys; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); ` +
		`s.bind((os.environ['DMX_ADDR'], 0)); print('bound', s.getsockname()[0], 'in', os.environ['DMX_NETNS'], 'peers', os.environ['DMX_PEERS'], file=sys.stderr)"`
	path := filepath.Join(t.TempDir(), "exec.db")
	code, out, errs := dmx(t, "run", "--exec", where+" && exec python3 "+prog, "--net", "netns", "-n", "3", "--entries", "2",
		"--seed", "1", "--no-diagram", "-o", path)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	id, _ := netnsRun(t, errs)
	code, rows, errs := dmx(t, "sql", path, `SELECT proc, json_extract(detail, '$.note') AS note FROM events WHERE kind = 'internal' AND detail LIKE '%bound%' ORDER BY proc`, "--format", "csv")
	if code != exitOK {
		t.Fatalf("sql: exit %d\n%s", code, errs)
	}
	peers := "198.18.0.1,198.18.0.2,198.18.0.3"
	want := fmt.Sprintf("proc,note\n0,\"stderr: bound 198.18.0.1 in dmx-%[1]s-0 peers %[2]s\"\n1,\"stderr: bound 198.18.0.2 in dmx-%[1]s-1 peers %[2]s\"\n2,\"stderr: bound 198.18.0.3 in dmx-%[1]s-2 peers %[2]s\"", id, peers)
	if strings.TrimSpace(rows) != want {
		t.Errorf("the programs said:\n%s\nwant:\n%s", rows, want)
	}
}

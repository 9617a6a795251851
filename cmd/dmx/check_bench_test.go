package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmxlab/dmx/trace"
)

// BenchmarkCheckCost measures what dmx check of a big trace costs, as a
// whole process (its CPU, user and system, and its peak resident memory),
// beside the sqlite3 shell's scan of the same events (sqlite3 TRACE
// 'select * from events'), both writing to /dev/null, in turn:
//
//	go test ./cmd/dmx -run XXX -bench CheckCost -benchtime 5x
//	DMX_BENCH_10M=1 go test ./cmd/dmx -run XXX -bench CheckCost -benchtime 3x -timeout 60m
//
// The traces, a simulated Ricart-Agrawala run of 5 processes with 9,000
// (1.08M events) and with DMX_BENCH_10M 90,000 critical sections each
// (10.8M events, 1.9 GB), are made once and kept in the temporary
// directory. x-sqlite-cpu is the ratio of the CPU of the two, run by run;
// check-peak-rss-MB the largest peak of dmx check's runs. The check is the
// default one: the checks ricart-agrawala claims plus clocks, what it reads
// verified as it reads it.
func BenchmarkCheckCost(b *testing.B) {
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		b.Skip("no sqlite3 shell to compare with")
	}
	sizes := []int{9_000}
	if os.Getenv("DMX_BENCH_10M") != "" {
		sizes = append(sizes, 90_000)
	}
	for _, entries := range sizes {
		path, events := checkBenchTrace(b, entries)
		b.Run(fmt.Sprintf("events=%d", events), func(b *testing.B) {
			var ratio, checkCPU, sqliteCPU float64
			var peak int64
			n := 0
			for b.Loop() {
				c, rss := procCost(b, exec.Command(os.Args[0], "check", path))
				s, _ := procCost(b, exec.Command(sqlite, path, "select * from events"))
				ratio += c / s
				checkCPU += c
				sqliteCPU += s
				peak = max(peak, rss)
				n++
			}
			b.ReportMetric(ratio/float64(n), "x-sqlite-cpu")
			b.ReportMetric(checkCPU/float64(n), "check-cpu-s")
			b.ReportMetric(sqliteCPU/float64(n), "sqlite-cpu-s")
			b.ReportMetric(float64(peak)/1024, "check-peak-rss-MB")
		})
	}
}

// procCost runs cmd with its output thrown away and returns its CPU
// (user and system) in seconds and its peak resident memory in KiB.
func procCost(b *testing.B, cmd *exec.Cmd) (float64, int64) {
	b.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	cmd.Stdout, cmd.Stderr = null, null
	cmd.Env = append(os.Environ(), "DMX_TEST_MAIN=1") // the test binary is dmx
	if err := cmd.Run(); err != nil {
		b.Fatalf("%v: %v", cmd.Args, err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return cpu.Seconds(), ru.Maxrss
}

// checkBenchTrace returns the path and the event count of the trace of
// the benchmark of entries critical sections per process, made if it is
// not there yet.
func checkBenchTrace(b *testing.B, entries int) (string, int64) {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("dmx-check-bench-ra5-%d.db", entries))
	count := func() (int64, bool) {
		st, err := trace.Open(path)
		if err != nil {
			return 0, false
		}
		defer st.Close()
		runs, err := st.Runs()
		if err != nil || len(runs) != 1 || !runs[0].Complete {
			return 0, false
		}
		n, err := st.CountEvents(runs[0].ID)
		return n, err == nil
	}
	if n, ok := count(); ok {
		return path, n
	}
	os.Remove(path)
	start := time.Now()
	var errs strings.Builder
	if code := Do([]string{"sim", "ricart-agrawala", "-n", "5", "--entries", fmt.Sprint(entries), "--seed", "1",
		"--limit", "4h", "-o", path, "--no-check", "--no-diagram", "--yes"}, strings.NewReader(""), io.Discard, &errs); code != 0 {
		b.Fatalf("make %s: exit %d: %s", path, code, errs.String())
	}
	n, ok := count()
	if !ok {
		b.Fatalf("%s: not a complete run", path)
	}
	b.Logf("made %s (%d events) in %v", path, n, time.Since(start).Round(time.Second))
	return path, n
}

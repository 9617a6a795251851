package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestStats: dmx stats shows the measured cost beside the seeds' figure, in
// every format; without contention the two are equal (seed 002: 2(N-1) for
// Ricart-Agrawala; seed 003: 3 for central; seed 000/002: 3(N-1) for
// Lamport).
func TestStats(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		algo    string
		n       int
		want    float64
		formula string
	}{
		{"ricart-agrawala", 5, 8, "2(N-1)"},
		{"lamport", 4, 9, "3(N-1)"},
	} {
		p := filepath.Join(dir, c.algo+".db")
		dmxOK(t, "sim", c.algo, "-n", fmt.Sprint(c.n), "--contention", "none", "--seed", "5", "-o", p, "--no-diagram")
		code, out, errs := dmx(t, "stats", p)
		if code != 0 || !strings.Contains(out, "messages per CS") || !strings.Contains(out, c.formula) {
			t.Fatalf("stats: exit %d\n%s%s", code, out, errs)
		}
		code, out, _ = dmx(t, "stats", "--format", "json", p)
		if code != 0 {
			t.Fatalf("stats json: exit %d", code)
		}
		var rep struct {
			Runs []struct {
				Algorithm string `json:"algorithm"`
				Mutex     struct {
					Contended int `json:"contended_requests"`
					PerCS     struct {
						Measured float64 `json:"measured"`
						Seeds    struct {
							Formula string  `json:"formula"`
							Value   float64 `json:"value"`
						} `json:"seeds"`
					} `json:"messages_per_cs"`
				} `json:"mutex"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("json: %v\n%s", err, out)
		}
		m := rep.Runs[0].Mutex
		if m.Contended != 0 || m.PerCS.Measured != c.want || m.PerCS.Seeds.Value != c.want || m.PerCS.Seeds.Formula != c.formula {
			t.Errorf("%s: %+v, want %v per CS without contention, beside %s", c.algo, m, c.want, c.formula)
		}
		code, out, _ = dmx(t, "stats", "--format", "csv", p)
		if code != 0 || !strings.Contains(out, ",") {
			t.Errorf("csv: exit %d\n%s", code, out)
		}
	}
	if code, _, errs := dmx(t, "stats", filepath.Join(dir, "missing.db")); code != 2 || !strings.Contains(errs, "missing.db") {
		t.Errorf("stats of a missing trace: exit %d %s", code, errs)
	}
}

// TestStatsSeveral: dmx stats takes several traces: a table per run under
// its file, JSON {"traces": [{"file", "runs"}...]}, CSV with a file column.
func TestStatsSeveral(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, a := range []string{"central", "ricart-agrawala"} {
		p := filepath.Join(dir, a+".db")
		dmxOK(t, "sim", a, "-n", "3", "--entries", "2", "--seed", "3", "-o", p, "--no-check")
		paths = append(paths, p)
	}
	code, out, errs := dmx(t, append([]string{"stats"}, paths...)...)
	if code != 0 || !strings.Contains(out, paths[0]+" run 1: central") || !strings.Contains(out, paths[1]+" run 1: ricart-agrawala") {
		t.Fatalf("stats: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = dmx(t, append([]string{"stats", "--format", "json"}, paths...)...)
	var rep struct {
		Traces []struct {
			File string `json:"file"`
			Runs []struct {
				Algorithm string `json:"algorithm"`
			} `json:"runs"`
		} `json:"traces"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Traces) != 2 || rep.Traces[1].File != paths[1] || rep.Traces[1].Runs[0].Algorithm != "ricart-agrawala" {
		t.Fatalf("stats json: exit %d, %v: %+v\n%s", code, err, rep, out)
	}
	code, out, _ = dmx(t, append([]string{"stats", "--format", "csv"}, paths...)...)
	if code != 0 || !strings.HasPrefix(out, "file,run,measure") || !strings.Contains(out, paths[1]+",1,") {
		t.Fatalf("stats csv: exit %d\n%s", code, out)
	}
}

// TestStatsStalledRun: a run dmx run ended after --stall of silence is
// called stalled by dmx stats, not complete, and its throughput counts the
// time up to its last critical section, not the silence after it (a 5s
// stall made central's 7 sections "1.37 a second").
func TestStatsStalledRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stalled.db")
	// The coordinator dies at 50ms: the others wait for it for ever.
	if code, out, errs := dmx(t, "run", "central", "-n", "3", "--entries", "5", "--seed", "1", "--faults", "crash:0@50ms", "--stall", "1s", "--no-diagram", "-o", path); code != exitViolated {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs := dmx(t, "stats", path)
	if code != 0 || !strings.Contains(out, "run 1: central, N=3, stalled: no event for 1s") {
		t.Errorf("stats: exit %d, want the run said stalled\n%s%s", code, out, errs)
	}
	_, js, _ := dmx(t, "stats", path, "--format", "json")
	var f struct {
		Runs []struct {
			Status     string `json:"status"`
			DurationNS int64  `json:"duration_ns"`
			Mutex      struct {
				CS         float64 `json:"critical_sections"`
				Throughput float64 `json:"throughput_cs_per_s"`
			} `json:"mutex"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(js), &f); err != nil || len(f.Runs) != 1 {
		t.Fatalf("json: %v\n%s", err, js)
	}
	s := f.Runs
	overall := s[0].Mutex.CS / (float64(s[0].DurationNS) / 1e9)
	if !strings.HasPrefix(s[0].Status, "stalled") || s[0].Mutex.CS == 0 || s[0].Mutex.Throughput < 2*overall {
		t.Errorf("status %q, %v sections, throughput %.2f a second against %.2f over the whole run with its stall", s[0].Status, s[0].Mutex.CS, s[0].Mutex.Throughput, overall)
	}
}

// TestDurationsSaySimulated: dmx sim printed the milliseconds it took to
// compute a run and dmx stats the simulated time the run lasted, both as
// "in Xms". Now each says which time it counts, and the simulated time is
// the same number in both.
func TestDurationsSaySimulated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.db")
	code, _, errs := dmx(t, "sim", "central", "--seed", "5", "-o", path)
	if code != 0 {
		t.Fatalf("sim: exit %d\n%s", code, errs)
	}
	m := regexp.MustCompile(`recorded run 1: \d+ events in \S+ of real time, (\S+) of simulated time \(`).FindStringSubmatch(errs)
	if m == nil {
		t.Fatalf("sim does not say which time is which:\n%s", errs)
	}
	code, out, errs := dmx(t, "stats", path)
	if code != 0 || !strings.Contains(out, " events in "+m[1]+" of simulated time (first to last event)\n") {
		t.Errorf("stats: exit %d, want %s of simulated time\n%s%s", code, m[1], out, errs)
	}
}

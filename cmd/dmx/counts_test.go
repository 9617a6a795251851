package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/trace/plural"
)

// countedNouns are the things dmx counts in its output, singular.
var countedNouns = []string{
	"event", "finding", "request", "entry", "row", "node", "decision", "message", "critical section", "resource",
	"datagram", "term", "multicast", "delivery", "process", "leadership interval", "election start", "Lamport clock",
	"byte", "wait event", "cs_exit event", "live process", "more finding",
}

// TestCounts: "(1 rows)", "1 requests granted": counts printed in the
// wrong number. Runs of one process with one entry, and others, through
// every command; every count of a thing in their output agrees with its
// number.
func TestCounts(t *testing.T) {
	forms := map[string]bool{} // form -> plural
	for _, n := range countedNouns {
		forms[n], forms[plural.Noun(2, n)] = false, true
	}
	count := regexp.MustCompile(`(?:^|[\s(,:;])(\d+) ([A-Za-z_]+(?: [A-Za-z_]+)?)`)
	dir := t.TempDir()
	db := filepath.Join(dir, "one.db")
	var all strings.Builder
	for _, args := range [][]string{
		{"sim", "ricart-agrawala", "-n", "1", "--entries", "1", "--seed", "1", "-o", db},
		{"sim", "tomcast", "-n", "1", "--entries", "1", "--seed", "1", "--append", "-o", db},
		{"sim", "bully", "-n", "1", "--duration", "100ms", "--seed", "1", "--append", "-o", db},
		{"sim", "central", "-n", "2", "--entries", "1", "--seed", "1", "--faults", "crash:1@2ms", "--append", "-o", db},
		{"sim", "--scenario", filepath.Join("..", "..", "examples", "nested-deadlock.json"), "-o", filepath.Join(dir, "dead.db")},
		{"run", "ricart-agrawala", "-n", "1", "--entries", "1", "--seed", "1", "--append", "-o", db},
		{"check", db},
		{"check", "--max-findings", "1", filepath.Join(dir, "dead.db")},
		{"stats", db},
		{"sql", db, "SELECT 1"},
		{"sql", db, "SELECT 1 UNION SELECT 2"},
		{"list", "ricart-agrawala"},
	} {
		_, out, errs := dmx(t, args...)
		all.WriteString(out + errs)
		for _, m := range count.FindAllStringSubmatch(out+errs, -1) {
			n, _ := strconv.Atoi(m[1])
			words := strings.Fields(m[2])
			for _, form := range []string{m[2], words[0]} {
				isPlural, ok := forms[form]
				if !ok {
					continue
				}
				if (n == 1) == isPlural {
					t.Errorf("dmx %s: %q", strings.Join(args, " "), m[0])
				}
				break
			}
		}
	}
	// The test looks at counts of 1 and of more.
	for _, want := range []string{"(1 row)", "(2 rows)", "1 node, 1 entry each", "1 request granted", "1 critical section on 1 resource",
		"1 multicast, 1 delivery at 1 process", "1 decision in 1 term", "4 processes blocked"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no %q in the outputs", want)
		}
	}
}

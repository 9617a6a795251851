package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsPictures runs every command docs/pictures.md and docs/report.md
// show (the indented lines that start with "dmx "), in a directory that
// holds the traces they name, as a reader would: each must end with the
// verdict it reports (0, or 1 for a run with findings), never a usage
// error.
func TestDocsPictures(t *testing.T) {
	dir, root := inScratch(t, "examples")
	// The traces the pages name.
	for db, args := range map[string][]string{
		"run.db":      {"sim", "bully", "--seed", "7", "--faults", "crash:leader@600ms,crash:leader@1300ms"},
		"failover.db": {"sim", "--scenario", filepath.Join(root, "examples", "central-failover.json")},
		"big.db":      {"sim", "ricart-agrawala", "--seed", "1", "--entries", "200"},
		"bp.db":       {"sim", "--scenario", filepath.Join(root, "examples", "bully-partition.json")},
	} {
		if code, _, errs := dmx(t, append(args, "--no-diagram", "--no-check", "-o", filepath.Join(dir, db))...); code != 0 {
			t.Fatalf("%s: %s", db, errs)
		}
	}
	eachDocLine(t, root, "    dmx ", []string{"pictures.md", "report.md"}, func(page, line string) {
		code, out, errs := dmx(t, strings.Fields(line)...)
		if code != exitOK && code != exitViolated {
			t.Errorf("%s: dmx %s: exit %d\n%s%s", page, line, code, out, errs)
		}
	})
}

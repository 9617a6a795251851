package main

import (
	"bufio"
	"os"
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
	dir := t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
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
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	n := 0
	for _, page := range []string{"pictures.md", "report.md"} {
		f, err := os.Open(filepath.Join(root, "docs", page))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if !strings.HasPrefix(sc.Text(), "    dmx ") {
				continue
			}
			n++
			args := strings.Fields(strings.TrimPrefix(line, "dmx "))
			code, out, errs := dmx(t, args...)
			if code != exitOK && code != exitViolated {
				t.Errorf("%s: %s: exit %d\n%s%s", page, line, code, out, errs)
			}
		}
		f.Close()
	}
	if n < 8 {
		t.Errorf("%d commands found in the pages", n)
	}
}

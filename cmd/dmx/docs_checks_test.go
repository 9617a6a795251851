package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDocsChecksAndImports runs, in order, every command docs/checks.md
// and docs/imports.md show as typed ("    $ dmx ..."), in a directory that
// has the repository's examples and trace test data, as a reader would:
// each must end with the exit code its line gives ("# exit 1"), 0 if none.
func TestDocsChecksAndImports(t *testing.T) {
	dir := t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"examples", "trace"} {
		if err := os.Symlink(filepath.Join(root, d), filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
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
	for _, page := range []string{"checks.md", "imports.md"} {
		f, err := os.Open(filepath.Join(root, "docs", page))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "    $ dmx ")
			if !ok {
				continue
			}
			n++
			want := exitOK
			if cmd, code, ok := strings.Cut(line, " # exit "); ok {
				line = cmd
				if want, err = strconv.Atoi(strings.TrimSpace(code)); err != nil {
					t.Fatalf("%s: %q: %v", page, line, err)
				}
			}
			code, out, errs := dmx(t, shellWords(line)...)
			if code != want {
				t.Errorf("%s: dmx %s: exit %d, want %d\n%s%s", page, line, code, want, out, errs)
			}
		}
		f.Close()
	}
	if n < 8 {
		t.Errorf("%d commands found in the pages", n)
	}
}

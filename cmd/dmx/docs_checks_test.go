package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// inScratch makes a temporary directory, with the repository's entries
// names linked into it, the test's working directory, as a reader's
// would be; it returns the directory and the repository's root.
func inScratch(t *testing.T, names ...string) (dir, root string) {
	t.Helper()
	dir = t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range names {
		if err := os.Symlink(filepath.Join(root, d), filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	return dir, root
}

// TestDocsChecksAndImports runs, in order, every command docs/checks.md
// and docs/imports.md show as typed ("    $ dmx ..."), in a directory that
// has the repository's examples and trace test data, as a reader would:
// each must end with the exit code its line gives ("# exit 1"), 0 if none.
func TestDocsChecksAndImports(t *testing.T) {
	_, root := inScratch(t, "examples", "trace")
	eachDocLine(t, root, "    $ dmx ", []string{"checks.md", "imports.md"}, func(page, line string) {
		want := exitOK
		if cmd, code, ok := strings.Cut(line, " # exit "); ok {
			line = cmd
			var err error
			if want, err = strconv.Atoi(strings.TrimSpace(code)); err != nil {
				t.Fatalf("%s: %q: %v", page, line, err)
			}
		}
		code, out, errs := dmx(t, shellWords(line)...)
		if code != want {
			t.Errorf("%s: dmx %s: exit %d, want %d\n%s%s", page, line, code, want, out, errs)
		}
	})
}

// eachDocLine calls do with each line of docs/PAGE, for each of pages,
// that starts with prefix, the prefix cut off; pages that show fewer than
// 8 such lines fail the test (the prefix no longer matches what they show).
func eachDocLine(t *testing.T, root, prefix string, pages []string, do func(page, line string)) {
	t.Helper()
	n := 0
	for _, page := range pages {
		f, err := os.Open(filepath.Join(root, "docs", page))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				n++
				do(page, line)
			}
		}
		f.Close()
	}
	if n < 8 {
		t.Errorf("%d commands found in the pages", n)
	}
}

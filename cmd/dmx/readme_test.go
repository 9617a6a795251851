package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEForNewUsers: what a user of the repository reads in the README
// is there for them. It cites no shared/seeds (a directory of the
// project's makers, not in the repository) but names the five course notes
// by title and the algorithms' doc.go files, which exist; it warns that
// the first build compiles SQLite in silence and says how to watch it; and
// it stays under 300 lines.
func TestREADMEForNewUsers(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if strings.Contains(readme, "shared/seeds") {
		t.Error("the README cites shared/seeds, which users of the repository do not have")
	}
	for _, seed := range []string{"000", "001", "002", "003", "004"} {
		if !regexp.MustCompile(`(?m)^- ` + seed + `: .*\*[A-Z][^*]+\*`).MatchString(readme) {
			t.Errorf("the README does not name course notes %s by title", seed)
		}
	}
	paths := regexp.MustCompile("`(runner/algo/[a-z]+/doc.go)`").FindAllStringSubmatch(readme, -1)
	if len(paths) == 0 {
		t.Error("the README names no algorithm's doc.go")
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join("..", "..", p[1])); err != nil {
			t.Errorf("the README names %s: %v", p[1], err)
		}
	}
	two, _, _ := strings.Cut(readme[strings.Index(readme, "## Two commands"):], "\n## ")
	if !strings.Contains(two, "compiles SQLite") || !strings.Contains(two, "go build -v") {
		t.Error("the README's first steps do not say that the first build compiles SQLite, and how to watch it (go build -v)")
	}
	// A front door a newcomer reads in ten minutes: the depth is in docs/.
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("the README has %d lines; keep it under 300 and move the depth into docs/", n)
	}
}

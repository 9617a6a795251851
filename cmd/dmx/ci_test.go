package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCIExamples runs the dmx command lines of the CI examples
// (examples/ci/*.yml) with their traces in a temporary directory: the runs
// they record must pass the checks they run, so that the jobs are green
// until something breaks.
func TestCIExamples(t *testing.T) {
	files, _ := filepath.Glob("../../examples/ci/*.yml")
	if len(files) < 2 {
		t.Fatalf("CI examples: %v", files)
	}
	line := regexp.MustCompile(`(?m)^\s*(?:- )?(dmx (?:sim|check) [^|>\n]*)`)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "traces"), 0o755)
			ran := 0
			for _, m := range line.FindAllStringSubmatch(string(data), -1) {
				cmd := strings.TrimSpace(m[1])
				var args []string
				for _, a := range strings.Fields(cmd)[1:] {
					switch {
					case a == "traces/*.db":
						found, _ := filepath.Glob(filepath.Join(dir, "traces", "*.db"))
						args = append(args, found...)
					case strings.HasPrefix(a, "traces/"), a == "diagrams":
						args = append(args, filepath.Join(dir, a))
					default:
						args = append(args, strings.Trim(a, `'"`))
					}
				}
				if code, out, errs := dmx(t, args...); code != exitOK {
					t.Fatalf("%s: exit %d\n%s%s", cmd, code, out, errs)
				}
				ran++
			}
			if ran < 3 {
				t.Errorf("%s: %d dmx commands found", file, ran)
			}
		})
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProtocolDoc: docs/protocol.md's complete program and every command
// it shows run as the page says they do, and the transcripts it quotes
// are what dmx prints.
func TestProtocolDoc(t *testing.T) {
	b, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	program := block(t, doc, "python")
	dir := t.TempDir()
	lock := filepath.Join(dir, "lock.py")
	if err := os.WriteFile(lock, []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	py := strings.TrimSuffix(python(t, "central.py"), " "+filepath.Join("..", "..", "examples", "programs", "central.py"))
	// The page's commands, each with the exit code the page says.
	want := []int{0, 0, 0, 0, 0, 1}
	cmds := strings.Split(strings.TrimSpace(block(t, doc, "sh")), "\n")
	if len(cmds) != len(want) {
		t.Fatalf("the page shows %d commands, the test knows %d", len(cmds), len(want))
	}
	for i, line := range cmds {
		args := shellWords(line)
		if args[0] != "dmx" {
			t.Fatalf("%q is not a dmx command", line)
		}
		args = args[1:]
		for j, a := range args {
			switch {
			case strings.HasSuffix(a, ".db"):
				args[j] = filepath.Join(dir, a)
			case a == "python3 lock.py":
				args[j] = py + " " + lock
			}
		}
		code, stdout, stderr := dmx(t, args...)
		if code != want[i] {
			t.Errorf("%s: exit %d, want %d\n%s%s", line, code, want[i], stdout, stderr)
		}
	}
	// The conformance transcript: ricart-buggy's first difference.
	out := filepath.Join(dir, "ricart-buggy.db")
	dmx(t, "sim", "--exec", goProgram(t, "examples/programs/ricart-buggy"), "--seed", "1", "-o", out, "--no-check", "--no-diagram")
	_, stdout, _ := dmx(t, "check", "--conform", "ricart-agrawala", out)
	i := strings.Index(doc, "      first difference:")
	quoted := doc[i : i+strings.Index(doc[i:], "\n\n")]
	for _, l := range strings.Split(quoted, "\n") {
		if !strings.Contains(stdout, strings.TrimSpace(l)) {
			t.Errorf("the page quotes %q; dmx prints:\n%s", l, stdout)
		}
	}
}

// block returns the first fenced block of lang in doc.
func block(t *testing.T, doc, lang string) string {
	t.Helper()
	start := strings.Index(doc, "```"+lang+"\n")
	if start < 0 {
		t.Fatalf("no %s block", lang)
	}
	rest := doc[start+len(lang)+4:]
	return rest[:strings.Index(rest, "```")]
}

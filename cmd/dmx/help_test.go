package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestHelpExamples: dmx --help and the help of every command (cobra's help
// and completion included, the hidden node command apart) give examples,
// and each example is a real command line: its command exists and its
// flags parse.
func TestHelpExamples(t *testing.T) {
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no example", c.CommandPath())
		}
		code, out, _ := dmx(t, append(strings.Fields(c.CommandPath())[1:], "--help")...)
		if code != 0 || !strings.Contains(out, "Examples:\n"+c.Example) {
			t.Errorf("%s --help: exit %d, no examples:\n%s", c.CommandPath(), code, out)
		}
		for _, line := range strings.Split(c.Example, "\n") {
			checkExample(t, c.CommandPath(), line)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// checkExample checks one line of an example: each dmx command line in it
// (a pipeline or list may hold several) names a command and parses.
func checkExample(t *testing.T, where, line string) {
	t.Helper()
	line, _, _ = strings.Cut(line, " # ")
	for _, part := range strings.FieldsFunc(line, func(r rune) bool {
		return r == '|' || r == '&' || r == ';' || r == '(' || r == ')' || r == '>' || r == '<'
	}) {
		words := shellWords(part)
		if len(words) == 0 || words[0] != "dmx" {
			continue
		}
		root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
		root.InitDefaultHelpFlag()
		c, rest, err := root.Find(words[1:])
		if err == nil {
			c.InitDefaultHelpFlag()
			err = c.ParseFlags(rest)
		}
		if err == nil && c.Args != nil {
			err = c.Args(c, c.Flags().Args())
		}
		if err != nil {
			t.Errorf("%s: example %q: %v", where, part, err)
		}
	}
}

// shellWords splits s into words as a POSIX shell would for the simple
// lines examples and rerun lines have: blanks separate words, quotes group
// them, a backslash outside quotes takes the next character as it is
// (sweep.Quote writes a quote inside quotes as '\”).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote, escaped := false, rune(0), false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\\':
			escaped, in = true, true
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

func TestShellWords(t *testing.T) {
	for _, c := range []struct {
		s    string
		want []string
	}{
		{`dmx sim x --seed 1`, []string{"dmx", "sim", "x", "--seed", "1"}},
		{`dmx sql t.db "SELECT 1 AS n"  --format csv`, []string{"dmx", "sql", "t.db", "SELECT 1 AS n", "--format", "csv"}},
		{`-o 'it'\''s.db' ''`, []string{"-o", "it's.db", ""}},
	} {
		if got := shellWords(c.s); strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
			t.Errorf("shellWords(%q) = %q, want %q", c.s, got, c.want)
		}
	}
}

// TestHelpPointsWhereItSays: a flag's help that sends the reader
// elsewhere in the same help points the right way (run's --faults once
// said its kinds were "listed below": the help prints them above the
// flags), and what it points to is there.
func TestHelpPointsWhereItSays(t *testing.T) {
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "below") {
				t.Errorf("%s --%s: %q: the help prints flags last, nothing is below them", c.CommandPath(), f.Name, f.Usage)
			}
			if strings.Contains(f.Usage, "listed above") && !strings.Contains(c.Long, "Faults (") {
				t.Errorf("%s --%s: %q, but the description lists no faults", c.CommandPath(), f.Name, f.Usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	_, out, _ := dmx(t, "run", "--help")
	list, flags, ok := strings.Cut(out, "Flags:")
	if !ok || !strings.Contains(flags, "every kind is listed above") {
		t.Fatalf("dmx run --help: no --faults pointing above:\n%s", out)
	}
	for _, kind := range []string{"crash:", "recover:", "pause:", "skew:", "loss:", "delay:", "reorder", "duplicate:", "partition:", "isolate:", "cut:", "heal@"} {
		if !strings.Contains(list, kind) {
			t.Errorf("dmx run --help lists no %s fault above its flags", kind)
		}
	}
}

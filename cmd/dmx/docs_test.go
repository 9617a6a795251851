package main

// Documentation that cannot go stale. TestDocs runs or checks every
// command shown in README.md, docs/*.md and examples/**/README.md:
//
//   - a fenced block whose info string is "console" is a transcript: every
//     line that starts with "$ " is a command, run by bash in a scratch
//     directory of its file (the repository's top-level entries linked
//     into it, so examples/... resolve, and what a command writes stays
//     there for the next command of the same file), with a `dmx` on PATH
//     that is this build. `go run ./cmd/dmx` is run as that dmx; a
//     command of `go test` is checked, not run (below). A command goes on
//     over the next lines while a quote is open or a line ends in "\".
//     Its exit code must be 0, or N where its comment says "# exit N".
//     The lines after it, up to the next command, are its output as
//     pasted (stdout and stderr, as on a terminal); when there are any
//     they must match what it prints: runs of blanks and of "─" count as
//     one, a line "..." stands for any number of lines, a line that ends
//     in " ..." for any line that starts as it does, and a word that starts
//     with "~" (about) stands for any word (a time, a count a real run
//     decides). A command with no lines after it is run, unchecked.
//   - every other line of a fenced or indented block and every inline code
//     span that is a dmx command line is parsed by dmx's own command tree:
//     the command and each flag must exist (values are not parsed where
//     they are placeholders such as FILE).
//   - every `go test` command line (in a transcript, a block or a span)
//     names packages that exist, and its -run or -bench pattern matches a
//     test or benchmark function of them; a DMX_* variable before it is
//     read by their tests.
//
// A transcript's commands are run in order; the files in parallel. A
// transcript that fails prints what the command printed, to paste.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// docFiles are the markdown files whose commands TestDocs runs or checks.
func docFiles(t *testing.T) []string {
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	for _, pat := range []string{"docs/*.md", "examples/README.md", "examples/*/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	return files
}

// mdBlock is a code block of a markdown file: fenced (info is its info
// string) or indented (info "indented").
type mdBlock struct {
	line  int // of its first line of code
	info  string
	lines []string
}

// mdParse returns the code blocks of a markdown text and its prose (every
// line outside a block, with its number).
func mdParse(text string) (blocks []mdBlock, prose map[int]string) {
	prose = map[int]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if fence, ok := strings.CutPrefix(strings.TrimLeft(l, " "), "```"); ok {
			b := mdBlock{line: i + 2, info: strings.TrimSpace(fence)}
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimLeft(lines[i], " "), "```"); i++ {
				b.lines = append(b.lines, lines[i])
			}
			blocks = append(blocks, b)
			continue
		}
		// An indented block: 4 spaces after a blank line (not a list's
		// continuation, which follows text).
		if strings.HasPrefix(l, "    ") && (i == 0 || strings.TrimSpace(lines[i-1]) == "") && !inList(lines, i) {
			b := mdBlock{line: i + 1, info: "indented"}
			for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == ""); i++ {
				b.lines = append(b.lines, strings.TrimPrefix(lines[i], "    "))
			}
			i--
			blocks = append(blocks, b)
			continue
		}
		prose[i+1] = l
	}
	return blocks, prose
}

// inList reports whether line i continues a list item (an indented
// paragraph of it, not code).
func inList(lines []string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		l := lines[j]
		if strings.TrimSpace(l) == "" {
			continue
		}
		t := strings.TrimLeft(l, " ")
		return (strings.HasPrefix(t, "- ") || regexp.MustCompile(`^\d+\. `).MatchString(t)) && len(l)-len(t) < 4 ||
			strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "    ") || (strings.HasPrefix(l, "    ") && inList(lines, j))
	}
	return false
}

// docStep is one command of a transcript and the output pasted under it.
type docStep struct {
	line   int
	cmd    string
	exit   int
	want   []string
	pasted bool // lines follow the command: its output is compared
}

var exitComment = regexp.MustCompile(`#\s*exit (\d)\b`)

// transcript splits a console block into its commands.
func transcript(b mdBlock) ([]docStep, error) {
	var steps []docStep
	for i := 0; i < len(b.lines); i++ {
		l := b.lines[i]
		cmd, ok := strings.CutPrefix(l, "$ ")
		if !ok {
			if len(steps) == 0 {
				if strings.TrimSpace(l) == "" {
					continue
				}
				return nil, fmt.Errorf("line %d: a console block starts with a command (\"$ \"): %q", b.line+i, l)
			}
			s := &steps[len(steps)-1]
			s.want = append(s.want, l)
			continue
		}
		st := docStep{line: b.line + i, cmd: cmd}
		for (openQuote(st.cmd) || strings.HasSuffix(st.cmd, "\\")) && i+1 < len(b.lines) {
			i++
			st.cmd += "\n" + b.lines[i]
		}
		if m := exitComment.FindStringSubmatch(lastLine(st.cmd)); m != nil {
			st.exit, _ = strconv.Atoi(m[1])
		}
		steps = append(steps, st)
	}
	for i := range steps {
		w := steps[i].want
		for len(w) > 0 && strings.TrimSpace(w[len(w)-1]) == "" {
			w = w[:len(w)-1]
		}
		steps[i].want, steps[i].pasted = w, len(w) > 0
	}
	return steps, nil
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// openQuote reports whether s leaves a quote open, as a shell reads it.
func openQuote(s string) bool {
	quote := rune(0)
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			}
		case r == '\\':
			escaped = true
		case quote == '"':
			if r == '"' {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && quote == 0:
			return false // a comment: the rest of the line is not read
		}
	}
	return quote != 0
}

var (
	blanks = regexp.MustCompile(`[ \t]+`)
	rules  = regexp.MustCompile(`─+`)
	about  = regexp.MustCompile(`~\S*`)
)

func normalizeLine(s string) string {
	return rules.ReplaceAllString(blanks.ReplaceAllString(strings.TrimRight(s, " \t\r"), " "), "─")
}

// lineMatches reports whether a printed line matches a pasted one, whose
// words that start with "~" stand for any word.
func lineMatches(want, got string) bool {
	want, got = normalizeLine(want), normalizeLine(got)
	prefix := false
	if w, ok := strings.CutSuffix(want, " ..."); ok {
		want, prefix = w, true // the rest of the line is left out
	}
	if !strings.Contains(want, "~") && !prefix {
		return want == got
	}
	var re strings.Builder
	re.WriteString("^")
	last := 0
	for _, m := range about.FindAllStringIndex(want, -1) {
		re.WriteString(regexp.QuoteMeta(want[last:m[0]]))
		re.WriteString(`\S+`)
		last = m[1]
	}
	re.WriteString(regexp.QuoteMeta(want[last:]))
	if !prefix {
		re.WriteString("$")
	}
	ok, err := regexp.MatchString(re.String(), got)
	return err == nil && ok
}

// outputMatches matches printed lines against pasted ones, where a pasted
// line "..." stands for any number of lines.
func outputMatches(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(want[0]) == "..." {
		for k := 0; k <= len(got); k++ {
			if outputMatches(want[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && lineMatches(want[0], got[0]) && outputMatches(want[1:], got[1:])
}

// docScratch makes the directory a file's transcripts run in: the
// repository's top-level entries linked into a temporary directory, and a
// bin directory with dmx (this test binary, as TestMain lets it be).
func docScratch(t *testing.T) (dir, bin string) {
	dir = t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || strings.HasSuffix(e.Name(), ".db") {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return dir, dmxBin(t)
}

// runDocCommand runs one transcript command with bash and returns its exit
// code and what it printed on stdout and stderr, in the order printed.
func runDocCommand(t *testing.T, dir, bin, command string) (int, string) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	// A command that does not end (a dmx serve written as a transcript)
	// is killed with everything it started, and fails.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out // one file: the order of the writes is kept
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "DMX_TEST_MAIN=1")
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Errorf("$ %s: still running after 3 minutes: killed", command)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	b := readFile(t, out.Name())
	return code, string(b)
}

// TestDocs runs every transcript of the documentation and checks every
// other command line in it (see the top of this file).
func TestDocs(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	files := docFiles(t)
	if len(files) < 2 {
		t.Fatalf("documentation: %v", files)
	}
	for _, file := range files {
		rel, _ := filepath.Rel(filepath.Join("..", ".."), file)
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			data := readFile(t, file)
			blocks, prose := mdParse(string(data))
			var dir, bin string
			for _, b := range blocks {
				if b.info == "text" {
					continue // text, not commands: a list of commands with what they do
				}
				if b.info != "console" {
					// Commands are the lines after "$ ", or in a block
					// with none, the lines that start with one (not
					// output such as "dmx run bully: 5 nodes...").
					prompts := slices.ContainsFunc(b.lines, func(l string) bool { return strings.HasPrefix(l, "$ ") })
					for i, l := range b.lines {
						if c, ok := strings.CutPrefix(l, "$ "); ok || !prompts && commandLine.MatchString(l) {
							checkDocLine(t, fmt.Sprintf("%s:%d", rel, b.line+i), c)
						}
					}
					continue
				}
				steps, err := transcript(b)
				if err != nil {
					t.Errorf("%s:%v", rel, err)
					continue
				}
				for _, st := range steps {
					where := fmt.Sprintf("%s:%d", rel, st.line)
					command := strings.Replace(st.cmd, "go run ./cmd/dmx ", "dmx ", 1)
					if strings.HasPrefix(strings.TrimLeft(command, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_=0123456789 "), "go ") {
						checkDocLine(t, where, command)
						continue
					}
					if strings.HasPrefix(command, "dmx serve") {
						t.Errorf("%s: $ %s: a transcript cannot run dmx serve (it does not end): show it in a text block", where, st.cmd)
						continue
					}
					if dir == "" {
						dir, bin = docScratch(t)
					}
					code, out := runDocCommand(t, dir, bin, command)
					got := strings.Split(strings.TrimRight(out, "\n"), "\n")
					if out == "" {
						got = nil
					}
					if code != st.exit {
						t.Errorf("%s: $ %s\nexit %d, want %d; it printed:\n%s", where, st.cmd, code, st.exit, out)
					} else if st.pasted && !outputMatches(st.want, got) {
						t.Errorf("%s: $ %s\nprinted what the documentation does not show:\n%s\n(the documentation shows:\n%s\n)", where, st.cmd, out, strings.Join(st.want, "\n"))
					}
				}
			}
			for _, name := range testName.FindAllString(string(data), -1) {
				if !testFuncs()[name] {
					t.Errorf("%s names %s, which no test file declares", rel, name)
				}
			}
			nums := make([]int, 0, len(prose))
			for n := range prose {
				nums = append(nums, n)
			}
			sort.Ints(nums)
			for _, n := range nums {
				for _, m := range inlineCode.FindAllStringSubmatch(prose[n], -1) {
					checkDocLine(t, fmt.Sprintf("%s:%d", rel, n), m[1])
				}
			}
		})
	}
}

var (
	inlineCode  = regexp.MustCompile("`([^`]+)`")
	commandLine = regexp.MustCompile(`^\s*(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:dmx [a-z]+(?:\s|$)|go (?:test|run) )`)
)

// checkDocLine checks a command line of the documentation that is not
// run: each dmx command in it exists with its flags, each go test names
// packages and tests that exist.
func checkDocLine(t *testing.T, where, line string) {
	t.Helper()
	for _, p := range docLineProblems(line) {
		t.Errorf("%s: %s", where, p)
	}
}

// docLineProblems says what is wrong with a command line of the
// documentation that is not run.
func docLineProblems(line string) (problems []string) {
	line = strings.TrimPrefix(strings.TrimSpace(line), "$ ")
	line, _, _ = strings.Cut(line, " #")
	line = strings.Replace(line, "go run ./cmd/dmx ", "dmx ", 1)
	line = strings.ReplaceAll(line, `\|`, "|") // a pipe in a markdown table
	for _, part := range shellCommands(line) {
		words := shellWords(part)
		var env []string
		for len(words) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(words[0]) {
			env = append(env, words[0])
			words = words[1:]
		}
		switch {
		case len(words) >= 2 && words[0] == "dmx" && !strings.HasPrefix(words[1], "-") && words[1] == strings.ToLower(words[1]):
			problems = append(problems, dmxWordsProblems(words)...)
		case len(words) >= 2 && words[0] == "go" && words[1] == "test":
			problems = append(problems, goTestProblems(env, words[2:])...)
		}
	}
	return problems
}

// checkDMXWords checks that a dmx command line names a command, and flags
// it has (their values and the arguments are not parsed: the
// documentation writes FILE, TRACE... where the reader puts their own).
func dmxWordsProblems(words []string) (problems []string) {
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpFlag()
	c, rest, err := root.Find(words[1:])
	if err != nil {
		return []string{fmt.Sprintf("%q: %v", strings.Join(words, " "), err)}
	}
	c.InitDefaultHelpFlag()
	for _, r := range rest {
		if !strings.HasPrefix(r, "-") || r == "-" || r == "--" || strings.HasPrefix(r, "-") && len(r) > 1 && r[1] >= '0' && r[1] <= '9' {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(r, "-"), "=")
		name = strings.TrimRight(name, ":,.") // the end of a sentence in the prose
		var ok bool
		if strings.HasPrefix(r, "--") {
			ok = c.Flags().Lookup(name) != nil || c.InheritedFlags().Lookup(name) != nil
		} else {
			ok = len(name) == 1 && (c.Flags().ShorthandLookup(name) != nil || c.InheritedFlags().ShorthandLookup(name) != nil)
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("%q: %s has no flag %s", strings.Join(words, " "), c.CommandPath(), r))
		}
	}
	return problems
}

// shellCommands splits a command line at the pipes, lists and
// redirections a shell would split it at (not those in quotes).
func shellCommands(line string) []string {
	var parts []string
	var cur strings.Builder
	quote, escaped := rune(0), false
	for _, r := range line {
		switch {
		case escaped:
			escaped = false
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\\':
			escaped = true
		case r == '\'' || r == '"':
			quote = r
		case strings.ContainsRune("|&;()<>", r):
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(parts, cur.String())
}

// testName matches a test, benchmark or fuzz function named in the
// documentation.
var testName = regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz)[A-Z]\w*`)

// testFuncs returns the names of every test, benchmark and fuzz function
// of the repository's test files.
var testFuncs = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	filepath.WalkDir(filepath.Join("..", ".."), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil {
			for _, m := range goTestFunc.FindAllStringSubmatch(string(b), -1) {
				names[m[1]] = true
			}
		}
		return nil
	})
	return names
})

var goTestFunc = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)\w*)\(`)

// checkGoTest checks a go test command line: its packages exist, its
// -run/-bench patterns match functions of theirs, its DMX_* variables are
// read by their tests.
func goTestProblems(env, args []string) (problems []string) {
	var pkgs []string
	pat := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "./"):
			pkgs = append(pkgs, a)
		case a == "-run" || a == "-bench" || a == "-fuzz":
			if i+1 < len(args) {
				pat[a[1:]] = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "-run=") || strings.HasPrefix(a, "-bench="):
			k, v, _ := strings.Cut(a[1:], "=")
			pat[k] = v
		}
	}
	if len(args) == 0 {
		return nil // the tool named in the prose
	}
	if len(pkgs) == 0 {
		problems = append(problems, fmt.Sprintf("go test %s: no package", strings.Join(args, " ")))
		return problems
	}
	var funcs, sources []string
	for _, p := range pkgs {
		dir := filepath.Join("..", "..", strings.TrimSuffix(p, "/..."))
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			problems = append(problems, fmt.Sprintf("go test %s: no package %s", strings.Join(args, " "), p))
			continue
		}
		tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if strings.HasSuffix(p, "/...") {
			filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(path, "_test.go") && filepath.Dir(path) != dir {
					tests = append(tests, path)
				}
				return nil
			})
		}
		for _, f := range tests {
			b, err := os.ReadFile(f)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			sources = append(sources, string(b))
			for _, m := range goTestFunc.FindAllStringSubmatch(string(b), -1) {
				funcs = append(funcs, m[1])
			}
		}
	}
	kinds := map[string]string{"run": "Test", "bench": "Benchmark", "fuzz": "Fuzz"}
	for flag, p := range pat {
		if flag == "run" && pat["bench"] != "" {
			continue // -run XXX beside -bench: no test, by intent
		}
		first, _, _ := strings.Cut(p, "/")
		re, err := regexp.Compile(first)
		if err != nil {
			problems = append(problems, fmt.Sprintf("-%s %s: %v", flag, p, err))
			continue
		}
		found := false
		for _, f := range funcs {
			if strings.HasPrefix(f, kinds[flag]) && re.MatchString(f) {
				found = true
			}
		}
		if !found {
			problems = append(problems, fmt.Sprintf("go test %s: -%s %s matches no %s function of %v", strings.Join(args, " "), flag, p, kinds[flag], pkgs))
		}
	}
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		if !strings.HasPrefix(name, "DMX_") {
			continue
		}
		found := false
		for _, s := range sources {
			found = found || strings.Contains(s, `"`+name+`"`)
		}
		if !found && name != "DMX_LONG" {
			problems = append(problems, fmt.Sprintf("%s: no test of %v reads %s", strings.Join(append(env, args...), " "), pkgs, name))
		}
	}
	return problems
}

// TestDocsMatching: the rules a transcript's pasted output is held to.
func TestDocsMatching(t *testing.T) {
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"a b", "a   b", true},
		{"recorded 1210 events in ~623ms", "recorded 1210 events in 1.2s", true},
		{"recorded ~1210 events", "recorded 99 events", true},
		{"recorded ~1210 events", "recorded  events", false},
		{"│ a │ b │", "│ a    │ b │", true},
		{"┌──┬──┐", "┌─────┬───┐", true},
		{"x\n...\nz", "x\nz", true},
		{"x\n...\nz", "x\ny\ny\nz", true},
		{"x\n...", "x\ny", true},
		{"recorded ~9 events ...", "recorded 12 events in 3s (ok)", true},
		{"recorded ~9 events ...", "recorded 12 items", false},
		{"x\ny", "x\ny\nz", false},
		{"x\nz", "x\ny\nz", false},
	} {
		if got := outputMatches(strings.Split(c.want, "\n"), strings.Split(c.got, "\n")); got != c.ok {
			t.Errorf("%q against %q: %v, want %v", c.want, c.got, got, c.ok)
		}
	}
	steps, err := transcript(mdBlock{line: 1, info: "console", lines: []string{
		`$ dmx sql t.db "SELECT 1,`, `  2"   # exit 2`, "out", "", `$ dmx check t.db`, `$ x \`, `  y`}})
	if err != nil || len(steps) != 3 || steps[0].exit != 2 || !steps[0].pasted || steps[1].pasted || steps[2].cmd != "x \\\n  y" {
		t.Errorf("transcript: %v %+v", err, steps)
	}
	for line, bad := range map[string]bool{
		"dmx export mermaid run.db --from P0#3":                                   true, // no such flag
		"dmx frobnicate run.db":                                                   true,
		"dmx sim ALGO --seed S -n N":                                              false,
		"dmx check TRACE... --format junit > report.xml":                          false,
		"go test ./runner/udp -run XXX -bench 'NodeEvent|Datagram'":               false,
		`go test ./runner/udp -run XXX -bench 'NodeEvent\|Message' -benchtime 9x`: false, // in a markdown table
		"go test ./runner -run XXX -bench NoSuchBenchmark":                        true,
		"go test ./nowhere":                                                       true,
		"DMX_SERVE_MILLION=1 go test ./cmd/dmx -run XXX -bench ServeMillion":      false,
		"DMX_NO_SUCH_VARIABLE=1 go test ./cmd/dmx -run XXX -bench ServeMillion":   true,
	} {
		if p := docLineProblems(line); (len(p) > 0) != bad {
			t.Errorf("%q: problems %q, want some: %v", line, p, bad)
		}
	}
}

// TestProtocolDoc: docs/protocol.md's complete program and every command
// it shows run as the page says they do, and the transcripts it quotes
// are what dmx prints.
func TestProtocolDoc(t *testing.T) {
	b := readFile(t, "../../docs/protocol.md")
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

// TestREADMEForNewUsers: what a user of the repository reads in the README
// is there for them. It cites no shared/seeds (a directory of the
// project's makers, not in the repository) but names the five course notes
// by title and the algorithms' doc.go files, which exist; it warns that
// the first build compiles SQLite in silence and says how to watch it; and
// it stays under 300 lines.
func TestREADMEForNewUsers(t *testing.T) {
	b := readFile(t, filepath.Join("..", "..", "README.md"))
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

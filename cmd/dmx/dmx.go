package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/cmd/dmx/early"
	"github.com/dmxlab/dmx/trace/plural"
)

// Exit codes (DESIGN.md): the same for every command.
const (
	exitOK           = 0 // all good
	exitViolated     = 1 // a checked property is violated
	exitUsage        = 2 // usage error, unreadable or invalid input, failed run
	exitInconclusive = 3 // a property could not be decided (e.g. a run cut short)
)

// version is set at build time with -ldflags "-X main.version=..."; otherwise
// it comes from the module's build information.
var version = ""

func toolVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "v0.1.0-dev"
}

// exitError carries an exit code out of a command. A nil err means that the
// command already printed what it had to say.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// verdictExit is the exit code for a verdict, as an error for RunE.
func verdictExit(code int) error {
	if code == exitOK {
		return nil
	}
	return &exitError{code: code}
}

// Do runs dmx with args and returns its exit code. It never panics on bad
// input: a panic would be a bug, and is reported as one with exit code 2.
func Do(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "dmx: internal error (please report it): %v\n", r)
			code = exitUsage
		}
	}()
	root := newRootCmd(stdin, stdout, stderr)
	var release func()
	defer func() {
		if release != nil {
			release()
		}
	}()
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) (err error) {
		var g *exitGuard
		release, g, err = takeInterrupts(cmd.Name(), stderr)
		if g != nil {
			withGuard(cmd, g)
		}
		return err
	}
	root.SetArgs(args)
	ran, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "dmx: "+ee.err.Error())
		}
		return ee.code
	}
	msg := err.Error()
	if strings.Contains(msg, "arg(s)") && ran != nil {
		// "accepts 2 arg(s), received 1" names no argument: say which
		// is missing or how many the command takes (dmx sql TRACE QUERY).
		fmt.Fprintf(stderr, "dmx: %s\n", argsProblem(ran, msg))
		fmt.Fprintf(stderr, "Run 'dmx %s --help' for usage.\n", ran.Name())
		return exitUsage
	}
	fmt.Fprintln(stderr, "dmx: "+msg)
	if strings.HasPrefix(msg, "unknown command") || strings.Contains(msg, "flag") {
		fmt.Fprintln(stderr, "Run 'dmx --help' for usage.")
	}
	return exitUsage
}

// takeInterrupts takes over, for the command name, the catch of the
// interrupts (SIGINT, SIGTERM, SIGHUP) that package early began before
// anything else. A recording, a search and the viewer handle them
// themselves and take it when they are ready to; a node ignores Ctrl-C
// (its runner stops it) and gets the default actions back. For every
// other command an interrupt, whenever it comes, ends it with exit 3
// (what it was doing is undecided) and a line that says so, unless the
// command's guard keeps it a moment (exitGuard); release ends that.
func takeInterrupts(name string, stderr io.Writer) (release func(), g *exitGuard, err error) {
	switch name {
	case "run", "sim", "explore", "serve", "sweep":
		return nil, nil, nil
	case "node":
		early.Take()
		return nil, nil, nil
	}
	g = &exitGuard{name: name, stderr: stderr}
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, early.Signals...)
	early.Take()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-ch:
				g.interrupted(s)
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }, g, nil
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "dmx",
		Short: "Run, record and check distributed mutual exclusion and leader election",
		Long: `dmx runs the classic distributed mutual-exclusion and leader-election
algorithms as real OS processes talking UDP on 127.0.0.1 (or in a seeded,
deterministic simulator), records every causally stamped event into a SQLite
trace, and analyzes traces after the fact: happens-before, mutual exclusion
(causal and real-time), liveness, deadlock, election agreement, validity,
split brain and termination, total order, clocks; message complexity and
delays beside the theory; SQL over events and messages.

Exit codes: 0 all good; 1 a checked property is violated; 2 usage error or
unreadable/invalid input; 3 inconclusive (e.g. the run was cut short).`,
		Example: `  dmx run ricart-agrawala                    # 5 processes over UDP: record, check, print the verdict
  dmx sim central --seed 7 -n 8              # the same in the simulator, into dmx-central-7.db
  dmx check dmx-central-7.db                 # check a recorded trace again (exit code = verdict)
  dmx stats dmx-central-7.db                 # messages and delays beside the seeds' figures
  dmx sql dmx-central-7.db "SELECT type, count(*) FROM messages GROUP BY type"
  dmx run bully --faults crash:leader@500ms  # SIGKILL the leader, watch the next election
  dmx list ricart-agrawala                   # an algorithm's rules, costs and parameters`,
		Version:       toolVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.CompletionOptions.HiddenDefaultCmd = false
	root.AddCommand(
		newRunCmd(),
		newSimCmd(),
		newCheckCmd(),
		newSQLCmd(),
		newListCmd(),
		newStatsCmd(),
		newRenderCmd(),
		newPlotCmd(),
		newReportCmd(),
		newServeCmd(),
		newImportCmd(),
		newExportCmd(),
		newNodeCmd(),
		newBenchCmd(),
		newReplayCmd(),
		newExploreCmd(),
		newSweepCmd(),
		newMergeCmd(),
	)
	// cobra adds its help and completion commands when it runs; made
	// now, they get examples too.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  dmx help run\n  dmx help list"
		case "completion":
			c.Example = "  source <(dmx completion bash)              # bash, in this shell\n" +
				"  dmx completion zsh > \"${fpath[1]}/_dmx\"   # zsh, in every new shell"
			for _, sh := range c.Commands() {
				sh.Example = completionExamples[sh.Name()]
			}
		}
	}
	return root
}

// completionExamples are the examples of dmx completion SHELL.
var completionExamples = map[string]string{
	"bash":       "  source <(dmx completion bash)\n  dmx completion bash > ~/.local/share/bash-completion/completions/dmx",
	"zsh":        "  dmx completion zsh > \"${fpath[1]}/_dmx\"",
	"fish":       "  dmx completion fish > ~/.config/fish/completions/dmx.fish",
	"powershell": "  dmx completion powershell | Out-String | Invoke-Expression",
}

// argsProblem says in words what is wrong with the arguments of cmd,
// whose check said msg: the arguments its usage line names that are
// missing ("sql: QUERY is missing: dmx sql TRACE QUERY"), or how many
// it takes. A usage line whose arguments are optional ([ALGO]) keeps
// cobra's message beside it.
func argsProblem(cmd *cobra.Command, msg string) string {
	use := strings.TrimSuffix(cmd.UseLine(), " [flags]")
	var names []string // the positional arguments, "TRACE..." as "TRACE"
	variadic := false
	for _, w := range strings.Fields(cmd.Use)[1:] {
		if strings.HasPrefix(w, "[") || strings.HasPrefix(w, "-") || w == "|" {
			break
		}
		variadic = strings.HasSuffix(w, "...")
		names = append(names, strings.TrimSuffix(w, "..."))
	}
	given := len(cmd.Flags().Args())
	switch {
	case len(names) == 0:
		return fmt.Sprintf("%s: %s", use, msg)
	case given < len(names):
		missing := names[given:]
		verb := "is"
		if len(missing) > 1 {
			verb = "are"
		}
		what := strings.Join(missing[:len(missing)-1], ", ")
		if what != "" {
			what += " and "
		}
		return fmt.Sprintf("%s: %s%s %s missing: %s", cmd.Name(), what, missing[len(missing)-1], verb, use)
	case !variadic && given > len(names):
		return fmt.Sprintf("%s: %s given, but it takes %d: %s (quote an argument that has spaces)", cmd.Name(),
			plural.Count(given, "argument"), len(names), use)
	}
	return fmt.Sprintf("%s: %s", use, msg)
}

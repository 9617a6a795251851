package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/plural"
)

func newMergeCmd() *cobra.Command {
	var out string
	var open openFlags
	cmd := &cobra.Command{
		Use:   "merge TRACE... -o TRACE",
		Short: "Join traces into a new one (runs renumbered, nothing lost)",
		Long: `merge copies every run of the traces named, in the order named, into a
new trace: the runs of the first trace first, renumbered 1, 2, ... in the
order of their ids, then those of the next. Every row is copied as it is
(the runs rows, events, messages and their fates, process names); event
ids are shifted past the runs before them. The shards of a sweep (dmx
sweep --shard K/N) merged in order number their runs as the whole sweep
does, and dmx check --summary prints the whole sweep's table.

merge refuses, before it writes anything, a trace whose schema is not
this dmx's (another version, a column missing or added), a damaged trace
(--no-integrity-check skips that check), a trace with a run still being
recorded, an output that exists (merge makes a new trace) and an output
that is one of the inputs. Each trace is copied in one transaction and
counted after: a trace copied short is an error, and the output is
removed.`,
		Example: `  dmx merge shard-1.db shard-2.db shard-3.db shard-4.db -o all.db
  dmx check --summary all.db`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return &exitError{exitUsage, errors.New("no output: name the merged trace with -o TRACE")}
			}
			for _, in := range args {
				if sameFile(in, out) {
					return &exitError{exitUsage, fmt.Errorf("the output (-o) %s is also an input: dmx does not write over its input; choose another name", out)}
				}
			}
			for i, in := range args {
				for _, other := range args[:i] {
					if sameFile(in, other) {
						return &exitError{exitUsage, fmt.Errorf("%s is named twice: its runs would be merged twice", in)}
					}
				}
			}
			if _, err := os.Lstat(out); err == nil {
				return &exitError{exitUsage, fmt.Errorf("%s exists: merge writes a new trace; choose another name or remove it", out)}
			} else if !errors.Is(err, fs.ErrNotExist) {
				return &exitError{exitUsage, err}
			}
			for _, in := range args {
				st, err := open.open(in)
				if err != nil {
					return &exitError{exitUsage, err}
				}
				st.Close()
			}
			// The output is new: an interrupt removes it (a merge cut
			// short would leave a trace with its -wal and part of the
			// runs), and waits for the moment its schema is made in.
			guardOf(cmd).onInterrupt(func() { removeNewTrace(out) })
			counts, err := merge(guardOf(cmd), out, args)
			if err != nil {
				os.Remove(out)
				return &exitError{exitUsage, fmt.Errorf("merge: %w (nothing written: %s removed)", err, out)}
			}
			var total trace.MergeCounts
			w := cmd.OutOrStdout()
			for i, c := range counts {
				fmt.Fprintf(w, "%s: %s, %s, %s\n", args[i], plural.Count(int(c.Runs), "run"), plural.Count(int(c.Events), "event"), plural.Count(int(c.Messages), "message"))
				total.Add(c)
			}
			fmt.Fprintf(w, "merged %s into %s: %s, %s, %s\n", plural.Count(len(args), "trace"), out,
				plural.Count(int(total.Runs), "run"), plural.Count(int(total.Events), "event"), plural.Count(int(total.Messages), "message"))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "the merged trace (a new file)")
	open.register(cmd)
	return cmd
}

// removeNewTrace removes the trace at path that a command was making, and
// what SQLite and trace.Create make beside it: its -wal, -shm, -journal,
// and the file its schema is made in (.NAME.dmx-new-*, with a journal),
// which a second interrupt can leave in the middle of that.
func removeNewTrace(path string) {
	dir, base := filepath.Split(path)
	made, _ := filepath.Glob(filepath.Join(dir, "."+base+".dmx-new-*"))
	for _, f := range append(made, path, path+"-wal", path+"-shm", path+"-journal") {
		os.Remove(f)
	}
}

// merge makes the trace out from inputs; the time indexes are made once
// at the end, as a sweep makes them.
func merge(g *exitGuard, out string, inputs []string) ([]trace.MergeCounts, error) {
	var st *trace.Store
	err := g.hold("making the trace", func() (err error) {
		st, err = trace.Create(out)
		return err
	})
	if err != nil {
		return nil, err
	}
	restore, err := st.DeferTimeIndexes()
	var counts []trace.MergeCounts
	if err == nil {
		counts, err = st.Merge(inputs)
	}
	err = errors.Join(err, restore())
	var side *trace.SideFilesError
	if cerr := st.Close(); cerr != nil && !errors.As(cerr, &side) {
		err = errors.Join(err, cerr)
	}
	return counts, err
}

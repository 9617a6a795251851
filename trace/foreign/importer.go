package foreign

import (
	"fmt"

	"github.com/dmxlab/dmx/trace"
)

// Importer reads the logs of another tool.
type Importer struct {
	Name    string // as dmx import takes it
	Summary string // one line for dmx import --help
	// Parse reads files into a log. What it cannot read but can skip goes
	// to ps (each problem naming its file and line); its error means the
	// input cannot be read at all.
	Parse func(files []string, opt ParseOptions, ps *Problems) (*Log, error)
}

// ParseOptions are what a parser may be told besides the files.
type ParseOptions struct {
	Regex     string // a ShiViz parser regex: the file is a bare log
	Separator string // a ShiViz execution separator, with Regex
}

// ImportOptions say how to import.
type ImportOptions struct {
	ParseOptions
	Options
}

// Imported says what an import did.
type Imported struct {
	Runs     []ImportedRun
	Problems []Problem // what was skipped, under Lenient
	Summary  string    // the problems counted by reason
}

// ImportedRun is one run an import added.
type ImportedRun struct {
	ID       int64
	Label    string // the execution's label, if the log has one
	Events   int
	Hosts    int
	Messages int
	Complete bool
}

// Import reads files with imp, builds a run of each execution of the log
// and appends them to the trace at out. Without opt.Lenient, any problem
// fails the import (before the trace is touched) with an error naming the
// file and line of each problem; with it, what could be read is imported
// and Imported counts what was skipped.
func Import(imp Importer, files []string, out string, opt ImportOptions) (Imported, error) {
	var ps Problems
	lg, err := imp.Parse(files, opt.ParseOptions, &ps)
	if err != nil {
		return Imported{}, err
	}
	runs := Build(lg, opt.Options, &ps)
	if !opt.Lenient && ps.Len() > 0 {
		return Imported{}, ps.Err()
	}
	if len(runs) == 0 {
		return Imported{}, fmt.Errorf("%s: no events to import", files[0])
	}
	ids, err := Write(out, runs)
	if err != nil {
		return Imported{}, err
	}
	res := Imported{Problems: ps.List(), Summary: ps.Summary()}
	for i, r := range runs {
		msgs := 0
		for j := range r.Events {
			ev := &r.Events[j]
			if ev.Kind == trace.KindSend && ev.Msg != 0 {
				msgs++
			}
			l, _ := ev.Links()
			msgs += len(l.Sent)
		}
		res.Runs = append(res.Runs, ImportedRun{ID: ids[i], Label: r.Label, Events: len(r.Events), Hosts: r.Run.Nodes,
			Messages: msgs, Complete: r.Run.Complete})
	}
	return res, nil
}

package foreign

import (
	"encoding/json"
	"fmt"
	"strings"

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
	// TimeField and TimeFormat say which field of the log's events holds
	// their wall time and how to read it (see WallTimes; empty: the first
	// of TimeFields, the layout inferred).
	TimeField, TimeFormat string
	// Algorithm names the algorithm the logged program runs, as dmx list
	// names it: its runs are checked as that algorithm's (its properties,
	// its validity rule). A log that dmx export wrote names its own.
	Algorithm string
	// DMXText applies DMXRules: the log is one dmx export wrote. Import
	// also applies them, and says so, when the log is plainly dmx's (every
	// host's first event is its start line) and no rules were given.
	DMXText bool
	// Writing, if set, runs the writing of the trace (its argument): dmx
	// keeps interrupts until it is done, so that none leaves a run half
	// imported with the trace's -wal beside it.
	Writing func(write func() error) error
}

// Imported says what an import did.
type Imported struct {
	Runs     []ImportedRun
	Problems []Problem // what was skipped, under Lenient
	Summary  string    // the problems counted by reason
	Notes    []string  // what it did that the user should know: wall times read, text skipped, dmx's rules applied
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
	notes := append([]string(nil), lg.Notes...)
	note, err := WallTimes(lg, opt.TimeField, opt.TimeFormat)
	if err != nil {
		return Imported{}, err
	}
	if note != "" {
		notes = append(notes, note)
	}
	algo, isDMX := dmxExport(lg)
	if isDMX && !opt.DMXText && len(opt.Rules) == 0 {
		opt.DMXText = true
		notes = append(notes, "the log is one dmx export wrote: its events' kinds, messages and types are read back (--dmx)")
	}
	if opt.DMXText {
		opt.Rules = append(opt.Rules, DMXRules()...)
	}
	if opt.Algorithm == "" {
		opt.Algorithm = algo
	}
	if opt.Algorithm != "" {
		if lg.Params == nil {
			lg.Params = map[string]string{}
		}
		lg.Params["algorithm"] = opt.Algorithm
	}
	runs := Build(lg, opt.Options, &ps)
	if !opt.Lenient && ps.Len() > 0 {
		return Imported{}, ps.Err()
	}
	if len(runs) == 0 {
		return Imported{}, fmt.Errorf("%s: no events to import", files[0])
	}
	var ids []int64
	write := func() (err error) {
		ids, err = Write(out, runs)
		return err
	}
	if opt.Writing != nil {
		err = opt.Writing(write)
	} else {
		err = write()
	}
	if err != nil {
		return Imported{}, err
	}
	res := Imported{Problems: ps.List(), Summary: ps.Summary(), Notes: notes}
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

// dmxExport reports whether lg is a log that dmx export wrote of dmx's own
// runs: every host's first event is the line of its start event, "start
// {"algorithm":NAME,...}" (see Text), and the algorithm it names.
func dmxExport(lg *Log) (algorithm string, ok bool) {
	for _, ex := range lg.Executions {
		first := map[string]bool{}
		for _, ev := range ex.Events {
			if first[ev.Host] {
				continue
			}
			first[ev.Host] = true
			rest, isStart := strings.CutPrefix(ev.Text, "start ")
			if !isStart {
				return "", false
			}
			var d struct {
				Algorithm string `json:"algorithm"`
			}
			if json.Unmarshal([]byte(rest), &d) != nil || d.Algorithm == "" {
				return "", false
			}
			if algorithm == "" {
				algorithm = d.Algorithm
			}
		}
		if len(first) == 0 {
			return "", false
		}
	}
	return algorithm, algorithm != ""
}

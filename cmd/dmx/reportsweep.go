package main

import (
	"fmt"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/analyze/tally"
	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/render/htmlreport"
	"github.com/dmxlab/dmx/trace"
)

// maxDetailed is how many runs a report gives a part of its own when it
// shows a sweep's table: past it, only the runs the table names (the
// first and smallest failing seed of each check) get one, and the others
// are listed in a line each. A sweep of 1,000 runs drawn whole would be
// a report no one opens.
const maxDetailed = 20

// sweepSection makes the report's table of runs (nil for one run).
func sweepSection(runs []tally.Run) *htmlreport.Sweep {
	if len(runs) < 2 {
		return nil
	}
	t := tally.Of(runs)
	s := &htmlreport.Sweep{Runs: t.Runs, Incomplete: t.Incomplete}
	link := func(f *tally.Failing) *htmlreport.SeedLink {
		if f == nil {
			return nil
		}
		return &htmlreport.SeedLink{Seed: f.Seed, File: f.File, Run: f.Run, Events: f.Events, Rerun: f.Rerun}
	}
	for _, c := range t.Checks {
		s.Checks = append(s.Checks, htmlreport.SweepCheck{Name: c.Check, OK: c.OK, Violated: c.Violated, Unknown: c.Unknown,
			NA: c.NotApplicable + c.Skipped, Rate: render.RateText(c), First: link(c.First), Smallest: link(c.Smallest)})
	}
	if len(t.Kinds) > 0 && len(t.Kinds[0].Checks) > 0 && !(len(t.Kinds) == 1 && t.Kinds[0].Kind == tally.None) {
		for _, kc := range t.Kinds[0].Checks {
			s.KindChecks = append(s.KindChecks, kc.Check)
		}
		for _, k := range t.Kinds {
			row := htmlreport.SweepKind{Kind: k.Kind, Runs: k.Runs}
			for _, kc := range k.Checks {
				row.Cells = append(row.Cells, fmt.Sprintf("%d/%d (%s)", kc.Violated, kc.Judged, render.Percent(kc.Rate)))
			}
			s.Kinds = append(s.Kinds, row)
		}
	}
	return s
}

// runKey names a run of a trace.
type runKey struct {
	file string
	id   int64
}

// detailed returns the runs of a report that get a part of their own:
// all of them up to maxDetailed, else those the sweep's table names; the
// others are listed in s.Others.
func detailed(runs []tally.Run, s *htmlreport.Sweep) map[runKey]bool {
	keep := map[runKey]bool{}
	if len(runs) <= maxDetailed || s == nil {
		for _, r := range runs {
			keep[runKey{r.File, r.Run.ID}] = true
		}
		return keep
	}
	for _, c := range s.Checks {
		for _, l := range []*htmlreport.SeedLink{c.First, c.Smallest} {
			if l != nil {
				keep[runKey{l.File, l.Run}] = true
			}
		}
	}
	for _, r := range runs {
		if !keep[runKey{r.File, r.Run.ID}] {
			seed := fmt.Sprint(r.Run.Seed)
			if r.Run.NoSeed {
				seed = ""
			}
			s.Others = append(s.Others, htmlreport.SweepRun{File: r.File, ID: r.Run.ID, Seed: seed,
				Verdict: string(analyze.Summarize(r.Results)), Faults: string(r.Run.Faults)})
		}
	}
	return keep
}

// reportParts checks every run of the traces at paths and makes the
// report's parts: for more than one run, the sweep's table first; past
// maxDetailed runs, a part of their own only for the runs it names.
func reportParts(open *openFlags, paths []string, pictures int) ([]render.Report, []htmlreport.Run, *htmlreport.Sweep, error) {
	var reps []render.Report
	var swept []tally.Run
	for _, path := range paths {
		st, rs, err := open.runs(path)
		if err != nil {
			return nil, nil, nil, err
		}
		rr, err := checkRuns(st, rs, checkOptions{})
		var more []tally.Run
		if err == nil {
			more, err = tallyRuns(st, path, rs, rr)
		}
		st.Close()
		if err != nil {
			return nil, nil, nil, err
		}
		reps = append(reps, rr...)
		swept = append(swept, more...)
	}
	sw := sweepSection(swept)
	keep := detailed(swept, sw)
	var parts []htmlreport.Run
	for _, path := range paths {
		var mine []render.Report
		for _, rep := range reps {
			if rep.File == path && keep[runKey{path, rep.Run}] {
				mine = append(mine, rep)
			}
		}
		if len(mine) == 0 {
			continue
		}
		st, err := trace.OpenWith(path, trace.OpenOptions{NoIntegrityCheck: true}) // checked above
		if err != nil {
			return nil, nil, nil, err
		}
		p, err := reportRuns(st, mine, pictures)
		st.Close()
		if err != nil {
			return nil, nil, nil, err
		}
		parts = append(parts, p...)
	}
	return reps, parts, sw, nil
}

// serveSweep is the table of every run of the traces dmx serve shows
// (its /sweep page); nil for one run.
func serveSweep(stores []*trace.Store) (*htmlreport.Sweep, error) {
	var all []tally.Run
	for _, st := range stores {
		runs, err := st.Runs()
		if err != nil {
			return nil, err
		}
		reps, err := checkRuns(st, runs, checkOptions{})
		if err != nil {
			return nil, err
		}
		more, err := tallyRuns(st, st.Path(), runs, reps)
		if err != nil {
			return nil, err
		}
		all = append(all, more...)
	}
	return sweepSection(all), nil
}

// Package sweep runs one plan over many seeds, on every core, into one
// trace: dmx sweep. Each seed is a run of its own (its own random fault
// schedule when a nemesis is given, drawn from the seed), simulated (or
// run for real) and checked by a pool of workers in memory; one writer
// records the runs into the trace in seed order, so that a trace's run ids
// follow its seeds whatever the workers' pace, and the shards of a sweep
// merged in order number their runs as the whole sweep does.
//
// An interrupt (Stop) ends the sweep with what is done: the runs cut
// short by it are left out of the trace (a seed runs again whole), every
// run finished is written, and Result.NotRun lists the seeds to run again.
package sweep

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/analyze/tally"
	"github.com/dmxlab/dmx/runner"
	"github.com/dmxlab/dmx/runner/nemesis"
	"github.com/dmxlab/dmx/trace"
)

// Seeds is a range of seeds, From..To inclusive.
type Seeds struct{ From, To uint64 }

// ParseSeeds reads A..B (A <= B, both from 1).
func ParseSeeds(s string) (Seeds, error) {
	a, b, ok := strings.Cut(s, "..")
	from, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 64)
	to, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 64)
	if !ok || err1 != nil || err2 != nil || from < 1 || to < from {
		return Seeds{}, fmt.Errorf("seeds %q: want A..B with 1 <= A <= B, e.g. 1..500", s)
	}
	return Seeds{from, to}, nil
}

func (s Seeds) String() string { return fmt.Sprintf("%d..%d", s.From, s.To) }

// Len is the number of seeds.
func (s Seeds) Len() uint64 { return s.To - s.From + 1 }

// Shard returns the k-th (1-based) of n contiguous parts of s, as even as
// can be (the first len%n parts one seed longer), and whether it is not
// empty.
func (s Seeds) Shard(k, n int) (Seeds, bool) {
	l, nn, kk := s.Len(), uint64(n), uint64(k-1)
	size, extra := l/nn, l%nn
	start := s.From + kk*size + min(kk, extra)
	length := size
	if kk < extra {
		length++
	}
	if length == 0 {
		return Seeds{}, false
	}
	return Seeds{start, start + length - 1}, true
}

// ParseShard reads K/N (1 <= K <= N).
func ParseShard(s string) (k, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 1 || k > n {
		return 0, 0, fmt.Errorf("shard %q: want K/N with 1 <= K <= N, e.g. 2/4", s)
	}
	return k, n, nil
}

// Driver carries out one run of p, recording into rec; stop cuts it short.
// complete and status are those of the run's row.
type Driver func(p runner.Plan, rec runner.Recorder, stop <-chan struct{}) (complete bool, status string, err error)

// Options say what a sweep runs.
type Options struct {
	Plan    runner.Plan // the run of every seed but its seed (and its drawn faults)
	Seeds   Seeds
	Nemesis *nemesis.Spec // nil: no random faults
	Horizon time.Duration // the nemesis's horizon (0: nemesis.Horizon of Plan)
	Workers int           // 0: one per core
	Drive   Driver
	// Checks says which checks a run gets (dmx check's choice for it).
	Checks func(trace.Run) ([]*analyze.Check, []analyze.Option, error)
	// Stop, closed, ends the sweep with what is done.
	Stop <-chan struct{}
	// Progress, if not nil, is called by the writer after each run it
	// wrote, with the runs written and violated so far.
	Progress    func(written, violated int)
	ToolVersion string
	// Rerun, if not nil, says the command line that records a seed's run
	// again (default: Rerun).
	Rerun func(runner.Plan) string
}

// Result is what a sweep did.
type Result struct {
	Runs   []tally.Run // the runs written, in seed order
	Events int64
	NotRun []uint64 // seeds interrupted or never started
	// Stopped: the sweep was interrupted.
	Stopped bool
}

// PlanOf returns the plan of seed: o.Plan with the seed, and the faults
// the nemesis draws for it after o.Plan's own.
func (o Options) PlanOf(seed uint64) (runner.Plan, error) {
	p := o.Plan
	p.Seed = seed
	if o.Nemesis != nil {
		fs, err := o.Nemesis.Draw(o.Plan, o.horizon(), seed)
		if err != nil {
			return p, err
		}
		p.Faults = append(slices.Clip(o.Plan.Faults), fs...)
	}
	return p, nil
}

func (o Options) horizon() time.Duration {
	if o.Horizon > 0 {
		return o.Horizon
	}
	return nemesis.Horizon(o.Plan)
}

// done is one run finished by a worker.
type done struct {
	i      uint64 // index in the seeds
	seed   uint64
	row    trace.Run
	events []trace.Event
	res    []analyze.Result
	rerun  string
	cut    bool // interrupted: not written
	err    error
}

// Run sweeps o into the trace st (at path file, for the runs' names).
// Its error is a run that could not be carried out (a plan a seed makes
// invalid, a trace that refuses a write): the sweep stops there, and what
// was written stays.
func Run(st *trace.Store, file string, o Options) (Result, error) {
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	total := o.Seeds.Len()
	workers = int(min(uint64(workers), total))
	ps := o.start(total, workers)
	var res Result
	restore, err := st.DeferTimeIndexes()
	var rw *trace.RunWriter
	if err == nil {
		rw, err = st.NewRunWriter()
	}
	if err != nil {
		ps.stopAll()
		for range ps.results {
		}
		return res, errors.Join(err, restore())
	}
	defer rw.Close()
	next, firstErr := o.collect(ps, rw, file, &res)
	for i := next; i < total; i++ {
		res.NotRun = append(res.NotRun, o.Seeds.From+i)
	}
	slices.Sort(res.NotRun)
	if err := restore(); err != nil && firstErr == nil {
		firstErr = err
	}
	select {
	case <-o.Stop:
		res.Stopped = true
	default:
	}
	ps.stopAll()
	return res, firstErr
}

// pipes are a sweep's workers at work: the runs they finish, in any
// order, and what stops them.
type pipes struct {
	results <-chan done
	// window bounds the runs between dispatch and write: the writer
	// takes them in seed order, so a slow seed holds the later ones back.
	window  chan struct{}
	stopAll func() // the writer failed: stop
}

// start dispatches the total seeds to workers, each carrying out and
// checking runs until the seeds are done or o.Stop (or stopAll) cuts the
// runs short.
func (o Options) start(total uint64, workers int) pipes {
	window := make(chan struct{}, 4*workers)
	jobs := make(chan uint64)
	results := make(chan done, 4*workers)
	quit := make(chan struct{})
	var quitOnce sync.Once
	stopAll := func() { quitOnce.Do(func() { close(quit) }) }
	stop := make(chan struct{}) // o.Stop or quit: cut runs short
	go func() {
		select {
		case <-o.Stop:
		case <-quit:
		}
		close(stop)
	}()
	go func() {
		defer close(jobs)
		for i := uint64(0); i < total; i++ {
			select {
			case window <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case jobs <- i:
			case <-stop:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results <- o.one(i, stop)
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()
	return pipes{results: results, window: window, stopAll: stopAll}
}

// collect writes the runs the workers finish in seed order, counting
// them into res, until the workers are done. It returns the index of the
// first seed not written and the first error (after which it writes
// nothing more and stops the workers).
func (o Options) collect(ps pipes, rw *trace.RunWriter, file string, res *Result) (uint64, error) {
	pending := map[uint64]done{}
	next := uint64(0)
	violated := 0
	var firstErr error
	for d := range ps.results {
		pending[d.i] = d
		for {
			d, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-ps.window
			if firstErr != nil {
				continue
			}
			if d.err != nil {
				firstErr = d.err
				ps.stopAll()
				continue
			}
			if d.cut {
				res.NotRun = append(res.NotRun, d.seed)
				continue
			}
			tr, err := write(rw, file, d)
			if err != nil {
				firstErr = err
				ps.stopAll()
				continue
			}
			res.Runs = append(res.Runs, tr)
			res.Events += tr.Events
			if analyze.Summarize(tr.Results) == analyze.Violated {
				violated++
			}
			if o.Progress != nil {
				o.Progress(len(res.Runs), violated)
			}
		}
	}
	return next, firstErr
}

// one carries out and checks the run of the i-th seed.
func (o Options) one(i uint64, stop <-chan struct{}) done {
	seed := o.Seeds.From + i
	d := done{i: i, seed: seed}
	p, err := o.PlanOf(seed)
	if err != nil {
		d.err = err
		return d
	}
	if err := p.Validate(); err != nil {
		d.err = fmt.Errorf("seed %d: %w", seed, err)
		return d
	}
	if o.Rerun != nil {
		d.rerun = o.Rerun(p)
	} else {
		d.rerun = Rerun(p)
	}
	row := p.RunRow()
	row.ToolVersion, row.Started = o.ToolVersion, time.Now().UnixNano()
	col := &runner.Collector{}
	complete, status, err := o.Drive(p, col, stop)
	if err != nil {
		d.err = fmt.Errorf("seed %d: %w", seed, err)
		return d
	}
	select {
	case <-stop:
		if !complete || status == "interrupted" {
			d.cut = true
			return d
		}
	default:
	}
	row.Ended, row.Complete, row.Status = time.Now().UnixNano(), complete, status
	d.row, d.events = row, col.Events
	checks, opts, err := o.Checks(row)
	if err != nil {
		d.err = err
		return d
	}
	d.res, err = analyze.Evaluate(row, &trace.SliceReader{Events: col.Events}, checks, opts...)
	if err != nil {
		d.err = fmt.Errorf("seed %d: check: %w", seed, err)
	}
	return d
}

// write records the run d with w.
func write(w *trace.RunWriter, file string, d done) (tally.Run, error) {
	row := d.row
	id, err := w.Write(row, d.events)
	if err != nil {
		return tally.Run{}, fmt.Errorf("seed %d: %w", d.seed, err)
	}
	row.ID = id
	return tally.Run{Run: row, File: file, Events: int64(len(d.events)), Rerun: d.rerun, Results: d.res}, nil
}

// Rerun returns the command line that records p's run again ("dmx sim
// bully --seed 7 --faults pause:3@1.2s-1.5s"). A plan that no command
// line says whole (per-process workloads outside a scenario file) gets
// the line that says the most, with what it leaves out.
func Rerun(p runner.Plan) string {
	args, err := p.Args()
	for i, a := range args {
		args[i] = Quote(a)
	}
	line := "dmx " + strings.Join(args, " ")
	if err != nil {
		line += " (" + err.Error() + ")"
	}
	return line
}

// Quote quotes s for a POSIX shell, unless it needs none.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(strings.ContainsRune("-_./,:=@+%", r) || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

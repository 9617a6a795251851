package render

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dmxlab/dmx/analyze/stats"
	"github.com/dmxlab/dmx/trace/plural"
)

// StatsFormats are the formats Stats writes, the default first.
var StatsFormats = []string{"table", "json", "csv"}

// Stats writes the measures of the runs of the trace file in format, one
// of StatsFormats: a table per run; JSON, {"file": FILE, "runs":
// [STATS...]} with each STATS the stable form of package analyze/stats; or
// CSV, one row per measure.
func Stats(w io.Writer, format, file string, runs []*stats.Stats) error {
	switch format {
	case "table":
		return statsTable(w, "", runs)
	case "json":
		return statsJSON(w, file, runs)
	case "csv":
		return statsCSV(w, runs)
	}
	return unknownFormat(format, StatsFormats)
}

// StatsFile is the measured runs of one trace file.
type StatsFile struct {
	File string         `json:"file"`
	Runs []*stats.Stats `json:"runs"`
}

// StatsFiles writes the measures of several trace files in format: with
// one file, as Stats does; with more, a table per run headed by its file,
// JSON {"traces": [{"file": FILE, "runs": [STATS...]}...]}, or CSV with the
// file in a first column.
func StatsFiles(w io.Writer, format string, files []StatsFile) error {
	if len(files) == 1 {
		return Stats(w, format, files[0].File, files[0].Runs)
	}
	switch format {
	case "table":
		for i, f := range files {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if err := statsTable(w, f.File+" ", f.Runs); err != nil {
				return err
			}
		}
		return nil
	case "json":
		return JSON(w, struct {
			Traces []StatsFile `json:"traces"`
		}{files})
	case "csv":
		var rows [][]string
		for _, f := range files {
			for _, row := range statsRows(f.Runs) {
				rows = append(rows, append([]string{f.File}, row...))
			}
		}
		return CSV(w, append([]string{"file"}, statsHeader...), rows)
	}
	return unknownFormat(format, StatsFormats)
}

// statsJSON writes the runs of the trace file as JSON.
func statsJSON(w io.Writer, file string, runs []*stats.Stats) error {
	return JSON(w, struct {
		File string         `json:"file"`
		Runs []*stats.Stats `json:"runs"`
	}{file, runs})
}

// statsCSV writes one row per measure of each run: the run, the measure,
// its unit, the count, mean (or value), p50, p99 and max of a
// distribution, and the seeds' figure as text and as a number.
func statsCSV(w io.Writer, runs []*stats.Stats) error {
	return CSV(w, statsHeader, statsRows(runs))
}

var statsHeader = []string{"run", "measure", "unit", "count", "value", "p50", "p99", "max", "seeds", "seeds_value"}

// statsRows are the CSV rows of runs, under statsHeader.
func statsRows(runs []*stats.Stats) [][]string {
	var rows [][]string
	for _, s := range runs {
		for _, m := range statRows(s) {
			rows = append(rows, append([]string{strconv.FormatInt(s.Run, 10)}, m.csv()...))
		}
	}
	return rows
}

// Clock names the time a run of mode (the trace's runs.mode) counts in:
// "simulated time" for the simulator's runs, "wall-clock time" for real
// ones and imports. dmx sim and dmx stats both say it, so that a
// simulated run's duration is not taken for the seconds it took to
// compute.
func Clock(mode string) string {
	if mode == "sim" {
		return "simulated time"
	}
	return "wall-clock time"
}

// statsTable writes each run as a line that says what ran (after prefix),
// then a table of its measures beside the seeds' figures; a blank line
// separates runs.
func statsTable(w io.Writer, prefix string, runs []*stats.Stats) error {
	for i, s := range runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		status := "complete"
		switch {
		case !s.Complete:
			status = "incomplete"
		case strings.HasPrefix(s.Status, "stalled"):
			// Recorded to its end, but its workloads did not finish: say
			// so, not "complete" (dmx run ends a run after --stall of
			// silence).
			status = s.Status
		}
		fmt.Fprintf(w, "%srun %d: %s, N=%d, %s, %s in %v of %s (first to last event)\n",
			prefix, s.Run, s.Algorithm, s.Nodes, status, plural.Count(s.Events, "event"), time.Duration(s.DurationNS), Clock(s.Mode))
		var rows [][]string
		for _, m := range statRows(s) {
			rows = append(rows, []string{m.name, m.measured(), figure(m.seeds)})
		}
		if err := Table(w, []string{"measure", "measured", "seeds"}, rows); err != nil {
			return err
		}
	}
	return nil
}

// figure formats a seeds' figure as "2(N-1) = 8", or "" for none.
func figure(f *stats.Figure) string {
	if f == nil {
		return ""
	}
	switch {
	case f.Value != nil && f.Formula == num(*f.Value):
		return f.Formula
	case f.Value != nil && f.Min != nil && f.Max != nil && *f.Min != *f.Max:
		// A range with a typical value: "best 2N, avg 2.5N, worst 3N-1:
		// 12..17, typically 15" (the value alone would read as the worst).
		return fmt.Sprintf("%s: %s..%s, typically %s", f.Formula, num(*f.Min), num(*f.Max), num(*f.Value))
	case f.Value != nil:
		return f.Formula + " = " + num(*f.Value)
	case f.Min != nil && f.Max != nil:
		return fmt.Sprintf("%s: %s..%s", f.Formula, num(*f.Min), num(*f.Max))
	}
	return f.Formula
}

// num formats a figure's number: an integer as such, else two decimals.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// fnum formats a measured number with at most two decimals, no trailing
// zeros.
func fnum(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// statRow is one measure: a scalar (dist nil) or a distribution.
type statRow struct {
	name, unit string
	value      float64
	dist       *stats.Dist
	seeds      *stats.Figure
	text       string // shown instead of the value when set
}

func (m statRow) csv() []string {
	row := []string{m.name, m.unit, "", "", "", "", "", figure(m.seeds), ""}
	if m.seeds != nil && m.seeds.Value != nil {
		row[8] = fnum(*m.seeds.Value)
	}
	if m.dist != nil {
		d := m.dist
		row[2], row[3] = strconv.FormatInt(d.Count, 10), fnum(d.Mean)
		row[4], row[5], row[6] = strconv.FormatInt(d.P50, 10), strconv.FormatInt(d.P99, 10), strconv.FormatInt(d.Max, 10)
	} else {
		row[3] = fnum(m.value)
	}
	return row
}

// measured formats the measure for the table.
func (m statRow) measured() string {
	if m.text != "" {
		return m.text
	}
	if m.dist == nil {
		return fnum(m.value)
	}
	d := m.dist
	if d.Count == 0 {
		return "no samples"
	}
	f := func(v int64) string { return strconv.FormatInt(v, 10) }
	if m.unit == "ns" {
		f = func(v int64) string { return time.Duration(v).Round(time.Microsecond).String() }
		return fmt.Sprintf("mean %s  p50 %s  p99 %s  max %s  (n=%d)", f(int64(d.Mean)), f(d.P50), f(d.P99), f(d.Max), d.Count)
	}
	return fmt.Sprintf("mean %s  p50 %s  p99 %s  max %s  (n=%d)", fnum(d.Mean), f(d.P50), f(d.P99), f(d.Max), d.Count)
}

// statRows lists the measures of one run, in the table's order.
func statRows(s *stats.Stats) []statRow {
	rows := []statRow{
		{name: "messages", unit: "count", value: float64(s.Messages.Total)},
	}
	if s.Messages.Heartbeat > 0 {
		rows = append(rows, statRow{name: "heartbeat messages (apart)", unit: "count", value: float64(s.Messages.Heartbeat)})
	}
	if s.Messages.Lost > 0 {
		rows = append(rows, statRow{name: "messages never received", unit: "count", value: float64(s.Messages.Lost)})
	}
	if m := s.Mutex; m != nil {
		rows = append(rows, mutexRows(m)...)
	}
	if mc := s.Multicast; mc != nil {
		rows = append(rows,
			statRow{name: "multicasts delivered", unit: "count", value: float64(mc.Multicasts)},
			statRow{name: "deliveries", unit: "count", value: float64(mc.Deliveries)},
			statRow{name: "messages per multicast", unit: "count", value: mc.MessagesPerMulticast},
		)
	}
	if e := s.Election; e != nil {
		rows = append(rows, electionRows(e)...)
	}
	return rows
}

func mutexRows(m *stats.Mutex) []statRow {
	contention := fmt.Sprintf("%d of %s", m.Contended, plural.Count(m.Requests, "request"))
	if m.Contended == 0 {
		contention += ": without contention, as the seeds' figures assume"
	}
	rows := []statRow{
		{name: "critical sections", unit: "count", value: float64(m.CriticalSections)},
		{name: "contended requests", unit: "count", value: float64(m.Contended), text: contention},
		{name: "messages per CS", unit: "count", value: m.MessagesPerCS.Measured, seeds: m.MessagesPerCS.Seeds},
	}
	types := make([]string, 0, len(m.MessagesPerCS.ByType))
	for t := range m.MessagesPerCS.ByType {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		rows = append(rows, statRow{name: "messages per CS: " + t, unit: "count", value: m.MessagesPerCS.ByType[t]})
	}
	counts := make([]int64, 0, len(m.MessagesPerCS.Each))
	for k := range m.MessagesPerCS.Each {
		counts = append(counts, k)
	}
	slices.Sort(counts)
	for _, k := range counts {
		rows = append(rows, statRow{name: "CSs that cost " + plural.Count(k, "message"), unit: "count", value: float64(m.MessagesPerCS.Each[k])})
	}
	rows = append(rows,
		statRow{name: "client delay (hops)", unit: "hops", dist: &m.ClientDelay.Hops, seeds: m.ClientDelay.Seeds},
		statRow{name: "client delay (wall)", unit: "ns", dist: &m.ClientDelay.WallNS},
		statRow{name: "sync delay (hops)", unit: "hops", dist: &m.SyncDelay.Hops, seeds: m.SyncDelay.Seeds},
		statRow{name: "sync delay (wall)", unit: "ns", dist: &m.SyncDelay.WallNS},
		statRow{name: "throughput (CS/s)", unit: "cs/s", value: m.Throughput},
	)
	if m.SyncDelay.Hops.Count == 0 && m.Contended == 0 {
		rows[len(rows)-3].text = "no samples: no request waited for an exit"
		rows[len(rows)-2].text = "no samples"
	}
	return rows
}

func electionRows(e *stats.Election) []statRow {
	rows := []statRow{
		{name: "election starts", unit: "count", value: float64(e.Starts)},
		{name: "decisions", unit: "count", value: float64(e.Decisions)},
		{name: "elections (rounds ended)", unit: "count", value: float64(e.Elections)},
	}
	if e.Unfinished > 0 {
		rows = append(rows, statRow{name: "election unfinished at the end", unit: "count", value: float64(e.Unfinished)})
	}
	return append(rows,
		statRow{name: "messages per election", unit: "count", value: e.MessagesPerElection.Measured, seeds: e.MessagesPerElection.Seeds},
		statRow{name: "messages outside elections", unit: "count", value: float64(e.MessagesOutside)},
		statRow{name: "completion (hops)", unit: "hops", dist: &e.Completion.Hops, seeds: e.Completion.Seeds},
		statRow{name: "completion (wall)", unit: "ns", dist: &e.Completion.WallNS},
	)
}

// StatsLine is one measure of a run as dmx stats's table shows it: its
// name, what was measured, and the seeds' figure ("" for none).
type StatsLine struct{ Measure, Measured, Seeds string }

// StatsLines lists the measures of one run as dmx stats's table shows
// them, for other presentations of them (the HTML report).
func StatsLines(s *stats.Stats) []StatsLine {
	var out []StatsLine
	for _, m := range statRows(s) {
		out = append(out, StatsLine{m.name, m.measured(), figure(m.seeds)})
	}
	return out
}

package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dmxlab/dmx/analyze/stats"
	"github.com/dmxlab/dmx/render"
	"github.com/dmxlab/dmx/trace"
)

// newStatsCmd is dmx stats. Its JSON output is {"file": PATH, "runs":
// [STATS...]}, each STATS the stable form documented in package
// analyze/stats.
func newStatsCmd() *cobra.Command {
	var format string
	var runID int64
	cmd := &cobra.Command{
		Use:   "stats TRACE",
		Short: "Message complexity, delays and throughput of recorded runs, beside the theory",
		Long: `stats measures each run of a trace in one pass and puts every measure
beside the figure the course notes give for the algorithm:

  messages per critical section (in all and by type), and without contention
    the messages of each critical section; heartbeats are counted apart
  client delay (request to enter) and synchronization delay (an exit to the
    next enter by another process that was waiting), in message hops and in
    wall time (mean, p50, p99, max)
  throughput (critical sections per second) and contention (requests made
    while another process requested or held the resource: the seeds'
    figures are for requests without contention)
  messages per delivered multicast (tomcast)
  messages per election and completion time (elections)

Hops are counted along happens-before: client delay is the longest causal
chain of messages from the request to the enter, synchronization delay the
shortest from the exit to the enter. --format json gives the stable form
documented in package analyze/stats; csv gives one row per measure.`,
		Example: `  dmx sim ricart-agrawala -n 5 --contention none -o ra.db && dmx stats ra.db
  dmx stats --format json run.db
  dmx stats --run 2 --format csv run.db`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "table", "json", "csv"); err != nil {
				return &exitError{exitUsage, err}
			}
			path := args[0]
			st, err := trace.Open(path)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer st.Close()
			runs, err := st.Runs()
			if err == nil && runID != 0 {
				var r trace.Run
				r, err = st.Run(runID)
				runs = []trace.Run{r}
			}
			if err != nil {
				return &exitError{exitUsage, fmt.Errorf("%s: %w", path, err)}
			}
			if len(runs) == 0 {
				return &exitError{exitUsage, fmt.Errorf("%s: the trace holds no runs", path)}
			}
			var all []*stats.Stats
			for _, run := range runs {
				r, err := st.Events(run.ID)
				if err != nil {
					return &exitError{exitUsage, fmt.Errorf("%s: run %d: %w", path, run.ID, err)}
				}
				s, err := stats.Compute(run, r)
				r.Close()
				if err != nil {
					return &exitError{exitUsage, fmt.Errorf("%s: run %d: %w", path, run.ID, err)}
				}
				all = append(all, s)
			}
			out := cmd.OutOrStdout()
			switch format {
			case "json":
				return render.JSON(out, struct {
					File string         `json:"file"`
					Runs []*stats.Stats `json:"runs"`
				}{path, all})
			case "csv":
				var rows [][]string
				for _, s := range all {
					for _, m := range statRows(s) {
						rows = append(rows, append([]string{strconv.FormatInt(s.Run, 10)}, m.csv()...))
					}
				}
				return render.CSV(out, []string{"run", "measure", "unit", "count", "value", "p50", "p99", "max", "seeds", "seeds_value"}, rows)
			}
			for i, s := range all {
				if i > 0 {
					fmt.Fprintln(out)
				}
				if err := printStats(out, s); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: table, json or csv")
	cmd.Flags().Int64Var(&runID, "run", 0, "measure only this run (default: every run)")
	return cmd
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
	row := []string{m.name, m.unit, "", "", "", "", "", m.seeds.String(), ""}
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

func fnum(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
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
		contention := fmt.Sprintf("%d of %d requests", m.Contended, m.Requests)
		if m.Contended == 0 {
			contention += ": without contention, as the seeds' figures assume"
		}
		rows = append(rows,
			statRow{name: "critical sections", unit: "count", value: float64(m.CriticalSections)},
			statRow{name: "contended requests", unit: "count", value: float64(m.Contended), text: contention},
			statRow{name: "messages per CS", unit: "count", value: m.MessagesPerCS.Measured, seeds: m.MessagesPerCS.Seeds},
		)
		for _, t := range sortedKeys(m.MessagesPerCS.ByType) {
			rows = append(rows, statRow{name: "messages per CS: " + t, unit: "count", value: m.MessagesPerCS.ByType[t]})
		}
		counts := make([]int64, 0, len(m.MessagesPerCS.Each))
		for k := range m.MessagesPerCS.Each {
			counts = append(counts, k)
		}
		slices.Sort(counts)
		for _, k := range counts {
			rows = append(rows, statRow{name: fmt.Sprintf("CSs that cost %d messages", k), unit: "count", value: float64(m.MessagesPerCS.Each[k])})
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
	}
	if mc := s.Multicast; mc != nil {
		rows = append(rows,
			statRow{name: "multicasts delivered", unit: "count", value: float64(mc.Multicasts)},
			statRow{name: "deliveries", unit: "count", value: float64(mc.Deliveries)},
			statRow{name: "messages per multicast", unit: "count", value: mc.MessagesPerMulticast},
		)
	}
	if e := s.Election; e != nil {
		rows = append(rows,
			statRow{name: "election starts", unit: "count", value: float64(e.Starts)},
			statRow{name: "decisions", unit: "count", value: float64(e.Decisions)},
			statRow{name: "elections (rounds ended)", unit: "count", value: float64(e.Elections)},
		)
		if e.Unfinished > 0 {
			rows = append(rows, statRow{name: "election unfinished at the end", unit: "count", value: float64(e.Unfinished)})
		}
		rows = append(rows,
			statRow{name: "messages per election", unit: "count", value: e.MessagesPerElection.Measured, seeds: e.MessagesPerElection.Seeds},
			statRow{name: "messages outside elections", unit: "count", value: float64(e.MessagesOutside)},
			statRow{name: "completion (hops)", unit: "hops", dist: &e.Completion.Hops, seeds: e.Completion.Seeds},
			statRow{name: "completion (wall)", unit: "ns", dist: &e.Completion.WallNS},
		)
	}
	return rows
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func printStats(w io.Writer, s *stats.Stats) error {
	status := "complete"
	if !s.Complete {
		status = "incomplete"
	}
	fmt.Fprintf(w, "run %d: %s, N=%d, %s, %d events in %v\n", s.Run, s.Algorithm, s.Nodes, status, s.Events, time.Duration(s.DurationNS))
	var rows [][]string
	for _, m := range statRows(s) {
		rows = append(rows, []string{m.name, m.measured(), m.seeds.String()})
	}
	return render.Table(w, []string{"measure", "measured", "seeds"}, rows)
}

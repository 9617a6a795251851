package htmlreport

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/dmxlab/dmx/render/palette"
)

// Report is what one report file shows: runs of one or more traces.
type Report struct {
	Title   string // "dmx report: bully-partition.db"
	Tool    string // the dmx that wrote it
	Verdict string // the overall verdict: ok, violated, unknown...
	Runs    []Run
	// Sweep, if not nil, is the table of the runs' verdicts (a sweep's,
	// dmx sweep and dmx check --summary print it): it comes first, each
	// failing seed it names a link to that run's part.
	Sweep *Sweep
}

// Sweep is the table of many runs' verdicts.
type Sweep struct {
	Runs, Incomplete int
	Checks           []SweepCheck
	KindChecks       []string // the checks of the fault kinds' columns
	Kinds            []SweepKind
	// Others are the runs the report has no part for (a large sweep shows
	// the runs its table names, and lists the rest).
	Others []SweepRun
}

// SweepCheck is one check's row of a Sweep.
type SweepCheck struct {
	Name                      string
	OK, Violated, Unknown, NA int
	Rate                      string // "12% (5.5%-26%)"
	First, Smallest           *SeedLink
}

// SeedLink names a failing run: its seed, where it is, how to rerun it.
type SeedLink struct {
	Seed   uint64
	File   string
	Run    int64
	Events int64
	Rerun  string
}

// SweepKind is a fault kind's row: its runs, and per check of
// KindChecks how many of them violated it ("3/14 (21%)").
type SweepKind struct {
	Kind  string
	Runs  int
	Cells []string
}

// SweepRun is a run listed without a part of its own.
type SweepRun struct {
	File    string
	ID      int64
	Seed    string
	Verdict string
	Faults  string
}

// Run is one run's part of the report.
type Run struct {
	File      string
	ID        int64
	Algorithm string
	Mode      string // sim, udp, import
	Nodes     int
	Seed      string // "" for an imported log
	Status    string
	Faults    string // as the run records them
	Params    string
	Verdict   string
	Checks    []Check
	Rerun     string // the command that runs it again; "" if none can
	// Picture is the run's default picture (its faults, or the whole run,
	// or its start) when no finding has one of its own; nil otherwise.
	Picture  *Figure
	Findings []Finding
	// Undrawn counts the findings beyond those drawn (each with the
	// command that draws it).
	Undrawn int
	Plot    *Figure
	Stats   []Stat
	Measure string // what the stats measured: "1,484 events in 2s of simulated time"
}

// Check is one row of the verdict table.
type Check struct {
	Name, Verdict string
	Findings      int
	Note          string
}

// Finding is one finding with its picture (nil beyond the pictures drawn,
// or when the picture of an earlier finding, SameAs, shows it whole).
type Finding struct {
	N              int
	Check, Message string
	Picture        *Figure
	SameAs         int
}

// Figure is a picture inline: SVG written by dmx (trusted: its text is
// escaped by the SVG writer), and what it shows.
type Figure struct {
	SVG     []byte
	Caption string
	Command string // the dmx command that draws it again
}

// Stat is one measure beside the seeds' figure.
type Stat struct{ Measure, Measured, Seeds string }

// Write writes r as one HTML file.
func Write(w io.Writer, r *Report) error {
	return page.Execute(w, r)
}

// anchor is the id of a run's part of the page.
func anchor(r Run) string {
	f := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			return c
		}
		return '-'
	}, r.File)
	return fmt.Sprintf("run-%s-%d", f, r.ID)
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"svg":       func(f *Figure) template.HTML { return template.HTML(f.SVG) }, // written by dmx's SVG writers, which escape all text
	"anchor":    anchor,
	"runAnchor": func(file string, id int64) string { return anchor(Run{File: file, ID: id}) },
	"verdictClass": func(v string) string {
		return "v-" + strings.ReplaceAll(v, " ", "-")
	},
	"red":   func() string { return palette.Finding },
	"ok":    func() string { return palette.Recover },
	"amber": func() string { return palette.Suspect },
	"note":  func() string { return palette.Note },
	"text":  func() string { return palette.Text },
}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.45 Helvetica, Arial, sans-serif; color: {{text}}; background: #fff; margin: 0 auto; padding: 16px 24px 48px; max-width: 1480px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 36px 0 6px; padding-top: 8px; border-top: 2px solid #ddd; }
h3 { font-size: 15px; margin: 22px 0 6px; }
.meta, .caption, .small { color: {{note}}; font-size: 13px; }
table { border-collapse: collapse; margin: 6px 0 10px; }
th, td { border: 1px solid #e0e0e0; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
td.num { text-align: right; }
.v-ok { color: {{ok}}; font-weight: 600; }
.v-violated { color: {{red}}; font-weight: 700; }
.v-unknown, .v-not-applicable, .v-skipped { color: #8c6d00; font-weight: 600; }
.finding { color: {{red}}; }
code, pre { font: 12.5px/1.4 Menlo, Consolas, monospace; background: #f6f6f6; padding: 1px 4px; border-radius: 3px; }
pre { padding: 6px 10px; white-space: pre-wrap; word-break: break-all; }
figure { margin: 8px 0 18px; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
.toc li { margin: 2px 0; }
.seeds { color: #333; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">verdict: <span class="{{verdictClass .Verdict}}">{{.Verdict}}</span> · {{with .Sweep}}{{.Runs}} runs, {{end}}{{len .Runs}} run{{if ne (len .Runs) 1}}s{{end}}{{if .Sweep}} in full{{end}} · written by {{.Tool}} · one file, nothing fetched: pictures inline (SVG), findings the only red</p>
{{with .Sweep}}<h2 id="sweep">{{.Runs}} runs: the verdicts per check</h2>
{{if .Incomplete}}<p class="small">{{.Incomplete}} of them incomplete (cut short, interrupted)</p>{{end}}
<table>
<tr><th>check</th><th>ok</th><th>violated</th><th>inconclusive</th><th>n/a</th><th>violated: rate (95% CI)</th><th>first failing seed</th><th>smallest failing seed</th></tr>
{{range .Checks}}<tr><td>{{.Name}}</td><td class="num">{{.OK}}</td><td class="num{{if .Violated}} v-violated{{end}}">{{.Violated}}</td><td class="num">{{.Unknown}}</td><td class="num">{{.NA}}</td><td>{{.Rate}}</td>
<td>{{with .First}}<a href="#{{runAnchor .File .Run}}">seed {{.Seed}}</a>{{else}}-{{end}}</td><td>{{with .Smallest}}<a href="#{{runAnchor .File .Run}}">seed {{.Seed}}</a> ({{.Events}} events){{else}}-{{end}}</td></tr>
{{end}}</table>
<p class="small">rate: violated over the runs the check judged (ok, violated, inconclusive), with its 95% Wilson interval; first: the lowest failing seed; smallest: the failing run with the fewest events. Each seed links to its run below, which says how to record it again.</p>
{{if .Kinds}}<h3>per fault kind</h3>
<table>
<tr><th>fault kind</th><th>runs</th>{{range .KindChecks}}<th>{{.}} violated</th>{{end}}</tr>
{{range .Kinds}}<tr><td>{{.Kind}}</td><td class="num">{{.Runs}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<p class="small">a run counts once for each kind in its schedule; none: the runs without faults.</p>{{end}}
{{if .Others}}<h3>the other runs</h3>
<table>
<tr><th>trace</th><th>run</th><th>seed</th><th>verdict</th><th>faults</th></tr>
{{range .Others}}<tr><td>{{.File}}</td><td class="num">{{.ID}}</td><td class="num">{{.Seed}}</td><td class="{{verdictClass .Verdict}}">{{.Verdict}}</td><td><code>{{.Faults}}</code></td></tr>
{{end}}</table>{{end}}
{{end}}
{{if gt (len .Runs) 1}}<ul class="toc">{{range .Runs}}
<li><a href="#{{anchor .}}">{{.File}} run {{.ID}}</a>: {{.Algorithm}}, <span class="{{verdictClass .Verdict}}">{{.Verdict}}</span></li>{{end}}
</ul>{{end}}
{{range $run := .Runs}}
<h2 id="{{anchor .}}">{{.File}} · run {{.ID}} · {{.Algorithm}}</h2>
<p class="meta">{{.Nodes}} processes · {{.Mode}}{{if .Seed}} · seed {{.Seed}}{{end}} · {{.Status}}{{if .Faults}} · faults {{.Faults}}{{end}}{{if .Params}} · params {{.Params}}{{end}}</p>
{{if .Rerun}}<p>run it again: <code>{{.Rerun}}</code></p>{{else}}<p class="small">an imported log: no command runs it again</p>{{end}}

<h3>verdict: <span class="{{verdictClass .Verdict}}">{{.Verdict}}</span></h3>
<table>
<tr><th>check</th><th>verdict</th><th>findings</th><th>note</th></tr>
{{range .Checks}}<tr><td>{{.Name}}</td><td class="{{verdictClass .Verdict}}">{{.Verdict}}</td><td class="num">{{.Findings}}</td><td>{{.Note}}</td></tr>
{{end}}</table>

{{if .Findings}}<h3>findings</h3>
{{range .Findings}}
<p class="finding" id="{{anchor $run}}-finding-{{.N}}"><b>#{{.N}} {{.Check}}</b>: {{.Message}}</p>
{{with .Picture}}<figure>{{svg .}}<figcaption class="caption">{{.Caption}}{{if .Command}} · <code>{{.Command}}</code>{{end}}</figcaption></figure>{{end}}
{{if .SameAs}}<p class="small">drawn in the picture of <a href="#{{anchor $run}}-finding-{{.SameAs}}">finding #{{.SameAs}}</a>, which shows the same window</p>{{end}}
{{end}}{{if .Undrawn}}<p class="small">{{.Undrawn}} more finding{{if ne .Undrawn 1}}s{{end}} without a picture here: <code>dmx render {{.File}} --run {{.ID}} --finding N -o finding.svg</code> draws the Nth.</p>{{end}}
{{end}}
{{with .Picture}}<h3>the picture of the run</h3>
<figure>{{svg .}}<figcaption class="caption">{{.Caption}}{{if .Command}} · <code>{{.Command}}</code>{{end}}</figcaption></figure>{{end}}

{{with .Plot}}<h3>over time</h3>
<figure>{{svg .}}<figcaption class="caption">{{.Caption}}{{if .Command}} · <code>{{.Command}}</code>{{end}}</figcaption></figure>{{end}}

{{if .Stats}}<h3>measured, beside the seeds' figures</h3>
<p class="small">{{.Measure}}</p>
<table>
<tr><th>measure</th><th>measured</th><th>seeds</th></tr>
{{range .Stats}}<tr><td>{{.Measure}}</td><td>{{.Measured}}</td><td class="seeds">{{.Seeds}}</td></tr>
{{end}}</table>{{end}}
{{end}}
</body>
</html>
`))

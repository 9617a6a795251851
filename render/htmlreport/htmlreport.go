package htmlreport

import (
	"bytes"
	"fmt"
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
	var p Page
	p.head(r)
	if r.Sweep != nil {
		p.sweep(r.Sweep)
	}
	p.Raw("\n")
	if len(r.Runs) > 1 {
		p.Raw(`<ul class="toc">`)
		for _, run := range r.Runs {
			p.Raw("\n<li><a href=\"#", anchor(run), `">`).Text(run.File).Raw(" run ").Text(run.ID).Raw("</a>: ").Text(run.Algorithm)
			p.Raw(`, <span class="`, verdictClass(run.Verdict), `">`).Text(run.Verdict).Raw("</span></li>")
		}
		p.Raw("\n</ul>")
	}
	p.Raw("\n")
	for _, run := range r.Runs {
		p.run(&run)
	}
	p.Raw("\n</body>\n</html>\n")
	_, err := w.Write(p.Bytes())
	return err
}

// Page is an HTML page being written: Raw writes markup as it is, Text
// writes a value as text, escaped as html/template escapes it (the
// characters that could end a text or an attribute value, and +, which
// could start UTF-7). dmx writes its pages so rather than with
// html/template, whose reflective method calls would make the linker
// keep every exported method of every type in the binary.
type Page struct{ bytes.Buffer }

// Raw writes markup.
func (p *Page) Raw(ss ...string) *Page {
	for _, s := range ss {
		p.WriteString(s)
	}
	return p
}

// Text writes v (fmt.Sprint's form) as text.
func (p *Page) Text(v any) *Page {
	s, ok := v.(string)
	if !ok {
		s = fmt.Sprint(v)
	}
	for _, c := range []byte(s) {
		switch c {
		case 0:
			p.WriteString("\uFFFD")
		case '"':
			p.WriteString("&#34;")
		case '&':
			p.WriteString("&amp;")
		case '\'':
			p.WriteString("&#39;")
		case '+':
			p.WriteString("&#43;")
		case '<':
			p.WriteString("&lt;")
		case '>':
			p.WriteString("&gt;")
		default:
			p.WriteByte(c)
		}
	}
	return p
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

// runAnchor is the anchor of run id of file.
func runAnchor(file string, id int64) string { return anchor(Run{File: file, ID: id}) }

// verdictClass is the CSS class that colours verdict v.
func verdictClass(v string) string { return "v-" + strings.ReplaceAll(v, " ", "-") }

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (p *Page) head(r *Report) {
	p.Raw(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>`).Text(r.Title).Raw(`</title>
<style>
body { font: 14px/1.45 Helvetica, Arial, sans-serif; color: `, palette.Text, `; background: #fff; margin: 0 auto; padding: 16px 24px 48px; max-width: 1480px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 36px 0 6px; padding-top: 8px; border-top: 2px solid #ddd; }
h3 { font-size: 15px; margin: 22px 0 6px; }
.meta, .caption, .small { color: `, palette.Note, `; font-size: 13px; }
table { border-collapse: collapse; margin: 6px 0 10px; }
th, td { border: 1px solid #e0e0e0; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
td.num { text-align: right; }
.v-ok { color: `, palette.Recover, `; font-weight: 600; }
.v-violated { color: `, palette.Finding, `; font-weight: 700; }
.v-unknown, .v-not-applicable, .v-skipped { color: #8c6d00; font-weight: 600; }
.finding { color: `, palette.Finding, `; }
code, pre { font: 12.5px/1.4 Menlo, Consolas, monospace; background: #f6f6f6; padding: 1px 4px; border-radius: 3px; }
pre { padding: 6px 10px; white-space: pre-wrap; word-break: break-all; }
figure { margin: 8px 0 18px; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
.toc li { margin: 2px 0; }
.seeds { color: #333; }
</style>
</head>
<body>
<h1>`).Text(r.Title).Raw("</h1>\n")
	p.Raw(`<p class="meta">verdict: <span class="`, verdictClass(r.Verdict), `">`).Text(r.Verdict).Raw("</span> · ")
	if r.Sweep != nil {
		p.Text(r.Sweep.Runs).Raw(" runs, ")
	}
	p.Text(len(r.Runs)).Raw(" run", plural(len(r.Runs)))
	if r.Sweep != nil {
		p.Raw(" in full")
	}
	p.Raw(" · written by ").Text(r.Tool).Raw(" · one file, nothing fetched: pictures inline (SVG), findings the only red</p>\n")
}

// SweepChecks writes the rows of a sweep's table of checks, each seed a
// link made by link (file, run).
func (p *Page) SweepChecks(sw *Sweep, num string, link func(file string, run int64) string, title bool) {
	for _, c := range sw.Checks {
		p.Raw("<tr><td>").Text(c.Name).Raw("</td><td", num, ">").Text(c.OK).Raw("</td>")
		switch {
		case num == "":
			p.Raw("<td")
			if c.Violated != 0 {
				p.Raw(` class="v"`)
			}
			p.Raw(">")
		case c.Violated != 0:
			p.Raw(`<td class="num v-violated">`)
		default:
			p.Raw(`<td class="num">`)
		}
		p.Text(c.Violated).Raw("</td><td", num, ">").Text(c.Unknown).Raw("</td><td", num, ">").Text(c.NA).Raw("</td><td>").Text(c.Rate).Raw("</td>\n")
		for i, s := range []*SeedLink{c.First, c.Smallest} {
			if i > 0 && title {
				p.Raw("\n")
			}
			p.Raw("<td>")
			if s == nil {
				p.Raw("-</td>")
				continue
			}
			p.Raw(`<a href="`).Text(link(s.File, s.Run)).Raw(`"`)
			if title {
				p.Raw(` title="`).Text(s.Rerun).Raw(`"`)
			}
			p.Raw(">seed ").Text(s.Seed).Raw("</a>")
			if i == 1 {
				p.Raw(" (").Text(s.Events).Raw(" events)")
			}
			p.Raw("</td>")
		}
		p.Raw("</tr>\n")
	}
}

// SweepKinds writes the rows of a sweep's table per fault kind.
func (p *Page) SweepKinds(sw *Sweep, num string) {
	p.Raw("<tr><th>fault kind</th><th>runs</th>")
	for _, c := range sw.KindChecks {
		p.Raw("<th>").Text(c).Raw(" violated</th>")
	}
	p.Raw("</tr>\n")
	for _, k := range sw.Kinds {
		p.Raw("<tr><td>").Text(k.Kind).Raw("</td><td", num, ">").Text(k.Runs).Raw("</td>")
		for _, c := range k.Cells {
			p.Raw("<td>").Text(c).Raw("</td>")
		}
		p.Raw("</tr>")
		if num != "" {
			p.Raw("\n")
		}
	}
}

func (p *Page) sweep(sw *Sweep) {
	p.Raw(`<h2 id="sweep">`).Text(sw.Runs).Raw(" runs: the verdicts per check</h2>\n")
	if sw.Incomplete != 0 {
		p.Raw(`<p class="small">`).Text(sw.Incomplete).Raw(" of them incomplete (cut short, interrupted)</p>")
	}
	p.Raw(`
<table>
<tr><th>check</th><th>ok</th><th>violated</th><th>inconclusive</th><th>n/a</th><th>violated: rate (95% CI)</th><th>first failing seed</th><th>smallest failing seed</th></tr>
`)
	p.SweepChecks(sw, ` class="num"`, func(file string, run int64) string { return "#" + runAnchor(file, run) }, false)
	p.Raw(`</table>
<p class="small">rate: violated over the runs the check judged (ok, violated, inconclusive), with its 95% Wilson interval; first: the lowest failing seed; smallest: the failing run with the fewest events. Each seed links to its run below, which says how to record it again.</p>
`)
	if len(sw.Kinds) > 0 {
		p.Raw("<h3>per fault kind</h3>\n<table>\n")
		p.SweepKinds(sw, ` class="num"`)
		p.Raw("</table>\n<p class=\"small\">a run counts once for each kind in its schedule; none: the runs without faults.</p>")
	}
	p.Raw("\n")
	if len(sw.Others) > 0 {
		p.Raw("<h3>the other runs</h3>\n<table>\n<tr><th>trace</th><th>run</th><th>seed</th><th>verdict</th><th>faults</th></tr>\n")
		for _, o := range sw.Others {
			p.Raw("<tr><td>").Text(o.File).Raw(`</td><td class="num">`).Text(o.ID).Raw(`</td><td class="num">`).Text(o.Seed)
			p.Raw(`</td><td class="`, verdictClass(o.Verdict), `">`).Text(o.Verdict).Raw("</td><td><code>").Text(o.Faults).Raw("</code></td></tr>\n")
		}
		p.Raw("</table>")
	}
	p.Raw("\n")
}

// figure writes a picture with its caption.
func (p *Page) figure(f *Figure) {
	// The SVG is dmx's own, whose writers escape all text.
	p.Raw("<figure>", string(f.SVG), `<figcaption class="caption">`).Text(f.Caption)
	if f.Command != "" {
		p.Raw(" · <code>").Text(f.Command).Raw("</code>")
	}
	p.Raw("</figcaption></figure>")
}

func (p *Page) run(run *Run) {
	a := anchor(*run)
	p.Raw("\n<h2 id=\"", a, `">`).Text(run.File).Raw(" · run ").Text(run.ID).Raw(" · ").Text(run.Algorithm).Raw("</h2>\n")
	p.Raw(`<p class="meta">`).Text(run.Nodes).Raw(" processes · ").Text(run.Mode)
	if run.Seed != "" {
		p.Raw(" · seed ").Text(run.Seed)
	}
	p.Raw(" · ").Text(run.Status)
	if run.Faults != "" {
		p.Raw(" · faults ").Text(run.Faults)
	}
	if run.Params != "" {
		p.Raw(" · params ").Text(run.Params)
	}
	p.Raw("</p>\n")
	if run.Rerun != "" {
		p.Raw("<p>run it again: <code>").Text(run.Rerun).Raw("</code></p>")
	} else {
		p.Raw(`<p class="small">an imported log: no command runs it again</p>`)
	}
	p.Raw("\n\n<h3>verdict: <span class=\"", verdictClass(run.Verdict), `">`).Text(run.Verdict).Raw(`</span></h3>
<table>
<tr><th>check</th><th>verdict</th><th>findings</th><th>note</th></tr>
`)
	for _, c := range run.Checks {
		p.Raw("<tr><td>").Text(c.Name).Raw(`</td><td class="`, verdictClass(c.Verdict), `">`).Text(c.Verdict)
		p.Raw(`</td><td class="num">`).Text(c.Findings).Raw("</td><td>").Text(c.Note).Raw("</td></tr>\n")
	}
	p.Raw("</table>\n\n")
	if len(run.Findings) > 0 {
		p.Raw("<h3>findings</h3>\n")
		for _, f := range run.Findings {
			p.Raw("\n<p class=\"finding\" id=\"", a, "-finding-").Text(f.N).Raw(`"><b>#`).Text(f.N).Raw(" ").Text(f.Check).Raw("</b>: ").Text(f.Message).Raw("</p>\n")
			if f.Picture != nil {
				p.figure(f.Picture)
			}
			p.Raw("\n")
			if f.SameAs != 0 {
				p.Raw(`<p class="small">drawn in the picture of <a href="#`, a, "-finding-").Text(f.SameAs).Raw(`">finding #`).Text(f.SameAs).Raw("</a>, which shows the same window</p>")
			}
			p.Raw("\n")
		}
		if run.Undrawn != 0 {
			p.Raw(`<p class="small">`).Text(run.Undrawn).Raw(" more finding", plural(run.Undrawn), " without a picture here: <code>dmx render ").Text(run.File)
			p.Raw(" --run ").Text(run.ID).Raw(" --finding N -o finding.svg</code> draws the Nth.</p>")
		}
		p.Raw("\n")
	}
	p.Raw("\n")
	if run.Picture != nil {
		p.Raw("<h3>the picture of the run</h3>\n")
		p.figure(run.Picture)
	}
	p.Raw("\n\n")
	if run.Plot != nil {
		p.Raw("<h3>over time</h3>\n")
		p.figure(run.Plot)
	}
	p.Raw("\n\n")
	if len(run.Stats) > 0 {
		p.Raw("<h3>measured, beside the seeds' figures</h3>\n<p class=\"small\">").Text(run.Measure).Raw("</p>\n<table>\n<tr><th>measure</th><th>measured</th><th>seeds</th></tr>\n")
		for _, st := range run.Stats {
			p.Raw("<tr><td>").Text(st.Measure).Raw("</td><td>").Text(st.Measured).Raw(`</td><td class="seeds">`).Text(st.Seeds).Raw("</td></tr>\n")
		}
		p.Raw("</table>")
	}
	p.Raw("\n")
}

package viewer

import (
	"net/http"
	"net/url"
	"sync"

	"github.com/dmxlab/dmx/render/htmlreport"
	"github.com/dmxlab/dmx/render/palette"
)

// sweepCache holds the table of the runs once made: checking every run
// of a large sweep takes seconds, and the table does not change.
type sweepCache struct {
	once sync.Once
	page []byte
	err  error
}

// handleSweep serves /sweep: the table of every run's verdicts (dmx
// sweep's), each failing seed a link to its run in the viewer.
func (s *Server) handleSweep(w http.ResponseWriter, r *http.Request) {
	if s.opts.Sweep == nil {
		http.Error(w, "this dmx makes no table of the runs", http.StatusNotImplemented)
		return
	}
	s.sweep.once.Do(func() {
		sw, err := s.opts.Sweep()
		if err != nil {
			s.sweep.err = err
			return
		}
		link := func(file string, id int64) string {
			for _, v := range s.runs {
				if v.st.Path() == file && v.run.ID == id {
					return "/#run=" + url.QueryEscape(v.key)
				}
			}
			return "/"
		}
		s.sweep.page = sweepPage(len(s.runs), sw, link)
	})
	if s.sweep.err != nil {
		http.Error(w, s.sweep.err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(s.sweep.page)
}

// sweepPage is the page of the table of runs runs' verdicts (sw nil:
// none to show), each failing seed a link made by link.
func sweepPage(runs int, sw *htmlreport.Sweep, link func(file string, id int64) string) []byte {
	var p htmlreport.Page
	p.Raw(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dmx serve: the runs' verdicts</title>
<link rel="stylesheet" href="/style.css">
<style>body { font: 14px/1.45 Helvetica, Arial, sans-serif; margin: 16px 24px; overflow: auto; height: auto; }
table { border-collapse: collapse; margin: 6px 0 12px; } th, td { border: 1px solid #e0e0e0; padding: 3px 8px; text-align: left; }
th { background: #f5f5f5; } .v { color: `, palette.Finding, `; font-weight: 700; } .small { color: #666; font-size: 13px; }</style></head>
<body>
<p><a href="/">← the viewer</a></p>
`)
	if sw == nil {
		p.Raw("<p>").Text(runs).Raw(" run: no table of one run.</p>\n</body></html>\n")
		return p.Bytes()
	}
	p.Raw("<h1>").Text(sw.Runs).Raw(` runs: the verdicts per check</h1>
<table>
<tr><th>check</th><th>ok</th><th>violated</th><th>inconclusive</th><th>n/a</th><th>violated: rate (95% CI)</th><th>first failing seed</th><th>smallest failing seed</th></tr>
`)
	p.SweepChecks(sw, "", link, true)
	p.Raw(`</table>
<p class="small">rate: violated over the runs the check judged, with its 95% Wilson interval; first: the lowest failing seed; smallest: the failing run with the fewest events. A seed opens its run in the viewer.</p>
`)
	if len(sw.Kinds) > 0 {
		p.Raw("<h2>per fault kind</h2>\n<table>")
		p.SweepKinds(sw, "")
		p.Raw("</table>")
	}
	p.Raw("\n\n</body></html>\n")
	return p.Bytes()
}

package format

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmxlab/dmx/analyze"
	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/foreign"
	"github.com/dmxlab/dmx/trace/format/govector"
	"github.com/dmxlab/dmx/trace/format/shiviz"
)

// valid checks what an import built from any input: problems name a line
// of the input, and each run is a trace the analyses accept as it is,
// whose recorded clocks are the ones happens-before gives.
func valid(t *testing.T, ps *foreign.Problems, runs []foreign.Run, files ...string) {
	t.Helper()
	for _, p := range ps.List() {
		ok := false
		for _, f := range files {
			ok = ok || p.At.File == f
		}
		if !ok || p.At.Line < 0 || p.Msg == "" || p.Reason == "" {
			t.Fatalf("problem %+v does not name a line of %v", p, files)
		}
	}
	for _, r := range runs {
		run := r.Run
		run.ID = 1
		res, err := analyze.Evaluate(run, &trace.SliceReader{Events: r.Events}, []*analyze.Check{analyze.Clocks})
		if err != nil {
			t.Fatalf("the run built is a broken trace: %v", err)
		}
		// A run of a lenient import that skipped something is
		// incomplete, so its clocks are at best unknown.
		if v := res[0].Verdict; v != analyze.OK && (v != analyze.Unknown || run.Complete || len(res[0].Findings) > 0) {
			t.Fatalf("the run built has wrong clocks: %s %v %s", v, res[0].Findings, res[0].Note)
		}
		for _, ev := range r.Events {
			if src := ev.Source(); src == "" {
				t.Fatalf("%v has no source", ev.Ref())
			}
		}
	}
}

// seeds adds the small files of the corpus and testdata/bad.
func seeds(f *testing.F, add func(name string, data []byte)) {
	for _, pat := range []string{"testdata/corpus/*/*", "testdata/bad/*"} {
		files, _ := filepath.Glob(pat)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err == nil && len(data) < 8<<10 && !strings.HasSuffix(file, ".md") {
				add(file, data)
			}
		}
	}
}

// FuzzShiviz feeds arbitrary ShiViz files, and bare logs with arbitrary
// regexes and separators, to the parser and to Build. Nothing panics and
// what is built is a valid trace.
func FuzzShiviz(f *testing.F) {
	seeds(f, func(_ string, data []byte) {
		f.Add(data, "", "")
		f.Add(data, shiviz.ExportRegex, "")
	})
	f.Add([]byte("a {\"a\":1}\nx\n=== 2 ===\nb {\"b\":1}\ny"), shiviz.ExportRegex, `^=== (?<trace>.*) ===$`)
	f.Fuzz(func(t *testing.T, data []byte, regex, sep string) {
		var ps foreign.Problems
		lg, err := shiviz.Parse("f.log", data, foreign.ParseOptions{Regex: regex, Separator: sep}, &ps)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.log") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		runs := foreign.Build(lg, foreign.Options{Lenient: true, Rules: foreign.DMXRules()}, &ps)
		valid(t, &ps, runs, "f.log")
	})
}

// FuzzGovector feeds two arbitrary GoVector logs to the parser and to
// Build. Nothing panics and what is built is a valid trace.
func FuzzGovector(f *testing.F) {
	var prev []byte
	seeds(f, func(_ string, data []byte) {
		f.Add(data, prev)
		prev = data
	})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var ps foreign.Problems
		lg, err := govector.Parse([]string{"a.txt", "b.txt"}, [][]byte{a, b}, &ps)
		if err != nil {
			return
		}
		runs := foreign.Build(lg, foreign.Options{Lenient: true}, &ps)
		valid(t, &ps, runs, "a.txt", "b.txt")
	})
}

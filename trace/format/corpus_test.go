package format

import (
	"path/filepath"
	"testing"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/foreign"
)

// The parser regexes the corpus README gives for its bare logs.
const (
	govectorRegex   = `(?<host>\S*) (?<clock>{.*})\n(?<event>.*)`
	broadcastRegex  = `\[\w+\] \[(?<date>([^ ]+ [^ ]+))\] [^ ]+ \[akka://Broadcast/user/(?<host>\w+)\] (?<clock>.*\}) (?<event>.*)`
	comparisonRegex = `(?<ip>(\d{1,3}\.){3}\d{1,3}) (?<date>(\d{1,2}/){2}\d{4} (\d{2}:){2}\d{2} (AM|PM)) (?<action>(INFO|GET|POST)) (?<event>.*)\n(?<host>\w*) (?<clock>.*)`
	comparisonSep   = `^=== (?<trace>.*) ===$`
	ewd998Regex     = `^State [0-9]+: <(?<event>\w*) .*>\n\/\\ Host = (?<host>.*)\n\/\\ Clock = "(?<clock>.*)"\n\/\\ active = (?<active>.*)\n\/\\ color = (?<color>.*)\n\/\\ counter = (?<counter>.*)`
)

// corpus is every file of testdata/corpus with the runs it must import
// as: events and hosts of each, as testdata/corpus/README.md gives them
// (or, where it gives none, as ShiViz shows the file).
var corpus = []struct {
	format string
	files  []string
	opt    foreign.ParseOptions
	want   [][2]int // events, hosts per run
}{
	{"shiviz", []string{"shiviz/chord.log"}, foreign.ParseOptions{Regex: govectorRegex}, [][2]int{{1235, 8}}},
	{"shiviz", []string{"shiviz/simpledb.log"}, foreign.ParseOptions{Regex: `(?<event>.*)\n(?<host>\S*) (?<clock>{.*})`}, [][2]int{{509, 5}}},
	{"shiviz", []string{"shiviz/graph_viz-RpcClientServer.log"}, foreign.ParseOptions{}, [][2]int{{10, 2}}},
	{"shiviz", []string{"shiviz/simple-reliable-broadcast.log"}, foreign.ParseOptions{Regex: broadcastRegex}, [][2]int{{39, 3}}},
	{"shiviz", []string{"shiviz/multiple-comparison.log"}, foreign.ParseOptions{Regex: comparisonRegex, Separator: comparisonSep},
		[][2]int{{8, 2}, {8, 2}, {8, 2}, {8, 2}, {8, 2}}},
	{"shiviz", []string{"shiviz/ewd998-78.log"}, foreign.ParseOptions{Regex: ewd998Regex, Separator: comparisonSep}, [][2]int{{77, 7}}},
	{"shiviz", []string{"govector/merged.log"}, foreign.ParseOptions{}, [][2]int{{7, 2}}},
	{"govector", []string{"govector/merged.log"}, foreign.ParseOptions{}, [][2]int{{7, 2}}},
	{"govector", []string{"govector/p1-Log.txt", "govector/p2-Log.txt"}, foreign.ParseOptions{}, [][2]int{{7, 2}}},
	{"govector", []string{"govector/LogFile-Log.txt"}, foreign.ParseOptions{}, [][2]int{{4, 1}}},
	{"govector", []string{"govector/userName0GoVec-Log.txt", "govector/userName1GoVec-Log.txt"}, foreign.ParseOptions{}, [][2]int{{121, 2}}},
}

// TestCorpus imports every file of the corpus, strictly, and checks the
// numbers of events and hosts of each run, and that the trace reads back
// with its process names.
func TestCorpus(t *testing.T) {
	for _, tc := range corpus {
		t.Run(tc.files[0]+"/"+tc.format, func(t *testing.T) {
			var files []string
			for _, f := range tc.files {
				files = append(files, filepath.Join("testdata", "corpus", f))
			}
			out := filepath.Join(t.TempDir(), "t.db")
			res, err := foreign.Import(*Importer(tc.format), files, out, foreign.ImportOptions{ParseOptions: tc.opt})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Runs) != len(tc.want) {
				t.Fatalf("%d runs, want %d", len(res.Runs), len(tc.want))
			}
			runs, err := trace.ReadRuns(out)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res.Runs {
				t.Logf("run %d %q: %d events, %d hosts, %d messages", r.ID, r.Label, r.Events, r.Hosts, r.Messages)
				if [2]int{r.Events, r.Hosts} != tc.want[i] {
					t.Errorf("run %d: %d events and %d hosts, want %v", r.ID, r.Events, r.Hosts, tc.want[i])
				}
				if !runs[i].NoSeed || runs[i].Mode != "import" || len(runs[i].Names) != r.Hosts || !runs[i].Complete {
					t.Errorf("run %d reads back as %+v", r.ID, runs[i])
				}
			}
		})
	}
}

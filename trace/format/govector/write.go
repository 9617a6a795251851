package govector

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dmxlab/dmx/trace"
	"github.com/dmxlab/dmx/trace/foreign"
)

// Exporter writes GoVector logs, one per process.
var Exporter = foreign.Exporter{
	Name:    "govector",
	Summary: "GoVector's logs, one NAME-Log.txt per process (in run-ID/ directories when there are several runs)",
	Dir:     WriteDir,
}

// WriteDir writes each run's processes' logs into dir, or, for several
// runs, into dir/run-ID. With opt.Timestamps, a clock line starts with the
// event's wall time in ns, as GoVector writes it with timestamps on.
func WriteDir(dir string, runs []foreign.Exported, opt foreign.ExportOptions) error {
	for _, r := range runs {
		d := dir
		if len(runs) > 1 {
			d = filepath.Join(dir, fmt.Sprintf("run-%d", r.Run.ID))
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		// Each process's events, found in one pass (a pass per process
		// took 9 s for 16,384 processes).
		byProc := make([][]*foreign.ExportedEvent, len(r.Hosts))
		for i := range r.Events {
			if p := r.Events[i].Proc; p >= 0 && p < len(byProc) {
				byProc[p] = append(byProc[p], &r.Events[i])
			}
		}
		for p, name := range FileNames(r.Hosts) {
			if err := writeLog(filepath.Join(d, name), &r, p, byProc[p], opt); err != nil {
				return err
			}
		}
	}
	return nil
}

// FileNames names each process's log: its host name with what a file name
// cannot hold replaced, then "-Log.txt" as GoVector names them.
func FileNames(hosts []string) []string {
	out := make([]string, len(hosts))
	taken := map[string]bool{}
	for p, h := range hosts {
		base := strings.Map(func(r rune) rune {
			if r == '/' || r == '\\' || r == ':' || r < ' ' || r == 0x7f {
				return '_'
			}
			return r
		}, h)
		if base == "." || base == ".." {
			base = "_" + base
		}
		name := base + "-Log.txt"
		for k := 2; taken[strings.ToLower(name)]; k++ {
			name = fmt.Sprintf("%s-%d-Log.txt", base, k)
		}
		taken[strings.ToLower(name)] = true
		out[p] = name
	}
	return out
}

func writeLog(path string, r *foreign.Exported, p int, evs []*foreign.ExportedEvent, opt foreign.ExportOptions) error {
	// A process named like a trace in dir must not replace it.
	if err := trace.Overwrites(path); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	// The causal order keeps each process's events in program order.
	for _, ev := range evs {
		if opt.Timestamps {
			fmt.Fprintf(w, "%d ", ev.Wall)
		}
		text := r.TextOf(ev)
		if ev.Origin != nil {
			for _, f := range ev.Origin.Fields {
				if f.Name == "priority" {
					text = f.Value + " " + text
				}
			}
		}
		fmt.Fprintf(w, "%s %s\n%s\n", r.Hosts[p], foreign.ClockText(foreign.Clock(ev, r.Hosts)), text)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

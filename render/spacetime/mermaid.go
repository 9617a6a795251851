package spacetime

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dmxlab/dmx/trace"
)

// MaxMermaidEvents is the most events WriteMermaid draws: a sequence
// diagram draws one row per message or note, and beyond some two hundred
// rows Mermaid's picture is too long to read (and GitHub stops rendering
// big ones).
const MaxMermaidEvents = 200

// WriteMermaid writes d as a Mermaid sequenceDiagram, for README files and
// pull requests; fenced wraps it in a ```mermaid block. A sequence diagram
// draws each message as one arrow at one moment, so messages appear in the
// order of their receipt (a lost one at its send), and concurrency shows
// only in the ordering: it is a sketch of a small window, and a window of
// more than MaxMermaidEvents events is refused with the reason.
func WriteMermaid(w io.Writer, d *Diagram, fenced bool) error {
	if n := len(d.Events); n > MaxMermaidEvents {
		return fmt.Errorf("mermaid: the window holds %d events; a sequence diagram of more than %d is not legible (and GitHub will not render it): narrow it with --from/--to, --procs or --around P0#1 --radius 10, or draw SVG",
			n, MaxMermaidEvents)
	}
	bw := bufio.NewWriter(w)
	if fenced {
		bw.WriteString("```mermaid\n")
	}
	bw.WriteString("sequenceDiagram\n")
	fmt.Fprintf(bw, "    %%%% %s\n", d.title())
	for _, ln := range d.Lanes {
		alias := fmt.Sprintf("P%d", ln.Proc)
		label := ln.Name
		if ln.Role != "" {
			label += " (" + ln.Role + ")"
		}
		if label == alias {
			fmt.Fprintf(bw, "    participant %s\n", alias)
		} else {
			fmt.Fprintf(bw, "    participant %s as %s\n", alias, mermaidText(label))
		}
	}
	// Rows: a message at its receipt (or its send if it has no receipt in
	// the window), and the marked events, in Lamport (axis) order.
	type row struct {
		key  int64
		ref  trace.Ref
		line string
	}
	var rows []row
	shown := make(map[int]bool)
	for _, ln := range d.Lanes {
		shown[ln.Proc] = true
	}
	for _, m := range d.Msgs {
		if background(m.Type) || !shown[m.From] || !shown[m.To] {
			continue
		}
		at := m.Recv
		arrow := "->>"
		text := m.Type
		switch {
		case m.Recv != outside:
		case m.Fate == "dropped" || m.Fate == "lost_to_crash":
			at, arrow = m.Send, "-x"
			text += " (" + strings.ReplaceAll(m.Fate, "_", " ") + ")"
		case m.Fate == "in_flight":
			at, arrow = m.Send, "--)"
			text += " (in flight)"
		default:
			at = m.Send
			text += " (received later)"
		}
		e := d.Events[at]
		rows = append(rows, row{e.Key, e.Ref, fmt.Sprintf("    P%d%sP%d: %s", m.From, arrow, m.To, mermaidText(text))})
	}
	for _, e := range d.Events {
		var line string
		switch {
		case e.Kind == trace.KindCSEnter:
			line = fmt.Sprintf("    activate P%d\n    Note right of P%d: enter %s", e.Proc, e.Proc, mermaidText(e.Resource))
		case e.Kind == trace.KindCSExit:
			line = fmt.Sprintf("    deactivate P%d", e.Proc)
		case e.Mark != "":
			line = fmt.Sprintf("    Note over P%d: %s", e.Proc, mermaidText(e.Mark))
		default:
			continue
		}
		rows = append(rows, row{e.Key, e.Ref, line})
	}
	for _, o := range d.Findings {
		first, procs := -1, []int{}
		for _, i := range o.Events {
			if i == outside {
				continue
			}
			if first < 0 || d.Events[i].Key < d.Events[first].Key {
				first = i
			}
			if !slices.Contains(procs, d.Events[i].Proc) {
				procs = append(procs, d.Events[i].Proc)
			}
		}
		if first < 0 {
			continue
		}
		slices.Sort(procs)
		over := fmt.Sprintf("P%d", procs[0])
		if len(procs) > 1 {
			over += fmt.Sprintf(",P%d", procs[len(procs)-1])
		}
		e := d.Events[first]
		rows = append(rows, row{e.Key, e.Ref, fmt.Sprintf("    Note over %s: finding %d (%s)", over, o.N, mermaidText(o.Check))})
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.ref.Proc, b.ref.Proc), cmp.Compare(a.ref.Seq, b.ref.Seq))
	})
	// An exit without its entry in the window would deactivate nothing:
	// Mermaid fails on that, so such exits are left out.
	active := make(map[int]int)
	for _, r := range rows {
		if strings.HasPrefix(r.line, "    deactivate") {
			if active[r.ref.Proc] == 0 {
				continue
			}
			active[r.ref.Proc]--
		}
		if strings.HasPrefix(r.line, "    activate") {
			active[r.ref.Proc]++
		}
		bw.WriteString(r.line)
		bw.WriteByte('\n')
	}
	for _, o := range d.Findings {
		fmt.Fprintf(bw, "    %%%% finding #%d %s: %s\n", o.N, o.Check, strings.ReplaceAll(o.Message, "\n", " "))
	}
	if fenced {
		bw.WriteString("```\n")
	}
	return bw.Flush()
}

// mermaidText escapes what Mermaid reads as syntax in a message or note.
var mermaidText = strings.NewReplacer(";", "#59;", "#", "#35;", ":", "#58;", "\n", " ").Replace

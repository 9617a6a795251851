package render

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Table writes rows under header as an aligned text table.
func Table(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	hs := make([]any, len(header))
	for i, h := range header {
		hs[i] = h
	}
	t.Header(hs...)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}

// CSV writes rows under header as RFC 4180 CSV.
func CSV(w io.Writer, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// JSON writes v as indented JSON followed by a newline.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// clip shortens s to at most width runes, cutting at a word and marking
// the cut with "...".
func clip(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	cut := string(r[:width-3])
	if i := strings.LastIndexByte(cut, ' '); i > width/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,:;") + "..."
}

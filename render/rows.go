package render

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RowsFormats are the formats Rows writes, the default first.
var RowsFormats = []string{"table", "csv", "json"}

// TablePage is the most rows a table holds: Rows prints a longer result as
// consecutive tables of TablePage rows, each under the header, so that
// memory stays bounded whatever the result's size (a table's column widths
// depend on all its rows).
const TablePage = 1000

// TablePageBytes bounds a table's page in bytes as TablePage does in rows:
// a page ends when its cells hold this much (a table of 426 rows of two
// 1 MB values took 1.75 GB in one page).
const TablePageBytes = 4 << 20

// TableCellBytes is the most of a value a table shows: a table is for
// reading, and the table library lays out a long cell at a cost many times
// its size (two 1 MB values a row made 3.7 GB of table).
const TableCellBytes = 4096

// Rows writes a query's result, columns named by header, in format, one
// of RowsFormats: a table (NULL for a null value), CSV (an empty field), or
// JSON, a list of objects keyed by column name (null, numbers and text as
// such; see jsonKeys for repeated names). next yields the rows one at a
// time, io.EOF after the last; it may reuse its slice. Rows streams: CSV
// and JSON rows are written as they come (flushed at least every 100ms),
// a table a page at a time (TablePage). It returns the number of rows
// written and the first error of next or of w.
func Rows(w io.Writer, format string, header []string, next func() ([]any, error)) (int64, error) {
	switch format {
	case "table":
		return tableRows(w, header, next)
	case "csv":
		return csvRows(w, header, next)
	case "json":
		return jsonRows(w, header, next)
	}
	return 0, unknownFormat(format, RowsFormats)
}

func tableRows(w io.Writer, header []string, next func() ([]any, error)) (int64, error) {
	var n int64
	page := make([][]string, 0, 64)
	size := 0 // bytes in page's cells
	for {
		r, err := next()
		if err != nil && err != io.EOF {
			// What was read is shown before the error.
			if len(page) > 0 {
				Table(w, header, page)
			}
			return n, err
		}
		if err == io.EOF || len(page) == TablePage || size >= TablePageBytes {
			if len(page) > 0 || (err == io.EOF && n == 0) {
				if werr := Table(w, header, page); werr != nil {
					return n, werr
				}
			}
			if err == io.EOF {
				return n, nil
			}
			clear(page) // the cells of a long page go now, not when overwritten
			page, size = page[:0], 0
		}
		row := cells(r, "NULL")
		for i, c := range row {
			if len(c) > TableCellBytes {
				row[i] = fmt.Sprintf("%s… (%d bytes: --format csv or json shows it whole)", strings.ToValidUTF8(c[:TableCellBytes], ""), len(c))
			}
			size += len(row[i])
		}
		page = append(page, row)
		n++
	}
}

func csvRows(w io.Writer, header []string, next func() ([]any, error)) (int64, error) {
	fw := newFlusher(w)
	cw := csv.NewWriter(fw)
	if err := cw.Write(header); err != nil {
		return 0, err
	}
	var n int64
	for {
		r, err := next()
		if err != nil {
			cw.Flush()
			if err == io.EOF {
				err = nil
			}
			return n, firstErr(err, cw.Error(), fw.Flush())
		}
		if err := cw.Write(cells(r, "")); err != nil {
			return n, err
		}
		n++
		cw.Flush()
		if err := fw.tick(); err != nil {
			return n, err
		}
	}
}

// jsonRows writes the rows as an indented JSON array of objects whose
// members come in key order, as encoding/json writes a map: the bytes of
// JSON(w, []map[string]any{...}), without holding the list.
func jsonRows(w io.Writer, header []string, next func() ([]any, error)) (int64, error) {
	keys := jsonKeys(header)
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case keys[a] < keys[b]:
			return -1
		case keys[a] > keys[b]:
			return 1
		}
		return 0
	})
	names := make([][]byte, len(keys))
	for i, k := range keys {
		b, err := json.Marshal(k)
		if err != nil {
			return 0, err
		}
		names[i] = b
	}
	fw := newFlusher(w)
	var n int64
	var buf []byte
	for {
		r, err := next()
		if err != nil {
			if err != io.EOF {
				// Not a whole list: the error says why.
				return n, firstErr(err, fw.Flush())
			}
			end := "\n]\n"
			if n == 0 {
				end = "[]\n"
			}
			fw.WriteString(end)
			return n, fw.Flush()
		}
		buf = buf[:0]
		if n == 0 {
			buf = append(buf, "[\n  {"...)
		} else {
			buf = append(buf, ",\n  {"...)
		}
		if len(order) == 0 {
			buf = append(buf, '}')
		} else {
			for i, j := range order {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = append(buf, "\n    "...)
				buf = append(buf, names[j]...)
				buf = append(buf, ": "...)
				v := r[j]
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				vb, err := json.Marshal(v)
				if err != nil {
					return n, fmt.Errorf("column %s: %w", keys[j], err)
				}
				buf = append(buf, vb...)
			}
			buf = append(buf, "\n  }"...)
		}
		if _, err := fw.Write(buf); err != nil {
			return n, err
		}
		n++
		if err := fw.tick(); err != nil {
			return n, err
		}
	}
}

// flusher buffers what is written to w and flushes it when the buffer is
// full or some time after the last flush, so that a slow result shows up
// as it comes and a fast one costs few writes.
type flusher struct {
	*bufio.Writer
	last  time.Time
	ticks int
}

func newFlusher(w io.Writer) *flusher {
	return &flusher{Writer: bufio.NewWriterSize(w, 64<<10), last: time.Now()}
}

// tick is called after each row.
func (f *flusher) tick() error {
	f.ticks++
	if f.ticks%64 != 0 && f.ticks > 64 {
		// The clock is read every 64 rows once the result is going.
		return nil
	}
	if now := time.Now(); now.Sub(f.last) >= 100*time.Millisecond {
		f.last = now
		return f.Flush()
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// cells formats each value of a row as text, null as null.
func cells(r []any, null string) []string {
	out := make([]string, len(r))
	for j, v := range r {
		out[j] = null
		if v != nil {
			out[j] = cell(v)
		}
	}
	return out
}

// cell formats one value as SQLite hands it over: text (or a blob) as
// such, numbers in their shortest exact form.
func cell(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// jsonKeys names the columns as JSON object keys: a name that an earlier
// column already has (SELECT a.proc, b.proc ...) gets a suffix _2, _3, ...
// that no other column has, so that no value is lost.
func jsonKeys(header []string) []string {
	used := map[string]bool{}
	for _, h := range header {
		used[h] = true
	}
	seen := map[string]bool{}
	keys := make([]string, len(header))
	for i, h := range header {
		k := h
		for n := 2; seen[k]; n++ {
			if k = h + "_" + strconv.Itoa(n); used[k] {
				k = h // taken by another column: try the next suffix
			}
		}
		seen[k] = true
		keys[i] = k
	}
	return keys
}

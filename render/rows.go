package render

import (
	"fmt"
	"io"
	"strconv"
)

// RowsFormats are the formats Rows writes, the default first.
var RowsFormats = []string{"table", "csv", "json"}

// Rows writes the result of a query, columns named by header, in format,
// one of RowsFormats: a table (NULL for a null value), CSV (an empty
// field), or JSON, a list of objects keyed by column name (null, numbers
// and text as such; see jsonKeys for repeated names).
func Rows(w io.Writer, format string, header []string, rows [][]any) error {
	switch format {
	case "table":
		return Table(w, header, cells(rows, "NULL"))
	case "csv":
		return CSV(w, header, cells(rows, ""))
	case "json":
		keys := jsonKeys(header)
		objs := make([]map[string]any, len(rows))
		for i, r := range rows {
			objs[i] = make(map[string]any, len(r))
			for j, v := range r {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				objs[i][keys[j]] = v
			}
		}
		return JSON(w, objs)
	}
	return unknownFormat(format, RowsFormats)
}

// cells formats each value as text, null as null.
func cells(rows [][]any, null string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for j, v := range r {
			out[i][j] = null
			if v != nil {
				out[i][j] = cell(v)
			}
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

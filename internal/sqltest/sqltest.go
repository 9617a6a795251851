// Package sqltest reads what an SQL query answers as text, for tests that
// compare rows.
package sqltest

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// Rows runs q on db and returns its rows as strings, columns separated by
// "|", NULL as "NULL"; an error fails t.
func Rows(t testing.TB, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		f := make([]string, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				f[i] = "NULL"
			case []byte:
				f[i] = string(v)
			default:
				f[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(f, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

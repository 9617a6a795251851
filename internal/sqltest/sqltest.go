// Package sqltest reads what an SQL query answers as text, for tests that
// compare rows, and damages an SQLite file as tests of damaged traces do.
package sqltest

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
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

// DamageIndexEntry damages the SQLite file at path (pages of 4096 bytes)
// in one index entry only: in the first cell of the first leaf page of an
// index (page type 10) that holds text, the last byte of text becomes to.
// The entry then points at no row while the tables and the file's
// structure stay sound (PRAGMA quick_check finds nothing): the damage that
// only a full integrity check, or a read through that index, finds. Pages
// also keep stale bytes outside their cells: changing those would change
// nothing. A file without such an entry fails t.
func DamageIndexEntry(t testing.TB, path, text string, to byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for pg := 4096; pg+4096 <= len(b); pg += 4096 {
		if b[pg] != 10 {
			continue
		}
		cell := pg + int(binary.BigEndian.Uint16(b[pg+8:]))
		if i := bytes.Index(b[cell:min(cell+64, pg+4096)], []byte(text)); i >= 0 {
			b[cell+i+len(text)-1] = to
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s: no index entry holds %q to damage", path, text)
}

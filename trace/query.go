package trace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/mattn/go-sqlite3"
)

// Rows is the result of a user's query (dmx sql), read one row at a time
// so that a result of any size takes constant memory.
type Rows struct {
	s    *Store
	ctx  context.Context
	n    int64
	rows *sql.Rows
	cols []string
	vals []any
	ptrs []any
}

// Query runs a user's SQL over the trace. The trace's connections refuse
// to write (see Open): an error says so, naming the file. ctx bounds the
// query's time: when it is done, the query stops with ctx's error.
func (s *Store) Query(ctx context.Context, query string) (*Rows, error) {
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return nil, s.queryError(ctx, err)
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		return nil, s.queryError(ctx, err)
	}
	r := &Rows{s: s, ctx: ctx, rows: rows, cols: cols, vals: make([]any, len(cols)), ptrs: make([]any, len(cols))}
	for i := range r.vals {
		r.ptrs[i] = &r.vals[i]
	}
	return r, nil
}

// Columns returns the names of the result's columns.
func (r *Rows) Columns() []string { return r.cols }

// Next returns the next row, or io.EOF after the last one. Each value is
// as SQLite hands it over: nil (NULL), int64, float64, string or []byte.
// The slice is reused by the next call.
func (r *Rows) Next() ([]any, error) {
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return nil, r.s.queryError(r.ctx, err)
		}
		return nil, io.EOF
	}
	if err := r.rows.Scan(r.ptrs...); err != nil {
		return nil, r.s.queryError(r.ctx, err)
	}
	r.n++
	return r.vals, nil
}

// Count returns the number of rows Next returned.
func (r *Rows) Count() int64 { return r.n }

// Close ends the query.
func (r *Rows) Close() error { return r.rows.Close() }

// queryError wraps an error of a user's query: the file's name, what a
// refusal means, and the context's error when it stopped the query.
func (s *Store) queryError(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%s: query: %w", s.path, cerr)
	}
	if se := new(sqlite3.Error); errors.As(err, se) {
		return s.wrap(err)
	}
	return fmt.Errorf("%s: query: %w", s.path, err)
}

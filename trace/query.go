package trace

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/mattn/go-sqlite3"
)

// Rows is the result of a user's query (dmx sql), read one row at a time
// so that a result of any size takes constant memory.
type Rows struct {
	s    *Store
	ctx  context.Context
	n    int64
	conn *sql.Conn // the query's own connection, with its limits
	rows *sql.Rows
	cols []string
	vals []any
	ptrs []any
	opt  QueryOptions
}

// QueryOptions bound a user's query in memory.
type QueryOptions struct {
	// MaxValue is the most bytes a value of the query may hold, read from
	// the trace or made by the query (zeroblob, printf, group_concat...):
	// a larger one stops the query with a *ValueTooBigError. 0 means
	// DefaultMaxValue.
	MaxValue int
}

// DefaultMaxValue is QueryOptions.MaxValue's default: far above what a
// trace of dmx's holds in a field, far below what runs a machine out of
// memory. (One 300 MB value took dmx sql 7.6 GB to print as a table.)
const DefaultMaxValue = 1 << 20

// maxQueryColumns bounds the columns of a user query's result, so that
// rows stay bounded too (at most this times MaxValue).
const maxQueryColumns = 256

// ValueTooBigError says that a query met or made a value larger than
// its QueryOptions.MaxValue.
type ValueTooBigError struct {
	Path     string
	MaxValue int
}

func (e *ValueTooBigError) Error() string {
	return fmt.Sprintf("%s: query stopped: a value of more than %d bytes, read from the trace or made by the query (the most a query may hold: dmx sql --max-value allows more)", e.Path, e.MaxValue)
}

// Query runs a user's SQL over the trace, with QueryOptions' defaults.
func (s *Store) Query(ctx context.Context, query string) (*Rows, error) {
	return s.QueryWith(ctx, query, QueryOptions{})
}

// QueryWith runs a user's SQL over the trace. The trace's connections
// refuse to write (see Open): an error says so, naming the file. ctx
// bounds the query's time: when it is done, the query stops with ctx's
// error. opt bounds its values in bytes: the query runs on a connection
// of its own whose SQLite limits say so.
func (s *Store) QueryWith(ctx context.Context, query string, opt QueryOptions) (*Rows, error) {
	if opt.MaxValue <= 0 {
		opt.MaxValue = DefaultMaxValue
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, s.queryError(ctx, err)
	}
	if err := setLimits(conn, opt.MaxValue, maxQueryColumns); err != nil {
		conn.Close()
		return nil, s.wrap(err)
	}
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		releaseConn(conn)
		return nil, s.queryError(ctx, tooBig(s.path, opt, err))
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		releaseConn(conn)
		return nil, s.queryError(ctx, err)
	}
	r := &Rows{s: s, ctx: ctx, conn: conn, rows: rows, cols: cols, vals: make([]any, len(cols)), ptrs: make([]any, len(cols)), opt: opt}
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
			return nil, r.s.queryError(r.ctx, tooBig(r.s.path, r.opt, err))
		}
		return nil, io.EOF
	}
	if err := r.rows.Scan(r.ptrs...); err != nil {
		return nil, r.s.queryError(r.ctx, tooBig(r.s.path, r.opt, err))
	}
	r.n++
	return r.vals, nil
}

// Count returns the number of rows Next returned.
func (r *Rows) Count() int64 { return r.n }

// Close ends the query.
func (r *Rows) Close() error {
	err := r.rows.Close()
	if r.conn != nil {
		releaseConn(r.conn)
		r.conn = nil
	}
	return err
}

// setLimits sets SQLite's limits on the length of a value and on the
// columns of a result, for the connection conn.
func setLimits(conn *sql.Conn, length, columns int) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("not an SQLite connection: %T", dc)
		}
		c.SetLimit(sqlite3.SQLITE_LIMIT_LENGTH, length)
		c.SetLimit(sqlite3.SQLITE_LIMIT_COLUMN, columns)
		return nil
	})
}

// releaseConn gives a query's connection back to the pool with SQLite's
// default limits, for the store's own reads (the analyses read whole
// details): asked for more than it was built with, SQLite sets its
// build's own, the defaults. If they cannot be restored, the connection is
// dropped.
func releaseConn(conn *sql.Conn) {
	if err := setLimits(conn, math.MaxInt32, math.MaxInt32); err != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	conn.Close()
}

// tooBig turns SQLite's "string or blob too big" into a
// *ValueTooBigError.
func tooBig(path string, opt QueryOptions, err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrTooBig {
		return &ValueTooBigError{Path: path, MaxValue: opt.MaxValue}
	}
	return err
}

// queryError wraps an error of a user's query: the file's name, what a
// refusal means, and the context's error when it stopped the query.
func (s *Store) queryError(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%s: query: %w", s.path, cerr)
	}
	if tb := new(ValueTooBigError); errors.As(err, &tb) {
		return err
	}
	if se := new(sqlite3.Error); errors.As(err, se) {
		return s.wrap(err)
	}
	return fmt.Errorf("%s: query: %w", s.path, err)
}

package trace

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// A trace is evidence: whoever reads it (dmx check, stats, sql, and every
// analysis) must not be able to change it, or to write anything else
// through it. Open's connections go through readDriver, which makes each
// of them read-only three times over: the file is opened with mode=ro,
// the connection is query_only, and an authorizer refuses, when a
// statement is prepared, everything that is not reading. The authorizer is
// what stops ATTACH (an attached file opens read-write, whatever the main
// one's mode) and VACUUM INTO (it attaches its output), which the first two
// let through.

// readDriverName is the database/sql driver of the connections Open makes.
const readDriverName = "sqlite3-dmx-read"

func init() {
	sql.Register(readDriverName, &sqlite3.SQLiteDriver{
		ConnectHook: func(c *sqlite3.SQLiteConn) error {
			c.RegisterAuthorizer(authorizeRead)
			return nil
		},
	})
}

// sqliteRecursive is SQLITE_RECURSIVE (a recursive common table
// expression), which go-sqlite3 does not name.
const sqliteRecursive = 33

// authorizeRead allows reading and refuses the rest: writes, schema
// changes, ATTACH and DETACH, transactions (BEGIN IMMEDIATE would take the
// write lock from a recorder), PRAGMAs other than those that only report,
// and load_extension. Its arguments are SQLite's: the action code, then
// two action-specific names and the database name.
func authorizeRead(op int, arg1, arg2, _ string) int {
	switch op {
	case sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqliteRecursive:
		return sqlite3.SQLITE_OK
	case sqlite3.SQLITE_FUNCTION:
		if strings.EqualFold(arg2, "load_extension") {
			return sqlite3.SQLITE_DENY
		}
		return sqlite3.SQLITE_OK
	case sqlite3.SQLITE_PRAGMA:
		name := strings.ToLower(arg1)
		if reportPragmas[name] || (arg2 == "" && settingPragmas[name]) {
			return sqlite3.SQLITE_OK
		}
	}
	return sqlite3.SQLITE_DENY
}

// reportPragmas only report, whatever their argument (a table name, a
// number of errors to list).
var reportPragmas = setOf("table_info", "table_xinfo", "table_list", "index_list", "index_info",
	"index_xinfo", "foreign_key_list", "foreign_key_check", "quick_check", "integrity_check",
	"database_list", "collation_list", "function_list", "module_list", "pragma_list",
	"compile_options", "data_version", "page_count", "freelist_count")

// settingPragmas report a setting when given no value, and change it
// when given one: only the first is allowed.
var settingPragmas = setOf("user_version", "application_id", "schema_version", "page_size",
	"journal_mode", "encoding", "auto_vacuum", "cache_size", "foreign_keys", "query_only",
	"synchronous", "locking_mode", "max_page_count", "busy_timeout", "temp_store",
	"journal_size_limit", "wal_autocheckpoint", "automatic_index", "secure_delete",
	"cell_size_check", "recursive_triggers", "trusted_schema", "mmap_size")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// readOnlyError says that a statement was refused because the trace is
// open read-only.
func (s *Store) readOnlyError(err error) error {
	return fmt.Errorf("%s: the trace is read-only: %w (statements that would write to it or to another "+
		"file are refused: INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, ATTACH, DETACH, VACUUM, "+
		"REINDEX, ANALYZE, transactions, PRAGMAs that set a value)", s.path, err)
}

// refused reports whether err is SQLite refusing a statement as a write:
// the authorizer's denial, or a write to a read-only file (but not a
// read-only file that needs a writer to recover it, which is another
// matter).
func refused(err error) bool {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	switch {
	case se.Code == sqlite3.ErrAuth:
		return true
	case se.Code == sqlite3.ErrReadonly:
		switch se.ExtendedCode {
		case sqlite3.ErrReadonlyRecovery, sqlite3.ErrReadonlyRollback, sqlite3.ErrReadonlyCantLock, sqlite3.ErrReadonlyDbMoved:
			return false
		}
		return true
	}
	return false
}

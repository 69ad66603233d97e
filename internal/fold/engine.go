// Package fold executes the table work of a refresh plan (internal/foldplan)
// and of a compaction: the set operations run in DuckDB with a bounded
// memory_limit and a spill folder, so memory does not grow with the number
// of changed rows; every file is written by dbtrail's own Parquet writers
// (internal/snapshot), so chain files and rewritten table files have exactly
// the types, footers and fingerprints a full backup writes.
//
// DuckDB only decides which rows: the row numbers of a table file a window
// makes stale (a semi join of the changed keys), the row numbers every
// .posdel names, and the newest version of every key across .upserts files.
// Go then streams the chosen rows from file to file in order.
package fold

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver

	"github.com/dbtrail/dbtrail/internal/filemode"
)

// Options bound the engine.
type Options struct {
	// TempDir holds DuckDB's spill files and the engine's scratch files;
	// it is created if missing. Required.
	TempDir string
	// MemoryLimit is DuckDB's memory_limit (default DefaultMemoryLimit).
	MemoryLimit string
	// Threads is DuckDB's threads (default 2).
	Threads int
	// KeyMapDir caches the key maps of table files (see TableFile); empty:
	// pairs join the changed keys with the table file in DuckDB instead.
	KeyMapDir string
}

// DefaultMemoryLimit is DuckDB's memory limit when Options leaves it empty.
const DefaultMemoryLimit = "256MB"

// Engine is one in-memory DuckDB database with its limits. It runs one
// statement at a time and is not safe for concurrent use.
type Engine struct {
	db      *sql.DB
	tmp     string
	keyMaps string
}

// Open starts an engine.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if opts.TempDir == "" {
		return nil, fmt.Errorf("fold: no temp dir")
	}
	if opts.MemoryLimit == "" {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	if opts.Threads <= 0 {
		opts.Threads = 2
	}
	if err := os.MkdirAll(opts.TempDir, filemode.Dir()); err != nil {
		return nil, fmt.Errorf("fold: temp dir: %w", err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, fmt.Errorf("fold: open duckdb: %w", err)
	}
	db.SetMaxOpenConns(1)
	for _, s := range []string{
		"SET memory_limit = " + quoteString(opts.MemoryLimit),
		fmt.Sprintf("SET threads = %d", opts.Threads),
		"SET temp_directory = " + quoteString(filepath.Join(opts.TempDir, "duckdb.spill")),
		"SET preserve_insertion_order = false",
		"SET enable_progress_bar = false",
		// Files are rewritten in place by retries; never serve stale bytes.
		"SET enable_external_file_cache = false",
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, fmt.Errorf("fold: %s: %w", s, err)
		}
	}
	return &Engine{db: db, tmp: opts.TempDir, keyMaps: opts.KeyMapDir}, nil
}

// Close releases the database (its spill files go with it).
func (e *Engine) Close() error { return e.db.Close() }

// TempDir returns the scratch folder.
func (e *Engine) TempDir() string { return e.tmp }

// quoteIdent quotes a DuckDB identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// quoteString quotes a DuckDB string literal.
func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// readParquet is a read_parquet call of one file, with row numbers when
// rows is true. A path with glob characters is refused: DuckDB would expand
// it.
func readParquet(path string, rows bool) (string, error) {
	if err := checkPath(path); err != nil {
		return "", err
	}
	if rows {
		return "read_parquet(" + quoteString(path) + ", file_row_number = true)", nil
	}
	return "read_parquet(" + quoteString(path) + ")", nil
}

// checkPath refuses a path DuckDB would expand as a glob.
func checkPath(path string) error {
	if strings.ContainsAny(path, "*?[") {
		return fmt.Errorf("fold: path %q holds a glob character", path)
	}
	return nil
}

// streamInts runs q and calls fn with each row's single BIGINT, in the
// order q returns them.
func (e *Engine) streamInts(ctx context.Context, q string, fn func(int64) error) error {
	rows, err := e.db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return err
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	return rows.Err()
}

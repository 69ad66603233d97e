package views

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// openTestDB opens an in-memory DuckDB with the bounds docs/architecture.md asks for.
func openTestDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	for _, s := range []string{"SET memory_limit='512MB'", "SET threads=2",
		"SET temp_directory=" + quoteString(t.TempDir())} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return db
}

// snap writes the files of one snapshot folder with DuckDB COPY.
type snap struct {
	t   *testing.T
	db  *sql.DB
	dir string
}

// put writes the result of query as the Parquet file rel of the snapshot,
// replacing (never writing through) a hard link already there.
func (s snap) put(rel, query string) {
	s.t.Helper()
	p := filepath.Join(s.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		s.t.Fatal(err)
	}
	if _, err := s.db.Exec("COPY (" + query + ") TO " + quoteString(p) + " (FORMAT parquet)"); err != nil {
		s.t.Fatalf("write %s: %v", rel, err)
	}
}

// values is a SELECT over literal rows with the given column names.
func values(cols string, rows ...string) string {
	return "SELECT * FROM (VALUES (" + strings.Join(rows, "), (") + ")) AS v(" + cols + ")"
}

// posdel writes the .posdel file "<schema>/<table>.<entry>.posdel" naming
// the given row numbers (none: an empty file).
func (s snap) posdel(schema, table, entry string, rows ...int) {
	s.t.Helper()
	q := `SELECT CAST(NULL AS BIGINT) AS "row" WHERE false`
	if len(rows) > 0 {
		lits := make([]string, len(rows))
		for i, r := range rows {
			lits[i] = fmt.Sprintf("CAST(%d AS BIGINT)", r)
		}
		q = values(`"row"`, lits...)
	}
	s.put(schema+"/"+table+"."+entry+".posdel", q)
}

// upserts writes "<schema>/<table>.<entry>.upserts" with columns cols plus
// bintrail_pk and bintrail_op; no rows writes the empty file typed by empty
// (a SELECT of the table's columns, typed, WHERE false).
func (s snap) upserts(schema, table, entry, cols, empty string, rows ...string) {
	s.t.Helper()
	q := "SELECT *, ''::VARCHAR AS bintrail_pk, ''::VARCHAR AS bintrail_op FROM (" + empty + ")"
	if len(rows) > 0 {
		q = values(cols+", bintrail_pk, bintrail_op", rows...)
	}
	s.put(schema+"/"+table+"."+entry+".upserts", q)
}

// chainStart writes the empty 000000 pair of a table.
func (s snap) chainStart(schema, table, cols, empty string) {
	s.t.Helper()
	s.posdel(schema, table, "000000")
	s.upserts(schema, table, "000000", cols, empty)
}

// linkTree hard-links every file of from into to, as a refresh links an
// unchanged table forward.
func linkTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		return os.Link(p, filepath.Join(to, rel))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// publish points <src>/current at snapshots/<id> by one rename.
func publish(t *testing.T, src, id string) {
	t.Helper()
	tmp := filepath.Join(src, "current.tmp")
	os.Remove(tmp)
	if err := os.Symlink(filepath.Join("snapshots", id), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(src, "current")); err != nil {
		t.Fatal(err)
	}
}

// rowsOf runs query and returns its rows as "v1|v2|..." (NULL as <nil>),
// sorted.
func rowsOf(t *testing.T, db queryer, query string) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
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
		parts := make([]string, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok { // MariaDB's text protocol
				v = string(b)
			}
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	slices.Sort(out)
	return out
}

// wantRows checks that query returns exactly want (any order, duplicates
// counted).
func wantRows(t *testing.T, db queryer, query string, want ...string) {
	t.Helper()
	got := rowsOf(t, db, query)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s\n got: %q\nwant: %q", query, got, want)
	}
}

// queryer runs a query: a *sql.DB or *sql.Conn of DuckDB.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

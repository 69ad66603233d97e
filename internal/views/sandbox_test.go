package views

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

// TestSandboxRefusesEscapes: a sandboxed session reads the snapshot's
// views, and every attempt to read another file, write one, attach a
// database, install or load an extension, reach the network or unlock the
// settings fails, and leaves no file behind.
func TestSandboxRefusesEscapes(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "main")
	viewstest.Publish(t, src, ordersV1)
	secret := filepath.Join(root, "secret.csv")
	if err := os.WriteFile(secret, []byte("a,b\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out.csv")
	s := openSession(t, SessionOptions{Options: Options{SourceDir: src}, Sandbox: true})
	ctx := context.Background()
	if got := rowsOf(t, s.conn, "SELECT id, total FROM shop.orders ORDER BY id"); len(got) != 2 {
		t.Fatalf("the views in the sandbox: %q", got)
	}
	for _, q := range []string{
		"SELECT * FROM read_csv('/etc/passwd')",
		"SELECT * FROM read_csv_auto('/etc/passwd')",
		"SELECT * FROM '/etc/passwd'",
		"SELECT * FROM read_text('/etc/passwd')",
		"SELECT * FROM read_blob('/etc/hostname')",
		"SELECT * FROM glob('/etc/*')",
		"SELECT * FROM read_csv('" + secret + "')",
		"SELECT * FROM read_text('" + src + "/../secret.csv')",
		"SELECT * FROM sniff_csv('/etc/passwd')",
		"SELECT * FROM parquet_metadata('" + secret + "')",
		"SELECT * FROM read_parquet('https://example.com/x.parquet')",
		"SELECT * FROM read_csv('s3://bucket/x.csv')",
		"COPY (SELECT 1) TO '" + out + "'",
		"COPY (SELECT 1) TO '" + src + "/out.csv'",
		"ATTACH '" + root + "/x.db' AS x",
		"INSTALL httpfs",
		"LOAD httpfs",
		"SET enable_external_access=true",
		"SET allowed_directories=['/']",
		"SELECT * FROM (SELECT 1) t, (SELECT set_config('enable_external_access', 'true'))",
	} {
		rows, _, err := s.Query(ctx, q)
		if err == nil {
			n := 0
			for rows.Next() {
				n++
			}
			err = rows.Err()
			rows.Close()
			if err == nil {
				t.Errorf("%s: answered %d rows, want it refused", q, n)
			}
		}
	}
	for _, p := range []string{out, filepath.Join(src, "out.csv"), filepath.Join(root, "x.db")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a refused statement wrote %s", p)
		}
	}
}

// TestFunctionsClassified walks DuckDB's function catalog: every function
// is allowed or refused (sandbox_functions.go), never both, so a DuckDB
// upgrade that adds a function fails here until it is classified.
func TestFunctionsClassified(t *testing.T) {
	src := filepath.Join(t.TempDir(), "main")
	viewstest.Publish(t, src, ordersV1)
	s := openSession(t, SessionOptions{Options: Options{SourceDir: src}, Sandbox: true})
	names := rowsOf(t, s.conn, "SELECT DISTINCT function_name FROM duckdb_functions() ORDER BY 1")
	if len(names) < 500 {
		t.Fatalf("duckdb_functions() lists %d functions: the walk reads the wrong catalog", len(names))
	}
	for _, n := range names {
		_, refused := refusedFunctions[n]
		switch {
		case refused && allowedFunctions[n]:
			t.Errorf("function %s is both allowed and refused", n)
		case !refused && !allowedFunctions[n]:
			t.Errorf("function %s of DuckDB's catalog is not classified: add it to sandbox_functions_allowed.txt or refusedFunctions", n)
		}
	}
}

// TestSandboxRefusesFunctions: a call of a function that writes or changes
// settings is refused by name, wherever it is in the statement and
// however it is spelt, before anything runs; the everyday forms of a
// SELECT (operators, casts, lambdas, windows) pass the check.
func TestSandboxRefusesFunctions(t *testing.T) {
	src := filepath.Join(t.TempDir(), "main")
	viewstest.Publish(t, src, ordersV1)
	s := openSession(t, SessionOptions{Options: Options{SourceDir: src}, Sandbox: true})
	ctx := context.Background()
	for q, name := range map[string]string{
		"SELECT enable_logging('QueryLog')": "enable_logging",
		"SELECT * FROM enable_logging()":    "enable_logging",
		"FROM truncate_duckdb_logs()":       "truncate_duckdb_logs",
		"SELECT * FROM shop.orders WHERE id IN (SELECT 1 FROM main.truncate_duckdb_logs())": "truncate_duckdb_logs",
		"SELECT Write_Log('x')":                                                "write_log",
		"SELECT setseed(0.5)":                                                  "setseed",
		"FROM checkpoint()":                                                    "checkpoint",
		"FROM query('SELECT enable_logging()')":                                "query",
		"EXPLAIN ANALYZE SELECT enable_logging()":                              "enable_logging",
		"WITH a AS (SELECT disable_logging()) SELECT * FROM a":                 "disable_logging",
		"SELECT sum(id) OVER (ORDER BY set_config('x', 'y')) FROM shop.orders": "set_config",
	} {
		rows, _, err := s.Query(ctx, q)
		if err == nil {
			rows.Close()
			t.Errorf("%s: answered, want it refused", q)
			continue
		}
		if !errors.Is(err, ErrNotReadOnly) || !strings.Contains(err.Error(), "function "+name+" ") {
			t.Errorf("%s: %v, want it refused naming %s", q, err, name)
		}
	}
	for _, q := range []string{
		"SELECT count(*), sum(id + 1), max(total::VARCHAR || 'x'), bool_and(total::VARCHAR LIKE '%5%') FROM shop.orders",
		"SELECT list_transform([id], x -> x * 2)[1], {'a': id}.a, id // 2, id % 2, -id, id ^ 2, coalesce(NULL, id), " +
			"extract(year FROM DATE '2026-01-01'), now() IS NOT NULL, current_date IS NOT NULL, 'a' ILIKE 'A', " +
			"'a' SIMILAR TO 'a', 'a' GLOB 'a', [1, 2] @> [1], 'ab' ^@ 'a', 1 << 2, '{\"a\":1}'->>'$.a', " +
			"row_number() OVER (ORDER BY id), [x FOR x IN [1, 2] IF x > 1], TRY_CAST('1' AS INT), 'a' COLLATE nocase, " +
			"CASE WHEN id IN (1, 2) THEN 1 END, id BETWEEN 1 AND 2, id IS DISTINCT FROM 2 FROM shop.orders",
		"SELECT * FROM range(3) UNION ALL SELECT * FROM generate_series(1, 2)",
		"SELECT COLUMNS('id') FROM shop.orders",
		"SELECT unnest([1, 2])",
	} {
		rows, _, err := s.Query(ctx, q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		rows.Close()
	}
}

package catalog

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/views"
	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

// queryFixture publishes a snapshot of shop.orders (a BIGINT key, a
// DECIMAL, an ENUM) as source main of a new backup folder and returns the
// folder.
func queryFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	viewstest.Publish(t, filepath.Join(dir, "main"), viewstest.Table{Schema: "shop",
		Create: "CREATE TABLE orders (id BIGINT PRIMARY KEY, total DECIMAL(12,2), status ENUM('new','paid'))",
		Rows:   [][]any{{"1", "49.80", "paid"}, {"2", "9.50", "new"}, {"3", "-0.05", "new"}}})
	return dir
}

// TestSandboxQuery: the API's query answers rows as JSON arrays with
// DECIMAL exact, stops at the row limit, and refuses to read a file
// outside the backup folder or to write one.
func TestSandboxQuery(t *testing.T) {
	dir := queryFixture(t)
	ask := SandboxQuery(Sandbox{BackupDir: dir, MemoryLimit: "256MB"})
	ctx := context.Background()
	a, err := ask(ctx, api.Question{Source: "main", SQL: "SELECT id, total, status FROM shop.orders ORDER BY id", MaxRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Truncated || len(a.Rows) != 2 || string(a.Rows[0]) != `[1,49.80,"paid"]` || string(a.Rows[1]) != `[2,9.50,"new"]` {
		t.Fatalf("answer %+v rows %s", a, a.Rows)
	}
	if a.Columns[1] != "total" || a.Types[1] != "DECIMAL(12,2)" {
		t.Errorf("columns %v types %v", a.Columns, a.Types)
	}
	for _, q := range []string{
		"SELECT * FROM read_csv('/etc/passwd')",
		"COPY (SELECT 1) TO '" + dir + "/main/x.csv'",
		"ATTACH '/tmp/x.db'",
		"LOAD httpfs",
	} {
		if a, err := ask(ctx, api.Question{Source: "main", SQL: q, MaxRows: 10}); err == nil {
			t.Errorf("%s: answered %+v", q, a)
		}
	}
}

// TestSandboxQueryBounds: an answer whose rows exceed the byte cap is an
// *api.AnswerTooLarge naming the cap, and one under it answers; a
// function that changes the session's logging is refused by name; a
// statement that does not parse is refused before a session opens (the
// source folder does not exist: opening one would fail otherwise).
func TestSandboxQueryBounds(t *testing.T) {
	dir := queryFixture(t)
	ask := SandboxQuery(Sandbox{BackupDir: dir, MemoryLimit: "256MB", MaxBytes: 1 << 20})
	ctx := context.Background()
	_, err := ask(ctx, api.Question{Source: "main", SQL: "SELECT repeat('x', 100000) FROM range(20)", MaxRows: 100})
	var big *api.AnswerTooLarge
	if !errors.As(err, &big) || big.Cap != 1<<20 {
		t.Fatalf("20 rows of 100 kB under a 1 MiB cap: %v", err)
	}
	if a, err := ask(ctx, api.Question{Source: "main", SQL: "SELECT repeat('x', 100000) FROM range(9)", MaxRows: 100}); err != nil || len(a.Rows) != 9 {
		t.Fatalf("9 rows of 100 kB under a 1 MiB cap: %v", err)
	}
	for q, name := range map[string]string{"SELECT enable_logging()": "enable_logging", "FROM truncate_duckdb_logs()": "truncate_duckdb_logs"} {
		if _, err := ask(ctx, api.Question{Source: "main", SQL: q, MaxRows: 10}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want it refused naming %s", q, err, name)
		}
	}
	if _, err := ask(ctx, api.Question{Source: "nowhere", SQL: "SELEC 1", MaxRows: 10}); !errors.Is(err, views.ErrNotReadOnly) {
		t.Errorf("a statement that does not parse: %v, want ErrNotReadOnly before the session opens", err)
	}
}

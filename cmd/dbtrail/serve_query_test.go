package main

import (
	"context"
	"testing"

	"github.com/dbtrail/dbtrail/api"
)

// TestSandboxQuery: the API's query answers rows as JSON arrays with
// DECIMAL exact, stops at the row limit, and refuses to read a file
// outside the backup folder or to write one.
func TestSandboxQuery(t *testing.T) {
	dir := queryFixture(t)
	ask := sandboxQuery(sandbox{backupDir: dir, memoryLimit: "256MB"})
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

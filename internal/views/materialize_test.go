package views

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

// TestWriteReadTable: a table written at the session's cut (sorted by its
// key, into a shared folder the sandbox allows) and read back by another
// session answers as the view did, with its types, and the statement's
// tables come from its parse.
func TestWriteReadTable(t *testing.T) {
	src := filepath.Join(t.TempDir(), "main")
	viewstest.Publish(t, src, viewstest.Table{Schema: "shop", Create: "CREATE TABLE orders (id INT PRIMARY KEY, total DECIMAL(8,2), note VARCHAR(20))",
		Rows: [][]any{{"3", "7.00", "c"}, {"1", "10.50", nil}, {"2", "3.25", "b"}}})
	shared := t.TempDir()
	ctx := context.Background()
	o := SessionOptions{Options: Options{SourceDir: src}, SharedDir: shared, Sandbox: true}
	a := openSession(t, o)
	b := openSession(t, o)
	const q = "SELECT id, total, typeof(total), note FROM shop.orders"
	want := queryLines(t, a, q+" ORDER BY id")
	path := filepath.Join(shared, "1.parquet")
	if err := a.WriteTable(ctx, "shop.orders", path); err != nil {
		t.Fatal(err)
	}
	if err := b.ReadTable(ctx, "shop.orders", path); err != nil {
		t.Fatal(err)
	}
	if got := queryLines(t, b, q); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the staged table, in its file's order:\n%s\nthe view:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := a.WriteTable(ctx, "shop.orders", filepath.Join(t.TempDir(), "elsewhere.parquet")); err == nil {
		t.Error("the sandbox let a session write outside its folders")
	}
	names, err := StatementTables(ctx, "SELECT * FROM shop.orders o JOIN (SELECT * FROM crm.news) n ON true")
	if err != nil || strings.Join(names, ",") != "crm.news,shop.orders" {
		t.Errorf("StatementTables: %v, %v", names, err)
	}
}

// queryLines runs q on s and prints its rows.
func queryLines(t *testing.T, s *Session, q string) []string {
	t.Helper()
	rows, _, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, v := range vals {
			parts = append(parts, fmt.Sprint(v))
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

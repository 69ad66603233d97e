package views

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

// TestBaseWithOverlay: a table read through its base (the snapshot's rows
// in a DuckDB file with an index on the key, written by one session and
// attached by another) with the tail's window laid over it answers every
// statement as the view of the snapshot and the window does: the whole
// table, a lookup by every key (kept, changed twice, deleted, inserted
// then deleted, inserted), with the same types. A table with no change
// reads its base alone; a table without a key, and a file outside the
// session's folders, are refused.
func TestBaseWithOverlay(t *testing.T) {
	src := filepath.Join(t.TempDir(), "main")
	orders := viewstest.Table{Schema: "shop", Create: "CREATE TABLE orders (id INT PRIMARY KEY, total DECIMAL(8,2), note VARCHAR(20))",
		Rows: [][]any{{"1", "10.50", "first"}, {"2", "3.25", nil}, {"3", "7.00", "new"}}}
	loose := viewstest.Table{Schema: "shop", Create: "CREATE TABLE loose (v INT)", Rows: [][]any{{"1"}}}
	id := viewstest.Publish(t, src, orders, news, loose)
	ctx := context.Background()
	first, second := `(2, '4.00', 'two', '[2]', 'u'), (3, '7.00', 'new', '[3]', 'd'), (4, '1.00', 'four', '[4]', 'u')`,
		`(2, '5.00', 'two again', '[2]', 'u'), (4, '1.00', 'four', '[4]', 'd'), (5, '2.00', NULL, '[5]', 'u')`
	win := writeWindow(t, src, id, "shop", "orders", "window.parquet", first+", "+second)
	// b reads the same changes as a window of two files (a tail cache's
	// segments): the second file's rows come after the first's.
	split := writeWindow(t, src, id, "shop", "orders", "window-1.parquet", first)
	split.Paths = append(split.Paths, writeWindow(t, src, id, "shop", "orders", "window-2.parquet", second).Paths...)
	shared := t.TempDir()
	open := func(win *Window) *Session {
		return openSession(t, SessionOptions{Options: Options{SourceDir: src, Exact: true}, SharedDir: shared, Sandbox: true,
			Tail: func(ctx context.Context, dir string) (*Tail, error) {
				return &Tail{Snapshot: id, Note: "cut: test", Windows: map[string]*Window{"shop.orders": win}, Files: map[string]string{}}, nil
			}})
	}
	a, b := open(win), open(split)
	queries := []string{"SELECT id, total, typeof(total), note FROM shop.orders ORDER BY id", "SELECT count(*), sum(total) FROM shop.orders"}
	for i := range 7 {
		queries = append(queries, fmt.Sprintf("SELECT id, total, note FROM shop.orders WHERE id = %d", i))
	}
	queries = append(queries, "SELECT * FROM crm.news ORDER BY id")
	var want [][]string
	for _, q := range queries {
		want = append(want, queryLines(t, a, q))
	}
	if !slices.Equal(want[0], []string{"1|10.5|DECIMAL(8,2)|first", "2|5|DECIMAL(8,2)|two again", "5|2|DECIMAL(8,2)|<nil>"}) {
		t.Fatalf("the view of the snapshot and the window: %v", want[0])
	}
	for i, q := range queries {
		if got := queryLines(t, b, q); !slices.Equal(got, want[i]) {
			t.Errorf("%s through a window of two files: %v, want %v", q, got, want[i])
		}
	}
	if a.CanUseBase("shop.loose") {
		t.Error("a table without a key can be read through a base")
	}
	if err := a.WriteBase(ctx, "shop.orders", filepath.Join(t.TempDir(), "elsewhere.duckdb")); err == nil {
		t.Error("the sandbox let a session write a base outside its folders")
	}
	for _, name := range []string{"shop.orders", "crm.news"} {
		path := filepath.Join(shared, strings.ReplaceAll(name, ".", "_")+".duckdb")
		if err := a.WriteBase(ctx, name, path); err != nil {
			t.Fatal(err)
		}
		for _, s := range []*Session{a, b} {
			if err := s.UseBase(ctx, name, path); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range []*Session{a, b} {
		for i, q := range queries {
			if got := queryLines(t, s, q); !slices.Equal(got, want[i]) {
				t.Errorf("%s through the base: %v, want %v", q, got, want[i])
			}
		}
	}
	// A lookup by a key the changes do not hold may read the base alone:
	// its SELECT answers as the view; a key they hold, a key not bound, a
	// literal that is not an integer may not.
	for _, c := range []struct {
		vals map[string]string
		ok   bool
	}{
		{map[string]string{"id": "1"}, true}, {map[string]string{"id": "007"}, true}, {map[string]string{"id": "2"}, false},
		{map[string]string{"id": "4"}, false}, {map[string]string{"id": "5"}, false}, {map[string]string{"id": "3"}, false},
		{map[string]string{"total": "1"}, false}, {map[string]string{"id": "1.5"}, false},
	} {
		q, ok := a.BaseLookup("shop.orders", c.vals)
		if ok != c.ok {
			t.Errorf("BaseLookup %v: %v, want %v", c.vals, ok, c.ok)
			continue
		}
		if ok {
			id := strings.TrimLeft(c.vals["id"], "0")
			lq := "SELECT id, total, note FROM (" + q + ") WHERE id = " + id
			if got, want := queryLines(t, a, lq), queryLines(t, a, "SELECT id, total, note FROM shop.orders WHERE id = "+id); !slices.Equal(got, want) {
				t.Errorf("%s: %v, the view %v", lq, got, want)
			}
		}
	}
	if _, ok := a.BaseLookup("crm.news", map[string]string{"id": "1"}); !ok {
		t.Error("a lookup of a table without changes may not read its base")
	}
	// Loading the views again (a new cut) leaves the base; UseBase lays the
	// new window over it.
	if _, err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.BaseLookup("shop.orders", map[string]string{"id": "1"}); ok {
		t.Error("after a reload, before UseBase, a lookup may read the base")
	}
	if err := a.UseBase(ctx, "shop.orders", filepath.Join(shared, "shop_orders.duckdb")); err != nil {
		t.Fatal(err)
	}
	if got := queryLines(t, a, queries[0]); !slices.Equal(got, want[0]) {
		t.Errorf("after a reload: %v", got)
	}
}

// writeWindow writes a window of table schema.table of snapshot id (its
// table file's columns, then the key's text k and the op o) holding rows,
// a VALUES list, in file name under src, and returns it.
func writeWindow(t *testing.T, src, id, schema, table, name, rows string) *Window {
	t.Helper()
	s := openSession(t, SessionOptions{Options: Options{SourceDir: src}})
	path := filepath.Join(src, name) // a folder the sandbox lets sessions read, as a tail's
	file := quoteString(filepath.Join(src, "snapshots", id, schema, table+".parquet"))
	for _, q := range []string{
		"CREATE TABLE w AS SELECT *, ''::VARCHAR AS k, ''::VARCHAR AS o FROM read_parquet(" + file + ") LIMIT 0",
		"INSERT INTO w VALUES " + rows,
		"COPY w TO " + quoteString(path) + " (FORMAT parquet)",
	} {
		if _, err := s.conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return &Window{Paths: []string{path}, KeyCol: "k", OpCol: "o", Events: 6,
		KeyMatch: func(l, r string) string { return quoteIdent(l) + `."id" = ` + quoteIdent(r) + `."id"` }}
}

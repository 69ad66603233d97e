package views

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

var (
	ordersV1 = viewstest.Table{Schema: "shop", Create: "CREATE TABLE orders (id INT PRIMARY KEY, total DECIMAL(8,2))",
		Rows: [][]any{{"1", "10.50"}, {"2", "3.25"}}}
	ordersV2 = viewstest.Table{Schema: "shop", Create: "CREATE TABLE orders (id INT PRIMARY KEY, total DECIMAL(8,2), note VARCHAR(20))",
		Rows: [][]any{{"1", "10.50", "first"}, {"2", "3.25", nil}, {"3", "7.00", "new"}}}
	gone = viewstest.Table{Schema: "shop", Create: "CREATE TABLE gone (id INT PRIMARY KEY)", Rows: [][]any{{"1"}}}
	news = viewstest.Table{Schema: "crm", Create: "CREATE TABLE news (id INT PRIMARY KEY, seen DATETIME)",
		Rows: [][]any{{"1", "2026-11-29 08:00:00"}}}
)

func TestSessionReadOnly(t *testing.T) {
	src := filepath.Join(t.TempDir(), "main")
	viewstest.Publish(t, src, ordersV1)
	s := openSession(t, SessionOptions{Options: Options{SourceDir: src}})
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "out.csv")
	for _, q := range []string{
		"COPY (SELECT 1) TO '" + out + "'",
		"EXPLAIN ANALYZE COPY (SELECT 1) TO '" + out + "'",
		"EXPLAIN (ANALYZE) COPY (SELECT 1) TO '" + out + "'",
		"CREATE TABLE x AS SELECT 1",
		"INSERT INTO shop.orders VALUES (9, 1)",
		"DROP VIEW shop.orders",
		"ATTACH '" + out + ".db' AS x",
		"SET memory_limit='64GB'",
		"INSTALL httpfs",
		"SELECT 1; SELECT 2",
	} {
		rows, _, err := s.Query(ctx, q)
		if err == nil {
			rows.Close()
			t.Errorf("%s: ran, want it refused", q)
		} else if !errors.Is(err, ErrNotReadOnly) && !strings.Contains(q, ";") && !strings.HasPrefix(q, "INSERT") {
			t.Errorf("%s: %v, want ErrNotReadOnly", q, err)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused COPY wrote its file")
	}
	for _, q := range []string{"SELECT * FROM shop.orders", "FROM shop.orders", "DESCRIBE shop.orders", "SHOW TABLES",
		"SUMMARIZE shop.orders", "WITH a AS (SELECT 1) SELECT * FROM a", "VALUES (1)", "EXPLAIN SELECT * FROM shop.orders",
		"EXPLAIN ANALYZE SELECT count(*) FROM shop.orders"} {
		rows, _, err := s.Query(ctx, q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		rows.Close()
	}
	// The bounds hold and cannot be changed.
	wantRows(t, s.conn, "SELECT current_setting('threads'), current_setting('TimeZone'), current_setting('lock_configuration')", "1|UTC|true")
	if _, err := s.conn.ExecContext(ctx, "SET threads=4"); err == nil {
		t.Fatal("SET threads ran in a locked session")
	}
}

func TestSessionFollowsShape(t *testing.T) {
	src := filepath.Join(t.TempDir(), "main")
	first := viewstest.Publish(t, src, ordersV1, gone)
	s := openSession(t, SessionOptions{Options: Options{SourceDir: src}})
	ctx := context.Background()
	if s.Snapshot() != first || len(s.Tables()) != 2 {
		t.Fatalf("session on %s with %d tables, want %s with 2", s.Snapshot(), len(s.Tables()), first)
	}
	// Same shape, other rows: the views read through current, no reload.
	viewstest.Publish(t, src, viewstest.Table{Schema: "shop", Create: ordersV1.Create, Rows: [][]any{{"5", "1.00"}}}, gone)
	if changed, err := s.Reload(ctx); err != nil || changed {
		t.Fatalf("reload after a publish of the same shape: changed %v, %v", changed, err)
	}
	wantRows(t, s.conn, "SELECT id, total::VARCHAR FROM shop.orders", "5|1.00")

	// A new column, a new table, a table dropped.
	second := viewstest.Publish(t, src, ordersV2, news)
	changed, err := s.Reload(ctx)
	if err != nil || !changed || s.Snapshot() != second {
		t.Fatalf("reload after a new shape: changed %v, snapshot %s, %v", changed, s.Snapshot(), err)
	}
	wantRows(t, s.conn, "SELECT id, note FROM shop.orders", "1|first", "2|<nil>", "3|new")
	wantRows(t, s.conn, "SELECT seen FROM crm.news", "2026-11-29 08:00:00 +0000 UTC")
	wantRows(t, s.conn, "SELECT table_schema || '.' || table_name FROM information_schema.tables", "crm.news", "shop.orders")

	// An older snapshot, pinned.
	old := openSession(t, SessionOptions{Options: Options{SourceDir: src, Snapshot: first}})
	wantRows(t, old.conn, "SELECT id, total::VARCHAR FROM shop.orders", "1|10.50", "2|3.25")
	wantRows(t, old.conn, "SELECT * FROM shop.gone", "1")

	if _, err := OpenSession(ctx, SessionOptions{Options: Options{SourceDir: src, Snapshot: "20200101T000000Z"}, MemoryLimit: "64MB", Threads: 1}); err == nil {
		t.Fatal("a session on a missing snapshot opened")
	}
	if _, err := OpenSession(ctx, SessionOptions{Options: Options{SourceDir: src, Snapshot: "../snapshots/" + first}, MemoryLimit: "64MB", Threads: 1}); err == nil {
		t.Fatal("a session on a snapshot id that is a path opened")
	}
	if _, err := OpenSession(ctx, SessionOptions{Options: Options{SourceDir: filepath.Join(src, "nothing")}, MemoryLimit: "64MB", Threads: 1}); err == nil {
		t.Fatal("a session on a source without snapshots opened")
	}
}

// TestQueryInterruptedByContext: a statement whose planning is the work
// (a constant folded while the plan is optimized) is interrupted when its
// context ends: the check, the bind and the plan all run under the
// context, none before it. Asserted by the error's kind, not by time.
func TestQueryInterruptedByContext(t *testing.T) {
	src := filepath.Join(t.TempDir(), "main")
	viewstest.Publish(t, src, ordersV1)
	s := openSession(t, SessionOptions{Options: Options{SourceDir: src}, Sandbox: true})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	rows, _, err := s.Query(ctx, "SELECT length(repeat('x', 100000000))")
	if err == nil {
		rows.Close()
		t.Fatal("the statement finished, want it interrupted")
	}
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("%v, want ErrInterrupted", err)
	}
	// The session answers the next statement.
	rows, _, err = s.Query(context.Background(), "SELECT count(*) FROM shop.orders")
	if err != nil {
		t.Fatalf("after an interrupt: %v", err)
	}
	rows.Close()
}

package views

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

func TestTypedType(t *testing.T) {
	for _, c := range []struct {
		col  schema.Column
		want string
	}{
		{schema.Column{Type: "decimal", Precision: 12, Scale: 2}, "DECIMAL(12,2)"},
		{schema.Column{Type: "decimal", Precision: 38, Scale: 38}, "DECIMAL(38,38)"},
		{schema.Column{Type: "decimal", Precision: 65, Scale: 30}, "DECIMAL(38,30)"},
		{schema.Column{Type: "decimal", Precision: 10, Scale: 0, Unsigned: true}, "DECIMAL(10,0)"},
		{schema.Column{Type: "numeric", Precision: 5, Scale: 1}, "DECIMAL(5,1)"},
		{schema.Column{Type: "decimal"}, ""}, // no precision: kept as text
		{schema.Column{Type: "date"}, "DATE"},
		{schema.Column{Type: "datetime", FSP: 6}, "TIMESTAMP"},
		{schema.Column{Type: "timestamp"}, "TIMESTAMP"},
		{schema.Column{Type: "time", FSP: 3}, "INTERVAL"},
		{schema.Column{Type: "year"}, ""},
		{schema.Column{Type: "int"}, ""},
		{schema.Column{Type: "varchar", Length: 10, Charset: "utf8mb4"}, ""},
		{schema.Column{Type: "json"}, ""},
	} {
		if got := typedType(&c.col); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.col, got, c.want)
		}
	}
}

// typedTable has a column of every typed class with edge values.
var typedTable = viewstest.Table{Schema: "shop", Create: `CREATE TABLE t (
  id INT NOT NULL PRIMARY KEY, price DECIMAL(12,2), big DECIMAL(65,30), d DATE, dt DATETIME(6),
  ts TIMESTAMP NULL, tm TIME(6), name VARCHAR(10))`,
	Rows: [][]any{
		{"1", "24.90", "12345678.123456789012345678901234567890", "2026-11-29", "2026-11-29 08:15:00.123456", "2026-11-29 08:15:00", "838:59:59.999999", "a"},
		{"2", "-0.05", "123456789.000000000000000000000000000000", "0000-00-00", "0000-00-00 00:00:00.000000", "0000-00-00 00:00:00", "-838:59:59.000000", "b"},
		{"3", "9999999999.99", "-0.000000000000000000000000000001", "2026-02-00", "2026-00-00 00:00:00.000000", "1970-01-01 00:00:01", "-00:00:00.000001", "c"},
		{"4", nil, nil, nil, nil, nil, nil, nil},
	}}

func TestTypedViews(t *testing.T) {
	src := filepath.Join(t.TempDir(), "main")
	viewstest.Publish(t, src, typedTable)
	typed := openSession(t, SessionOptions{Options: Options{SourceDir: src}})
	wantRows(t, typed.conn, `SELECT column_name || ' ' || column_type FROM (DESCRIBE shop.t)`,
		"id INTEGER", "price DECIMAL(12,2)", "big DECIMAL(38,30)", "d DATE", "dt TIMESTAMP", "ts TIMESTAMP",
		"tm INTERVAL", "name VARCHAR")
	wantRows(t, typed.conn, `SELECT id, price::VARCHAR, big::VARCHAR, d::VARCHAR, dt::VARCHAR, ts::VARCHAR, tm::VARCHAR FROM shop.t`,
		"1|24.90|12345678.123456789012345678901234567890|2026-11-29|2026-11-29 08:15:00.123456|2026-11-29 08:15:00|838:59:59.999999",
		// A zero date and a DECIMAL beyond 38 digits read as NULL; a negative TIME does not.
		"2|-0.05|<nil>|<nil>|<nil>|<nil>|-838:59:59",
		"3|9999999999.99|-0.000000000000000000000000000001|<nil>|<nil>|1970-01-01 00:00:01|-00:00:00.000001",
		"4|<nil>|<nil>|<nil>|<nil>|<nil>|<nil>")
	// Exact sums, comparisons, date arithmetic.
	wantRows(t, typed.conn, `SELECT sum(price)::VARCHAR, typeof(sum(price)) FROM shop.t`, "10000000024.84|DECIMAL(38,2)")
	wantRows(t, typed.conn, `SELECT id FROM shop.t WHERE dt >= TIMESTAMP '2026-11-29 08:15:00' AND dt < DATE '2026-11-29' + INTERVAL 1 DAY`, "1")
	wantRows(t, typed.conn, `SELECT id FROM shop.t WHERE tm < INTERVAL 0 SECOND`, "2", "3")
	wantRows(t, typed.conn, `SELECT id FROM shop.t WHERE ts < now() - INTERVAL 1 DAY`, "1", "3")

	raw := openSession(t, SessionOptions{Options: Options{SourceDir: src, Raw: true}})
	wantRows(t, raw.conn, `SELECT DISTINCT column_type FROM (DESCRIBE shop.t) WHERE column_name <> 'id'`, "VARCHAR")
	wantRows(t, raw.conn, `SELECT id, price, big, d, dt, ts, tm FROM shop.t WHERE id = 2`,
		"2|-0.05|123456789.000000000000000000000000000000|0000-00-00|0000-00-00 00:00:00.000000|0000-00-00 00:00:00|-838:59:59.000000")
}

// openSession opens a session with test bounds, closed at the end of t.
func openSession(t *testing.T, o SessionOptions) *Session {
	t.Helper()
	o.MemoryLimit, o.Threads, o.TempDir = "256MB", 1, t.TempDir()
	s, err := OpenSession(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

package views

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestExactTypedViews: with Options.Exact the values the typed views read
// as NULL keep their stored text (a DECIMAL beyond 38 digits as text, a
// zero date as a stand-in StoredTemporal reads back), also through a
// table staged at the cut (WriteTable, ReadTable); the others are typed.
func TestExactTypedViews(t *testing.T) {
	src := filepath.Join(t.TempDir(), "main")
	viewstest.Publish(t, src, typedTable)
	shared := t.TempDir()
	o := SessionOptions{Options: Options{SourceDir: src, Exact: true}, SharedDir: shared, Sandbox: true}
	exact := openSession(t, o)
	wantRows(t, exact.conn, `SELECT column_name || ' ' || column_type FROM (DESCRIBE shop.t)`,
		"id INTEGER", "price DECIMAL(12,2)", "big VARCHAR", "d DATE", "dt TIMESTAMP", "ts TIMESTAMP",
		"tm INTERVAL", "name VARCHAR")
	raw := openSession(t, SessionOptions{Options: Options{SourceDir: src, Raw: true}})
	want := strings.Join(queryLines(t, raw, "SELECT id, price, big, d, dt, ts, tm FROM shop.t ORDER BY id"), "\n")
	// Real dates stay typed: comparisons and arithmetic work.
	wantRows(t, exact.conn, `SELECT id FROM shop.t WHERE dt >= TIMESTAMP '2026-11-29 08:15:00' AND dt < DATE '2026-11-29' + INTERVAL 1 DAY`, "1")
	// Stand-ins sort first, the zero date before 2026-02-00.
	wantRows(t, exact.conn, `SELECT string_agg(id::VARCHAR, ',' ORDER BY d, id) FROM shop.t`, "2,3,1,4")
	staged := openSession(t, o)
	path := filepath.Join(shared, "t.parquet")
	if err := exact.WriteTable(context.Background(), "shop.t", path); err != nil {
		t.Fatal(err)
	}
	if err := staged.ReadTable(context.Background(), "shop.t", path); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Session{exact, staged} {
		rows, _, err := s.Query(context.Background(), "SELECT id, price, big, d, dt, ts, tm FROM shop.t ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var id int
			var price, big, tm any
			var d, dt, ts *time.Time
			if err := rows.Scan(&id, &price, &big, &d, &dt, &ts, &tm); err != nil {
				t.Fatal(err)
			}
			line := fmt.Sprint(id)
			for _, v := range []any{price, big} {
				line += "|" + strings.TrimSpace(fmt.Sprint(v))
			}
			line += "|" + storedText(d, "2006-01-02", 0) + "|" + storedText(dt, "2006-01-02 15:04:05", 6) + "|" + storedText(ts, "2006-01-02 15:04:05", 0) + "|" + fmt.Sprint(tm)
			got = append(got, line)
		}
		rows.Close()
		// The raw text of the DECIMAL(12,2) and TIME differ in form only
		// (the typed value's text), so compare the columns that matter.
		for i, line := range strings.Split(want, "\n") {
			w, g := strings.Split(line, "|"), strings.Split(got[i], "|")
			for _, c := range []int{2, 3, 4, 5} {
				if w[c] != g[c] {
					t.Errorf("row %d column %d: %q, stored %q", i+1, c, g[c], w[c])
				}
			}
		}
	}
}

// storedText is a DATE or TIMESTAMP of an exact view as its stored text
// (fsp fraction digits), "<nil>" for NULL.
func storedText(v *time.Time, layout string, fsp int) string {
	if v == nil {
		return "<nil>"
	}
	if s, ok := StoredTemporal(*v); ok {
		out := fmt.Sprintf("%04d-%02d-%02d", s.Year, s.Month, s.Day)
		if len(layout) > 10 {
			out += fmt.Sprintf(" %02d:%02d:%02d", s.Hour, s.Minute, s.Second)
		}
		if fsp > 0 {
			out += fmt.Sprintf(".%06d", s.Micro)[:1+fsp]
		}
		return out
	}
	out := v.UTC().Format(layout)
	if fsp > 0 {
		out += fmt.Sprintf(".%06d", v.Nanosecond()/1000)[:1+fsp]
	}
	return out
}

package views

import (
	"context"
	"database/sql"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport/exporttest"
	"github.com/dbtrail/dbtrail/testsuite"
)

// salesDDL is a table for the arithmetic of the typed views: amounts with
// negatives, times over three months with microseconds, negative TIMEs,
// and rows of the last hours (UTC) for now() - INTERVAL.
var salesDDL = []string{
	"CREATE TABLE " + exporttest.Schema2 + `.sales (id INT PRIMARY KEY, amount DECIMAL(12,2) NOT NULL,
  sold DATETIME(6) NOT NULL, day DATE, took TIME(3))`,
	"INSERT INTO " + exporttest.Schema2 + `.sales
  WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 1000)
  SELECT n, ((n * 7919) % 200000 - 100000) / 100,
    TIMESTAMP'2026-01-01 00:00:00' + INTERVAL n * 7777 SECOND + INTERVAL n MICROSECOND,
    DATE(TIMESTAMP'2026-01-01 00:00:00' + INTERVAL n * 7777 SECOND), SEC_TO_TIME(n * 37 - 18000 + 0.125) FROM s`,
	"INSERT INTO " + exporttest.Schema2 + `.sales
  WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 30)
  SELECT 2000 + n, n, UTC_TIMESTAMP(6) - INTERVAL n HOUR, NULL, NULL FROM s`,
}

// TestTypedViewsOnServer: the every-type fixture (with a chain pair) and a
// sales table, snapshotted from a live MariaDB, read through typed and raw
// views: each typed column has its DuckDB type; each typed value equals
// the stored text converted (NULL exactly where the documented rule says);
// raw views give the stored text; a DECIMAL sum, range queries on DATETIME
// and DATE, a TIME comparison and now() - INTERVAL return what MariaDB
// returns on the live tables.
func TestTypedViewsOnServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	src := testsuite.StartSource(t)
	exporttest.Tables(ctx, t, src)
	if err := src.Exec(ctx, salesDDL...); err != nil {
		t.Fatal(err)
	}
	db, err := src.DB(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	backups := t.TempDir()
	snap := exporttest.BuildSnapshot(ctx, t, db, backups, "main", []string{exporttest.Schema, exporttest.Schema2})
	exporttest.Chain(t, snap)
	if err := src.Exec(ctx, exporttest.ChainLive); err != nil {
		t.Fatal(err)
	}
	live := liveConn(ctx, t, db)
	srcDir := filepath.Join(backups, "main")
	typed := openSession(t, SessionOptions{Options: Options{SourceDir: srcDir}})
	raw := openSession(t, SessionOptions{Options: Options{SourceDir: srcDir, Raw: true}})

	for _, ref := range typed.Tables() {
		q := "SELECT count(*) FROM " + quoteIdent(ref.Schema) + "." + quoteIdent(ref.Table)
		want := rowsOf(t, live, "SELECT COUNT(*) FROM `"+ref.Schema+"`.`"+strings.ReplaceAll(ref.Table, "`", "``")+"`")
		wantRows(t, typed.conn, q, want...)
		wantRows(t, raw.conn, q, want...)
	}
	for _, table := range []string{"alltypes", "sales"} {
		ref := tableRef(t, typed, table)
		for i, c := range ref.Defs {
			checkColumn(t, typed, raw, live, ref, &c, ref.Columns[i])
		}
	}

	s2 := exporttest.Schema2
	for _, q := range []struct{ duck, maria string }{
		{"SELECT sum(amount)::VARCHAR, typeof(sum(amount)) FROM " + s2 + ".sales",
			"SELECT CAST(SUM(amount) AS CHAR), 'DECIMAL(38,2)' FROM " + s2 + ".sales"},
		{"SELECT id FROM " + s2 + ".sales WHERE sold >= TIMESTAMP '2026-02-01 00:00:00' AND sold < '2026-02-15 12:00:00.5'",
			"SELECT id FROM " + s2 + ".sales WHERE sold >= '2026-02-01 00:00:00' AND sold < '2026-02-15 12:00:00.5'"},
		{"SELECT id FROM " + s2 + ".sales WHERE sold > now() - INTERVAL 1 DAY",
			"SELECT id FROM " + s2 + ".sales WHERE sold > UTC_TIMESTAMP(6) - INTERVAL 1 DAY"},
		{"SELECT id FROM " + s2 + ".sales WHERE day BETWEEN DATE '2026-03-01' AND DATE '2026-03-01' + INTERVAL 6 DAY",
			"SELECT id FROM " + s2 + ".sales WHERE day BETWEEN '2026-03-01' AND '2026-03-07'"},
		{"SELECT id FROM " + s2 + ".sales WHERE took < INTERVAL '-1 hour'",
			"SELECT id FROM " + s2 + ".sales WHERE took < '-01:00:00'"},
		{"SELECT count(*), sum(amount)::VARCHAR FROM " + s2 + ".sales WHERE sold < TIMESTAMP '2026-01-15' + INTERVAL 36 HOUR",
			"SELECT COUNT(*), CAST(SUM(amount) AS CHAR) FROM " + s2 + ".sales WHERE sold < '2026-01-16 12:00:00'"},
	} {
		want := rowsOf(t, live, q.maria)
		if len(want) == 0 {
			t.Fatalf("%s: no rows on MariaDB", q.maria)
		}
		wantRows(t, typed.conn, q.duck, want...)
	}
}

// liveConn is a connection to the source with the session settings the
// snapshot was read with.
func liveConn(ctx context.Context, t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(ctx, "SET time_zone = '+00:00', NAMES utf8mb4"); err != nil {
		t.Fatal(err)
	}
	return conn
}

// tableRef returns the TableRef of the fixture table name.
func tableRef(t *testing.T, s *Session, name string) TableRef {
	t.Helper()
	for _, r := range s.Tables() {
		if r.Table == name {
			return r
		}
	}
	t.Fatalf("no table %s in %v", name, s.Tables())
	return TableRef{}
}

// checkColumn checks one column of ref: its DuckDB type in the typed and
// raw views, the raw text against the live value, and the typed value
// against the raw text converted by the documented rule.
func checkColumn(t *testing.T, typed, raw *Session, live *sql.Conn, ref TableRef, c *schema.Column, name string) {
	t.Helper()
	view := quoteIdent(ref.Schema) + "." + quoteIdent(ref.Table)
	col := quoteIdent(name)
	rawType := rowsOf(t, raw.conn, "SELECT typeof("+col+") FROM "+view+" LIMIT 1")[0]
	gotType := rowsOf(t, typed.conn, "SELECT typeof("+col+") FROM "+view+" LIMIT 1")[0]
	want := typedType(c)
	if want == "" {
		want = rawType
	}
	if gotType != want {
		t.Errorf("%s.%s (%s): typed view type %s, want %s", ref.Table, name, snapshot.MySQLType(c), gotType, want)
	}
	if typedType(c) == "" {
		// Presented as stored: typed and raw agree.
		q := "SELECT id, " + col + "::VARCHAR FROM " + view
		if a, b := rowsOf(t, typed.conn, q), rowsOf(t, raw.conn, q); !slices.Equal(a, b) {
			t.Errorf("%s.%s: typed %q, raw %q", ref.Table, name, a, b)
		}
		return
	}
	if rawType != "VARCHAR" {
		t.Errorf("%s.%s: raw view type %s, want VARCHAR", ref.Table, name, rawType)
	}
	stored := idMap(t, rowsOf(t, raw.conn, "SELECT id, "+col+" FROM "+view))
	liveText := idMap(t, rowsOf(t, live, "SELECT id, `"+name+"` FROM `"+ref.Schema+"`.`"+ref.Table+"`"))
	if !maps.Equal(stored, liveText) {
		t.Errorf("%s.%s: raw view %v, live %v", ref.Table, name, stored, liveText)
	}
	got := idMap(t, rowsOf(t, typed.conn, "SELECT id, "+typedText(c, col)+" FROM "+view))
	nulls := 0
	for id, text := range stored {
		want := "<nil>"
		if text != "<nil>" {
			want = convert(c, text)
		}
		if want == "<nil>" && text != "<nil>" {
			nulls++
		}
		if got[id] != want {
			t.Errorf("%s.%s id %s: stored %q, typed %q, want %q", ref.Table, name, id, text, got[id], want)
		}
	}
	t.Logf("%s.%s %s → %s: %d values, %d read as NULL", ref.Table, name, snapshot.MySQLType(c), gotType, len(stored), nulls)
}

// idMap turns "id|value" rows into a map.
func idMap(t *testing.T, rows []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, r := range rows {
		id, v, ok := strings.Cut(r, "|")
		if !ok {
			t.Fatalf("row %q", r)
		}
		m[id] = v
	}
	return m
}

// typedText is DuckDB SQL printing a typed column in MySQL's text form
// (the fraction with the column's digits; TIME as microseconds).
func typedText(c *schema.Column, col string) string {
	switch typedType(c) {
	case "DATE":
		return "strftime(" + col + ", '%Y-%m-%d')"
	case "TIMESTAMP":
		return "strftime(" + col + ", '%Y-%m-%d %H:%M:%S.%f')"
	case "INTERVAL":
		return "epoch_us(TIMESTAMP '2000-01-01' + " + col + ") - epoch_us(TIMESTAMP '2000-01-01')"
	}
	return col + "::VARCHAR"
}

// convert is the documented rule, independently of DuckDB: the stored text
// of c as typedText prints its typed value, or "<nil>" where it reads as
// NULL.
func convert(c *schema.Column, text string) string {
	switch typedType(c) {
	case "DATE":
		if _, err := time.Parse("2006-01-02", text); err != nil {
			return "<nil>"
		}
		return text
	case "TIMESTAMP":
		ts, err := time.Parse("2006-01-02 15:04:05.999999", text)
		if err != nil {
			return "<nil>"
		}
		return ts.Format("2006-01-02 15:04:05.000000")
	case "INTERVAL":
		return strconv.FormatInt(timeMicros(text), 10)
	}
	// DECIMAL: integer digits beyond 38 - scale do not fit.
	digits, _, _ := strings.Cut(strings.TrimPrefix(text, "-"), ".")
	if len(digits) > MaxDecimalPrecision-c.Scale {
		return "<nil>"
	}
	return text
}

// timeMicros reads MySQL TIME text ([-]H..H:MM:SS[.f]) as microseconds.
func timeMicros(text string) int64 {
	neg := strings.HasPrefix(text, "-")
	parts := strings.Split(strings.TrimPrefix(text, "-"), ":")
	h, _ := strconv.ParseInt(parts[0], 10, 64)
	m, _ := strconv.ParseInt(parts[1], 10, 64)
	whole, frac, _ := strings.Cut(parts[2], ".")
	s, _ := strconv.ParseInt(whole, 10, 64)
	us := (h*3600+m*60+s)*1e6 + fracMicros(frac)
	if neg {
		return -us
	}
	return us
}

// fracMicros reads up to six fraction digits as microseconds.
func fracMicros(frac string) int64 {
	n, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return n
}

package sqlport

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

// charsetTable has text columns of several character sets and collations.
var charsetTable = viewstest.Table{Schema: "shop",
	Create: "CREATE TABLE labels (id INT PRIMARY KEY, l1 VARCHAR(10) CHARACTER SET latin1, bin VARCHAR(10) COLLATE utf8mb4_bin, " +
		"uni VARCHAR(10) COLLATE utf8mb4_unicode_ci, ai VARCHAR(10) COLLATE utf8mb4_0900_ai_ci, plain VARCHAR(10), " +
		"vb VARBINARY(10), ts TIMESTAMP(3) NULL) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci",
	Rows: [][]any{{"1", "café", "b", "u", "a", "p", "x", "2026-12-01 23:30:00.250"}}}

func TestPortCollationIDs(t *testing.T) {
	addr := startPortWith(t, charsetTable)
	c, err := client.Connect(addr, "viewer", testSecret, "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ids := func(q string) (string, string) {
		t.Helper()
		res, err := c.Execute(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var out []string
		for _, f := range res.Fields {
			out = append(out, fmt.Sprint(f.Charset))
		}
		l1, _ := res.GetString(0, 1)
		return strings.Join(out, " "), l1
	}
	const q = "SELECT id, l1, bin, uni, ai, plain, vb, concat(plain, 'x') FROM labels"
	// Converted to the connection's character set (the handshake's: this
	// client's is utf8mb4_0900_ai_ci; or SET NAMES), as a MariaDB server
	// sends them.
	if got, l1 := ids(q); got != "63 255 255 255 255 255 63 255" || l1 != "café" {
		t.Errorf("handshake's charset: ids %s, l1 %q", got, l1)
	}
	c.Execute("SET NAMES utf8mb3")
	if got, _ := ids(q); got != "63 33 33 33 33 33 63 33" {
		t.Errorf("SET NAMES utf8mb3: ids %s", got)
	}
	c.Execute("SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci")
	if got, _ := ids(q); got != "63 224 224 224 224 224 63 224" {
		t.Errorf("SET NAMES … COLLATE utf8mb4_unicode_ci: ids %s", got)
	}
	// No conversion: each column's own collation, latin1's text in latin1.
	c.Execute("SET character_set_results = NULL")
	if got, l1 := ids(q); got != "63 8 46 224 255 45 63 45" || l1 != "caf\xe9" {
		t.Errorf("character_set_results NULL: ids %s, l1 %q", got, l1)
	}
	fields, err := c.FieldList("labels", "l%")
	if err != nil || len(fields) != 1 || fields[0].Charset != 8 {
		t.Errorf("COM_FIELD_LIST's charset: %v %v", fields, err)
	}
	c.Execute("SET NAMES latin1")
	if got, l1 := ids(q); got != "63 8 8 8 8 8 63 8" || l1 != "caf\xe9" {
		t.Errorf("SET NAMES latin1: ids %s, l1 %q", got, l1)
	}
}

func TestPortPrepareColumns(t *testing.T) {
	addr := startPortWith(t, shopOrders)
	c, err := client.Connect(addr, "viewer", testSecret, "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for q, want := range map[string]string{
		"SELECT id, note, total, placed FROM orders WHERE id > ? AND note <> ?": "2 id:3:unsigned note:253 total:246 placed:12",
		"SELECT count(*) AS n, max(total) FROM orders":                          "0 n:8 max(total):246",
		"SELECT @@version, @@dbtrail_at":                                        "0 @@version:253 @@dbtrail_at:253",
		"SHOW TABLES":                                                           "0 Tables_in_shop:253",
		"SET @@dbtrail_at = ?":                                                  "1",
		"SELECT * FROM missing WHERE id = ?":                                    "1", // its execution tells the error
	} {
		st, err := c.Prepare(q)
		if err != nil {
			t.Fatalf("prepare %s: %v", q, err)
		}
		fields, err := st.GetColumnFields()
		if err != nil {
			t.Fatal(err)
		}
		got := []string{fmt.Sprint(st.ParamNum())}
		for _, f := range fields {
			s := fmt.Sprintf("%s:%d", f.Name, f.Type)
			if f.Flag&mysql.UNSIGNED_FLAG != 0 {
				s += ":unsigned"
			}
			got = append(got, s)
		}
		if st.ColumnNum() != len(fields) || strings.Join(got, " ") != want {
			t.Errorf("prepare %s: %d columns %q; want %q", q, st.ColumnNum(), strings.Join(got, " "), want)
		}
		if strings.HasPrefix(q, "SELECT id") {
			res, err := st.Execute(1, "x")
			if err != nil || len(res.Values) != 1 || len(res.Fields) != 4 {
				t.Errorf("execute %s: %v %v", q, res, err)
			}
		}
		st.Close()
	}
	// go-sql-driver's prepared statements read the told columns.
	db := openPortDB(t, addr, "shop")
	st, err := db.Prepare("SELECT id, note FROM orders WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var id int
	var note string
	if err := st.QueryRow(1).Scan(&id, &note); err != nil || id != 1 || note != "first" {
		t.Errorf("go-sql-driver prepared: %d %q %v", id, note, err)
	}
}

func TestPortTimeZone(t *testing.T) {
	addr := startPortWith(t, charsetTable)
	db := openPortDB(t, addr, "shop")
	cut := mustAnswer(t, db, "SELECT @@dbtrail_cut")
	var id string
	if _, err := fmt.Sscanf(cut, "cut: snapshot %s", &id); err != nil {
		t.Fatalf("@@dbtrail_cut %q: %v", cut, err)
	}
	snap, err := time.Parse("20060102T150405", id[:15])
	if err != nil {
		t.Fatal(err)
	}
	check := func(zone string, loc *time.Location) {
		t.Helper()
		at := snap.In(loc)
		want := at.Format("2006-01-02 15:04:05") + "|" + at.Format("2006-01-02") + "|" + at.Format("15:04:05") + "|" +
			snap.Format("2006-01-02 15:04:05") + "|" + zone + "|" +
			time.Date(2026, 12, 1, 23, 30, 0, 250e6, time.UTC).In(loc).Format("2006-01-02 15:04:05.000")
		q := "SELECT NOW(), CURDATE(), CURTIME(), UTC_TIMESTAMP(), @@time_zone, ts FROM labels"
		if got := mustAnswer(t, db, q); got != want {
			t.Errorf("time_zone %s: %q; want %q", zone, got, want)
		}
		// The binary protocol (a prepared statement) answers the same
		// TIMESTAMP column.
		if got, want := mustAnswerPrepared(t, db, "SELECT @@time_zone, ts FROM labels"), want[strings.Index(want, zone+"|"):]; got != want {
			t.Errorf("time_zone %s, prepared: %q; want %q", zone, got, want)
		}
		// A TIMESTAMP compared with string literals compares in the
		// session's zone: the literal is a time there, as in MySQL.
		local := time.Date(2026, 12, 1, 23, 30, 0, 250e6, time.UTC).In(loc)
		for q, want := range map[string]string{
			"SELECT id FROM labels WHERE ts = '" + local.Format("2006-01-02 15:04:05.000") + "'":                                            "1",
			"SELECT id FROM labels WHERE ts > '" + local.Add(-time.Second).Format("2006-01-02 15:04:05") + "' ORDER BY ts":                  "1",
			"SELECT id FROM labels WHERE ts BETWEEN '" + local.Format("2006-01-02") + "' AND '" + local.Format("2006-01-02 15:04") + ":59'": "1",
			"SELECT id FROM labels WHERE ts IN ('" + local.Format("2006-01-02 15:04:05") + ".25', '2000-01-01') GROUP BY id, ts":            "1",
			"SELECT id FROM labels WHERE ts < '" + local.Format("2006-01-02 15:04:05") + "'":                                                "",
			"SELECT count(ts), count(*) FROM labels WHERE ts IS NOT NULL AND NOT (ts IS NULL)":                                              "1|1",
		} {
			if got := mustAnswer(t, db, q); got != want {
				t.Errorf("time_zone %s: %s = %q; want %q", zone, q, got, want)
			}
		}
		// Any other use would answer in UTC: refused at another zone.
		for _, q := range []string{"SELECT date(ts) FROM labels", "SELECT max(ts) FROM labels", "SELECT ts AS t FROM labels",
			"SELECT id FROM labels WHERE ts < NOW()", "SELECT id FROM labels WHERE ts = 20261201"} {
			_, err := answer(t, db, q)
			var my *gomysql.MySQLError
			refused := errors.As(err, &my) && my.Number == mysql.ER_NOT_SUPPORTED_YET && strings.Contains(my.Message, "TIMESTAMP column ts")
			if utc := loc == time.UTC; refused == utc {
				t.Errorf("time_zone %s: %s: %v; want refused %v", zone, q, err, !utc)
			}
		}
	}
	check("UTC", time.UTC)
	mustExec(t, db, "SET time_zone = '+02:00'")
	check("+02:00", time.FixedZone("+02:00", 2*3600))
	if got := mustAnswer(t, db, "SELECT FROM_UNIXTIME(0), UNIX_TIMESTAMP('1970-01-01 02:00:01')"); got != "1970-01-01 02:00:00|1" {
		t.Errorf("FROM_UNIXTIME/UNIX_TIMESTAMP at +02:00: %q", got)
	}
	mustExec(t, db, "SET SESSION time_zone = 'Europe/Berlin', NAMES utf8mb4")
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	check("Europe/Berlin", berlin)
	if _, err := answer(t, db, "SELECT FROM_UNIXTIME(0)"); err == nil || !strings.Contains(err.Error(), "fixed offset") {
		t.Errorf("FROM_UNIXTIME in a named zone: %v; want a refusal naming it", err)
	}
	for _, bad := range []string{"SET time_zone = 'Nowhere/Zone'", "SET time_zone = '+15:00'", "SET @@time_zone = '../etc/passwd'"} {
		_, err := db.Exec(bad)
		var my *gomysql.MySQLError
		if !errors.As(err, &my) || my.Number != mysql.ER_UNKNOWN_TIME_ZONE {
			t.Errorf("%s: %v; want error 1298", bad, err)
		}
	}
	mustExec(t, db, "SET time_zone = 'SYSTEM'")
	check("SYSTEM", time.UTC)
	mustExec(t, db, "SET time_zone = '-03:30'")
	check("-03:30", time.FixedZone("-03:30", -(3*3600+30*60)))
	mustExec(t, db, "SET time_zone = DEFAULT")
	check("SYSTEM", time.UTC)
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// mustAnswerPrepared is mustAnswer of q as a prepared statement (the
// binary protocol).
func mustAnswerPrepared(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	return mustAnswerPreparedArgs(t, db, q)
}

// mustAnswerPreparedArgs is mustAnswerPrepared with parameters.
func mustAnswerPreparedArgs(t *testing.T, db *sql.DB, q string, args ...any) string {
	t.Helper()
	st, err := db.Prepare(q)
	if err != nil {
		t.Fatalf("prepare %s: %v", q, err)
	}
	defer st.Close()
	rows, err := st.Query(args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	out, err := textRows(rows)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Join(out, "\n")
}

// zeroTable holds values a typed view cannot hold: zero and impossible
// dates, a DECIMAL beyond 38 digits.
var zeroTable = viewstest.Table{Schema: "shop",
	Create: "CREATE TABLE z (id INT PRIMARY KEY, d DATE, dt DATETIME(3), ts TIMESTAMP NULL, big DECIMAL(65,30), p DECIMAL(5,2))",
	Rows: [][]any{
		{"1", "0000-00-00", "0000-00-00 00:00:00.000", "0000-00-00 00:00:00", "123456789012345678901234567890.123456789012345678901234567890", "1.50"},
		{"2", "2024-00-10", "2024-00-10 12:34:56.789", "2024-02-30 01:02:03", "-99999999999999999999999999999999999.999999999999999999999999999999", "-2.00"},
		{"3", "2026-12-01", "2026-12-01 10:41:59.001", "2026-12-01 10:41:59", "0.000000000000000000000000000001", "0.00"},
		{"4", nil, nil, nil, nil, nil},
	}}

// TestPortExactValues: the values a typed view cannot hold come out as
// the source stored them, in the text and the binary protocol, with the
// column's MySQL type; min() of a zero date is the zero date.
func TestPortExactValues(t *testing.T) {
	addr := startPortWith(t, zeroTable)
	db := openPortDB(t, addr, "shop")
	want := "1|0000-00-00|0000-00-00 00:00:00.000|0000-00-00 00:00:00|123456789012345678901234567890.123456789012345678901234567890|1.50\n" +
		"2|2024-00-10|2024-00-10 12:34:56.789|2024-02-30 01:02:03|-99999999999999999999999999999999999.999999999999999999999999999999|-2.00\n" +
		"3|2026-12-01|2026-12-01 10:41:59.001|2026-12-01 10:41:59|0.000000000000000000000000000001|0.00\n" +
		"4|||||"
	const q = "SELECT id, d, dt, ts, big, p FROM z ORDER BY id"
	if got := mustAnswer(t, db, q); got != want {
		t.Errorf("text protocol:\n%s\nwant\n%s", got, want)
	}
	if got := mustAnswerPrepared(t, db, q); got != want {
		t.Errorf("binary protocol:\n%s\nwant\n%s", got, want)
	}
	if got := mustAnswer(t, db, "SELECT min(d), max(d) FROM z WHERE id <> 2"); got != "0000-00-00|2026-12-01" {
		t.Errorf("min/max of dates with a zero date: %q", got)
	}
	// A real date computes; a zero or impossible one in a function, or an
	// impossible one (not the zero date) compared, ordered or in min/max,
	// would answer for its stand-in: the statement fails naming the column.
	for q, want := range map[string]string{
		"SELECT YEAR(d), DATE_ADD(dt, INTERVAL 1 DAY) FROM z WHERE id = 3": "2026|2026-12-02 10:41:59.001",
		"SELECT id FROM z WHERE d < '2000-01-01' AND id <> 2":              "1",
		"SELECT id FROM z WHERE id <> 2 ORDER BY d DESC, id":               "3\n1\n4",
		// As it is under DISTINCT, a UNION's ORDER BY and an alias; a
		// simple CASE's compared operand.
		"SELECT DISTINCT d FROM z WHERE id <> 2 ORDER BY d":                                       "\n0000-00-00\n2026-12-01",
		"SELECT d FROM z WHERE id = 3 UNION ALL SELECT d FROM z WHERE id = 1 ORDER BY d":          "0000-00-00\n2026-12-01",
		"SELECT big AS amount FROM z WHERE id = 3":                                                "0.000000000000000000000000000001",
		"SELECT CASE d WHEN '2026-12-01' THEN 1 WHEN '2026-12-02' THEN 2 END FROM z WHERE id = 3": "1",
		// NULL sorts first ascending, last descending, as in MySQL.
		"SELECT id FROM z ORDER BY p":      "4\n2\n3\n1",
		"SELECT id FROM z ORDER BY p DESC": "1\n3\n2\n4",
	} {
		if got := mustAnswer(t, db, q); got != want {
			t.Errorf("%s = %q; want %q", q, got, want)
		}
	}
	// A guarded item keeps its name as written, as MySQL names it.
	if rows, err := db.Query("SELECT YEAR(d), id FROM z WHERE id = 3"); err != nil {
		t.Errorf("a guarded item: %v", err)
	} else {
		cols, _ := rows.Columns()
		rows.Close()
		if strings.Join(cols, ",") != "YEAR(d),id" {
			t.Errorf("a guarded item's column names %q, want YEAR(d),id", cols)
		}
	}
	for q, says := range map[string]string{
		"SELECT YEAR(d) FROM z":                                   "column d holds a date with a zero or impossible part",
		"SELECT DATE_ADD(dt, INTERVAL 1 DAY) FROM z WHERE id = 1": "column dt holds a date with a zero or impossible part",
		"SELECT id FROM z ORDER BY d":                             "column d holds a date with an impossible part",
		"SELECT min(ts) FROM z":                                   "column ts holds a date with an impossible part",
		"SELECT id FROM z WHERE d > '2024-01-01'":                 "column d holds a date with an impossible part",
	} {
		if _, err := answer(t, db, q); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v; want an error saying %q", q, err, says)
		}
	}
	rows, err := db.Query("SELECT d, dt, ts, big FROM z")
	if err != nil {
		t.Fatal(err)
	}
	cts, err := rows.ColumnTypes()
	rows.Close()
	var types []string
	for _, ct := range cts {
		types = append(types, ct.DatabaseTypeName())
	}
	if err != nil || strings.Join(types, " ") != "DATE DATETIME TIMESTAMP DECIMAL" {
		t.Errorf("column types %v %v", types, err)
	}
	// The DECIMAL beyond 38 digits is its exact text: as it is, grouped,
	// counted or tested for NULL it answers; compared, ordered or computed
	// it would answer as text, so it is refused naming the column.
	for q, want := range map[string]string{
		"SELECT z.big FROM z WHERE id = 3":                      "0.000000000000000000000000000001",
		"SELECT count(big), count(DISTINCT big) FROM z":         "3|3",
		"SELECT id FROM z WHERE big IS NULL":                    "4",
		"SELECT big, count(*) FROM z WHERE id = 3 GROUP BY big": "0.000000000000000000000000000001|1",
		"SELECT id FROM z WHERE p > 0 ORDER BY p":               "1",
	} {
		if got := mustAnswer(t, db, q); got != want {
			t.Errorf("%s = %q; want %q", q, got, want)
		}
	}
	for _, q := range []string{"SELECT id FROM z WHERE big > '0'", "SELECT id FROM z ORDER BY big", "SELECT max(big) FROM z",
		"SELECT id FROM z WHERE id <> 2 AND big > '0'", "SELECT big FROM z ORDER BY 1",
		"SELECT big + 1 FROM z", "SELECT id FROM z WHERE z.big = '0.000000000000000000000000000001'", "SELECT CONCAT(big, '') FROM z"} {
		_, err := answer(t, db, q)
		var my *gomysql.MySQLError
		if !errors.As(err, &my) || my.Number != 1235 || !strings.Contains(my.Message, "DECIMAL(65,30) column") {
			t.Errorf("%s: %v; want error 1235 naming the DECIMAL(65,30) column", q, err)
		}
	}
}

// padTable has text columns under PAD SPACE collations (MariaDB's: the
// charset's default, _bin) and a NO PAD one (MySQL 8's _0900_), with
// values ending in spaces.
var padTable = viewstest.Table{Schema: "shop",
	Create: "CREATE TABLE pads (id INT PRIMARY KEY, ci VARCHAR(10), bin VARCHAR(10) COLLATE utf8mb4_bin, " +
		"nopad VARCHAR(10) COLLATE utf8mb4_0900_ai_ci) DEFAULT CHARSET=utf8mb4",
	Rows: [][]any{{"1", "a", "a", "a"}, {"2", "b  ", "b  ", "b  "}, {"3", "A", "A", "A"}}}

// TestPortPadSpace: comparisons (not LIKE) of a column under a PAD SPACE
// collation do not count trailing spaces, on either side; under a NO PAD
// one they do.
func TestPortPadSpace(t *testing.T) {
	addr := startPortWith(t, padTable)
	db := openPortDB(t, addr, "shop")
	for q, want := range map[string]string{
		"SELECT id FROM pads WHERE ci = 'a  ' ORDER BY id":                 "1\n3",
		"SELECT id FROM pads WHERE ci = 'b'":                               "2",
		"SELECT id FROM pads WHERE 'B ' = ci":                              "2",
		"SELECT id FROM pads WHERE ci IN ('x', 'b ')":                      "2",
		"SELECT id FROM pads WHERE ci <> 'b' ORDER BY id":                  "1\n3",
		"SELECT id FROM pads WHERE bin = 'a '":                             "1",
		"SELECT id FROM pads WHERE bin = 'b'":                              "2",
		"SELECT id FROM pads p WHERE p.ci = p.bin ORDER BY id":             "1\n2\n3",
		"SELECT id FROM pads WHERE ci LIKE 'b'":                            "",
		"SELECT id FROM pads WHERE nopad = 'b'":                            "",
		"SELECT id FROM pads WHERE nopad = 'B  '":                          "2",
		"SELECT ci, length(ci) FROM pads WHERE id = 2":                     "b  |3",
		"SELECT id FROM pads WHERE ci = 'it''s  ' OR ci = ' a' ORDER BY 1": "",
		// Any expression compared with a padded column loses its trailing
		// spaces too.
		"SELECT id FROM pads WHERE ci = concat('a', ' ') ORDER BY id":                                     "1\n3",
		"SELECT id FROM pads WHERE lower(concat('B', '  ')) = ci":                                         "2",
		"SELECT id FROM pads WHERE ci IN (IFNULL(NULL, 'b '), 'zz')":                                      "2",
		"SELECT id FROM pads WHERE bin = CAST('b' AS CHAR)":                                               "2",
		"SELECT id FROM pads WHERE nopad = concat('b', ' ')":                                              "",
		"SELECT id FROM pads WHERE ci = CASE WHEN id > 0 THEN 'b ' END":                                   "2",
		"SELECT id FROM pads WHERE (ci = (concat('b', ' '))) AND id > 1":                                  "2",
		"SELECT id FROM pads WHERE ci BETWEEN concat('b', ' ') AND 'b  '":                                 "2",
		"SELECT p.id FROM pads p JOIN pads q ON p.ci = lower(q.ci) JOIN pads r ON r.id = q.id ORDER BY 1": "1\n1\n2\n3\n3",
		"SELECT id FROM pads WHERE ci = lower('B ') -- a comment\n AND id > 0":                            "2",
		"SELECT id FROM pads WHERE ci IN (SELECT 'B' AS v)":                                               "2",
		"SELECT id FROM pads WHERE ci NOT IN (SELECT 'b ') ORDER BY id":                                   "1\n3",
		"SELECT id FROM pads p WHERE p.ci = ANY (SELECT q.bin FROM pads q WHERE q.id = 2)":                "2",
		"SELECT id FROM pads WHERE ci = coalesce(NULL, 'b ') OR ci = 'x'":                                 "2",
	} {
		if got := mustAnswer(t, db, q); got != want {
			t.Errorf("%s = %q; want %q", q, got, want)
		}
	}
	// A prepared statement's parameters compare padded too: their own
	// trailing spaces do not count either, unless the collation is NO PAD.
	for _, c := range []struct{ q, arg, want string }{
		{"SELECT id FROM pads WHERE ci = ?", "b", "2"},
		{"SELECT id FROM pads WHERE ci = ? ORDER BY id", "a   ", "1\n3"},
		{"SELECT id FROM pads WHERE ? = bin", "b ", "2"},
		{"SELECT id FROM pads WHERE ci IN (?, 'zz') AND id > 0", "b    ", "2"},
		{"SELECT id FROM pads WHERE ci LIKE ?", "b", ""},
		{"SELECT id FROM pads WHERE nopad = ?", "b", ""},
		{"SELECT id FROM pads WHERE nopad = ?", "b  ", "2"},
	} {
		if got := mustAnswerPreparedArgs(t, db, c.q, c.arg); got != c.want {
			t.Errorf("%s with %q under PAD SPACE: %q; want %q", c.q, c.arg, got, c.want)
		}
	}
	// A subquery would compare its trailing spaces: refused.
	for _, q := range []string{"SELECT id FROM pads WHERE ci = (SELECT 'b ')"} {
		_, err := answer(t, db, q)
		var my *gomysql.MySQLError
		if !errors.As(err, &my) || my.Number != 1235 || !strings.Contains(my.Message, "text column ci") {
			t.Errorf("%s: %v; want error 1235 naming ci", q, err)
		}
	}
}

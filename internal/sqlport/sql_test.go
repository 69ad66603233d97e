package sqlport

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

// shopOrders is a table with a _ci text column (the table's default
// collation), a _bin one, a DuckDB keyword for a column name and an index.
var shopOrders = viewstest.Table{Schema: "shop",
	Create: "CREATE TABLE orders (id INT UNSIGNED PRIMARY KEY, total DECIMAL(10,2), note VARCHAR(20), " +
		"code VARCHAR(10) COLLATE utf8mb4_bin, placed DATETIME(6), at INT, customer_id INT NOT NULL, KEY k_customer (customer_id)) " +
		"DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci",
	Rows: [][]any{
		{"1", "10.50", "first", "abc", "2026-12-01 10:41:59.000001", "5", "7"},
		{"2", "-0.07", nil, "ABC", "2026-12-02 00:00:00", "6", "7"},
		{"3", "1000.00", "it's", "x", nil, nil, "8"},
	}}

// openPortDB is openPort with the DSN's database db.
func openPortDB(t *testing.T, addr, db string) *sql.DB {
	t.Helper()
	c, err := sql.Open("mysql", fmt.Sprintf("viewer:%s@tcp(%s)/%s?interpolateParams=true", testSecret, addr, db))
	if err != nil {
		t.Fatal(err)
	}
	c.SetMaxOpenConns(1)
	t.Cleanup(func() { c.Close() })
	return c
}

// answer is the rows of q as text, each row's values joined by | (NULL
// empty).
func answer(t *testing.T, db *sql.DB, q string, args ...any) ([]string, error) {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	return textRows(rows)
}

// textRows reads and closes rows: each row's values as text joined by |
// (NULL empty).
func textRows(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = v.String
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out, rows.Err()
}

func mustAnswer(t *testing.T, db *sql.DB, q string, args ...any) string {
	t.Helper()
	rows, err := answer(t, db, q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Join(rows, "\n")
}

func TestPortUnqualifiedNames(t *testing.T) {
	addr := startPortWith(t, shopOrders)
	// The DSN's database (the handshake's).
	db := openPortDB(t, addr, "shop")
	if got := mustAnswer(t, db, "SELECT count(*) FROM orders"); got != "3" {
		t.Errorf("count(*) FROM orders after the DSN's database = %s", got)
	}
	if got := mustAnswer(t, db, "SELECT o.id, o.at FROM orders AS o JOIN shop.orders p ON p.id = o.id WHERE o.at > 5 ORDER BY 1"); got != "2|6" {
		t.Errorf("a join of unqualified and qualified names, column at unquoted = %q", got)
	}
	if got := mustAnswer(t, db, "SELECT at FROM orders WHERE id = 1"); got != "5" {
		t.Errorf("the column at, unquoted = %q", got)
	}
	if got := mustAnswer(t, db, "WITH orders AS (SELECT 42 AS id) SELECT id FROM orders"); got != "42" {
		t.Errorf("a CTE named as a table = %q", got)
	}
	// USE (COM_QUERY) and COM_INIT_DB.
	none := openPort(t, addr, "viewer", testSecret)
	var my *gomysql.MySQLError
	if _, err := answer(t, none, "SELECT * FROM orders"); !errors.As(err, &my) || my.Number != 1046 {
		t.Errorf("no database selected: %v, want 1046", err)
	}
	if got := mustAnswer(t, none, "SELECT count(*) FROM `shop`.orders"); got != "3" {
		t.Errorf("qualified = %s", got)
	}
	conn, err := none.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "USE shop"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRowContext(t.Context(), "SELECT count(*) FROM `orders` WHERE id IN (SELECT id FROM orders)").Scan(&n); err != nil || n != 3 {
		t.Errorf("after USE: %d, %v", n, err)
	}
	if _, err := answer(t, db, "SELECT * FROM nosuch"); !errors.As(err, &my) || my.Number != 1146 {
		t.Errorf("an unknown table: %v, want 1146", err)
	}
	// A prepared statement (no interpolateParams: COM_STMT_PREPARE and
	// EXECUTE) is translated as a text one.
	prep, err := sql.Open("mysql", fmt.Sprintf("viewer:%s@tcp(%s)/shop", testSecret, addr))
	if err != nil {
		t.Fatal(err)
	}
	defer prep.Close()
	var note string
	if err := prep.QueryRow("SELECT IFNULL(note, '-') FROM orders WHERE id = ? AND note = ?", 1, "FIRST").Scan(&note); err != nil || note != "first" {
		t.Errorf("prepared, unqualified, _ci: %q, %v", note, err)
	}
	bad := openPortDB(t, addr, "nosuch")
	if err := bad.Ping(); !errors.As(err, &my) || my.Number != 1049 {
		t.Errorf("an unknown database in the DSN: %v, want 1049", err)
	}
}

func TestPortFunctions(t *testing.T) {
	addr := startPortWith(t, shopOrders)
	db := openPortDB(t, addr, "shop")
	for q, want := range map[string]string{
		"SELECT id, IFNULL(note, '-') FROM orders ORDER BY id":                                       "1|first\n2|-\n3|it's",
		"SELECT CONCAT(id, ':', note), CONCAT('a', NULL) FROM orders WHERE id < 3 ORDER BY id":       "1:first|\n|",
		"SELECT GROUP_CONCAT(id ORDER BY id DESC SEPARATOR '|') FROM orders":                         "3|2|1",
		"SELECT GROUP_CONCAT(DISTINCT customer_id) FROM orders":                                      "7,8",
		"SELECT customer_id, GROUP_CONCAT(note) FROM orders GROUP BY customer_id ORDER BY 1":         "7|first\n8|it's",
		"SELECT DATE_FORMAT(placed, '%Y-%m-%d %H:%i:%s.%f %W %b %e %j %p') FROM orders WHERE id = 1": "2026-12-01 10:41:59.000001 Tuesday Dec 1 335 AM",
		"SELECT IFNULL(placed, 'never') FROM orders WHERE id > 1 ORDER BY id":                        "2026-12-02 00:00:00\nnever",
		"SELECT DATE_FORMAT(NULL, '%Y')":                                                             "",
		"SELECT LENGTH('é'), CHAR_LENGTH('é')":                                                       "2|1",
		"SELECT DATABASE(), @@version_comment LIKE '%dbtrail%'":                                      "shop|1",
		"SELECT CONVERT_TZ('2026-07-01 12:00:00', '+00:00', '+02:00')":                               "2026-07-01 14:00:00",
		"SELECT CONVERT_TZ('2026-07-01 12:00:00', 'Europe/Berlin', 'UTC')":                           "2026-07-01 10:00:00",
		"SELECT CONVERT_TZ('2026-01-15 12:00:00', 'SYSTEM', 'Europe/Berlin')":                        "2026-01-15 13:00:00",
		"SELECT CONVERT_TZ('2026-07-01 12:00:00', '+05:30', 'America/New_York')":                     "2026-07-01 02:30:00",
		"SELECT CONVERT_TZ('2026-07-01 12:00:00', 'UTC', 'No/Such')":                                 "",
		"SELECT CONVERT_TZ(placed, 'UTC', '-03:00') FROM orders WHERE id = 1":                        "2026-12-01 07:41:59.000001",
	} {
		if got := mustAnswer(t, db, q); got != want {
			t.Errorf("%s\n = %q\nwant %q", q, got, want)
		}
	}
	// NOW() and CURDATE() are the moment's: here the snapshot's time (the
	// port reads the snapshot alone), which @@dbtrail_cut names.
	cut := mustAnswer(t, db, "SELECT @@dbtrail_cut")
	var id string
	if _, err := fmt.Sscanf(cut, "cut: snapshot %s", &id); err != nil {
		t.Fatalf("@@dbtrail_cut %q: %v", cut, err)
	}
	want := id[0:4] + "-" + id[4:6] + "-" + id[6:8] + " " + id[9:11] + ":" + id[11:13] + ":" + id[13:15]
	if got := mustAnswer(t, db, "SELECT NOW(), CURRENT_TIMESTAMP, CURDATE()"); got != want+"|"+want+"|"+want[:10] {
		t.Errorf("NOW(), CURRENT_TIMESTAMP, CURDATE() = %q; want the snapshot's time %s", got, want)
	}
	for q, named := range map[string]string{
		"SELECT DATE_FORMAT(placed, '%D') FROM orders": "%D",
		"SELECT SQL_CALC_FOUND_ROWS * FROM orders":     "SQL_CALC_FOUND_ROWS",
		"SELECT * FROM orders WHERE note REGEXP 'f'":   "REGEXP",
		"SELECT @n := 1":    "user variables",
		"SELECT 'a' || 'b'": "the || operator",
	} {
		_, err := answer(t, db, q)
		var my *gomysql.MySQLError
		if !errors.As(err, &my) || my.Number != 1235 || !strings.Contains(my.Message, named) {
			t.Errorf("%s: %v; want error 1235 naming %q", q, err, named)
		}
	}
}

// TestPortGroupConcatMaxLen: a GROUP_CONCAT longer than the session's
// group_concat_max_len, which MySQL would cut, is an error saying so; SET
// moves the limit (clamped to 4 at least, DEFAULT back to 1 MiB), and a
// value the port cannot read is refused, the limit unchanged.
func TestPortGroupConcatMaxLen(t *testing.T) {
	addr := startPortWith(t, shopOrders)
	db := openPortDB(t, addr, "shop")
	const q = "SELECT GROUP_CONCAT(id ORDER BY id DESC SEPARATOR '|') FROM orders" // "3|2|1": 5 bytes
	if got := mustAnswer(t, db, "SELECT @@group_concat_max_len"); got != "1048576" {
		t.Fatalf("@@group_concat_max_len = %s, want 1048576", got)
	}
	for _, c := range []struct {
		set, max string
		cut      bool
	}{{"SET group_concat_max_len = 5", "5", false}, {"SET SESSION group_concat_max_len = 2", "4", true},
		{"SET @@group_concat_max_len = DEFAULT", "1048576", false}, {"SET GLOBAL group_concat_max_len = 4", "1048576", false},
		{"SET @@session.group_concat_max_len=4, NAMES utf8mb4", "4", true}} {
		if _, err := db.Exec(c.set); err != nil {
			t.Fatalf("%s: %v", c.set, err)
		}
		if got := mustAnswer(t, db, "SELECT @@group_concat_max_len"); got != c.max {
			t.Fatalf("after %s: @@group_concat_max_len = %s, want %s", c.set, got, c.max)
		}
		got, err := answer(t, db, q)
		if c.cut != (err != nil) || (c.cut && !strings.Contains(err.Error(), "longer than group_concat_max_len ("+c.max+" bytes)")) || (!c.cut && strings.Join(got, "") != "3|2|1") {
			t.Fatalf("after %s: %q, %v; want an error: %v", c.set, got, err, c.cut)
		}
	}
	_, err := db.Exec("SET group_concat_max_len = 1024 * 1024")
	var my *gomysql.MySQLError
	if !errors.As(err, &my) || my.Number != 1235 || mustAnswer(t, db, "SELECT @@group_concat_max_len") != "4" {
		t.Fatalf("SET group_concat_max_len = 1024 * 1024: %v, want error 1235 and the limit kept", err)
	}
}

func TestPortCollation(t *testing.T) {
	addr := startPortWith(t, shopOrders)
	db := openPortDB(t, addr, "shop")
	for q, want := range map[string]string{
		// note is utf8mb4_general_ci (the table's): case and accents blind.
		"SELECT id FROM orders WHERE note = 'FIRST'":                             "1",
		"SELECT id FROM orders WHERE 'FÍRST' = note":                             "1",
		"SELECT id FROM orders o WHERE o.note IN ('First', 'IT''S') ORDER BY id": "1\n3",
		"SELECT id FROM orders WHERE note LIKE 'FIR%'":                           "1",
		"SELECT id FROM orders WHERE note <> 'FIRST' ORDER BY id":                "3",
		// code is utf8mb4_bin: exact.
		"SELECT id FROM orders WHERE code = 'abc'": "1",
		"SELECT id FROM orders WHERE code = 'ABC'": "2",
	} {
		if got := mustAnswer(t, db, q); got != want {
			t.Errorf("%s = %q; want %q", q, got, want)
		}
	}
}

func TestPortShowMeta(t *testing.T) {
	addr := startPortWith(t, shopOrders)
	db := openPortDB(t, addr, "shop")
	for q, want := range map[string]string{
		"SHOW VARIABLES LIKE 'version%'":                  "version|" + ServerVersion + "\nversion_comment|dbtrail time-travel SQL port (read-only)\nversion_compile_machine|",
		"SHOW SESSION VARIABLES LIKE 'dbtrail_at'":        "dbtrail_at|latest",
		"SHOW VARIABLES WHERE Variable_name = 'sql_mode'": "sql_mode|ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES",
		"SHOW STATUS LIKE 'Ssl_cipher'":                   "Ssl_cipher|",
		"SHOW WARNINGS":                                   "",
		"SHOW COUNT(*) WARNINGS":                          "0",
		"SHOW COLLATION LIKE 'utf8mb4_bin'":               "utf8mb4_bin|utf8mb4|46||Yes|1|PAD SPACE",
		"SHOW CHARACTER SET LIKE 'latin1'":                "latin1|cp1252 West European|latin1_swedish_ci|1",
	} {
		got := mustAnswer(t, db, q)
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s\n = %q\nwant %q…", q, got, want)
		}
	}
}

// TestPortClientQueries runs the metadata queries of DBeaver, Metabase and
// Grafana (testdata/client_queries.txt, from their source) through the
// port: each answers without error, with the rows it names.
func TestPortClientQueries(t *testing.T) {
	addr := startPortWith(t, shopOrders)
	db := openPortDB(t, addr, "shop")
	text, err := os.ReadFile("testdata/client_queries.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, block := range strings.Split(string(text), "\n\n") {
		var from, want, q string
		var args []any
		hasWant := false
		for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
			switch {
			case strings.HasPrefix(line, "#"):
			case strings.HasPrefix(line, "-- from: "):
				from = strings.TrimPrefix(line, "-- from: ")
			case strings.HasPrefix(line, "-- args: "):
				for _, a := range strings.Split(strings.TrimPrefix(line, "-- args: "), "|") {
					args = append(args, a)
				}
			case strings.HasPrefix(line, "-- want:"):
				want, hasWant = strings.TrimSpace(strings.TrimPrefix(line, "-- want:")), true
			default:
				q += line + "\n"
			}
		}
		if from == "" {
			continue
		}
		if !hasWant || q == "" {
			t.Fatalf("testdata block of %s: no want or no statement", from)
		}
		n++
		rows, err := answer(t, db, strings.TrimSpace(q), args...)
		if err != nil {
			t.Errorf("%s:\n%s\n: %v", from, q, err)
			continue
		}
		found := want == ""
		for _, r := range rows {
			found = found || strings.Contains(r, want)
		}
		if !found {
			t.Errorf("%s:\n%s\n answered %q; want a row holding %q", from, q, rows, want)
		}
	}
	if n < 20 {
		t.Errorf("%d client queries read", n)
	}
}

// TestPortValueColumnNames: a call or variable the port answers with a
// value is named as MySQL names it, by its text.
func TestPortValueColumnNames(t *testing.T) {
	addr := startPortWith(t, shopOrders)
	db := openPortDB(t, addr, "shop")
	rows, err := db.Query("SELECT DATABASE(), NOW(), @@version_comment, CURRENT_DATE, USER() AS u, 1 + 1, (SELECT VERSION())")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cols, ","); !strings.HasPrefix(got, "DATABASE(),NOW(),@@version_comment,CURRENT_DATE,u,") {
		t.Errorf("columns %s", got)
	}
}

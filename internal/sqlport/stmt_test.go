package sqlport

import (
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

// itemsTable has a column of most kinds the wire types tell apart.
var itemsTable = viewstest.Table{Schema: "shop",
	Create: "CREATE TABLE `items` (\n" +
		"  `id` int(10) unsigned NOT NULL AUTO_INCREMENT,\n" +
		"  `code` char(4) NOT NULL DEFAULT 'x''y',\n" +
		"  `name` varchar(20) DEFAULT NULL,\n" +
		"  `price` decimal(10,2) NOT NULL DEFAULT 0.00,\n" +
		"  `qty` smallint(6) DEFAULT NULL,\n" +
		"  `big` bigint(20) unsigned DEFAULT NULL,\n" +
		"  `f` float DEFAULT NULL,\n" +
		"  `d` double DEFAULT NULL,\n" +
		"  `flags` bit(12) DEFAULT NULL,\n" +
		"  `raw` varbinary(8) DEFAULT NULL,\n" +
		"  `placed` datetime(3) DEFAULT NULL,\n" +
		"  `ts` timestamp(6) NULL DEFAULT NULL ON UPDATE current_timestamp(6),\n" +
		"  `tm` time(2) DEFAULT NULL,\n" +
		"  `y` year(4) DEFAULT NULL,\n" +
		"  `e` enum('a','b') DEFAULT NULL,\n" +
		"  `j` longtext DEFAULT NULL,\n" +
		"  `dt` date DEFAULT NULL,\n" +
		"  PRIMARY KEY (`id`),\n" +
		"  UNIQUE KEY `code_ux` (`code`),\n" +
		"  KEY `name_ix` (`name`)\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
	Rows: [][]any{
		{"1", "ab", "it's \\ '", "10.50", "-3", "18446744073709551615", "1.17549435e-38", "0.1", "\x0f\xff", "\x00\xff",
			"2026-12-01 10:41:59.120", "2026-12-01 10:41:59.000001", "-838:59:59.00", "2026", "b", `{"a": 1}`, "2026-12-01"},
		{"2", "cd", nil, "0.07", nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{"3", "ef", "x' OR '1'='1", "-1.00", "7", "1", "3.5", "-0", "\x00\x01", "", "2026-12-02 00:00:00.000",
			"2026-12-02 00:00:00.000000", "00:00:00.00", "1901", "a", "[]", "2026-12-02"},
	}}

// itemsCols selects every column of shop.items.
const itemsCols = "id, code, name, price, qty, big, f, d, flags, raw, placed, ts, tm, y, e, j, dt"

// itemRow is a row of shop.items scanned into typed Go values.
type itemRow struct {
	ID         uint32
	Code       string
	Name       sql.NullString
	Price      string
	Qty        sql.NullInt16
	Big        sql.Null[uint64]
	F          sql.Null[float32]
	D          sql.NullFloat64
	Flags, Raw []byte
	At, Ts     sql.NullTime
	Tm         sql.NullString
	Y          sql.NullInt64
	E          sql.NullString
	J          sql.NullString
	Dt         sql.NullTime
}

func scanItems(t *testing.T, rows *sql.Rows) []itemRow {
	t.Helper()
	defer rows.Close()
	var out []itemRow
	for rows.Next() {
		var r itemRow
		if err := rows.Scan(&r.ID, &r.Code, &r.Name, &r.Price, &r.Qty, &r.Big, &r.F, &r.D, &r.Flags, &r.Raw,
			&r.At, &r.Ts, &r.Tm, &r.Y, &r.E, &r.J, &r.Dt); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func openDSN(t *testing.T, addr, params string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", fmt.Sprintf("viewer:%s@tcp(%s)/shop?%s", testSecret, addr, params))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestPortPreparedStatements: go-sql-driver without interpolateParams
// prepares a statement with parameters (COM_STMT_PREPARE/EXECUTE); the
// parameters are bound, never spliced (a quote in one is its text), and
// the binary rows scan into the same typed values as the text rows.
func TestPortPreparedStatements(t *testing.T) {
	addr := startPortWith(t, itemsTable)
	db := openDSN(t, addr, "parseTime=true")
	text := scanItems(t, rowsOf(t)(db.Query("SELECT "+itemsCols+" FROM shop.items ORDER BY id")))
	if len(text) != 3 {
		t.Fatalf("%d rows", len(text))
	}
	bin := scanItems(t, rowsOf(t)(db.Query("SELECT "+itemsCols+" FROM shop.items WHERE id >= ? ORDER BY id", 0)))
	// A FLOAT's text has 6 significant digits (as MySQL's), its binary
	// form is the stored float32.
	if text[0].F.V != 1.17549e-38 || bin[0].F.V != 1.17549435e-38 {
		t.Errorf("FLOAT text %v, binary %v", text[0].F.V, bin[0].F.V)
	}
	bin[0].F = text[0].F
	if !reflect.DeepEqual(text, bin) {
		t.Errorf("binary rows differ from text rows:\n%+v\n%+v", bin, text)
	}
	want := itemRow{ID: 1, Code: "ab", Name: sql.NullString{String: "it's \\ '", Valid: true}, Price: "10.50",
		Qty: sql.NullInt16{Int16: -3, Valid: true}, Big: sql.Null[uint64]{V: 18446744073709551615, Valid: true},
		F: sql.Null[float32]{V: 1.17549e-38, Valid: true}, D: sql.NullFloat64{Float64: 0.1, Valid: true},
		Flags: []byte{0x0f, 0xff}, Raw: []byte{0, 0xff},
		At: sql.NullTime{Time: time.Date(2026, 12, 1, 10, 41, 59, 120e6, time.UTC), Valid: true},
		Ts: sql.NullTime{Time: time.Date(2026, 12, 1, 10, 41, 59, 1000, time.UTC), Valid: true},
		Tm: sql.NullString{String: "-838:59:59.00", Valid: true}, Y: sql.NullInt64{Int64: 2026, Valid: true},
		E: sql.NullString{String: "b", Valid: true}, J: sql.NullString{String: `{"a": 1}`, Valid: true},
		Dt: sql.NullTime{Time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Valid: true}}
	if !reflect.DeepEqual(text[0], want) {
		t.Errorf("row 1 (text) = %+v\nwant %+v", text[0], want)
	}
	for _, p := range []struct {
		arg  any
		want int
	}{{"it's \\ '", 1}, {"x' OR '1'='1", 1}, {"' OR 1=1 --", 0}} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM shop.items WHERE name = ?", p.arg).Scan(&n); err != nil || n != p.want {
			t.Errorf("name = %q: %d rows, %v; want %d", p.arg, n, err, p.want)
		}
	}
	var id uint32
	if err := db.QueryRow("SELECT id FROM shop.items WHERE raw = ?", []byte{0, 0xff}).Scan(&id); err != nil || id != 1 {
		t.Errorf("raw = X'00ff': %d, %v", id, err)
	}
	var price string
	if err := db.QueryRow("SELECT id, price FROM shop.items WHERE price < ? AND code = ? /* ? */ AND '?' = '?'", 0, "ef").Scan(&id, &price); err != nil || id != 3 || price != "-1.00" {
		t.Errorf("two parameters: %d %s %v", id, price, err)
	}
	st, err := db.Prepare("SHOW COLUMNS FROM items")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var fields []string
	cols := rowsOf(t)(st.Query())
	for cols.Next() {
		var f, ty, null, key, extra string
		var def sql.NullString
		if err := cols.Scan(&f, &ty, &null, &key, &def, &extra); err != nil {
			t.Fatal(err)
		}
		fields = append(fields, f)
	}
	cols.Close()
	if len(fields) != 17 {
		t.Errorf("SHOW COLUMNS prepared: %v", fields)
	}
	if _, err := db.Exec("SET @@dbtrail_at = ?", "seq:1"); err == nil || !strings.Contains(err.Error(), "1231") {
		t.Errorf("SET @@dbtrail_at = ? without the index: %v", err)
	}
}

// TestPortFieldTypes: the fields of columns that show a table column carry
// its stored type, flags and decimals; a computed column its DuckDB type.
func TestPortFieldTypes(t *testing.T) {
	addr := startPortWith(t, itemsTable)
	db := openDSN(t, addr, "")
	for _, args := range [][]any{nil, {0}} {
		q := "SELECT " + itemsCols + ", price * 2 AS twice FROM shop.items WHERE id > 0"
		if args != nil {
			q = "SELECT " + itemsCols + ", price * 2 AS twice FROM shop.items WHERE id > ?"
		}
		rows := rowsOf(t)(db.Query(q, args...))
		cts, err := rows.ColumnTypes()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ct := range cts {
			s := ct.Name() + ":" + ct.DatabaseTypeName()
			if n, ok := ct.Nullable(); ok && !n {
				s += " NOT NULL"
			}
			if p, sc, ok := ct.DecimalSize(); ok && p < 100 {
				s += fmt.Sprintf("(%d,%d)", p, sc)
			}
			got = append(got, s)
		}
		rows.Close()
		want := "id:UNSIGNED INT NOT NULL,code:CHAR NOT NULL,name:VARCHAR,price:DECIMAL NOT NULL(10,2),qty:SMALLINT," +
			"big:UNSIGNED BIGINT,f:FLOAT,d:DOUBLE,flags:BIT,raw:VARBINARY,placed:DATETIME(3,3),ts:TIMESTAMP(6,6),tm:TIME(2,2),y:YEAR," +
			"e:ENUM,j:TEXT,dt:DATE,twice:DECIMAL"
		if s := strings.Join(got, ","); !strings.HasPrefix(s, want) {
			t.Errorf("args %v: column types\n%s\nwant\n%s…", args, s, want)
		}
	}
	var at, ts, tm string
	if err := db.QueryRow("SELECT placed, ts, tm FROM shop.items WHERE id = 3").Scan(&at, &ts, &tm); err != nil ||
		at != "2026-12-02 00:00:00.000" || ts != "2026-12-02 00:00:00.000000" || tm != "00:00:00.00" {
		t.Errorf("temporal text with the stored precision: %q %q %q %v", at, ts, tm, err)
	}
	if err := db.QueryRow("SELECT placed, ts, tm FROM shop.items WHERE id = ?", 3).Scan(&at, &ts, &tm); err != nil ||
		at != "2026-12-02 00:00:00.000" || ts != "2026-12-02 00:00:00.000000" || tm != "00:00:00.00" {
		t.Errorf("binary temporals with the stored precision: %q %q %q %v", at, ts, tm, err)
	}
}

// TestPortShowCreateAndColumns: SHOW CREATE TABLE is the stored CREATE
// TABLE; SHOW COLUMNS tells Null, Key, Default and Extra; COM_FIELD_LIST
// answers the columns' fields.
func TestPortShowCreateAndColumns(t *testing.T) {
	addr := startPortWith(t, itemsTable)
	db := openDSN(t, addr, "")
	var name, create string
	if err := db.QueryRow("SHOW CREATE TABLE `shop`.`items`").Scan(&name, &create); err != nil || name != "items" || create != itemsTable.Create {
		t.Errorf("SHOW CREATE TABLE = %q %q, %v", name, create, err)
	}
	if _, err := db.Query("SHOW CREATE TABLE shop.nothing"); err == nil || !strings.Contains(err.Error(), "1146") {
		t.Errorf("SHOW CREATE TABLE of a missing table: %v", err)
	}
	rows := rowsOf(t)(db.Query("DESCRIBE items"))
	var got []string
	for rows.Next() {
		var f, ty, null, key, extra string
		var def sql.NullString
		if err := rows.Scan(&f, &ty, &null, &key, &def, &extra); err != nil {
			t.Fatal(err)
		}
		d := "NULL"
		if def.Valid {
			d = "'" + def.String + "'"
		}
		got = append(got, strings.Join([]string{f, ty, null, key, d, extra}, " "))
	}
	rows.Close()
	want := []string{
		"id int unsigned NO PRI NULL auto_increment",
		"code char(4) NO UNI 'x'y' ",
		"name varchar(20) YES MUL NULL ",
		"price decimal(10,2) NO  '0.00' ",
		"ts timestamp(6) YES  NULL on update current_timestamp(6)",
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("DESCRIBE has no line %q:\n%s", w, strings.Join(got, "\n"))
		}
	}
	c, err := client.Connect(addr, "viewer", testSecret, "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fields, err := c.FieldList("items", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(fields) != 17 || string(fields[0].Name) != "id" || fields[0].Flag&2 == 0 || string(fields[16].Name) != "dt" {
		t.Errorf("COM_FIELD_LIST: %d fields", len(fields))
	}
	some, err := c.FieldList("items", "t%")
	if err != nil || len(some) != 2 || string(some[0].Name) != "ts" || string(some[1].Name) != "tm" {
		t.Errorf("COM_FIELD_LIST with a wildcard: %v %v", some, err)
	}
	if _, err := c.FieldList("nothing", ""); err == nil {
		t.Error("COM_FIELD_LIST of a missing table answered")
	}
}

func TestScanSQL(t *testing.T) {
	for q, want := range map[string]int{
		"SELECT ?":                            1,
		"SELECT '?', \"?\", `?`, ? -- ?\n, ?": 2,
		"SELECT /* ? */ ? # ?":                1,
		"SELECT 'it''s ?', ?":                 1,
		`SELECT 'a\'?', ?`:                    1,
	} {
		if n, err := countParams(q); err != nil || n != want {
			t.Errorf("countParams(%q) = %d, %v; want %d", q, n, err, want)
		}
	}
	if _, err := countParams("SELECT 'open ?"); err == nil {
		t.Error("an open string is not an error")
	}
	got, err := withLiterals("SET @@dbtrail_at = ?, x = ?, y = ?, z = ?", []any{"it's \\", nil, int64(-3), []byte{0xff}})
	if want := `SET @@dbtrail_at = 'it\'s \\', x = NULL, y = -3, z = X'ff'`; err != nil || got != want {
		t.Errorf("withLiterals = %s, %v; want %s", got, err, want)
	}
}

// rowsOf is rows, or the test's end with err.
func rowsOf(t *testing.T) func(*sql.Rows, error) *sql.Rows {
	return func(rows *sql.Rows, err error) *sql.Rows {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
}

func TestColumnClauses(t *testing.T) {
	create := "CREATE TABLE `t` (\n" +
		"  `id` bigint(20) NOT NULL AUTO_INCREMENT,\n" +
		"  `c` varchar(10) DEFAULT 'it''s, (x)' COMMENT 'DEFAULT 9',\n" +
		"  `n` int(11) DEFAULT NULL COMMENT 'no DEFAULT here',\n" +
		"  `ts` timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp(),\n" +
		"  `d` decimal(5,2) DEFAULT -1.50,\n" +
		"  PRIMARY KEY (`id`)\n" +
		") ENGINE=InnoDB"
	got := columnClauses(create)
	show := func(name string) string {
		c := got[name]
		d := "NULL"
		if c.dflt != nil {
			d = "[" + *c.dflt + "]"
		}
		return d + "|" + c.extra
	}
	for name, want := range map[string]string{
		"id": "NULL|auto_increment", "c": "[it's, (x)]|", "n": "NULL|",
		"ts": "[current_timestamp()]|on update current_timestamp()", "d": "[-1.50]|",
	} {
		if s := show(name); s != want {
			t.Errorf("%s: %s, want %s", name, s, want)
		}
	}
}

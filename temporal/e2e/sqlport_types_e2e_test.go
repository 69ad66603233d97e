package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/sqlexport/exporttest"
)

// typedRows reads the every-type table on db with go-sql-driver/mysql:
// as text (COM_QUERY) or prepared (COM_STMT_EXECUTE with a parameter).
// Each column is scanned into the Go type an application picks for the
// source's column type (targets, from the source's answer): integers
// into int64 or uint64, FLOAT into float32, DOUBLE into float64, DECIMAL,
// temporals and text into strings, BIT and binary strings into bytes.
// It returns the rows as printed values, one string a cell, and the
// source's column types when targets is nil.
func typedRows(t *testing.T, ctx context.Context, db *sql.DB, prepared bool, targets []string) ([][]string, []string) {
	t.Helper()
	var rows *sql.Rows
	var err error
	if prepared {
		rows, err = db.QueryContext(ctx, "SELECT * FROM app.alltypes WHERE id >= ? ORDER BY id", 0)
	} else {
		rows, err = db.QueryContext(ctx, "SELECT * FROM app.alltypes ORDER BY id")
	}
	must(t, err)
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	must(t, err)
	if targets == nil {
		for _, ct := range cts {
			targets = append(targets, ct.DatabaseTypeName())
		}
	}
	if len(targets) != len(cts) {
		t.Fatalf("%d columns, the source has %d", len(cts), len(targets))
	}
	var out [][]string
	for rows.Next() {
		dest := make([]any, len(cts))
		for i, typ := range targets {
			dest[i] = scanTarget(typ)
		}
		must(t, rows.Scan(dest...))
		row := make([]string, len(dest))
		for i, d := range dest {
			row[i] = cts[i].Name() + "=" + printed(d)
		}
		out = append(out, row)
	}
	must(t, rows.Err())
	return out, targets
}

// scanTarget is a pointer to the Go value a column of MySQL type typ (as
// go-sql-driver names it) scans into.
func scanTarget(typ string) any {
	switch {
	case strings.HasPrefix(typ, "UNSIGNED "):
		return new(sql.Null[uint64])
	case typ == "TINYINT", typ == "SMALLINT", typ == "MEDIUMINT", typ == "INT", typ == "BIGINT", typ == "YEAR":
		return new(sql.NullInt64)
	case typ == "FLOAT":
		return new(sql.Null[float32])
	case typ == "DOUBLE":
		return new(sql.NullFloat64)
	case typ == "BIT", typ == "BINARY", typ == "VARBINARY", typ == "BLOB", typ == "GEOMETRY":
		return new([]byte)
	}
	return new(sql.NullString)
}

// printed is a scanned value as text: NULL, or the value with its Go type.
func printed(d any) string {
	switch v := d.(type) {
	case *sql.Null[uint64]:
		if v.Valid {
			return fmt.Sprintf("uint64 %d", v.V)
		}
	case *sql.NullInt64:
		if v.Valid {
			return fmt.Sprintf("int64 %d", v.Int64)
		}
	case *sql.Null[float32]:
		if v.Valid {
			return fmt.Sprintf("float32 %v", v.V)
		}
	case *sql.NullFloat64:
		if v.Valid {
			return fmt.Sprintf("float64 %v", v.Float64)
		}
	case *[]byte:
		if *v != nil {
			return fmt.Sprintf("bytes %x", *v)
		}
	case *sql.NullString:
		if v.Valid {
			return fmt.Sprintf("string %q", v.String)
		}
	}
	return "NULL"
}

// zeroDate matches a DATE, DATETIME or TIMESTAMP text with a zero year,
// month or day: a typed view presents it as NULL (internal/views/typed.go).
var zeroDate = regexp.MustCompile(`^string "(0000-|\d{4}-00-|\d{4}-\d{2}-00)`)

// beyondTyped reports whether a cell is one the typed views present as
// NULL although the source holds a value: a date with a zero part, a
// DECIMAL(65,30) with more than 38-30 integer digits. The port's exact
// views (views.Options.Exact) send it as stored.
func beyondTyped(cell string) bool {
	name, val, _ := strings.Cut(cell, "=")
	switch name {
	case "dt", "dtm", "dtm6", "ts", "ts0":
		return zeroDate.MatchString(val)
	case "dec1":
		digits, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(val, `string "`), "-"), ".")
		return len(strings.TrimLeft(digits, "0")) > 8
	}
	return false
}

// TestSQLPortTypes reads the every-type table through the SQL port with
// go-sql-driver/mysql, text and prepared statements (no
// interpolateParams), at the live tail and at a recorded moment, and
// scans every column into typed Go values: they equal what the same driver
// scans from the source at that moment, cell for cell, the cells the
// typed views present as NULL (beyondTyped: zero dates, DECIMAL beyond 38
// digits) included.
func TestSQLPortTypes(t *testing.T) {
	e := newBackupEnv(t)
	create, allRows := exporttest.AllTypesTable()
	conn, err := e.src.Conn(e.ctx)
	must(t, err)
	defer conn.Close()
	run := func(qs ...string) {
		for _, q := range qs {
			_, err := conn.ExecContext(e.ctx, q)
			must(t, err)
		}
	}
	run("SET SESSION sql_mode = ''", "SET SESSION time_zone = '+00:00'", create,
		"INSERT INTO alltypes VALUES "+strings.Join(allRows[:3], ","))
	e.fullBackup(t)
	run("INSERT INTO alltypes VALUES "+strings.Join(allRows[3:], ","), "UPDATE alltypes SET vc = 'then', ts = NULL WHERE id = 1")
	var gtidThen string
	must(t, conn.QueryRowContext(e.ctx, "SELECT @@last_gtid").Scan(&gtidThen))
	e.waitCaughtUp(t)

	cfg, err := gomysql.ParseDSN(e.source.DSN("app"))
	must(t, err)
	cfg.InterpolateParams, cfg.MultiStatements = false, false
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	src, err := sql.Open("mysql", cfg.FormatDSN())
	must(t, err)
	defer src.Close()
	thenText, targets := typedRows(t, e.ctx, src, false, nil)
	thenBin, _ := typedRows(t, e.ctx, src, true, targets)

	run("DELETE FROM alltypes WHERE id = 2", "UPDATE alltypes SET id = 50, tx = 'now' WHERE id = 5")
	e.waitCaughtUp(t)
	nowText, _ := typedRows(t, e.ctx, src, false, targets)
	nowBin, _ := typedRows(t, e.ctx, src, true, targets)
	if reflect.DeepEqual(nowText, thenText) {
		t.Fatal("the changes changed nothing")
	}

	addr := startSQLPort(t, e)
	port, err := sql.Open("mysql", fmt.Sprintf("viewer:%s@tcp(%s)/app", portSecret, addr))
	must(t, err)
	defer port.Close()
	port.SetMaxOpenConns(1) // one session: SET @@dbtrail_at holds for the statements after it

	compare := func(what string, want [][]string, prepared bool) {
		t.Helper()
		got, _ := typedRows(t, e.ctx, port, prepared, targets)
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows through the port, the source has %d", what, len(got), len(want))
		}
		beyond := 0
		for r := range want {
			for c := range want[r] {
				if beyondTyped(want[r][c]) {
					beyond++
				}
				if got[r][c] != want[r][c] {
					t.Errorf("%s: row %d: through the port %s, the source %s", what, r+1, got[r][c], want[r][c])
				}
			}
		}
		if beyond == 0 {
			t.Fatalf("%s: no cell of the fixture is one the typed views present as NULL: their exact forms are not tested", what)
		}
	}
	compare("latest, text", nowText, false)
	compare("latest, prepared", nowBin, true)
	_, err = port.ExecContext(e.ctx, "SET @@dbtrail_at = ?", "gtid:"+gtidThen)
	must(t, err)
	compare("at "+gtidThen+", text", thenText, false)
	compare("at "+gtidThen+", prepared", thenBin, true)

	// The fields name the stored types as the source's do.
	srcTypes := columnTypes(t, e.ctx, src)
	portTypes := columnTypes(t, e.ctx, port)
	if !reflect.DeepEqual(srcTypes, portTypes) {
		t.Errorf("column types through the port:\n%v\nthe source's:\n%v", portTypes, srcTypes)
	}
	var name, stored string
	must(t, port.QueryRowContext(e.ctx, "SHOW CREATE TABLE app.alltypes").Scan(&name, &stored))
	var srcCreate string
	must(t, src.QueryRowContext(e.ctx, "SHOW CREATE TABLE app.alltypes").Scan(&name, &srcCreate))
	if stored != srcCreate {
		t.Errorf("SHOW CREATE TABLE through the port:\n%s\nthe source's:\n%s", stored, srcCreate)
	}

	// A column added after the snapshot: the tail's shape is the
	// definition at the moment, its types and its CREATE TABLE.
	run("ALTER TABLE alltypes ADD COLUMN added DECIMAL(7,3) UNSIGNED NOT NULL DEFAULT 1.5",
		"UPDATE alltypes SET added = 2.25 WHERE id = 3")
	e.waitCaughtUp(t)
	_, err = port.ExecContext(e.ctx, "SET @@dbtrail_at = 'latest'")
	must(t, err)
	addedText, targets2 := typedRows(t, e.ctx, src, false, nil)
	targets = targets2
	addedBin, _ := typedRows(t, e.ctx, src, true, targets)
	compare("after ADD COLUMN, text", addedText, false)
	compare("after ADD COLUMN, prepared", addedBin, true)
	if src, got := columnTypes(t, e.ctx, src), columnTypes(t, e.ctx, port); !reflect.DeepEqual(src, got) {
		t.Errorf("after ADD COLUMN, column types through the port:\n%v\nthe source's:\n%v", got, src)
	}
	must(t, port.QueryRowContext(e.ctx, "SHOW CREATE TABLE app.alltypes").Scan(&name, &stored))
	if !strings.Contains(stored, "`added` decimal(7,3) unsigned NOT NULL") {
		t.Errorf("SHOW CREATE TABLE after ADD COLUMN:\n%s", stored)
	}
}

// columnTypes are the every-type table's column types and nullability as
// go-sql-driver/mysql reports them.
func columnTypes(t *testing.T, ctx context.Context, db *sql.DB) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, "SELECT * FROM app.alltypes WHERE id = 1")
	must(t, err)
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	must(t, err)
	var out []string
	for _, ct := range cts {
		null, _ := ct.Nullable()
		out = append(out, fmt.Sprintf("%s %s null=%t", ct.Name(), ct.DatabaseTypeName(), null))
	}
	return out
}

package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

// duck opens an in-memory DuckDB with bounded memory and threads.
func duck(t *testing.T) *sql.Conn {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	for _, q := range []string{"SET memory_limit='512MB'", "SET threads=2", "SET temp_directory='" + t.TempDir() + "'"} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

func queryStrings(t *testing.T, conn *sql.Conn, q string) [][]string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDuckDBReadsTableFile(t *testing.T) {
	tbl := allTypes()
	rows, _ := allTypesRows()
	p, res := writeFile(t, t.TempDir(), "all.parquet", tbl, rows, WriterOptions{RowGroupRows: 2})
	conn := duck(t)
	src := "read_parquet('" + p + "')"

	wantTypes := map[string]string{
		"ti": "TINYINT", "tiu": "UTINYINT", "si": "SMALLINT", "siu": "USMALLINT",
		"mi": "INTEGER", "miu": "UINTEGER", "i": "INTEGER", "iu": "UINTEGER",
		"bi": "BIGINT", "biu": "UBIGINT", "y": "SMALLINT", "dec65": "VARCHAR",
		"f": "FLOAT", "db": "DOUBLE", "dt": "VARCHAR", "dtm": "VARCHAR", "tm": "VARCHAR",
		"vc": "VARCHAR", "js": "VARCHAR", "bn": "BLOB", "bt": "BLOB", "g": "BLOB", "cb": "BLOB",
		"uu": "VARCHAR", "i6": "VARCHAR",
	}
	for _, r := range queryStrings(t, conn, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM "+src+")") {
		if w, ok := wantTypes[r[0]]; ok && r[1] != w {
			t.Errorf("DuckDB type of %s: %s, want %s", r[0], r[1], w)
		}
	}

	// Values by id, cast to text in DuckDB.
	q := `SELECT id, ti::VARCHAR, tiu::VARCHAR, si::VARCHAR, siu::VARCHAR, mi::VARCHAR, miu::VARCHAR,
		i::VARCHAR, iu::VARCHAR, bi::VARCHAR, biu::VARCHAR, y::VARCHAR, dec65, dt, dtm, ts, tm,
		c, vc, hex(bn), hex(bt), hex(bt5), uu, i6,
		f = CAST('3.4028234663852886e38' AS FLOAT), db = 1.7976931348623157e308::DOUBLE,
		f = CAST('1.401298464324817e-45' AS FLOAT), db = 5e-324::DOUBLE
		FROM ` + src + ` ORDER BY id NULLS LAST`
	got := queryStrings(t, conn, q)
	dmax := "99999999999999999999999999999999999.999999999999999999999999999999"
	want := [][]string{
		{"1", "-128", "0", "-32768", "0", "-8388608", "0", "-2147483648", "0", "-9223372036854775808", "0", "0", "-" + dmax,
			"0000-00-00", "0000-00-00 00:00:00.000000", "0000-00-00 00:00:00", "-838:59:59.000000",
			"", "", "0000000000000000", "0000000000000000", "00", "00000000-0000-0000-0000-000000000000", "::",
			"false", "false", "false", "false"},
		{"2", "127", "255", "32767", "65535", "8388607", "16777215", "2147483647", "4294967295", "9223372036854775807",
			"18446744073709551615", "2155", dmax,
			"9999-12-31", "9999-12-31 23:59:59.999999", "2038-01-19 03:14:07", "838:59:59.999999",
			"😀𝄞", "4-byte 😀 𝄞 🀄 and é", "6162000000000000", "FFFFFFFFFFFFFFFF", "1F",
			"123e4567-e89b-12d3-a456-426614174000", "2001:db8::ff00:42:8329",
			"true", "true", "false", "false"},
		{"4", "0", "1", "-1", "1", "0", "1", "0", "1", "-1", "1", "1901", "0.000000000000000000000000000001",
			"2026-11-29", "2026-11-29 06:15:00.000001", "1970-01-01 00:00:01", "00:00:00.000000",
			"abc", "null", "0000000000000000", "8000000000000000", "00",
			"ffffffff-ffff-ffff-ffff-ffffffffffff", "::ffff:1.2.3.4",
			"false", "false", "true", "true"},
		{"5", "-1", "128", "0", "1000", "-1", "1", "1", "2", "3", "9223372036854775808", "2026", "-0.500000000000000000000000000000",
			"2026-02-00", "2026-00-00 00:00:00.500000", "2026-11-29 06:15:00", "-12:34:56.789000",
			"x y", " trailing ", "0000000000000061", "0000000000000001", "10",
			"00000000-0000-0000-0000-000000000001", "::1",
			"false", "false", "false", "false"},
	}
	if len(got) != 5 {
		t.Fatalf("DuckDB read %d rows", len(got))
	}
	for i, w := range want {
		if fmt.Sprint(got[i]) != fmt.Sprint(w) {
			t.Errorf("row %s:\n got %q\nwant %q", w[0], got[i], w)
		}
	}
	if fmt.Sprint(got[4]) != fmt.Sprint(strings.Fields(strings.Repeat("NULL ", 28))) {
		t.Errorf("NULL row: %q", got[4])
	}
	// Empty strings are not NULL.
	if r := queryStrings(t, conn, "SELECT count(*) FILTER (vc = ''), count(*) FILTER (vc IS NULL), count(*) FILTER (octet_length(bl) = 0) FROM "+src); fmt.Sprint(r) != "[[1 1 1]]" {
		t.Errorf("empty vs NULL: %v", r)
	}
	// Footer metadata is visible to DuckDB.
	kv := queryStrings(t, conn, "SELECT decode(value) FROM parquet_kv_metadata('"+p+"') WHERE decode(key) IN ('dbtrail.row_count', 'dbtrail.fingerprint') ORDER BY decode(key)")
	if fmt.Sprint(kv) != fmt.Sprintf("[[%s] [5]]", res.Fingerprint) {
		t.Errorf("footer via DuckDB: %v", kv)
	}
}

func TestDuckDBReadsEmptyChainStart(t *testing.T) {
	dir := t.TempDir()
	b, err := NewBuilder(dir, "20261129T061500Z")
	if err != nil {
		t.Fatal(err)
	}
	chain, err := WriteEmptyChainStart(b, allTypes())
	if err != nil {
		t.Fatal(err)
	}
	conn := duck(t)
	posdel := queryStrings(t, conn, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('"+b.Dir()+"/"+chain[0]+"'))")
	if fmt.Sprint(posdel) != "[[row BIGINT]]" {
		t.Errorf("posdel columns %v", posdel)
	}
	up := queryStrings(t, conn, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('"+b.Dir()+"/"+chain[1]+"'))")
	if n := len(up); n != len(allTypes().Columns)+2 || fmt.Sprint(up[n-2:]) != "[[bintrail_pk VARCHAR] [bintrail_op VARCHAR]]" || fmt.Sprint(up[10]) != "[biu UBIGINT]" {
		t.Errorf("upserts columns %v", up)
	}
	for _, rel := range chain {
		if r := queryStrings(t, conn, "SELECT count(*) FROM read_parquet('"+b.Dir()+"/"+rel+"')"); fmt.Sprint(r) != "[[0]]" {
			t.Errorf("%s: %v rows", rel, r)
		}
	}
}
